// Waiting for an event a daemon under test logs, instead of sleeping for a
// guess at how long it takes and asserting "not yet" after.
#pragma once

#include <chrono>
#include <string>
#include <thread>

namespace crest::testing {

// How many times `text` occurs in `log`.
inline int Occurrences(const std::string& log, const std::string& text) {
  int found = 0;
  for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++found;
  return found;
}

// Waits until `daemon.log()` holds `text` at least `count` times; false after
// `timeout_s`. `daemon` is a CrestdProcess or an InProcessCrestd.
template <typename Daemon>
bool WaitForLog(const Daemon& daemon, const std::string& text, int count = 1,
                double timeout_s = 30) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (Occurrences(daemon.log(), text) < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace crest::testing
