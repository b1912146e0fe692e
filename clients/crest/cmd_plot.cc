// `crest plot`: an answer drawn to an image file by the Python package's
// plotter (crest.plot, with Debian's python3-matplotlib), which this command
// runs as `/usr/bin/python3 -m crest plot KIND …` with CREST_BIN set to this
// binary: one plotting code for the CLI and for notebooks.
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;  // POSIX: this process's environment

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli.h"
#include "crest/common/posix_error.h"
#include "crest/common/str_cat.h"
#include "remote_flags.h"

namespace crest::cli {
namespace {

constexpr const char* kPython = "/usr/bin/python3";  // Debian's: its matplotlib and pandas

struct PlotFlags {
  std::string kind;
  std::string out;
  std::string title;
};

// Where the `crest` package is: CREST_PYTHON_PACKAGE, else this build's
// (CMake assembles it in build/python); empty: the interpreter's own path
// (a package installed with pip).
std::string PackageDir() {
  if (const char* dir = std::getenv("CREST_PYTHON_PACKAGE"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(std::filesystem::path(CREST_PYTHON_BUILD_DIR) / "crest", ec)) {
    return CREST_PYTHON_BUILD_DIR;
  }
  return "";
}

std::string SelfPath() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// Runs the plotter and waits for it; its exit code is the command's (it
// prints its own errors and what it wrote).
absl::Status RunPlot(const PlotFlags& f, const std::vector<std::string>& rest, Io& io) {
  if (access(kPython, X_OK) != 0) {
    return absl::FailedPreconditionError(
        StrCat("plot: ", kPython,
               " is not installed: crest plot draws with Debian's python3 and "
               "python3-matplotlib (scripts/install-deps.sh installs them)"));
  }
  std::vector<std::string> args = {"python3", "-m", "crest", "plot", f.kind};
  if (!Remote().server.empty()) args.insert(args.end(), {"--server", Remote().server});
  args.insert(args.end(), rest.begin(), rest.end());
  args.insert(args.end(), {"--out", f.out});
  if (!f.title.empty()) args.insert(args.end(), {"--title", f.title});
  // The child's environment, built here: after fork() it only execs.
  std::vector<std::string> env;
  const std::string package = PackageDir();
  const std::string self = SelfPath();
  bool mpl_backend = false;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("PYTHONPATH=") && !package.empty()) continue;
    if (entry.starts_with("CREST_BIN=") && !self.empty()) continue;
    mpl_backend = mpl_backend || entry.starts_with("MPLBACKEND=");
    env.emplace_back(entry);
  }
  if (!package.empty()) {
    const char* old = std::getenv("PYTHONPATH");
    env.push_back(StrCat("PYTHONPATH=", package,
                         old != nullptr && *old != '\0' ? StrCat(":", old) : std::string()));
  }
  if (!self.empty()) env.push_back(StrCat("CREST_BIN=", self));
  if (!mpl_backend) env.emplace_back("MPLBACKEND=Agg");  // files only: no display needed
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  io.out.flush();
  io.err.flush();
  const pid_t pid = fork();
  if (pid < 0) return PosixError(errno, "plot: fork");
  if (pid == 0) {
    execve(kPython, argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return PosixError(errno, "plot: wait");
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (code == 1 && package.empty()) {
    io.err << "crest plot: if the error above is \"No module named 'crest'\": install the "
              "package (pip install build/python) or set CREST_PYTHON_PACKAGE\n";
  }
  io.exit_code = code;
  return absl::OkStatus();
}

}  // namespace

Command RegisterPlot(CLI::App& root) {
  auto flags = std::make_shared<PlotFlags>();
  Command cmd;
  CLI::App& app = *AddCommand(
      root, "plot",
      "Draw an answer into an image: dff, vocab and design take that command's flags; study "
      "takes lists (--gpu h100,a100 --hidden 4096,8192 --tp 1,2 --pass fwd,train) and draws a "
      "panel per GPU and pass. Drawn by the Python package (crest.plot) with Debian's "
      "python3-matplotlib, through /usr/bin/python3; the format follows --out's extension");
  cmd.app = &app;
  AddOption(app, "kind", flags->kind, "what to draw: dff, vocab, design or study")
      .Required()
      .OneOf({"dff", "vocab", "design", "study"});
  AddOption(app, "--out", flags->out, "the image to write: .png, .svg or .pdf").Required();
  AddOption(app, "--title", flags->title, "replace the plot's title");
  KeepUnknown(app);  // the flags it does not know are the plotted command's
  CLI::App* self = &app;
  cmd.run = [flags, self](Io& io) { return RunPlot(*flags, Remaining(*self), io); };
  return cmd;
}

}  // namespace crest::cli
