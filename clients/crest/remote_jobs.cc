#include "remote_jobs.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "crest/common/str_cat.h"
#include "crest/store/records.h"
#include "crest/wire/convert.h"
#include "progress.h"

namespace crest::cli {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void OnStopSignal(int) { g_stop.store(true); }

std::string StateName(v1::JobState state) {
  auto s = wire::JobStateOf(state);
  if (!s.ok() || !s->has_value()) return "unknown";
  return std::string(store::JobStateName(**s));
}

}  // namespace

absl::StatusOr<FollowOutcome> FollowJob(Connection& connection, const OpenStream& open,
                                        std::ostream& err, const std::string& label) {
  auto context = connection.Context(/*with_deadline=*/false);
  g_stop = false;
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  std::atomic<bool> reading{true};
  grpc::ClientContext* raw = context.get();
  std::thread canceller([&] {
    while (reading.load()) {
      if (g_stop.load()) {
        raw->TryCancel();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  FollowOutcome out;
  ProgressReporter progress(err, isatty(STDERR_FILENO) != 0, label);
  const auto start = std::chrono::steady_clock::now();
  auto reader = open(context.get());
  v1::JobEvent event;
  while (reader->Read(&event)) {
    out.results += event.results_size();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    progress.Update(event.job().done(), event.job().total(), elapsed);
    out.last = event;
  }
  const grpc::Status status = reader->Finish();
  reading = false;
  canceller.join();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  progress.Finish();
  out.interrupted = g_stop.load();
  if (out.interrupted) return out;
  if (!status.ok()) return connection.Error(status);
  return out;
}

std::string JobLine(const v1::Job& j) {
  std::string line =
      StrCat("job ", j.id(), ": ", StateName(j.state()), ", ", j.done(), "/", j.total(), " GEMMs, ",
             j.backend(), " ", j.target(), ", priority ", j.priority());
  if (!j.error().empty()) line += StrCat("\n  error: ", j.error());
  return line;
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
          StrCat("job ", j.id(), " has not ended (", StateName(j.state()), ")"));
  }
}

}  // namespace crest::cli
