// What a CLI answer and an idle crestd cost in start-up: each command run
// 20 times as its own process, wall time p50, CPU (user + system) p50 and
// peak RSS (the kernel's ru_maxrss), side by side with `crest --version`,
// whose cost is start-up alone. Then crestd started on a state directory of
// its own: its RSS once it listens. Targets (issue 39): `crest dff` peak RSS
// <= 64 MB and wall within 3x of --version; crestd at start <= 64 MB on a
// node that only predicts.
//
// Usage: startup_bench CREST CRESTD
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "crestd_process.h"
#include "percentiles.h"
#include "process_stats.h"

extern char** environ;

namespace {

struct Cost {
  double wall_ms = 0;
  double cpu_ms = 0;
  double peak_mb = 0;
};

// Runs argv once with stdout and stderr to /dev/null; false if it failed.
bool RunOnce(const std::vector<std::string>& args, Cost& cost) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int e = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (e != 0) return false;
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) return false;
  cost.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  auto ms = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3;
  };
  cost.cpu_ms = ms(usage.ru_utime) + ms(usage.ru_stime);
  cost.peak_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool Median(const std::vector<std::string>& args, Cost& out) {
  std::vector<double> wall, cpu;
  double peak = 0;
  for (int i = 0; i < 20; ++i) {
    Cost c;
    if (!RunOnce(args, c)) return false;
    wall.push_back(c.wall_ms * 1e3);
    cpu.push_back(c.cpu_ms * 1e3);
    peak = std::max(peak, c.peak_mb);
  }
  out = {crest::bench::Summarize(wall).p50_us / 1e3, crest::bench::Summarize(cpu).p50_us / 1e3,
         peak};
  return true;
}

// crestd's resident set once it listens (and after a second idle).
double CrestdStartMb(const std::string& crestd) {
  char pattern[] = "/tmp/crest-startup-bench-XXXXXX";
  const std::string dir = mkdtemp(pattern);
  crest::testing::CrestdProcess daemon;
  std::string why;
  double mb = -1;
  if (daemon.Start(crestd, dir, {}, &why)) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    mb = static_cast<double>(crest::bench::StatusKib(daemon.pid(), "VmHWM")) / 1024.0;
    daemon.Stop(SIGTERM);
  } else {
    std::fprintf(stderr, "crestd did not start: %s\n", why.c_str());
  }
  std::filesystem::remove_all(dir);
  return mb;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: startup_bench CREST CRESTD\n");
    return 2;
  }
  const std::string crest = argv[1];
  const std::vector<std::vector<std::string>> commands = {
      {crest, "--version"},
      {crest, "--help"},
      {crest, "dff", "--hidden", "4096", "--gpu", "h100"},
      {crest, "dff", "--hidden", "4096", "--gpu", "h100", "--pass", "train"},
      {crest, "info"},
  };
  std::printf("%-48s %9s %7s %9s %8s\n", "command (20 runs each)", "wall_ms", "x_ver", "cpu_ms",
              "peak_MB");
  double version_ms = 0;
  for (const auto& c : commands) {
    Cost cost;
    std::string name = "crest";
    for (size_t i = 1; i < c.size(); ++i) name += " " + c[i];
    if (!Median(c, cost)) {
      std::fprintf(stderr, "%s failed\n", name.c_str());
      return 1;
    }
    if (version_ms == 0) version_ms = cost.wall_ms;
    std::printf("%-48s %9.1f %7.2f %9.1f %8.1f\n", name.c_str(), cost.wall_ms,
                cost.wall_ms / version_ms, cost.cpu_ms, cost.peak_mb);
  }
  std::printf("crestd (no GPU: predicts only), RSS once listening: %.1f MB  [target <= 64 MB]\n",
              CrestdStartMb(argv[2]));
  return 0;
}
