// Internal to crestd: requests → tuner values (validated; InvalidArgument
// names the request field) and tuner/store values → responses. No gRPC.
#pragma once

#include "absl/status/statusor.h"
#include "crest/service/store_answers.h"
#include "crest/store/store.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"
#include "crest/v1/crest.pb.h"

namespace crest::crestd {

absl::StatusOr<const GpuSpec*> GpuOf(const std::string& name);
absl::StatusOr<GemmShape> GemmOf(const v1::Gemm& gemm);
absl::StatusOr<DffQuery> DffQueryOf(const v1::QueryDffRequest& request);
store::SoftwarePin PinOf(const v1::SoftwarePin& pin);

void Fill(const DffRanking& ranking, const GpuSpec& gpu, v1::QueryDffResponse* out);
void Fill(const GemmShape& gemm, const GpuSpec& gpu, const Prediction& p, v1::PredictResponse* out);
void Fill(const service::GemmAnswer& answer, v1::LookupGemmResponse* out);
void Fill(const DeviceInfo& device, v1::Device* out);
void Fill(const SoftwareInfo& software, v1::Software* out);

}  // namespace crest::crestd
