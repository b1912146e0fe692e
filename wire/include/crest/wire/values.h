// crest::wire — the crest.v1 messages ↔ the plain values, both ways: GEMMs,
// measuring modes, devices, software, runs, jobs, and the dtype, source and
// job-state enums. convert.h includes it and adds the answers' messages
// (rankings, predictions, comparisons, times); a file that converts only
// these includes this one, and so does not depend on the answers' types.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "crest/store/records.h"
#include "crest/tuner/device_info.h"
#include "crest/tuner/dtype.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/measurement.h"
#include "crest/tuner/source.h"
#include "crest/v1/crest.pb.h"

namespace crest::wire {

// ---- messages → values (crestd's side): validated; InvalidArgument names
// the request field.
absl::StatusOr<tuner::GemmShape> GemmOf(const v1::Gemm& gemm);
// Empty fields are the defaults; an unknown name is InvalidArgument naming the field.
absl::StatusOr<tuner::MeasureMode> ModeOf(const v1::MeasureMode& mode);
// UNSPECIFIED → no filter; an unknown number → InvalidArgument naming `state`.
absl::StatusOr<std::optional<store::JobState>> JobStateOf(v1::JobState state);
// UNSPECIFIED is bf16; a value this crest does not know is InvalidArgument
// naming `field` (never taken as the default).
absl::StatusOr<tuner::DType> DTypeOf(v1::DType dtype, std::string_view field);

// ---- values → messages
void Fill(const tuner::MeasureMode& mode, v1::MeasureMode* out);
void Fill(const tuner::DeviceInfo& device, v1::Device* out);
void Fill(const tuner::SoftwareInfo& software, v1::Software* out);
void Fill(const tuner::GemmShape& gemm, v1::Gemm* out);
void Fill(const store::JobRecord& job, v1::Job* out);
void Fill(const tuner::RunInfo& run, v1::Run* out);
v1::JobState ProtoJobState(store::JobState state);
v1::DType ProtoDType(tuner::DType dtype);
v1::Source ProtoSource(tuner::Source source);  // kImported, kUnknown: UNSPECIFIED
tuner::Source SourceOf(v1::Source source);

// ---- responses → values (the client side)
// "queued", "running", … as the store names them; "unknown" otherwise.
std::string JobStateText(v1::JobState state);
tuner::DeviceInfo DeviceOf(const v1::Device& device);
// A job as the store keeps it; 0 times are unset. A state this crest does
// not know is left queued, and `state_known` (when given) says so.
store::JobRecord JobRecordOf(const v1::Job& job, bool* state_known = nullptr);
tuner::SoftwareInfo SoftwareOf(const v1::Software& software);
tuner::RunInfo RunOf(const v1::Run& run);

}  // namespace crest::wire
