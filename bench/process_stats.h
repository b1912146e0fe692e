// Benchmarks only: what another process (a crestd under test) has used so
// far, from /proc.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace crest::bench {

// CPU seconds used so far by a process, in its own code and in the kernel
// for it (/proc/PID/stat's utime and stime; 0 when it is not there).
struct CpuSeconds {
  double user = 0;
  double system = 0;
  double Total() const { return user + system; }
};

inline CpuSeconds ProcessCpu(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t after_name = text.rfind(')');  // the name may hold spaces
  if (after_name == std::string::npos) return {};
  std::istringstream fields(text.substr(after_name + 2));
  std::string field;
  CpuSeconds out;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) out.user = std::stod(field) / tick;
    if (i == 15) out.system = std::stod(field) / tick;
  }
  return out;
}

// CPU seconds (user + system) used so far by process `pid`.
inline double ProcessCpuSeconds(pid_t pid) { return ProcessCpu(pid).Total(); }

// A memory field of /proc/PID/status [KiB]: VmRSS (resident now), VmHWM (its
// peak), RssAnon, RssFile; -1 when the process or the field is not there.
inline long StatusKib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return -1;
}

}  // namespace crest::bench
