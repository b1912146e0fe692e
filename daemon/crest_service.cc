#include "crest_service.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "crest/common/str_cat.h"
#include "crest/answers/store_answers.h"
#include "crest/tuner/calibration.h"
#include "crest/wire/convert.h"
#include "export_stream.h"
#include "job_stream.h"
#include "log.h"
#ifdef CREST_HAVE_CUDA
#include "crest/measure/cuda_backend.h"
#endif

namespace crest::crestd {
using wire::DffQueryOf;
using wire::Fill;
using wire::GemmOf;
using wire::GpuOf;
using wire::JobStateOf;
using wire::ModeOf;
using wire::PinOf;

namespace {

// A Sweep's or WatchJob's reactor when the call is refused before it starts.
template <typename Event>
class Refused final : public grpc::ServerWriteReactor<Event> {
 public:
  explicit Refused(const grpc::Status& status) { this->Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // absl and gRPC share their numeric status codes.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

// Answers through the default reactor after the caller is authorized,
// logging errors and recording the latency.
template <typename Handler>
grpc::ServerUnaryReactor* CrestService::Answer(grpc::CallbackServerContext* context,
                                               const char* method, bool mutating,
                                               Handler&& handler) {
  const auto start = std::chrono::steady_clock::now();
  auto client = auth_.Check(*context, mutating, method);
  const absl::Status status = client.ok() ? handler(*client) : client.status();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (status.ok()) {
    metrics_.ObserveRpc(method, seconds, "OK");
    if (LogEnabled(Level::kDebug)) {
      Log(Level::kDebug, "rpc", {{"method", method}, {"us", std::to_string(seconds * 1e6)}});
    }
  } else {
    const std::string code = absl::StatusCodeToString(status.code());
    metrics_.ObserveRpc(method, seconds, code);
    Log(absl::IsInvalidArgument(status) ? Level::kInfo : Level::kWarn, "rpc_error",
        {{"method", method},
         {"code", code},
         {"message", std::string(status.message())},
         {"peer", context->peer()}});
  }
  auto* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpc(status));
  return reactor;
}

absl::Status CrestService::TakeStream(const char* method) {
  if (streams_.fetch_add(1) >= options_.max_streams) {
    streams_.fetch_sub(1);
    return absl::ResourceExhaustedError(
        StrCat(method, ": ", options_.max_streams,
               " streams are open, the limit (--max-streams); try again when one ends"));
  }
  return absl::OkStatus();
}

template <typename Event>
grpc::ServerWriteReactor<Event>* CrestService::Refuse(const absl::Status& status) {
  Log(Level::kInfo, "rpc_error",
      {{"code", absl::StatusCodeToString(status.code())},
       {"message", std::string(status.message())}});
  return new Refused<Event>(ToGrpc(status));
}

grpc::ServerUnaryReactor* CrestService::GetNodeInfo(grpc::CallbackServerContext* context,
                                                    const v1::GetNodeInfoRequest*,
                                                    v1::GetNodeInfoResponse* response) {
  return Answer(context, "GetNodeInfo", false,
                [&](const std::string&) { return NodeInfo(response); });
}

grpc::ServerUnaryReactor* CrestService::QueryDff(grpc::CallbackServerContext* context,
                                                 const v1::QueryDffRequest* request,
                                                 v1::QueryDffResponse* response) {
  return Answer(context, "QueryDff", false,
                [&](const std::string&) { return Dff(*request, response); });
}

grpc::ServerUnaryReactor* CrestService::LookupGemm(grpc::CallbackServerContext* context,
                                                   const v1::LookupGemmRequest* request,
                                                   v1::LookupGemmResponse* response) {
  return Answer(context, "LookupGemm", false,
                [&](const std::string&) { return Lookup(*request, response); });
}

grpc::ServerUnaryReactor* CrestService::Predict(grpc::CallbackServerContext* context,
                                                const v1::PredictRequest* request,
                                                v1::PredictResponse* response) {
  return Answer(context, "Predict", false,
                [&](const std::string&) { return PredictOne(*request, response); });
}

grpc::ServerUnaryReactor* CrestService::SubmitJob(grpc::CallbackServerContext* context,
                                                  const v1::SubmitJobRequest* request,
                                                  v1::SubmitJobResponse* response) {
  return Answer(context, "SubmitJob", true, [&](const std::string& client) -> absl::Status {
    SubmitRequest submit;
    submit.spec_json = request->spec().json();
    submit.backend = request->backend();
    submit.priority = request->priority();
    submit.force = request->force();
    submit.client = client;
    auto job = queue_.Submit(submit);
    if (!job.ok()) return job.status();
    Fill(*job, response->mutable_job());
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* CrestService::GetJob(grpc::CallbackServerContext* context,
                                               const v1::GetJobRequest* request,
                                               v1::Job* response) {
  return Answer(context, "GetJob", false, [&](const std::string&) -> absl::Status {
    auto job = queue_.Get(request->id());
    if (!job.ok()) return job.status();
    Fill(*job, response);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* CrestService::ListJobs(grpc::CallbackServerContext* context,
                                                 const v1::ListJobsRequest* request,
                                                 v1::ListJobsResponse* response) {
  return Answer(context, "ListJobs", false, [&](const std::string&) -> absl::Status {
    auto state = JobStateOf(request->state());
    if (!state.ok()) return state.status();
    if (request->limit() < 0 || request->limit() > options_.max_list) {
      return absl::InvalidArgumentError(StrCat("limit: must be between 0 (meaning 100) and ",
                                               options_.max_list, " (got ", request->limit(), ")"));
    }
    auto jobs = queue_.List(*state, request->limit() == 0 ? 100 : request->limit());
    if (!jobs.ok()) return jobs.status();
    for (const auto& job : *jobs) Fill(job, response->add_jobs());
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* CrestService::CancelJob(grpc::CallbackServerContext* context,
                                                  const v1::CancelJobRequest* request,
                                                  v1::Job* response) {
  return Answer(context, "CancelJob", true, [&](const std::string&) -> absl::Status {
    auto job = queue_.Cancel(request->id());
    if (!job.ok()) return job.status();
    Fill(*job, response);
    return absl::OkStatus();
  });
}

grpc::ServerWriteReactor<v1::JobEvent>* CrestService::WatchJob(grpc::CallbackServerContext* context,
                                                               const v1::WatchJobRequest* request) {
  if (auto client = auth_.Check(*context, false, "WatchJob"); !client.ok()) {
    return Refuse<v1::JobEvent>(client.status());
  }
  if (auto s = TakeStream("WatchJob"); !s.ok()) return Refuse<v1::JobEvent>(s);
  auto* stream = new JobStream(queue_, request->id(), /*cancel_job_if_client_leaves=*/false,
                               [this] { streams_.fetch_sub(1); });
  stream->Begin();
  return stream;
}

grpc::ServerWriteReactor<v1::JobEvent>* CrestService::Sweep(grpc::CallbackServerContext* context,
                                                            const v1::SweepRequest* request) {
  auto client = auth_.Check(*context, true, "Sweep");
  if (!client.ok()) return Refuse<v1::JobEvent>(client.status());
  SubmitRequest submit;
  submit.spec_json = request->spec().json();
  submit.backend = request->backend();
  submit.priority = kInteractivePriority;
  submit.force = request->force();
  submit.client = *client;
  if (auto s = TakeStream("Sweep"); !s.ok()) return Refuse<v1::JobEvent>(s);
  auto job = queue_.Submit(submit);
  if (!job.ok()) {
    streams_.fetch_sub(1);
    return Refuse<v1::JobEvent>(job.status());
  }
  auto* stream = new JobStream(queue_, job->id, /*cancel_job_if_client_leaves=*/true,
                               [this] { streams_.fetch_sub(1); });
  stream->Begin();
  return stream;
}

grpc::ServerWriteReactor<v1::ExportChunk>* CrestService::ExportResults(
    grpc::CallbackServerContext* context, const v1::ExportResultsRequest*) {
  if (auto client = auth_.Check(*context, false, "ExportResults"); !client.ok()) {
    return Refuse<v1::ExportChunk>(client.status());
  }
  if (auto s = TakeStream("ExportResults"); !s.ok()) return Refuse<v1::ExportChunk>(s);
  const std::string snapshot = (std::filesystem::path(options_.state_dir) /
                                StrCat(".export-", getpid(), "-", exports_.fetch_add(1), ".db"))
                                   .string();
  auto* stream =
      new ExportStream(pool_, *options_.env, snapshot, [this] { streams_.fetch_sub(1); });
  stream->Begin();
  return stream;
}

absl::Status CrestService::NodeInfo(v1::GetNodeInfoResponse* r) {
  r->set_version(CREST_VERSION);
  r->set_model_version(std::string(kPredictorVersion));
  for (const auto& c : ActiveCalibrations()) {
    r->add_calibrations(StrCat(c->model_version, ": ", c->label));
  }
  r->set_host(options_.host);
  auto* model = r->add_backends();
  model->set_name("model");
  model->set_built(true);
  model->set_detail("analytic predictor; predictions only");
  auto* lt = r->add_backends();
  lt->set_name("cublaslt");
  lt->set_measures(true);
#ifdef CREST_HAVE_CUDA
  lt->set_built(true);
  lt->set_detail("built with CUDA");
  auto devices = measure::ProbeDevices();
  if (!devices.ok()) {
    r->set_device_error(std::string(devices.status().message()));
  } else {
    for (const auto& d : *devices) {
      auto* out = r->add_devices();
      Fill(d.device, out);
      out->set_free_bytes(d.free_bytes);
    }
  }
#else
  lt->set_built(false);
  lt->set_detail("built without CUDA");
  r->set_device_error("no CUDA device: this crestd was built without CUDA");
#endif
  auto db = pool_.Acquire();
  if (!db.ok()) return db.status();
  auto stats = (*db)->Stats();
  if (!stats.ok()) return stats.status();
  auto* d = r->mutable_database();
  d->set_path(options_.db_path);
  d->set_schema_version(stats->schema_version);
  d->set_file_bytes(stats->file_bytes);
  d->set_measurements(stats->measurements);
  d->set_verified_measurements(stats->verified_measurements);
  d->set_predictions(stats->predictions);
  d->set_devices(stats->devices);
  for (const auto& [state, n] : stats->jobs_by_state) (*d->mutable_jobs_by_state())[state] = n;
  return absl::OkStatus();
}

absl::Status CrestService::Dff(const v1::QueryDffRequest& request, v1::QueryDffResponse* response) {
  auto gpu = GpuOf(request.gpu());
  if (!gpu.ok()) return gpu.status();
  auto query = DffQueryOf(request);
  if (!query.ok()) return query.status();
  absl::StatusOr<DffRanking> ranking;
  if (request.predict_only()) {
    ranking = RankDff(*query, PredictorTimer(**gpu));
  } else {
    auto db = pool_.Acquire();
    if (!db.ok()) return db.status();
    ranking = answers::RankDffFromStore(*query, **gpu, **db, PinOf(request.pin()));
  }
  if (!ranking.ok()) return ranking.status();
  Fill(*ranking, **gpu, response);
  Fill(query->mode, response->mutable_mode());
  return absl::OkStatus();
}

absl::Status CrestService::Lookup(const v1::LookupGemmRequest& request,
                                  v1::LookupGemmResponse* response) {
  auto gpu = GpuOf(request.gpu());
  if (!gpu.ok()) return gpu.status();
  auto gemm = GemmOf(request.gemm());
  if (!gemm.ok()) return gemm.status();
  auto mode = ModeOf(request.mode());
  if (!mode.ok()) return mode.status();
  auto db = pool_.Acquire();
  if (!db.ok()) return db.status();
  auto answer = answers::LookupGemm(*gemm, **gpu, **db, PinOf(request.pin()), *mode);
  if (!answer.ok()) return answer.status();
  Fill(*answer, response);
  return absl::OkStatus();
}

absl::Status CrestService::PredictOne(const v1::PredictRequest& request,
                                      v1::PredictResponse* response) {
  auto gpu = GpuOf(request.gpu());
  if (!gpu.ok()) return gpu.status();
  auto gemm = GemmOf(request.gemm());
  if (!gemm.ok()) return gemm.status();
  auto p = crest::Predict(*gemm, **gpu);
  if (!p.ok()) return p.status();
  Fill(*gemm, **gpu, *p, response);
  return absl::OkStatus();
}

}  // namespace crest::crestd
