// Internal to the crest CLI: Ctrl-C and SIGTERM during long work. While an
// InterruptScope lives, those signals set a flag instead of ending the
// process, so the work can stop cleanly (between GEMMs, or by cancelling a
// call); the default handlers come back when the scope ends.
#pragma once

#include <atomic>

namespace crest::cli {

class InterruptScope final {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  // Set once a signal arrived; polled by the work.
  const std::atomic<bool>& flag() const;
  bool raised() const { return flag().load(); }
};

}  // namespace crest::cli
