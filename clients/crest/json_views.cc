#include "json_views.h"

#include <string>
#include <type_traits>
#include <variant>

#include "crest/common/str_cat.h"
#include "crest/tuner/calibration.h"
#include "crest/wire/values.h"
#include "dff_row_fields.h"

namespace crest::cli {

using nlohmann::json;

json GemmJson(const tuner::GemmShape& g) {
  return {{"name", g.name},
          {"pass", std::string(tuner::PassName(g.pass))},
          {"batch", g.batch},
          {"m", g.m},
          {"n", g.n},
          {"k", g.k},
          {"layout", g.Layout()},
          {"dtype", std::string(tuner::DTypeName(g.dtype))},
          {"flops", g.Flops()}};
}

namespace {
// The calibrations in force for a GPU, one per dtype: its own ("calibrated")
// or a sibling's moved to it ("transferred").
json Calibrations(const tuner::GpuSpec& gpu) {
  json out = json::array();
  for (tuner::DType dtype : tuner::kDTypesByName) {
    const auto c = tuner::ActiveCalibration(gpu.name, dtype);
    if (c == nullptr) continue;
    out.push_back({{"dtype", std::string(tuner::DTypeName(c->dtype))},
                   {"kind", c->transferred_from.empty() ? "calibrated" : "transferred"},
                   {"id", c->id},
                   {"transferred_from",
                    c->transferred_from.empty() ? json(nullptr) : json(c->transferred_from)},
                   {"model_version", c->model_version},
                   {"expected_error", tuner::ErrorsJson(c->params)},
                   {"label", c->label}});
  }
  return out;
}
}  // namespace

json GpuJson(const tuner::GpuSpec& gpu) {
  json aliases = json::array();
  for (auto a : gpu.aliases) aliases.push_back(std::string(a));
  return {{"name", std::string(gpu.name)},
          {"architecture", std::string(gpu.architecture)},
          {"compute_capability", std::string(gpu.compute_capability)},
          {"sm_count", gpu.sm_count},
          {"l2_bytes", gpu.l2_bytes},
          {"memory_gib", gpu.memory_gib},
          {"memory_bandwidth_gbs", gpu.memory_bandwidth_gbs},
          {"peak_tflops",
           {{"fp32", gpu.peak_fp32},
            {"tf32", gpu.peak_tf32},
            {"fp16", gpu.peak_fp16},
            {"bf16", gpu.peak_bf16},
            {"fp8", gpu.peak_fp8}}},
          {"min_alignment_bytes", gpu.min_alignment_bytes},
          {"preferred_alignment_bytes", gpu.preferred_alignment_bytes},
          {"aliases", aliases},
          {"model_calibration", tuner::CalibrationState(gpu)},
          {"boost_clock_mhz", gpu.boost_clock_mhz},
          {"power_w", gpu.power_w},
          {"calibrations", Calibrations(gpu)}};
}

json TileJson(const tuner::TileEstimate& e) {
  return {{"tile", {{"m", e.tile.m}, {"n", e.tile.n}}},
          {"ctas_per_sm", e.ctas_per_sm},
          {"tiles", e.tiles},
          {"waves", e.waves},
          {"tile_efficiency", e.tile_efficiency},
          {"wave_efficiency", e.wave_efficiency},
          {"k_efficiency", e.k_efficiency},
          {"reuse_efficiency", e.reuse_efficiency},
          {"compute_us", e.compute_us},
          {"memory_us", e.memory_us},
          {"time_us", e.time_us}};
}

namespace {
json AlignmentJson(const tuner::OperandAlignment& a) {
  return {{"elements", a.elements},
          {"bytes", a.bytes},
          {"alignment_bytes", a.alignment},
          {"factor", a.factor}};
}
}  // namespace

json PredictionJson(const tuner::GemmShape& g, const tuner::GpuSpec& gpu,
                    const tuner::Prediction& p) {
  json tiles = json::array();
  for (const auto& e : p.tiles) tiles.push_back(TileJson(e));
  return {{"schema_version", kJsonSchemaVersion},
          {"source", tuner::SourceName(tuner::Source::kPredicted)},
          {"model_version", std::string(p.model_version)},
          {"calibration", std::string(p.calibration)},
          {"expected_error", p.expected_error},
          {"kernel_family", std::string(tuner::KernelFamilyName(p.family))},
          {"family_tflops", p.family_tflops},
          {"gpu", std::string(gpu.name)},
          {"gemm", GemmJson(g)},
          {"time_us", p.time_us},
          {"tflops", p.tflops},
          {"peak_tflops", p.peak_tflops},
          {"bound", p.memory_bound ? "memory" : "compute"},
          {"tile", {{"m", p.best.tile.m}, {"n", p.best.tile.n}}},
          {"tiles", p.best.tiles},
          {"waves", p.best.waves},
          {"tile_efficiency", p.best.tile_efficiency},
          {"wave_efficiency", p.best.wave_efficiency},
          {"alignment",
           {{"a", AlignmentJson(p.a)},
            {"b", AlignmentJson(p.b)},
            {"c", AlignmentJson(p.c)},
            {"k_residue", {{"residue", p.k_residue}, {"factor", p.k_residue_factor}}},
            {"factor", p.alignment_factor}}},
          {"candidates", tiles}};
}

json DeviceJson(const tuner::DeviceInfo& d) {
  json out = {{"name", d.name},
              {"uuid", d.uuid},
              {"gpu_model", d.gpu_model},
              {"host", d.host},
              {"sm_count", d.sm_count},
              {"compute_capability", StrCat(d.cc_major, ".", d.cc_minor)},
              {"l2_bytes", d.l2_bytes},
              {"memory_bytes", d.memory_bytes},
              {"sm_clock_mhz", d.sm_clock_mhz},
              {"memory_clock_mhz", d.memory_clock_mhz}};
  if (!d.replay.empty()) out["replay"] = d.replay;  // not a GPU: the replay backend's
  return out;
}

json SoftwareJson(const tuner::SoftwareInfo& s) {
  return {{"driver", s.driver}, {"cuda_runtime", s.cuda_runtime}, {"cublaslt", s.cublaslt}};
}

json JobJson(const store::JobRecord& j) {
  const auto time = [](const std::optional<int64_t>& us) { return us ? json(*us) : json(nullptr); };
  // A listing leaves specs out (null here); GetJob has it.
  json spec =
      j.spec.empty() ? json(nullptr) : json::parse(j.spec, nullptr, /*allow_exceptions=*/false);
  return {{"id", j.id},
          {"uid", j.uid},
          {"host", j.host},
          {"backend", j.backend},
          {"target", j.target},
          {"state", std::string(store::JobStateName(j.state))},
          {"total", j.total},
          {"done", j.done},
          {"priority", j.priority},
          {"created_us", j.created_us},
          {"started_us", time(j.started_us)},
          {"finished_us", time(j.finished_us)},
          {"error", j.error},
          {"submitted_by", j.submitted_by},
          {"spec", spec.is_discarded() ? json(j.spec) : spec}};
}

json JobJson(const v1::Job& in) {
  json out = JobJson(wire::JobRecordOf(in));
  out["state"] = wire::JobStateText(in.state());  // "unknown" for a state this crest lacks
  return out;
}

json JobEventJson(const v1::JobEvent& e) {
  json results = json::array();
  for (const v1::GemmResult& r : e.results()) {
    auto gemm = wire::GemmOf(r.gemm());
    results.push_back({{"gemm", gemm.ok() ? GemmJson(*gemm) : json(nullptr)},
                       {"source", tuner::SourceName(wire::SourceOf(r.source()))},
                       {"time_us", r.time_us()},
                       {"tflops", r.tflops()}});
  }
  return {{"job", JobJson(e.job())},
          {"message", e.message()},
          {"final", e.final()},
          {"elapsed_s", e.elapsed_s()},
          {"new_results", e.new_results()},
          {"failed", e.failed()},
          {"kernel_s", e.kernel_s()},
          {"gemms_per_minute", e.gemms_per_minute()},
          {"gpu_busy_fraction", e.gpu_busy_fraction()},
          {"host_overhead_per_gemm_s", e.host_overhead_per_gemm_s()},
          {"results", results}};
}

namespace {
template <typename Json>
nlohmann::ordered_json DocumentOf(const Json& fields) {
  nlohmann::ordered_json out{{"schema_version", kJsonSchemaVersion}};
  for (auto it = fields.begin(); it != fields.end(); ++it) out[it.key()] = it.value();
  return out;
}
}  // namespace

nlohmann::ordered_json DocumentJson(const json& fields) { return DocumentOf(fields); }
nlohmann::ordered_json DocumentJson(const nlohmann::ordered_json& fields) {
  return DocumentOf(fields);
}
std::string Document(const json& fields) { return DocumentOf(fields).dump(2); }
std::string Document(const nlohmann::ordered_json& fields) { return DocumentOf(fields).dump(2); }

json DffRowJson(const tuner::DffRow& row, int64_t rank) {
  json out = json::object();
  for (const DffRowField& field : DffRowFields()) {
    if (!field.in_json) continue;
    out[std::string(field.name)] = std::visit(
        [](const auto& v) -> json {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::monostate>) {
            return nullptr;
          } else {
            return v;  // job ids: an array of them; the answer's "runs" describes each
          }
        },
        field.get(row, rank));
  }
  out["race"] = row.race_verdict.empty() ? json(nullptr)
                                         : json{{"verdict", row.race_verdict},
                                                {"ratio", row.race_ratio},
                                                {"ratio_low", row.race_ratio_low},
                                                {"ratio_high", row.race_ratio_high}};
  if (tuner::FromRuns(row.source)) {
    out["device"] = DeviceJson(row.device);
    out["software"] = SoftwareJson(row.software);
  }
  return out;
}

}  // namespace crest::cli
