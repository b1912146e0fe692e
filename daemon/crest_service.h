// Internal to crestd: the Crest gRPC service. Thin: it checks who calls,
// translates requests into calls on the tuner, the store and the job queue,
// and their errors into grpc::Status in one place (ToGrpc).
#pragma once

#include <atomic>
#include <string>

#include "auth.h"
#include "crest/common/env.h"
#include "crest/v1/crest.grpc.pb.h"
#include "job_queue.h"
#include "metrics.h"
#include "store_pool.h"

namespace crest::crestd {

grpc::Status ToGrpc(const absl::Status& status);

// Sweep runs at this priority: ahead of nightly batches (0).
inline constexpr int kInteractivePriority = 100;

struct ServiceOptions {
  std::string db_path;
  std::string state_dir;  // snapshots for ExportResults are written here
  int max_streams = 64;   // WatchJob + Sweep + ExportResults open at once
  int max_list = 1000;    // ListJobs rows at most
  std::string host;       // this node's name, as GetNodeInfo reports it
  Env* env = nullptr;     // the filesystem for snapshots; never null once running
};

class CrestService final : public v1::Crest::CallbackService {
 public:
  CrestService(ServiceOptions options, StorePool& pool, JobQueue& queue, const Authorizer& auth,
               Metrics& metrics)
      : options_(std::move(options)), pool_(pool), queue_(queue), auth_(auth), metrics_(metrics) {}

  grpc::ServerUnaryReactor* GetNodeInfo(grpc::CallbackServerContext* context,
                                        const v1::GetNodeInfoRequest* request,
                                        v1::GetNodeInfoResponse* response) override;
  grpc::ServerUnaryReactor* QueryDff(grpc::CallbackServerContext* context,
                                     const v1::QueryDffRequest* request,
                                     v1::QueryDffResponse* response) override;
  grpc::ServerUnaryReactor* LookupGemm(grpc::CallbackServerContext* context,
                                       const v1::LookupGemmRequest* request,
                                       v1::LookupGemmResponse* response) override;
  grpc::ServerUnaryReactor* Predict(grpc::CallbackServerContext* context,
                                    const v1::PredictRequest* request,
                                    v1::PredictResponse* response) override;
  grpc::ServerUnaryReactor* SubmitJob(grpc::CallbackServerContext* context,
                                      const v1::SubmitJobRequest* request,
                                      v1::SubmitJobResponse* response) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* context,
                                   const v1::GetJobRequest* request, v1::Job* response) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* context,
                                     const v1::ListJobsRequest* request,
                                     v1::ListJobsResponse* response) override;
  grpc::ServerUnaryReactor* CancelJob(grpc::CallbackServerContext* context,
                                      const v1::CancelJobRequest* request,
                                      v1::Job* response) override;
  grpc::ServerWriteReactor<v1::JobEvent>* WatchJob(grpc::CallbackServerContext* context,
                                                   const v1::WatchJobRequest* request) override;
  grpc::ServerWriteReactor<v1::JobEvent>* Sweep(grpc::CallbackServerContext* context,
                                                const v1::SweepRequest* request) override;
  grpc::ServerWriteReactor<v1::ExportChunk>* ExportResults(
      grpc::CallbackServerContext* context, const v1::ExportResultsRequest* request) override;

 private:
  template <typename Handler>
  grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context, const char* method,
                                   bool mutating, Handler&& handler);
  // A stream slot, or RESOURCE_EXHAUSTED naming the limit.
  absl::Status TakeStream(const char* method);
  template <typename Event>
  grpc::ServerWriteReactor<Event>* Refuse(const absl::Status& status);

  absl::Status NodeInfo(v1::GetNodeInfoResponse* response);
  absl::Status Dff(const v1::QueryDffRequest& request, v1::QueryDffResponse* response);
  absl::Status Lookup(const v1::LookupGemmRequest& request, v1::LookupGemmResponse* response);
  absl::Status PredictOne(const v1::PredictRequest& request, v1::PredictResponse* response);

  ServiceOptions options_;
  StorePool& pool_;
  JobQueue& queue_;
  const Authorizer& auth_;
  Metrics& metrics_;
  std::atomic<int> streams_{0};
  std::atomic<int64_t> exports_{0};
};

}  // namespace crest::crestd
