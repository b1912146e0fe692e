// crest::wire — the crest.v1 messages ↔ tuner, store and answer values, both
// ways: crestd turns requests into tuner values (validated; InvalidArgument
// names the request field) and answers into responses; the crest CLI turns
// responses back into the values its printers take, so output is the same
// local or remote. No gRPC here, only the messages. The plain values'
// conversions (GEMMs, modes, devices, jobs, enums) are in values.h, which
// this header includes.
#pragma once

#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/answers/answers.h"
#include "crest/answers/compare.h"
#include "crest/store/records.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"
#include "crest/v1/crest.pb.h"
#include "crest/wire/values.h"  // GEMMs, modes, devices, software, runs, jobs, enums

namespace crest::wire {

absl::StatusOr<const tuner::GpuSpec*> GpuOf(const std::string& name);
absl::StatusOr<tuner::DffQuery> DffQueryOf(const v1::QueryDffRequest& request);
store::SoftwarePin PinOf(const v1::SoftwarePin& pin);
// The answering options of a request: pin, mode, run choice ("" is
// "latest"; an unknown one is InvalidArgument naming `runs`) and algorithm
// choice ("" is "best"; an unknown one is InvalidArgument naming `algo`).
absl::StatusOr<answers::AnswerOptions> OptionsOf(const v1::SoftwarePin& pin,
                                                 const v1::MeasureMode& mode,
                                                 const std::string& runs, const std::string& algo);
void Fill(const answers::AnswerOptions& options, v1::SoftwarePin* pin, v1::MeasureMode* mode,
          std::string* runs, std::string* algo);

void Fill(const tuner::DffRanking& ranking, const tuner::GpuSpec& gpu, v1::QueryDffResponse* out);
void Fill(const tuner::GemmShape& gemm, const tuner::GpuSpec& gpu, const tuner::Prediction& p,
          v1::PredictResponse* out);
void Fill(const answers::GemmAnswer& answer, v1::LookupGemmResponse* out);
void Fill(std::span<const tuner::Timing> timings, v1::TimeGemmsResponse* out);
// A comparison, its GEMMs slowest first up to `limit` (the rest counted in
// left_out); the summaries cover every GEMM.
void Fill(const answers::CompareReport& report, size_t limit, v1::CompareResponse* out);

// ---- responses → values (the client side)
// The ranking as `crest dff` prints it; `candidates` are those of the same
// query's window (the response carries counts, not the candidate list).
tuner::DffRanking RankingOf(const v1::QueryDffResponse& response, tuner::DffCandidates candidates);
answers::GemmAnswer AnswerOf(const v1::LookupGemmResponse& response, const tuner::GemmShape& gemm,
                             const std::string& gpu);
// The daemon's figures over `local` (a prediction of the same GEMM made here,
// which keeps the operand alignments the response does not carry).
tuner::Prediction PredictionOf(const v1::PredictResponse& response, tuner::Prediction local);
std::vector<tuner::Timing> TimingsOf(const v1::TimeGemmsResponse& response);
// The report a crestd sent, for `query` as the client asked it; `left_out`
// says how many GEMMs it did not list. InvalidArgument for a GEMM that is
// not one (GemmOf) or a verdict that is not one of VerdictName's words.
absl::StatusOr<answers::CompareReport> CompareReportOf(const v1::CompareResponse& response,
                                                       const answers::CompareQuery& query,
                                                       int64_t* left_out);
// The request for a d_ff query.
void Fill(const tuner::DffQuery& query, const std::string& gpu, v1::QueryDffRequest* out);

}  // namespace crest::wire
