#include "crestd_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace crest::testing {

CrestdProcess::~CrestdProcess() {
  if (pid_ > 0) Stop(SIGKILL);
}

bool CrestdProcess::Start(const std::string& binary, const std::string& state_dir,
                          const std::vector<std::string>& args, std::string* why) {
  state_dir_ = state_dir;
  const std::string port_file = state_dir + "/port";
  std::remove(port_file.c_str());
  std::vector<std::string> argv = {binary,    "--listen",    "127.0.0.1:0", "--state-dir",
                                   state_dir, "--port-file", port_file};
  if (std::find(args.begin(), args.end(), "--shutdown-grace") == args.end()) {
    argv.insert(argv.end(), {"--shutdown-grace", "2"});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  // The child reopens stdout, which would write out a copy of what the
  // parent has buffered.
  std::fflush(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    // Neither output stream may stay tied to the test runner's pipes.
    if (freopen("/dev/null", "w", stdout) == nullptr) _exit(127);
    if (freopen((state_dir + "/crestd.log").c_str(), "a", stderr) == nullptr) _exit(127);
    std::vector<char*> raw;
    for (auto& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    execv(binary.c_str(), raw.data());
    _exit(127);
  }
  port_ = 0;
  for (int i = 0; i < 3000 && port_ == 0; ++i) {  // up to 30 s on a loaded machine
    std::ifstream in(port_file);
    if (in >> port_) break;
    port_ = 0;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      *why = "crestd exited: " + log();
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (port_ == 0) *why = "crestd did not start: " + log();
  return port_ != 0;
}

int CrestdProcess::Stop(int signal) {
  if (pid_ <= 0) return -1;
  kill(pid_, signal);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

std::string CrestdProcess::log() const {
  std::ifstream in(state_dir_ + "/crestd.log");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::shared_ptr<grpc::Channel> CrestdProcess::Channel() const {
  return grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
}

std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return "";
  const std::string request = "GET " + path + " HTTP/1.0\r\n\r\n";
  if (write(fd, request.data(), request.size()) < 0) return "";
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

}  // namespace crest::testing
