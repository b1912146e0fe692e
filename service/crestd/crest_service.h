// Internal to crestd: the Crest gRPC service. Thin: it translates requests
// into calls on the tuner and the store, and their errors into grpc::Status
// in one place (ToGrpc). Read-only methods only in this version; the job
// methods answer UNIMPLEMENTED.
#pragma once

#include <string>

#include "crest/v1/crest.grpc.pb.h"
#include "store_pool.h"

namespace crest::crestd {

grpc::Status ToGrpc(const absl::Status& status);

class CrestService final : public v1::Crest::CallbackService {
 public:
  explicit CrestService(std::string db_path) : db_path_(db_path), pool_(std::move(db_path)) {}

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

 private:
  absl::Status NodeInfo(v1::GetNodeInfoResponse* response);
  absl::Status Dff(const v1::QueryDffRequest& request, v1::QueryDffResponse* response);
  absl::Status Lookup(const v1::LookupGemmRequest& request, v1::LookupGemmResponse* response);
  absl::Status PredictOne(const v1::PredictRequest& request, v1::PredictResponse* response);

  std::string db_path_;
  StorePool pool_;
};

}  // namespace crest::crestd
