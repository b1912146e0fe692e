#include "convert.h"

#include "crest/common/str_cat.h"

namespace crest::crestd {
namespace {

DType DTypeOf(v1::DType d) {
  switch (d) {
    case v1::DTYPE_FP32:
      return DType::kFp32;
    case v1::DTYPE_TF32:
      return DType::kTf32;
    case v1::DTYPE_FP16:
      return DType::kFp16;
    case v1::DTYPE_FP8_E4M3:
      return DType::kFp8E4M3;
    default:
      return DType::kBf16;
  }
}

v1::Source SourceOf(const std::string& source) {
  if (source == "measured") return v1::SOURCE_MEASURED;
  if (source == "predicted") return v1::SOURCE_PREDICTED;
  if (source == "mixed") return v1::SOURCE_MIXED;
  return v1::SOURCE_UNSPECIFIED;
}

void FillRow(const DffRow& row, v1::DffRow* out) {
  out->set_d_ff(row.d_ff);
  out->set_time_us(row.time_us);
  out->set_tflops(row.tflops);
  out->set_speedup_vs_baseline(row.speedup_vs_baseline);
  out->set_mlp_params(row.mlp_params);
  out->set_params_delta(row.params_delta);
  out->set_source(SourceOf(row.source));
  out->set_provenance(row.provenance);
  if (row.source == "measured") {
    crestd::Fill(row.device, out->mutable_device());
    crestd::Fill(row.software, out->mutable_software());
  }
}

void FillTile(const TileEstimate& e, v1::TileEstimate* out) {
  out->set_tile_m(e.tile.m);
  out->set_tile_n(e.tile.n);
  out->set_ctas_per_sm(e.ctas_per_sm);
  out->set_tiles(e.tiles);
  out->set_waves(e.waves);
  out->set_tile_efficiency(e.tile_efficiency);
  out->set_wave_efficiency(e.wave_efficiency);
  out->set_k_efficiency(e.k_efficiency);
  out->set_reuse_efficiency(e.reuse_efficiency);
  out->set_compute_us(e.compute_us);
  out->set_memory_us(e.memory_us);
  out->set_time_us(e.time_us);
}

}  // namespace

absl::StatusOr<const GpuSpec*> GpuOf(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("gpu: required (e.g. \"h100\")");
  auto gpu = FindGpu(name);
  if (!gpu.ok()) return absl::InvalidArgumentError(std::string(gpu.status().message()));
  return gpu;
}

absl::StatusOr<GemmShape> GemmOf(const v1::Gemm& in) {
  GemmShape g;
  g.name = in.name();
  g.m = in.m();
  g.n = in.n();
  g.k = in.k();
  g.batch = in.batch() == 0 ? 1 : in.batch();
  g.dtype = DTypeOf(in.dtype());
  const std::string layout = in.layout().empty() ? "NT" : in.layout();
  if (!ParseLayout(layout, &g.a_transposed, &g.b_transposed)) {
    return absl::InvalidArgumentError(
        StrCat("gemm.layout: '", layout, "' is not one of NT, NN, TN, TT"));
  }
  if (auto s = ValidateGemmSizes(g.m, g.n, g.k, g.batch); !s.ok()) {
    return absl::InvalidArgumentError(StrCat("gemm.", s.message()));
  }
  return g;
}

absl::StatusOr<DffQuery> DffQueryOf(const v1::QueryDffRequest& r) {
  DffQuery q;
  auto ratio = ParseRatio(r.ratio().empty() ? "8/3" : r.ratio());
  if (!ratio.ok()) return ratio.status();
  q.hidden = r.hidden();
  q.ratio = *ratio;
  q.window = r.has_window() ? r.window() : 128;
  q.align = r.align() == 0 ? 1 : r.align();
  q.tokens = r.tokens() == 0 ? 8192 : r.tokens();
  q.tp = r.tp() == 0 ? 1 : r.tp();
  q.dtype = DTypeOf(r.dtype());
  q.train = r.pass() == v1::PASS_TRAIN;
  q.fuse_gate_up = !r.separate_gate_up();
  if (r.top() < 0) return absl::InvalidArgumentError("top: must be 0 (all) or more");
  q.top = r.top();
  return q;  // the ranking checks the window and sizes, naming the field
}

store::SoftwarePin PinOf(const v1::SoftwarePin& in) {
  store::SoftwarePin pin;
  if (in.cublaslt() > 0) pin.cublaslt = in.cublaslt();
  if (in.cuda_runtime() > 0) pin.cuda_runtime = in.cuda_runtime();
  if (!in.driver().empty()) pin.driver = in.driver();
  return pin;
}

void Fill(const DeviceInfo& d, v1::Device* out) {
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
}

void Fill(const SoftwareInfo& s, v1::Software* out) {
  out->set_driver(s.driver);
  out->set_cuda_runtime(s.cuda_runtime);
  out->set_cublaslt(s.cublaslt);
}

void Fill(const DffRanking& r, const GpuSpec& gpu, v1::QueryDffResponse* out) {
  out->set_gpu(std::string(gpu.name));
  out->set_naive_d_ff(r.candidates.naive);
  out->set_baseline_d_ff(r.candidates.baseline);
  out->set_baseline_note(r.candidates.baseline_note);
  out->set_baseline_found(r.baseline_found);
  if (r.baseline_found) FillRow(r.baseline, out->mutable_baseline());
  for (const DffRow& row : r.rows) FillRow(row, out->add_rows());
  out->set_candidates(static_cast<int64_t>(r.candidates.values.size()));
  out->set_measured(r.measured);
  out->set_predicted(r.predicted);
  out->set_missing(r.missing);
}

void Fill(const GemmShape&, const GpuSpec& gpu, const Prediction& p, v1::PredictResponse* out) {
  out->set_source(v1::SOURCE_PREDICTED);
  out->set_model_version(std::string(p.model_version));
  out->set_calibration(std::string(gpu.model.calibration));
  out->set_gpu(std::string(gpu.name));
  out->set_time_us(p.time_us);
  out->set_tflops(p.tflops);
  out->set_peak_tflops(p.peak_tflops);
  out->set_memory_bound(p.memory_bound);
  FillTile(p.best, out->mutable_best());
  for (const auto& e : p.tiles) FillTile(e, out->add_tiles());
  out->set_alignment_factor(p.alignment_factor);
}

void Fill(const service::GemmAnswer& a, v1::LookupGemmResponse* out) {
  if (a.measured) {
    const auto& m = *a.measured;
    out->set_found(true);
    out->set_source(v1::SOURCE_MEASURED);
    out->set_time_us(m.result.stats.median_us);
    out->set_tflops(m.result.tflops);
    auto* algo = out->mutable_algorithm();
    const auto& id = m.result.algo;
    algo->set_algo_id(id.algo_id);
    algo->set_tile(id.tile);
    algo->set_tile_m(id.tile_m);
    algo->set_tile_n(id.tile_n);
    algo->set_stages(id.stages);
    algo->set_split_k(id.split_k);
    algo->set_reduction_scheme(id.reduction_scheme);
    algo->set_swizzle(id.swizzle);
    algo->set_custom_option(id.custom_option);
    algo->set_cluster_shape(id.cluster_shape);
    algo->set_algo_bytes(std::string(id.bytes.begin(), id.bytes.end()));
    auto* st = out->mutable_statistics();
    st->set_median_us(m.result.stats.median_us);
    st->set_mean_us(m.result.stats.mean_us);
    st->set_min_us(m.result.stats.min_us);
    st->set_stdev_us(m.result.stats.stdev_us);
    st->set_samples(m.result.stats.samples);
    st->set_sm_clock_mhz(m.result.stats.sm_clock_mhz);
    Fill(m.device, out->mutable_device());
    Fill(m.software, out->mutable_software());
    out->set_tiles(m.tiles);
    out->set_waves(m.waves);
    out->set_tile_efficiency(m.tile_efficiency);
    out->set_wave_efficiency(m.wave_efficiency);
    out->set_cache_mode(m.cache_mode);
  } else if (a.predicted) {
    const auto& p = *a.predicted;
    out->set_found(true);
    out->set_source(v1::SOURCE_PREDICTED);
    out->set_time_us(p.time_us);
    out->set_tflops(p.tflops);
    out->set_model_version(p.model_version);
    out->set_tiles(p.tiles);
    out->set_waves(p.waves);
    out->set_tile_efficiency(p.tile_efficiency);
    out->set_wave_efficiency(p.wave_efficiency);
  }
}

}  // namespace crest::crestd
