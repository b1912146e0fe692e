// `crest gpus`: the GPU catalogue.
#include "catalogue_reports.h"
#include "cli.h"
#include "crest/tuner/gpu_catalogue.h"
#include "printer.h"

namespace crest::cli {
namespace {

absl::Status RunGpus(Io& io) {
  GpusReport report;
  for (const tuner::GpuSpec& gpu : tuner::GpuCatalogue()) report.gpus.push_back(&gpu);
  PrinterFor(io)->Print(report);
  return absl::OkStatus();
}

}  // namespace

Command RegisterGpus(CLI::App& root) {
  Command cmd;
  cmd.app = AddCommand(root, "gpus", "List the GPU catalogue: SMs, L2, bandwidth, dense peaks");
  cmd.run = RunGpus;
  return cmd;
}

}  // namespace crest::cli
