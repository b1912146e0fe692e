#include "write_watchdog.h"

#include <algorithm>

#include "crest/common/str_cat.h"
#include "log.h"

namespace crest::crestd {

WriteWatchdog::WriteWatchdog(double timeout_s)
    : timeout_(timeout_s), thread_([this] { Run(); }) {}

WriteWatchdog::~WriteWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

int64_t WriteWatchdog::Add(grpc::CallbackServerContext* context, std::string method) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t id = next_id_++;
  streams_.emplace(id, Watched{context, std::move(method), std::nullopt});
  return id;
}

void WriteWatchdog::Writing(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = streams_.find(id); it != streams_.end()) it->second.writing_since = Clock::now();
}

void WriteWatchdog::Wrote(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = streams_.find(id); it != streams_.end()) it->second.writing_since.reset();
}

void WriteWatchdog::Remove(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.erase(id);
}

void WriteWatchdog::Run() {
  // Checked a few times per timeout, at least every 250 ms.
  const auto tick = std::min<std::chrono::duration<double>>(timeout_ / 4, std::chrono::milliseconds(250));
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, tick, [this] { return stopping_; })) {
    const auto now = Clock::now();
    for (auto& [id, s] : streams_) {
      if (s.cancelled || !s.writing_since || now - *s.writing_since < timeout_) continue;
      // Under the lock: Remove (in OnDone) cannot let the context go meanwhile.
      s.cancelled = true;
      s.context->TryCancel();
      Log(Level::kWarn, "slow_reader",
          {{"method", s.method},
           {"peer", s.context->peer()},
           {"why", StrCat("a write waited longer than ", timeout_.count(),
                          " s (--stream-write-timeout); the stream ended")}});
    }
  }
}

}  // namespace crest::crestd
