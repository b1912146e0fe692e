// Internal to crestd: where costly answers are computed. QueryDff, TimeGemms
// and Compare can cost a second of CPU and hundreds of MB; run inline on
// the threads that serve calls, 200 of them stalled every other caller for
// minutes (issue 40). Here they run on a few threads of their own, taken
// in turn by caller (round robin), so one caller's backlog delays another's
// answer by at most one computation per thread. Each caller may have at
// most `per_caller` answers waiting or running, and at most `max_waiting`
// wait in all; the requests waiting are bounded by bytes too, a caller's
// and all callers' (each is held parsed until its turn). Beyond any limit
// the call is refused at once (RESOURCE_EXHAUSTED naming it). Work whose
// caller left before it started is not run.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace crest::service {

struct AnswerPoolOptions {
  int threads = 2;        // answers computed at once
  int max_waiting = 256;  // answers waiting for a thread, all callers
  int per_caller = 64;    // answers one caller may have waiting or running
  // Request bytes waiting, all callers and one caller (a 4 MiB Compare
  // request is held as its bytes and parsed, besides gRPC's own copy).
  size_t max_waiting_bytes = size_t{64} << 20;
  size_t per_caller_bytes = size_t{16} << 20;
};

class AnswerPool final {
 public:
  // What a caller asked. `compute()` computes the answer and returns the
  // status to finish the call with; `finish(status)` finishes the call. The
  // pool gives the caller's budget back between the two, so a caller that
  // asks again as soon as its answer arrives is not counted twice. Work
  // not computed is only finished: CANCELLED when the caller left while it
  // waited (`left` says whether it has gone), UNAVAILABLE when the pool
  // stops.
  struct Work {
    std::string caller;  // whose budget and turn it counts against
    size_t bytes = 0;    // the request's size
    std::function<absl::Status()> compute;
    std::function<void(const absl::Status&)> finish;
    std::function<bool()> left;
  };

  explicit AnswerPool(AnswerPoolOptions options);
  ~AnswerPool();  // Stop()s

  AnswerPool(const AnswerPool&) = delete;
  AnswerPool& operator=(const AnswerPool&) = delete;

  // Queues `work`, or says why not (the caller's budget or the queue full);
  // `method` names the call in the message.
  absl::Status Post(const char* method, Work work);
  // Lets `caller` compute a small answer on the calling thread (crestd's serving thread)
  // instead of handing it to a pool thread and back (two cross-thread
  // wake-ups: about a third of an uncached QueryDff's CPU on the 2-core
  // VM): only while no answer waits or is computed anywhere, so no caller
  // is passed over and at most one answer is computed so at a time (the
  // pool's threads may start others meanwhile). It counts against the
  // caller's budget like a pool's computation. Each true is followed by
  // DoneHere(caller), once computed and before the call is finished. The
  // caller decides what is small, and when else not to ask (crestd: while a
  // job runs).
  bool TryRunHere(const std::string& caller);
  void DoneHere(const std::string& caller) { Done(caller); }
  // Finishes every waiting call uncomputed, then joins the threads.
  void Stop();

 private:
  struct Caller {
    std::deque<Work> waiting;
    int running = 0;
    size_t waiting_bytes = 0;
  };
  void Run();
  bool TakeNext(Work* work);  // mutex_ held; round robin over callers
  void Done(const std::string& caller);

  const AnswerPoolOptions options_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;                  // GUARDED_BY(mutex_)
  int waiting_ = 0;                        // GUARDED_BY(mutex_): all callers
  size_t waiting_bytes_ = 0;               // GUARDED_BY(mutex_): all callers
  std::map<std::string, Caller> callers_;  // GUARDED_BY(mutex_): with work waiting or running
  std::string last_served_;                // GUARDED_BY(mutex_): whose turn was last
  std::vector<std::thread> threads_;
};

}  // namespace crest::service
