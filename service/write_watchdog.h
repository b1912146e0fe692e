// Internal to crestd: ends streams whose reader stopped reading. A reader
// that never takes its messages would otherwise hold its stream slot (and,
// for ExportResults, the one snapshot) for as long as it stays connected.
// Streams report each write's start and end; a write in flight longer than
// the timeout cancels its call (the stream then ends as if the client left).
// So does a stream with nothing written for the idle timeout (a watcher of
// a job that does not move holds a stream slot; the client watches again).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace crest::service {

class WriteWatchdog final {
 public:
  // `idle_s` 0: streams may stay idle for ever.
  WriteWatchdog(double timeout_s, double idle_s);
  ~WriteWatchdog();  // stops the checking thread

  WriteWatchdog(const WriteWatchdog&) = delete;
  WriteWatchdog& operator=(const WriteWatchdog&) = delete;

  // A stream to watch, until Remove (which must come before its context
  // goes, i.e. in OnDone). Returns its id.
  int64_t Add(grpc::ServerContextBase* context, std::string method);
  void Writing(int64_t id);  // a write started
  void Wrote(int64_t id);    // it completed (or failed)
  // True once the watchdog has cancelled the call: a cancel the client
  // did not ask for (a Sweep's job stays).
  bool Cut(int64_t id);
  void Remove(int64_t id);

  double timeout_s() const { return timeout_.count(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Watched {
    grpc::ServerContextBase* context;
    std::string method;
    std::optional<Clock::time_point> writing_since;
    Clock::time_point active;  // its start, or its last write's end
    bool cancelled = false;
  };
  void Run();
  // Cancels `s`'s call, saying why in the log; mutex_ held.
  static void Cut(Watched& s, const char* event, const std::string& why);

  const std::chrono::duration<double> timeout_;
  const std::chrono::duration<double> idle_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;               // GUARDED_BY(mutex_)
  int64_t next_id_ = 1;                 // GUARDED_BY(mutex_)
  std::map<int64_t, Watched> streams_;  // GUARDED_BY(mutex_)
  std::thread thread_;
};

// A stream's registration with the watchdog, for the stream's lifetime (a
// reactor deletes itself in OnDone, while its context is still valid).
class WatchedWrites final {
 public:
  WatchedWrites(WriteWatchdog& watchdog, grpc::ServerContextBase* context, std::string method)
      : watchdog_(watchdog), id_(watchdog.Add(context, std::move(method))) {}
  ~WatchedWrites() { watchdog_.Remove(id_); }
  WatchedWrites(const WatchedWrites&) = delete;
  WatchedWrites& operator=(const WatchedWrites&) = delete;

  void Writing() { watchdog_.Writing(id_); }
  void Wrote() { watchdog_.Wrote(id_); }
  bool Cut() { return watchdog_.Cut(id_); }

 private:
  WriteWatchdog& watchdog_;
  const int64_t id_;
};

}  // namespace crest::service
