#include "measure_flags.h"

#include "cli.h"
#include "nlohmann/json.hpp"

namespace crest::cli {

void AddMeasureFlags(CLI::App& app, MeasureFlags& f, bool with_device) {
  measure::MeasureOptions& v = f.values;
  const auto given = [&](const char* field, cmdline::Flag option) {
    f.given.emplace_back(field, option);
  };
  if (with_device) {
    AddOption(app, "--device", f.device, "cublaslt: CUDA device index").ShowDefault();
  }
  given("cache", AddFlag(app, "--warm", f.warm,
                         "cublaslt: warm L2 (default: cold, rotating operand copies)"));
  given("clocks", AddOption(app, "--clocks", f.clocks,
                            "cublaslt: sustained (settled under load, power-capped as in "
                            "training) or burst (boost clock after idle)")
                      .OneOf({"sustained", "burst"})
                      .ShowDefault());
  given(
      "top_k",
      AddOption(app, "--top-k", v.top_k, "cublaslt: heuristic candidates per GEMM").ShowDefault());
  given("exhaustive",
        AddFlag(app, "--exhaustive", v.exhaustive,
                "cublaslt: walk algorithm capabilities instead of the heuristic's top K"));
  given("max_algos", AddOption(app, "--max-algos", v.max_algos,
                               "cublaslt: cap on exhaustive candidates per GEMM")
                         .ShowDefault());
  given("max_noise", AddOption(app, "--max-noise", v.max_noise,
                               "cublaslt: the race ends when every algorithm left has its "
                               "median known within this fraction (95% interval half-width)")
                         .ShowDefault());
  given("min_samples", AddOption(app, "--min-samples", v.min_samples,
                                 "cublaslt: samples per algorithm before it may leave the race")
                           .ShowDefault());
  given("max_seconds", AddOption(app, "--max-seconds", v.max_seconds,
                                 "cublaslt: sampling time per GEMM, all its algorithms "
                                 "together, at most (warm-up not counted)")
                           .ShowDefault());
  // The race of each d_ff study's leaders after the per-GEMM pass.
  given("race.enabled", AddFlag(app, "--no-race", f.no_race,
                                "cublaslt: do not race each d_ff study's leading candidates "
                                "after the per-GEMM pass (default: race them)"));
  given("race.window",
        AddOption(app, "--race-window", v.race.window,
                  "cublaslt: race the candidates whose 95% interval comes within this "
                  "fraction of the leader's")
            .ShowDefault());
  given("race.max_candidates",
        AddOption(app, "--race-candidates", v.race.max_candidates,
                  "cublaslt: race at most this many candidates (more when the pass ties "
                  "more with its best, up to 32)")
            .ShowDefault());
  given("race.resolution",
        AddOption(app, "--race-resolution", v.race.resolution,
                  "cublaslt: tied when a candidate's paired ratio to the race's leader is "
                  "known within 1 +/- this")
            .ShowDefault());
  given("race.max_seconds",
        AddOption(app, "--race-max-seconds", v.race.max_seconds,
                  "cublaslt: time per study's race, warm-up included; what is undecided "
                  "then is declared tied")
            .ShowDefault());
  given("race.algos",
        AddOption(app, "--race-algos", f.race_algos,
                  "cublaslt: race the answers of these algorithm choices, each its own "
                  "race: best (each GEMM's fastest algorithm), default (cuBLASLt's first "
                  "choice, as a framework that does not pin algorithms runs), or "
                  "best,default")
            .Delimiter(',')
            .OneOf({"best", "default"})
            .ShowDefault());
}

nlohmann::json MeasureOverrides(const MeasureFlags& f) {
  nlohmann::json out = nlohmann::json::object();
  const measure::MeasureOptions& v = f.values;
  for (const auto& [field, option] : f.given) {
    if (option.Count() == 0) continue;
    if (field == "cache") out["cache"] = f.warm ? "warm" : "cold";
    if (field == "clocks") out["clocks"] = f.clocks;
    if (field == "top_k") out["top_k"] = v.top_k;
    if (field == "exhaustive") out["exhaustive"] = v.exhaustive;
    if (field == "max_algos") out["max_algos"] = v.max_algos;
    if (field == "max_noise") out["max_noise"] = v.max_noise;
    if (field == "min_samples") out["min_samples"] = v.min_samples;
    if (field == "max_seconds") out["max_seconds"] = v.max_seconds;
    if (field == "race.enabled") out["race"]["enabled"] = !f.no_race;
    if (field == "race.window") out["race"]["window"] = v.race.window;
    if (field == "race.max_candidates") out["race"]["max_candidates"] = v.race.max_candidates;
    if (field == "race.resolution") out["race"]["resolution"] = v.race.resolution;
    if (field == "race.max_seconds") out["race"]["max_seconds"] = v.race.max_seconds;
    if (field == "race.algos") out["race"]["algos"] = f.race_algos;
  }
  return out;
}

}  // namespace crest::cli
