#include "crest_service.h"

#include <unistd.h>

#include <chrono>

#include "convert.h"
#include "crest/common/str_cat.h"
#include "crest/service/store_answers.h"
#include "log.h"
#ifdef CREST_HAVE_CUDA
#include "crest/measure/cuda_backend.h"
#endif

namespace crest::crestd {
namespace {

// Answers through the default reactor, logging the call and its latency.
template <typename Handler>
grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context, const char* method,
                                 Handler&& handler) {
  const auto start = std::chrono::steady_clock::now();
  const absl::Status status = handler();
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  if (!status.ok()) {
    Log(absl::IsInvalidArgument(status) ? Level::kInfo : Level::kWarn, "rpc_error",
        {{"method", method},
         {"code", absl::StatusCodeToString(status.code())},
         {"message", std::string(status.message())},
         {"peer", context->peer()}});
  } else {
    Log(Level::kDebug, "rpc", {{"method", method}, {"us", std::to_string(us)}});
  }
  auto* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpc(status));
  return reactor;
}

}  // namespace

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // absl and gRPC share their numeric status codes.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

grpc::ServerUnaryReactor* CrestService::GetNodeInfo(grpc::CallbackServerContext* context,
                                                    const v1::GetNodeInfoRequest*,
                                                    v1::GetNodeInfoResponse* response) {
  return Answer(context, "GetNodeInfo", [&] { return NodeInfo(response); });
}

grpc::ServerUnaryReactor* CrestService::QueryDff(grpc::CallbackServerContext* context,
                                                 const v1::QueryDffRequest* request,
                                                 v1::QueryDffResponse* response) {
  return Answer(context, "QueryDff", [&] { return Dff(*request, response); });
}

grpc::ServerUnaryReactor* CrestService::LookupGemm(grpc::CallbackServerContext* context,
                                                   const v1::LookupGemmRequest* request,
                                                   v1::LookupGemmResponse* response) {
  return Answer(context, "LookupGemm", [&] { return Lookup(*request, response); });
}

grpc::ServerUnaryReactor* CrestService::Predict(grpc::CallbackServerContext* context,
                                                const v1::PredictRequest* request,
                                                v1::PredictResponse* response) {
  return Answer(context, "Predict", [&] { return PredictOne(*request, response); });
}

absl::Status CrestService::NodeInfo(v1::GetNodeInfoResponse* r) {
  r->set_version(CREST_VERSION);
  r->set_model_version(std::string(kPredictorVersion));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  r->set_host(host);
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
  d->set_path(db_path_);
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
    ranking = service::RankDffFromStore(*query, **gpu, **db, PinOf(request.pin()));
  }
  if (!ranking.ok()) return ranking.status();
  Fill(*ranking, **gpu, response);
  return absl::OkStatus();
}

absl::Status CrestService::Lookup(const v1::LookupGemmRequest& request,
                                  v1::LookupGemmResponse* response) {
  auto gpu = GpuOf(request.gpu());
  if (!gpu.ok()) return gpu.status();
  auto gemm = GemmOf(request.gemm());
  if (!gemm.ok()) return gemm.status();
  auto db = pool_.Acquire();
  if (!db.ok()) return db.status();
  auto answer = service::LookupGemm(*gemm, **gpu, **db, PinOf(request.pin()));
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
