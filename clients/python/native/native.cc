// crest._native: the crest command's answering commands run in the Python
// process (no subprocess, no binary on PATH). Each call is one invocation of
// `crest ARGS…` (run_cli.h) with its output captured; the GIL is released
// while it runs. Exceptions never cross into Python: RunCli catches them.
#include <sstream>
#include <string>
#include <vector>

#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "run_cli.h"

namespace py = pybind11;

PYBIND11_MODULE(_native, m) {
  m.doc() = "Crest's answering commands (dff, vocab, design, explain, shapes, gpus, lookup, "
            "calibrate) run in process";
  m.def(
      "run",
      [](const std::vector<std::string>& args) {
        std::ostringstream out;
        std::ostringstream err;
        int code = 0;
        {
          py::gil_scoped_release release;
          code = crest::cli::RunCli(args, crest::cli::AnsweringCommands(), out, err);
        }
        return py::make_tuple(code, out.str(), err.str());
      },
      py::arg("args"),
      "Runs `crest ARGS…` (an answering command) in process; returns (exit code, stdout, "
      "stderr). Exit codes as the binary's: 0, 1 failure, 2 bad input.");
}
