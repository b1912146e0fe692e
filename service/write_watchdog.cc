#include "write_watchdog.h"

#include <algorithm>

#include "crest/common/str_cat.h"
#include "log.h"

namespace crest::service {

WriteWatchdog::WriteWatchdog(double timeout_s, double idle_s)
    : timeout_(timeout_s), idle_(idle_s), thread_([this] { Run(); }) {}

WriteWatchdog::~WriteWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

int64_t WriteWatchdog::Add(grpc::ServerContextBase* context, std::string method) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t id = next_id_++;
  streams_.emplace(id, Watched{context, std::move(method), std::nullopt, Clock::now()});
  return id;
}

void WriteWatchdog::Writing(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = streams_.find(id); it != streams_.end()) it->second.writing_since = Clock::now();
}

void WriteWatchdog::Wrote(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = streams_.find(id); it != streams_.end()) {
    it->second.writing_since.reset();
    it->second.active = Clock::now();
  }
}

bool WriteWatchdog::Cut(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = streams_.find(id);
  return it != streams_.end() && it->second.cancelled;
}

void WriteWatchdog::Remove(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.erase(id);
}

void WriteWatchdog::Cut(Watched& s, const char* event, const std::string& why) {
  // Under the lock: Remove (in OnDone) cannot let the context go meanwhile.
  // Logged first: the client may act on the cancel before a later line.
  s.cancelled = true;
  Log(Level::kWarn, event, {{"method", s.method}, {"peer", s.context->peer()}, {"why", why}});
  s.context->TryCancel();
}

void WriteWatchdog::Run() {
  // Checked a few times per timeout, at least every 250 ms.
  const auto tick =
      std::min<std::chrono::duration<double>>(timeout_ / 4, std::chrono::milliseconds(250));
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, tick, [this] { return stopping_; })) {
    const auto now = Clock::now();
    for (auto& [id, s] : streams_) {
      if (s.cancelled) continue;
      if (s.writing_since && now - *s.writing_since >= timeout_) {
        Cut(s, "slow_reader",
            StrCat("a write waited longer than ", timeout_.count(),
                   " s (--stream-write-timeout); the stream ended"));
      } else if (!s.writing_since && idle_.count() > 0 && now - s.active >= idle_) {
        Cut(s, "idle_stream",
            StrCat("nothing to send for ", idle_.count(),
                   " s (--stream-idle-timeout); the stream ended, its slot freed"));
      }
    }
  }
}

}  // namespace crest::service
