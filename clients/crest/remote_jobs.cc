#include "remote_jobs.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "crest/common/str_cat.h"
#include "crest/wire/sweep_summary.h"
#include "crest/wire/values.h"
#include "interrupt.h"
#include "job_reports.h"
#include "outputs.h"
#include "printer.h"
#include "progress.h"

namespace crest::cli {
namespace {}  // namespace

absl::StatusOr<FollowOutcome> FollowJob(DaemonChannel& connection, const OpenStream& open,
                                        std::ostream& err, const std::string& label) {
  InterruptScope interrupt;
  std::atomic<bool> reading{true};
  std::mutex mu;
  grpc::ClientContext* current = nullptr;  // GUARDED_BY(mu): the stream being read
  std::thread canceller([&] {
    while (reading.load()) {
      if (interrupt.raised()) {
        std::lock_guard<std::mutex> lock(mu);
        if (current != nullptr) current->TryCancel();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  FollowOutcome out;
  ProgressReporter progress(err, isatty(STDERR_FILENO) != 0, label);
  const auto start = std::chrono::steady_clock::now();
  grpc::Status status;
  // crestd ends a stream with nothing to send for --stream-idle-timeout
  // (CANCELLED); the job goes on, so it is watched again, by its id (a
  // Sweep opened again would submit its spec again).
  v1::WatchJobRequest watch;
  const OpenStream watch_again = [&](grpc::ClientContext* c) {
    return connection.stub().WatchJob(c, watch);
  };
  for (bool again = true; again;) {
    auto context = connection.Context(/*with_deadline=*/false);
    {
      std::lock_guard<std::mutex> lock(mu);
      current = context.get();
    }
    if (interrupt.raised()) context->TryCancel();
    auto reader = watch.id() == 0 ? open(context.get()) : watch_again(context.get());
    v1::JobEvent event;
    while (reader->Read(&event)) {
      out.results += event.results_size();
      for (const std::string& line : event.news()) progress.Note(line);
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      progress.Update(event.job().done(), event.job().total(), elapsed,
                      event.kernel_s() > 0
                          ? Accounting(event.gemms_per_minute(), event.gpu_busy_fraction(),
                                       event.host_overhead_per_gemm_s())
                          : "");
      out.last = event;
    }
    status = reader->Finish();
    {
      std::lock_guard<std::mutex> lock(mu);
      current = nullptr;
    }
    again = status.error_code() == grpc::StatusCode::CANCELLED && !interrupt.raised() &&
            out.last.job().id() != 0 && !out.last.final();
    watch.set_id(out.last.job().id());
  }
  reading = false;
  canceller.join();
  progress.Finish();
  out.interrupted = interrupt.raised();
  if (out.interrupted) return out;
  if (!status.ok()) return connection.Error(status);
  return out;
}

void PrintJobEnd(const v1::JobEvent& last, const std::string& server, bool sweep_command, Io& io) {
  if (last.has_summary()) {
    auto report = wire::SweepReportOf(last);
    if (report.ok()) {
      PrinterFor(io)->Print(SweepReport{*std::move(report), "", server});
      return;
    }
    io.err << "note: the sweep's summary from crestd at " << server << " could not be read ("
           << report.status().message() << "); its counts follow\n";
  }
  PrinterFor(io)->Print(JobEventReport{last, sweep_command ? server : ""});
}

absl::Status JobStatus(const v1::Job& j) {
  switch (j.state()) {
    case v1::JOB_STATE_DONE:
      return absl::OkStatus();
    case v1::JOB_STATE_CANCELLED:
      return absl::CancelledError(StrCat("job ", j.id(), " was cancelled"));
    case v1::JOB_STATE_FAILED:
      return absl::AbortedError(StrCat("job ", j.id(), " failed: ", j.error()));
    default:
      return absl::UnavailableError(
          StrCat("job ", j.id(), " has not ended (", wire::JobStateText(j.state()), ")"));
  }
}

}  // namespace crest::cli
