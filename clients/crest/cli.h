// Internal to the crest CLI: how commands are registered and run.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "crest/common/cmdline.h"
#include "nlohmann/json_fwd.hpp"

namespace crest::tuner {
struct DffRow;  // crest/tuner/dff_ranking.h
}

namespace crest::cli {

// Commands declare their flags through crest::cmdline, which keeps CLI11's
// header out of their files.
using cmdline::AddCommand;
using cmdline::AddFlag;
using cmdline::AddOption;
using cmdline::Count;
using cmdline::KeepUnknown;
using cmdline::Parsed;
using cmdline::Remaining;
using cmdline::RequireCommand;

// What every command writes to. Commands never call exit().
struct Io {
  std::ostream& out;
  std::ostream& err;
  bool json = false;  // --json: one JSON document on stdout
  bool csv = false;   // --csv: the command's table as CSV (header line, then rows), nothing else
  // With json: each document is kept here instead of written to `out` (the
  // Python extension hands it over as objects, not text).
  nlohmann::ordered_json* document = nullptr;
  // With document: a d_ff answer's rows are moved here instead, and the
  // document's "candidates" is left empty (the extension reads each row's
  // fields from DffRowFields, as tuples).
  std::vector<tuner::DffRow>* dff_rows = nullptr;
  // The exit code of a command that succeeded but has a verdict to report
  // (kExitRegression: compare --fail-on-regression, fleet pull
  // --fail-on-slow); 0 otherwise.
  int exit_code = 0;
};

// A registered subcommand and what runs it after a successful parse.
struct Command {
  CLI::App* app = nullptr;
  std::function<absl::Status(Io&)> run;
};

Command RegisterGpus(CLI::App& root);
Command RegisterShapes(CLI::App& root);
Command RegisterExplain(CLI::App& root);
Command RegisterDff(CLI::App& root);
Command RegisterSweep(CLI::App& root);
Command RegisterLookup(CLI::App& root);
Command RegisterDb(CLI::App& root);
Command RegisterInfo(CLI::App& root);
Command RegisterJobs(CLI::App& root);
Command RegisterFleet(CLI::App& root);
Command RegisterDoctor(CLI::App& root);
Command RegisterCalibrate(CLI::App& root);
Command RegisterVocab(CLI::App& root);
Command RegisterDesign(CLI::App& root);
Command RegisterCompare(CLI::App& root);
Command RegisterPlot(CLI::App& root);

// Shared flag: --dtype, parsed later by ParseDType so the error names it.
inline constexpr const char* kDtypeHelp = "element type: fp32, tf32, fp16, bf16 or fp8";
inline constexpr const char* kPassHelp =
    "fwd (forward only) or train (forward, data- and weight-gradient GEMMs)";

// "fwd" → false, "train" → true; anything else InvalidArgument naming --pass.
absl::Status ParsePass(const std::string& text, bool* train);

}  // namespace crest::cli
