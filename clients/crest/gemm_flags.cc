#include "gemm_flags.h"

#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"

namespace crest::cli {

void AddGemmFlags(CLI::App& app, GemmFlags& f) {
  AddOption(app, "--m", f.m, "rows of the output (tokens)").Required();
  AddOption(app, "--n", f.n, "columns of the output (features)").Required();
  AddOption(app, "--k", f.k, "reduction dimension").Required();
  AddOption(app, "--batch", f.batch, "strided batch count").ShowDefault();
  AddOption(app, "--dtype", f.dtype, kDtypeHelp).ShowDefault();
  AddOption(app, "--layout", f.layout,
            "row-major op letters: NT (forward), NN (data grad), TN (weight grad)")
      .ShowDefault();
}

absl::StatusOr<tuner::GemmShape> ToGemm(const GemmFlags& f) {
  auto dtype = tuner::ParseDType(f.dtype);
  if (!dtype.ok()) return dtype.status();
  tuner::GemmShape g;
  g.m = f.m;
  g.n = f.n;
  g.k = f.k;
  g.batch = f.batch;
  g.dtype = *dtype;
  if (!tuner::ParseLayout(f.layout, &g.a_transposed, &g.b_transposed)) {
    return absl::InvalidArgumentError(
        StrCat("layout: '", f.layout, "' is not one of NT, NN, TN, TT"));
  }
  if (auto s = tuner::ValidateGemmSizes(g.m, g.n, g.k, g.batch); !s.ok()) return s;
  return g;
}

void AddModeFlags(CLI::App& app, ModeFlags& f) {
  AddFlag(app, "--warm", f.warm,
          "read warm-L2 measurements (default: cold; the two are never mixed)");
  AddOption(app, "--clocks", f.clocks,
            "read measurements under this clock policy: sustained (settled under load) or "
            "burst (boost clock after idle)")
      .OneOf({"sustained", "burst"})
      .ShowDefault();
}

tuner::MeasureMode ToMode(const ModeFlags& f) {
  return {f.warm ? tuner::CacheMode::kWarm : tuner::CacheMode::kCold,
          f.clocks == "burst" ? tuner::ClockPolicy::kBurst : tuner::ClockPolicy::kSustained};
}

}  // namespace crest::cli
