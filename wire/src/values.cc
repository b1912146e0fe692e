#include "crest/wire/values.h"

#include <cstdlib>
#include <utility>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"  // ValidateGemmSizes

namespace crest::wire {

namespace {

// Each pairing is written once and read both ways.
constexpr std::pair<v1::DType, tuner::DType> kDTypes[] = {
    {v1::DTYPE_FP32, tuner::DType::kFp32},        {v1::DTYPE_TF32, tuner::DType::kTf32},
    {v1::DTYPE_FP16, tuner::DType::kFp16},        {v1::DTYPE_BF16, tuner::DType::kBf16},
    {v1::DTYPE_FP8_E4M3, tuner::DType::kFp8E4M3},
};
constexpr std::pair<v1::Source, tuner::Source> kSources[] = {
    {v1::SOURCE_MEASURED, tuner::Source::kMeasured},
    {v1::SOURCE_PREDICTED, tuner::Source::kPredicted},
    {v1::SOURCE_MIXED, tuner::Source::kMixed},
    {v1::SOURCE_REPLAYED, tuner::Source::kReplayed},
};
constexpr std::pair<v1::JobState, store::JobState> kJobStates[] = {
    {v1::JOB_STATE_QUEUED, store::JobState::kQueued},
    {v1::JOB_STATE_RUNNING, store::JobState::kRunning},
    {v1::JOB_STATE_DONE, store::JobState::kDone},
    {v1::JOB_STATE_FAILED, store::JobState::kFailed},
    {v1::JOB_STATE_CANCELLED, store::JobState::kCancelled},
};

}  // namespace

absl::StatusOr<tuner::DType> DTypeOf(v1::DType d, std::string_view field) {
  if (d == v1::DTYPE_UNSPECIFIED) return tuner::DType::kBf16;
  for (const auto& [proto, dtype] : kDTypes) {
    if (proto == d) return dtype;
  }
  return absl::InvalidArgumentError(StrCat(field, ": unknown dtype value ", static_cast<int>(d),
                                           " (this crestd knows ",
                                           v1::DType_descriptor()->value_count() - 1, ")"));
}

v1::Source ProtoSource(tuner::Source source) {
  for (const auto& [proto, kind] : kSources) {
    if (kind == source) return proto;
  }
  return v1::SOURCE_UNSPECIFIED;  // imported timings never answer: no crest.v1 value
}

tuner::Source SourceOf(v1::Source source) {
  for (const auto& [proto, kind] : kSources) {
    if (proto == source) return kind;
  }
  return tuner::Source::kUnknown;
}

v1::DType ProtoDType(tuner::DType d) {
  for (const auto& [proto, dtype] : kDTypes) {
    if (dtype == d) return proto;
  }
  return v1::DTYPE_BF16;
}

v1::JobState ProtoJobState(store::JobState s) {
  for (const auto& [proto, state] : kJobStates) {
    if (state == s) return proto;
  }
  return v1::JOB_STATE_UNSPECIFIED;
}

absl::StatusOr<tuner::GemmShape> GemmOf(const v1::Gemm& in) {
  tuner::GemmShape g;
  g.name = in.name();
  g.m = in.m();
  g.n = in.n();
  g.k = in.k();
  g.batch = in.batch() == 0 ? 1 : in.batch();
  auto dtype = DTypeOf(in.dtype(), "gemm.dtype");
  if (!dtype.ok()) return dtype.status();
  g.dtype = *dtype;
  const std::string layout = in.layout().empty() ? "NT" : in.layout();
  if (!tuner::ParseLayout(layout, &g.a_transposed, &g.b_transposed)) {
    return absl::InvalidArgumentError(
        StrCat("gemm.layout: '", layout, "' is not one of NT, NN, TN, TT"));
  }
  if (auto s = tuner::ValidateGemmSizes(g.m, g.n, g.k, g.batch); !s.ok()) {
    return absl::InvalidArgumentError(StrCat("gemm.", s.message()));
  }
  return g;
}

absl::StatusOr<tuner::MeasureMode> ModeOf(const v1::MeasureMode& in) {
  tuner::MeasureMode mode;
  if (!in.cache_mode().empty()) {
    auto cache = tuner::ParseCacheMode(in.cache_mode());
    if (!cache) {
      return absl::InvalidArgumentError(
          StrCat("mode.cache_mode: '", in.cache_mode(), "' is not cold or warm"));
    }
    mode.cache = *cache;
  }
  if (!in.clock_policy().empty()) {
    auto clocks = tuner::ParseClockPolicy(in.clock_policy());
    if (!clocks) {
      return absl::InvalidArgumentError(
          StrCat("mode.clock_policy: '", in.clock_policy(), "' is not sustained or burst"));
    }
    mode.clocks = *clocks;
  }
  return mode;
}

void Fill(const tuner::MeasureMode& mode, v1::MeasureMode* out) {
  out->set_cache_mode(std::string(tuner::CacheModeName(mode.cache)));
  out->set_clock_policy(std::string(tuner::ClockPolicyName(mode.clocks)));
}

void Fill(const tuner::DeviceInfo& d, v1::Device* out) {
  out->set_name(d.name);
  out->set_uuid(d.uuid);
  out->set_gpu_model(d.gpu_model);
  out->set_host(d.host);
  out->set_sm_count(d.sm_count);
  out->set_compute_capability(StrCat(d.cc_major, ".", d.cc_minor));
  out->set_l2_bytes(d.l2_bytes);
  out->set_memory_bytes(d.memory_bytes);
  out->set_sm_clock_mhz(d.sm_clock_mhz);
  out->set_memory_clock_mhz(d.memory_clock_mhz);
  out->set_replay(d.replay);
}

void Fill(const tuner::SoftwareInfo& s, v1::Software* out) {
  out->set_driver(s.driver);
  out->set_cuda_runtime(s.cuda_runtime);
  out->set_cublaslt(s.cublaslt);
}

void Fill(const tuner::GemmShape& g, v1::Gemm* out) {
  out->set_m(g.m);
  out->set_n(g.n);
  out->set_k(g.k);
  out->set_batch(g.batch);
  out->set_dtype(ProtoDType(g.dtype));
  out->set_layout(g.Layout());
  out->set_name(g.name);
}

void Fill(const store::JobRecord& j, v1::Job* out) {
  out->set_id(j.id);
  out->set_uid(j.uid);
  out->set_host(j.host);
  out->set_backend(j.backend);
  out->set_target(j.target);
  out->set_state(ProtoJobState(j.state));
  out->set_total(j.total);
  out->set_done(j.done);
  out->set_priority(j.priority);
  out->set_created_us(j.created_us);
  out->set_started_us(j.started_us.value_or(0));
  out->set_finished_us(j.finished_us.value_or(0));
  out->set_error(j.error);
  out->set_spec_json(j.spec);
  out->set_submitted_by(j.submitted_by);
}

absl::StatusOr<std::optional<store::JobState>> JobStateOf(v1::JobState state) {
  if (state == v1::JOB_STATE_UNSPECIFIED) return std::optional<store::JobState>();
  for (const auto& [proto, s] : kJobStates) {
    if (proto == state) return s;
  }
  return absl::InvalidArgumentError(StrCat("state: unknown job state ", state));
}

std::string JobStateText(v1::JobState state) {
  for (const auto& [proto, s] : kJobStates) {
    if (proto == state) return std::string(store::JobStateName(s));
  }
  return "unknown";
}

tuner::DeviceInfo DeviceOf(const v1::Device& in) {
  tuner::DeviceInfo d;
  d.name = in.name();
  d.uuid = in.uuid();
  d.gpu_model = in.gpu_model();
  d.host = in.host();
  d.sm_count = in.sm_count();
  const auto& cc = in.compute_capability();
  if (const auto dot = cc.find('.'); dot != std::string::npos) {
    d.cc_major = std::atoi(cc.substr(0, dot).c_str());
    d.cc_minor = std::atoi(cc.substr(dot + 1).c_str());
  }
  d.l2_bytes = in.l2_bytes();
  d.memory_bytes = in.memory_bytes();
  d.sm_clock_mhz = in.sm_clock_mhz();
  d.memory_clock_mhz = in.memory_clock_mhz();
  d.replay = in.replay();
  return d;
}

store::JobRecord JobRecordOf(const v1::Job& in, bool* state_known) {
  const auto state = JobStateOf(in.state());
  const bool known = state.ok() && state->has_value();
  if (state_known != nullptr) *state_known = known;
  store::JobRecord j;
  j.id = in.id();
  j.uid = in.uid();
  j.host = in.host();
  j.spec = in.spec_json();
  j.submitted_by = in.submitted_by();
  j.backend = in.backend();
  j.target = in.target();
  j.state = known ? **state : store::JobState::kQueued;
  j.total = in.total();
  j.done = in.done();
  j.priority = in.priority();
  j.created_us = in.created_us();
  if (in.started_us() != 0) j.started_us = in.started_us();
  if (in.finished_us() != 0) j.finished_us = in.finished_us();
  j.error = in.error();
  return j;
}

tuner::SoftwareInfo SoftwareOf(const v1::Software& in) {
  return tuner::SoftwareInfo{in.driver(), in.cuda_runtime(), in.cublaslt()};
}

void Fill(const tuner::RunInfo& r, v1::Run* out) {
  out->set_job_id(r.job_id);
  out->set_job_uid(r.job_uid);
  out->set_name(r.name);
  out->set_started_us(r.started_us);
  out->set_device_uuid(r.device_uuid);
  out->set_host(r.host);
}

tuner::RunInfo RunOf(const v1::Run& in) {
  tuner::RunInfo r;
  r.job_id = in.job_id();
  r.job_uid = in.job_uid();
  r.name = in.name();
  r.started_us = in.started_us();
  r.device_uuid = in.device_uuid();
  r.host = in.host();
  return r;
}

}  // namespace crest::wire
