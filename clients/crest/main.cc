// crest: the Crest command-line client.
#include <iostream>
#include <string>
#include <vector>

#include "build_info.h"
#include "cli.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/predictor.h"
#include "remote.h"

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitFailure = 1;
constexpr int kExitInterrupted = 130;

void PrintVersion(std::ostream& out) {
  out << "crest " << crest::build::kVersion << "\n"
      << "predictor: " << crest::kPredictorVersion << "\n"
      << "CUDA parts: " << (crest::build::kCudaEnabled ? "built" : "not built") << " ("
      << crest::build::kCudaReason << ")\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "crest: find the GEMM shapes a GPU likes (predicted today; measured with "
      "the cuBLASLt backend)"};
  app.require_subcommand(1);
  app.fallthrough();
  bool json = false;
  bool csv = false;
  auto* json_flag = app.add_flag("--json", json, "print one JSON document instead of a table");
  app.add_flag("--csv", csv,
               "print the command's table as CSV (RFC 4180: a header line, then one line per "
               "row) and nothing else")
      ->excludes(json_flag);
  app.set_version_flag(
      "--version",
      [] {
        std::ostringstream out;
        PrintVersion(out);
        return out.str();
      },
      "print version and build information");
  crest::cli::AddRemoteFlags(app);
  std::vector<std::string> calibrations;
  app.add_option("--calibration", calibrations,
                 "load a predictor calibration (crest calibrate --out FILE); repeatable; it "
                 "replaces the shipped one for its GPU and dtype");

  std::vector<crest::cli::Command> commands = {
      crest::cli::RegisterGpus(app),    crest::cli::RegisterShapes(app),
      crest::cli::RegisterExplain(app), crest::cli::RegisterDff(app),
      crest::cli::RegisterSweep(app),   crest::cli::RegisterLookup(app),
      crest::cli::RegisterDb(app),      crest::cli::RegisterInfo(app),
      crest::cli::RegisterJobs(app),    crest::cli::RegisterFleet(app),
      crest::cli::RegisterDoctor(app),  crest::cli::RegisterCalibrate(app),
      crest::cli::RegisterVocab(app),   crest::cli::RegisterDesign(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // "crest jobs submit: error: …": the command the flags were meant for.
    std::string prefix = "crest";
    for (const CLI::App* sub = &app; sub != nullptr;) {
      const CLI::App* next = nullptr;
      for (const CLI::App* child : sub->get_subcommands()) {
        if (child->parsed()) next = child;
      }
      if (next != nullptr) prefix += " " + next->get_name();
      sub = next;
    }
    std::cerr << prefix << ": error: " << e.what() << "\nRun '" << prefix
              << " --help' for more information.\n";
    return kExitBadInput;
  }

  for (const std::string& file : calibrations) {
    if (auto s = crest::LoadCalibrationFile(file); !s.ok()) {
      std::cerr << "crest: error: " << s.message() << "\n";
      return kExitBadInput;
    }
  }
  crest::cli::Io io{std::cout, std::cerr, json, csv};
  for (auto& command : commands) {
    if (!command.app->parsed()) continue;
    const absl::Status status = command.run(io);
    if (status.ok()) return 0;
    std::cerr << "crest " << command.app->get_name() << ": error: " << status.message() << "\n";
    if (absl::IsCancelled(status)) return kExitInterrupted;
    const bool bad_input = absl::IsInvalidArgument(status) || absl::IsNotFound(status);
    return bad_input ? kExitBadInput : kExitFailure;
  }
  return kExitFailure;
}
