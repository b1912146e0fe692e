// Benchmarks only: a crestd child process on an ephemeral loopback port.
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

namespace crest::bench {

struct Crestd {
  pid_t pid = -1;
  int port = 0;  // 0: it did not start (see STATE_DIR/crestd.log)
};

// Starts `binary` on 127.0.0.1:0 with `state_dir`; waits up to 30 s for its
// port. Its log goes to STATE_DIR/crestd.log.
inline Crestd StartCrestd(const std::string& binary, const std::string& state_dir) {
  const std::string port_file = state_dir + "/port";
  std::remove(port_file.c_str());
  Crestd d;
  d.pid = fork();
  if (d.pid == 0) {
    if (freopen((state_dir + "/crestd.log").c_str(), "a", stderr) == nullptr) _exit(127);
    execl(binary.c_str(), binary.c_str(), "--listen", "127.0.0.1:0", "--state-dir",
          state_dir.c_str(), "--port-file", port_file.c_str(), "--log-level", "warn",
          "--shutdown-grace", "2", nullptr);
    _exit(127);
  }
  for (int i = 0; i < 3000 && d.port == 0; ++i) {
    std::ifstream in(port_file);
    if (!(in >> d.port)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (d.port == 0) kill(d.pid, SIGKILL);
  return d;
}

// SIGTERM, then the exit status.
inline int StopCrestd(const Crestd& d) {
  kill(d.pid, SIGTERM);
  int status = 0;
  waitpid(d.pid, &status, 0);
  return status;
}

}  // namespace crest::bench
