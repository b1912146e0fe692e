// `crest gpus`: the GPU catalogue.
#include <string>

#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/gpu_catalogue.h"
#include "json_views.h"
#include "table.h"

namespace crest::cli {
namespace {

std::string Peak(double tflops) { return tflops > 0 ? Fixed(tflops, 1) : "-"; }

// "calibrated bf16,fp16" or "defaults".
std::string ModelColumn(const GpuSpec& gpu) {
  std::vector<std::string> dtypes;
  for (const auto& c : ActiveCalibrations()) {
    if (c->gpu == gpu.name) dtypes.emplace_back(DTypeName(c->dtype));
  }
  return dtypes.empty() ? "defaults" : "calibrated " + StrJoin(dtypes, ",");
}

absl::Status RunGpus(Io& io) {
  if (io.json) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const GpuSpec& gpu : GpuCatalogue()) gpus.push_back(GpuJson(gpu));
    io.out << nlohmann::json{{"schema_version", kJsonSchemaVersion}, {"gpus", gpus}}.dump(2)
           << '\n';
    return absl::OkStatus();
  }
  using A = Table::Align;
  Table table({{"name", A::kLeft},
               {"arch", A::kLeft},
               {"cc", A::kLeft},
               {"SMs"},
               {"L2_MiB"},
               {"mem_GiB"},
               {"GB/s"},
               {"fp32"},
               {"tf32"},
               {"fp16"},
               {"bf16"},
               {"fp8"},
               {"align_B"},
               {"model", A::kLeft},
               {"aliases", A::kLeft}});
  for (const GpuSpec& g : GpuCatalogue()) {
    table.AddRow(
        {std::string(g.name), std::string(g.architecture), std::string(g.compute_capability),
         std::to_string(g.sm_count), std::to_string(g.l2_bytes >> 20), Fixed(g.memory_gib, 0),
         Fixed(g.memory_bandwidth_gbs, 0), Peak(g.peak_fp32), Peak(g.peak_tf32), Peak(g.peak_fp16),
         Peak(g.peak_bf16), Peak(g.peak_fp8),
         StrCat(g.min_alignment_bytes, "/", g.preferred_alignment_bytes), ModelColumn(g),
         StrJoin(g.aliases, ",")});
  }
  table.PrintAs(io.csv, io.out);
  if (io.csv) return absl::OkStatus();
  io.out << "\nPeaks are dense TFLOP/s from public datasheets (sources cited in "
            "tuner/src/gpu_catalogue.cc); '-' = no such path.\n"
            "align_B = minimum/preferred byte multiple of contiguous dimensions.\n"
            "model = the predictor for this GPU: calibrated from measurements for the dtypes "
            "named (crest calibrate), else uncalibrated architecture defaults.\n";
  return absl::OkStatus();
}

}  // namespace

Command RegisterGpus(CLI::App& root) {
  Command cmd;
  cmd.app = root.add_subcommand("gpus", "List the GPU catalogue: SMs, L2, bandwidth, dense peaks");
  cmd.run = RunGpus;
  return cmd;
}

}  // namespace crest::cli
