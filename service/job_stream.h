// Internal to crestd: the server-streaming reactor of WatchJob and Sweep.
// It watches one job in the queue and writes its events, coalescing while a
// write is in flight: the newest state, and the results since the last
// write up to kMaxPendingResultBytes (a reader further behind is told how
// many it was not sent; they are in the database). It ends with OK after the
// final event, UNAVAILABLE when the queue stops, CANCELLED when the client
// goes. A Sweep stream that created its job cancels it when the client goes
// before the end and no one else watches it.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

#include "crest/v1/crest.grpc.pb.h"
#include "job_queue.h"
#include "queued_calls.h"
#include "write_watchdog.h"

namespace crest::service {

// Events go out as serialized crest.v1.JobEvent bytes (the service is raw:
// raw_message.h).
class JobStream final : public StreamReactor, public JobWatcher {
 public:
  // `on_done` runs once when gRPC is finished with the stream (a slot of the
  // stream limit is given back there). With `cancel_job_if_client_leaves`
  // the job is cancelled when the client goes before its end and no other
  // watcher waits on it. `writes` (not null) is told of every write.
  JobStream(JobQueue& queue, int64_t job_id, bool cancel_job_if_client_leaves,
            std::unique_ptr<WatchedWrites> writes, std::function<void()> on_done);

  // Starts watching; finishes with NOT_FOUND for an unknown job.
  void Begin() override;

  void OnJobEvent(const JobEventData& event) override;
  void OnJobClosed(const absl::Status& why) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // Results waiting for a slow reader, at most (as encoded): 64 readers
  // that never read then hold 32 MiB, not the 3.5 GB of 100,000 results
  // each (issue 40).
  static constexpr size_t kMaxPendingResultBytes = size_t{512} << 10;
  static constexpr int kMaxPendingNews = 64;
  void Pump();  // starts the next write, or finishes; call without mu_

  JobQueue& queue_;
  const int64_t job_id_;
  const bool cancel_job_if_client_leaves_;
  std::unique_ptr<WatchedWrites> writes_;
  std::function<void()> on_done_;

  std::mutex mu_;
  std::optional<v1::JobEvent> pending_;  // GUARDED_BY(mu_)
  size_t pending_result_bytes_ = 0;      // GUARDED_BY(mu_): of pending_'s results
  int64_t unsent_results_ = 0;           // GUARDED_BY(mu_): left out since the last write
  grpc::ByteBuffer writing_bytes_;       // owned by the write in flight
  bool writing_ = false;                 // GUARDED_BY(mu_)
  bool finished_ = false;                // GUARDED_BY(mu_)
  bool job_ended_ = false;               // GUARDED_BY(mu_): the final event is queued
  bool server_closed_ = false;           // GUARDED_BY(mu_): the queue stopped, or no such job
  std::optional<grpc::Status> close_;    // GUARDED_BY(mu_): finish with this when drained
};

}  // namespace crest::service
