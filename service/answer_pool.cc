#include "answer_pool.h"

#include <algorithm>

#include "crest/common/str_cat.h"

namespace crest::service {

AnswerPool::AnswerPool(AnswerPoolOptions options) : options_(options) {
  const int n = std::max(1, options_.threads);
  threads_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Run(); });
}

AnswerPool::~AnswerPool() { Stop(); }

absl::Status AnswerPool::Post(const char* method, Work work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return absl::UnavailableError(StrCat(method, ": crestd is stopping"));
    auto found = callers_.find(work.caller);
    const int mine = found == callers_.end()
                         ? 0
                         : found->second.running + static_cast<int>(found->second.waiting.size());
    if (mine >= options_.per_caller) {
      return absl::ResourceExhaustedError(
          StrCat(method, ": this caller already has ", mine,
                 " costly answers (QueryDff, TimeGemms, Compare) waiting or being computed, its "
                 "limit (--answers-per-caller); wait for some to end"));
    }
    if (waiting_ >= options_.max_waiting) {
      return absl::ResourceExhaustedError(
          StrCat(method, ": ", waiting_,
                 " costly answers are waiting for crestd's answer threads, the limit "
                 "(--max-waiting-answers); try again shortly"));
    }
    const size_t caller_bytes = found == callers_.end() ? 0 : found->second.waiting_bytes;
    if (caller_bytes + work.bytes > options_.per_caller_bytes ||
        waiting_bytes_ + work.bytes > options_.max_waiting_bytes) {
      return absl::ResourceExhaustedError(
          StrCat(method, ": the requests waiting for crestd's answer threads would pass ",
                 options_.per_caller_bytes >> 20, " MiB for one caller or ",
                 options_.max_waiting_bytes >> 20, " MiB in all (this one is ", work.bytes,
                 " bytes); try again when some are answered"));
    }
    ++waiting_;
    waiting_bytes_ += work.bytes;
    Caller& c = callers_[work.caller];
    c.waiting_bytes += work.bytes;
    c.waiting.push_back(std::move(work));
  }
  wake_.notify_one();
  return absl::OkStatus();
}

bool AnswerPool::TryRunHere(const std::string& caller) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A caller is listed while it has work waiting or running: none listed,
  // none waits and none computes.
  if (stopping_ || !callers_.empty() || options_.per_caller < 1) return false;
  ++callers_[caller].running;
  return true;
}

void AnswerPool::Stop() {
  std::vector<Work> unrun;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [name, c] : callers_) {
      for (Work& w : c.waiting) unrun.push_back(std::move(w));
      c.waiting.clear();
      c.waiting_bytes = 0;
    }
    waiting_ = 0;
    waiting_bytes_ = 0;
  }
  wake_.notify_all();
  for (Work& w : unrun) {
    w.finish(absl::UnavailableError("crestd is stopping; the answer was not computed"));
  }
  for (std::thread& t : threads_) t.join();
}

bool AnswerPool::TakeNext(Work* work) {
  // The first caller after the one served last that has work waiting.
  auto it = callers_.upper_bound(last_served_);
  for (size_t seen = 0; seen < callers_.size(); ++seen, ++it) {
    if (it == callers_.end()) it = callers_.begin();
    if (it->second.waiting.empty()) continue;
    *work = std::move(it->second.waiting.front());
    it->second.waiting.pop_front();
    ++it->second.running;
    it->second.waiting_bytes -= work->bytes;
    --waiting_;
    waiting_bytes_ -= work->bytes;
    last_served_ = it->first;
    return true;
  }
  return false;
}

void AnswerPool::Done(const std::string& caller) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = callers_.find(caller);
  if (it == callers_.end()) return;
  --it->second.running;
  if (it->second.running <= 0 && it->second.waiting.empty()) callers_.erase(it);
}

void AnswerPool::Run() {
  for (;;) {
    Work work;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || waiting_ > 0; });
      if (!TakeNext(&work)) return;  // stopping, nothing left
    }
    const bool gone = work.left && work.left();
    const absl::Status status =
        gone ? absl::CancelledError("the caller left before its answer was computed")
             : work.compute();
    // The budget back before the answer goes: a caller asking again at once
    // would otherwise find this answer still counted.
    Done(work.caller);
    work.finish(status);
  }
}

}  // namespace crest::service
