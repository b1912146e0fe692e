// Internal to the crest CLI: one invocation of the command line, as the
// `crest` binary and the Python extension (crest._native) run it.
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "cli.h"
#include "crest/remote/connect_options.h"

namespace crest::cli {

// A command by the name it registers (`crest NAME …`).
struct Registrar {
  std::string_view name;
  Command (*add)(CLI::App& root);
};

// Every command of the `crest` binary, in help order.
std::span<const Registrar> AllCommands();
// The commands that answer questions (gpus, shapes, explain, dff, lookup,
// vocab, design, calibrate): what the Python extension runs in process.
std::span<const Registrar> AnsweringCommands();

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;
// A verdict asked to fail: `crest compare --fail-on-regression` (a GEMM, or
// with --fleet a device, is slower), `crest fleet pull --fail-on-slow`.
inline constexpr int kExitRegression = 3;
inline constexpr int kExitInterrupted = 130;

// Parses `args` (without the program name) as `crest ARGS…` with the given
// commands, runs the one named (registering only it when exactly one of the
// commands' names appears among `args`, all of them otherwise), writes to `out` and `err`, and
// returns the exit code: 0, 1 failure, 2 bad input, 3 a slower verdict asked to fail
// (kExitRegression), 130 interrupted. Never throws. With `document` and
// --json, the JSON document is kept there instead of written to `out`; with
// `dff_rows` too, a d_ff answer's rows are kept there, apart from it
// (Io::dff_rows). With `credentials`, a --server command uses that token
// and CA certificate, held in memory by the caller, over the flags' files.
// With `failure`, a command that fails leaves its status code there (a
// crestd's gRPC code, for one it refused); it is left as it was otherwise.
int RunCli(const std::vector<std::string>& args, std::span<const Registrar> commands,
           std::ostream& out, std::ostream& err, nlohmann::ordered_json* document = nullptr,
           std::vector<tuner::DffRow>* dff_rows = nullptr,
           const remote::InMemoryCredentials* credentials = nullptr,
           absl::StatusCode* failure = nullptr);

}  // namespace crest::cli
