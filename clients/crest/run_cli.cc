#include "run_cli.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <ostream>
#include <sstream>

#include "CLI/CLI.hpp"
#include "build_info.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/predictor.h"
#include "remote_flags.h"

namespace crest::cli {
namespace {

std::string Version() {
  std::ostringstream out;
  out << "crest " << build::kVersion << "\n"
      << "predictor: " << tuner::kPredictorVersion << "\n"
      << "CUDA parts: " << (build::kCudaEnabled ? "built" : "not built") << " ("
      << build::kCudaReason << ")\n";
  return out.str();
}

// "crest jobs submit": the command the flags were meant for.
std::string ParsedPrefix(const CLI::App& app) {
  std::string prefix = "crest";
  for (const CLI::App* sub = &app; sub != nullptr;) {
    const CLI::App* next = nullptr;
    for (const CLI::App* child : sub->get_subcommands()) {
      if (child->parsed()) next = child;
    }
    if (next != nullptr) prefix += " " + next->get_name();
    sub = next;
  }
  return prefix;
}

// The one command named among `args`, or every command when none or more
// than one is (the parse then says what is wrong): building a command's
// options costs more than the answer of a small question.
std::span<const Registrar> NamedCommands(const std::vector<std::string>& args,
                                         std::span<const Registrar> registrars) {
  std::optional<size_t> named;
  for (size_t i = 0; i < registrars.size(); ++i) {
    if (std::find(args.begin(), args.end(), registrars[i].name) == args.end()) continue;
    if (named) return registrars;
    named = i;
  }
  return named ? registrars.subspan(*named, 1) : registrars;
}

int Run(const std::vector<std::string>& args, std::span<const Registrar> registrars,
        std::ostream& out, std::ostream& err, nlohmann::ordered_json* document,
        std::vector<tuner::DffRow>* dff_rows, const remote::InMemoryCredentials* credentials,
        absl::StatusCode* failure) {
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
  app.set_version_flag("--version", Version, "print version and build information");
  AddRemoteFlags(app);
  std::vector<std::string> calibrations;
  app.add_option("--calibration", calibrations,
                 "load a predictor calibration (crest calibrate --out FILE); repeatable; it "
                 "replaces the shipped one for its GPU and dtype");
  std::vector<Command> commands;
  for (const Registrar& registrar : NamedCommands(args, registrars)) {
    commands.push_back(registrar.add(app));
  }

  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses from the back
    app.parse(reversed);
  } catch (const CLI::Success& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    const std::string prefix = ParsedPrefix(app);
    err << prefix << ": error: " << e.what() << "\nRun '" << prefix
        << " --help' for more information.\n";
    return kExitBadInput;
  }
  if (credentials != nullptr) UseInMemoryCredentials(*credentials);
  for (const std::string& file : calibrations) {
    if (auto s = tuner::LoadCalibrationFile(file); !s.ok()) {
      err << "crest: error: " << s.message() << "\n";
      return kExitBadInput;
    }
  }
  Io io{out, err, json, csv};
  io.document = document;
  io.dff_rows = dff_rows;
  for (auto& command : commands) {
    if (!command.app->parsed()) continue;
    const absl::Status status = command.run(io);
    if (status.ok()) return io.exit_code;
    if (failure != nullptr) *failure = status.code();
    err << "crest " << command.app->get_name() << ": error: " << status.message() << "\n";
    if (absl::IsCancelled(status)) return kExitInterrupted;
    const bool bad_input = absl::IsInvalidArgument(status) || absl::IsNotFound(status);
    return bad_input ? kExitBadInput : kExitFailure;
  }
  return kExitFailure;
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::span<const Registrar> commands,
           std::ostream& out, std::ostream& err, nlohmann::ordered_json* document,
           std::vector<tuner::DffRow>* dff_rows, const remote::InMemoryCredentials* credentials,
           absl::StatusCode* failure) {
  try {
    return Run(args, commands, out, err, document, dff_rows, credentials, failure);
  } catch (const std::exception& e) {
    err << "crest: error: " << e.what() << "\n";
  } catch (...) {
    err << "crest: error: an unknown exception\n";
  }
  return kExitFailure;
}

}  // namespace crest::cli
