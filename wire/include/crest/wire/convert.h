// crest::wire — the crest.v1 messages ↔ tuner and store values, both ways:
// crestd turns requests into tuner values (validated; InvalidArgument names
// the request field) and answers into responses; the crest CLI turns
// responses back into the values its printers take, so output is the same
// local or remote. No gRPC here, only the messages.
#pragma once

#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/answers/answers.h"
#include "crest/answers/compare.h"
#include "crest/store/store.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"
#include "crest/v1/crest.pb.h"

namespace crest::wire {

absl::StatusOr<const tuner::GpuSpec*> GpuOf(const std::string& name);
absl::StatusOr<tuner::GemmShape> GemmOf(const v1::Gemm& gemm);
absl::StatusOr<tuner::DffQuery> DffQueryOf(const v1::QueryDffRequest& request);
store::SoftwarePin PinOf(const v1::SoftwarePin& pin);
// Empty fields are the defaults; an unknown name is InvalidArgument naming the field.
absl::StatusOr<tuner::MeasureMode> ModeOf(const v1::MeasureMode& mode);
void Fill(const tuner::MeasureMode& mode, v1::MeasureMode* out);
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
void Fill(const tuner::DeviceInfo& device, v1::Device* out);
void Fill(const tuner::SoftwareInfo& software, v1::Software* out);
void Fill(const tuner::GemmShape& gemm, v1::Gemm* out);
void Fill(const store::JobRecord& job, v1::Job* out);
// A comparison, its GEMMs slowest first up to `limit` (the rest counted in
// left_out); the summaries cover every GEMM.
void Fill(const answers::CompareReport& report, size_t limit, v1::CompareResponse* out);
// UNSPECIFIED → no filter; an unknown number → InvalidArgument naming `state`.
absl::StatusOr<std::optional<store::JobState>> JobStateOf(v1::JobState state);
v1::JobState ProtoJobState(store::JobState state);
v1::DType ProtoDType(tuner::DType dtype);
v1::Source ProtoSource(tuner::Source source);  // kImported, kUnknown: UNSPECIFIED
tuner::Source SourceOf(v1::Source source);
// UNSPECIFIED is bf16; a value this crest does not know is InvalidArgument
// naming `field` (never taken as the default).
absl::StatusOr<tuner::DType> DTypeOf(v1::DType dtype, std::string_view field);

// ---- responses → values (the client side)
// "queued", "running", … as the store names them; "unknown" otherwise.
std::string JobStateText(v1::JobState state);
tuner::DeviceInfo DeviceOf(const v1::Device& device);
// A job as the store keeps it; 0 times are unset. A state this crest does
// not know is left queued, and `state_known` (when given) says so.
store::JobRecord JobRecordOf(const v1::Job& job, bool* state_known = nullptr);
tuner::SoftwareInfo SoftwareOf(const v1::Software& software);
// The ranking as `crest dff` prints it; `candidates` are those of the same
// query's window (the response carries counts, not the candidate list).
tuner::DffRanking RankingOf(const v1::QueryDffResponse& response, tuner::DffCandidates candidates);
answers::GemmAnswer AnswerOf(const v1::LookupGemmResponse& response, const tuner::GemmShape& gemm,
                             const std::string& gpu);
// The daemon's figures over `local` (a prediction of the same GEMM made here,
// which keeps the operand alignments the response does not carry).
tuner::Prediction PredictionOf(const v1::PredictResponse& response, tuner::Prediction local);
std::vector<tuner::Timing> TimingsOf(const v1::TimeGemmsResponse& response);
tuner::RunInfo RunOf(const v1::Run& run);
// The report a crestd sent, for `query` as the client asked it; `left_out`
// says how many GEMMs it did not list. InvalidArgument for a GEMM that is
// not one (GemmOf) or a verdict that is not one of VerdictName's words.
absl::StatusOr<answers::CompareReport> CompareReportOf(const v1::CompareResponse& response,
                                                       const answers::CompareQuery& query,
                                                       int64_t* left_out);
// The request for a d_ff query.
void Fill(const tuner::DffQuery& query, const std::string& gpu, v1::QueryDffRequest* out);

}  // namespace crest::wire
