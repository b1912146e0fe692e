#include "job_stream.h"

#include "client_view.h"
#include "crest/common/str_cat.h"
#include "crest/wire/values.h"
#include "log.h"
#include "raw_message.h"
#include "server_paths.h"

namespace crest::service {
namespace {

// The event's state and news; its results go one by one (AddResults).
void FillState(const JobEventData& e, v1::JobEvent* out) {
  FillJob(e.job, out->mutable_job());
  const sweep::SweepProgress& p = e.progress;
  out->set_elapsed_s(p.elapsed_s);
  out->set_new_results(p.new_results);
  out->set_failed(p.failed);
  out->set_kernel_s(p.kernel_s);
  out->set_gemms_per_minute(p.GemmsPerMinute());
  out->set_gpu_busy_fraction(p.GpuBusyFraction());
  out->set_host_overhead_per_gemm_s(p.HostOverheadPerGemmS());
  out->set_message(WithoutServerPaths(e.message));  // a failed job's error, say
  for (const std::string& line : e.news) out->add_news(line);
  out->set_final(e.final);
  if (e.summary) *out->mutable_summary() = *e.summary;
}

void FillResult(const JobResult& r, v1::GemmResult* row) {
  wire::Fill(r.gemm, row->mutable_gemm());
  row->set_source(wire::ProtoSource(r.source));
  row->set_time_us(r.time_us);
  row->set_tflops(r.tflops);
}

}  // namespace

JobStream::JobStream(JobQueue& queue, int64_t job_id, bool cancel_job_if_client_leaves,
                     std::unique_ptr<WatchedWrites> writes, std::function<void()> on_done)
    : queue_(queue),
      job_id_(job_id),
      cancel_job_if_client_leaves_(cancel_job_if_client_leaves),
      writes_(std::move(writes)),
      on_done_(std::move(on_done)) {}

void JobStream::Begin() {
  const absl::Status watched = queue_.Watch(job_id_, this);
  if (!watched.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      close_ = ToGrpc(watched);
      server_closed_ = true;
    }
    Pump();
  }
}

void JobStream::OnJobEvent(const JobEventData& event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_ || job_ended_ || close_) return;
    v1::JobEvent next;
    FillState(event, &next);
    // The results this reader has not been sent, up to the byte bound.
    if (pending_) next.mutable_results()->Swap(pending_->mutable_results());
    for (const JobResult& r : event.results) {
      if (pending_result_bytes_ >= kMaxPendingResultBytes) {
        ++unsent_results_;
        continue;
      }
      v1::GemmResult* row = next.add_results();
      FillResult(r, row);
      pending_result_bytes_ += row->ByteSizeLong() + 4;  // and its tag and length
    }
    if (pending_) {  // coalesce: the newest state; news is kept, up to a bound
      auto* said = pending_->mutable_news();
      for (const std::string& line : next.news()) {
        if (said->size() < kMaxPendingNews) *said->Add() = line;
      }
      next.mutable_news()->Swap(said);
    }
    pending_ = std::move(next);
    if (event.final) {
      job_ended_ = true;
      close_ = grpc::Status::OK;
    }
  }
  Pump();
}

void JobStream::OnJobClosed(const absl::Status& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!close_) close_ = ToGrpc(why);
    server_closed_ = true;
  }
  Pump();
}

void JobStream::Pump() {
  std::unique_lock<std::mutex> lock(mu_);
  if (writing_ || finished_) return;
  if (pending_) {
    if (unsent_results_ > 0) {  // said once per write, with the newest state
      pending_->add_news(
          StrCat(unsent_results_, " results were not sent to this reader, which fell more than ",
                 kMaxPendingResultBytes >> 10, " KiB behind; they are in the node's database"));
      unsent_results_ = 0;
    }
    const absl::Status serialized = ToBytes(*pending_, &writing_bytes_);
    pending_.reset();
    pending_result_bytes_ = 0;
    if (serialized.ok()) {
      writing_ = true;
      lock.unlock();
      writes_->Writing();
      StartWrite(&writing_bytes_);
      return;
    }
    if (!close_) close_ = ToGrpc(serialized);
  }
  if (close_) {
    finished_ = true;
    const grpc::Status status = *close_;
    lock.unlock();
    Finish(status);
  }
}

void JobStream::OnWriteDone(bool ok) {
  writes_->Wrote();
  {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok && !close_) close_ = grpc::Status(grpc::StatusCode::CANCELLED, "the stream broke");
    if (!ok) {
      pending_.reset();
      pending_result_bytes_ = 0;
    }
  }
  Pump();
}

void JobStream::OnCancel() {
  bool cancel_job = false;
  bool left_running_job = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A write that failed because the client left may have set close_
    // already: only the job's end or the server's own close spare the job
    // (the watchdog cutting an idle or unread stream is crestd's doing).
    left_running_job = !job_ended_ && !server_closed_ && !writes_->Cut();
    cancel_job = cancel_job_if_client_leaves_ && left_running_job;
    pending_.reset();
    if (!close_) close_ = grpc::Status(grpc::StatusCode::CANCELLED, "the client left");
  }
  if (cancel_job) {
    const bool cancelled = queue_.CancelIfOnlyWatcher(job_id_, this);
    Log(Level::kInfo, "sweep_client_left",
        {{"job", std::to_string(job_id_)},
         {"job_cancelled", cancelled ? "true" : "false (another client waits on it)"}});
  } else if (left_running_job) {
    Log(Level::kInfo, "job_client_left",
        {{"job", std::to_string(job_id_)},
         {"job_cancelled", "false (a watcher, or a sweep that attached to another's job)"}});
  }
  Pump();
}

void JobStream::OnDone() {
  queue_.Unwatch(job_id_, this);
  writes_.reset();
  if (on_done_) on_done_();
  delete this;
}

}  // namespace crest::service
