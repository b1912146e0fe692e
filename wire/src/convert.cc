#include "crest/wire/convert.h"

#include "crest/common/str_cat.h"
#include "run_table.h"

namespace crest::wire {
using internal::RunsAt;
using internal::RunTable;

namespace {

void FillRow(const tuner::DffRow& row, RunTable& runs, v1::DffRow* out) {
  out->set_d_ff(row.d_ff);
  out->set_time_us(row.time_us);
  out->set_tflops(row.tflops);
  out->set_speedup_vs_baseline(row.speedup_vs_baseline);
  out->set_mlp_params(row.mlp_params);
  out->set_params_delta(row.params_delta);
  out->set_time_low_us(row.time_low_us);
  out->set_time_high_us(row.time_high_us);
  out->set_tie_group(row.tie_group);
  out->set_source(ProtoSource(row.source));
  out->set_provenance(row.provenance);
  out->set_speedup_basis(ProtoSource(row.speedup_basis));
  out->set_pooled(row.pooled);
  runs.Refer(row.runs, out->mutable_runs());
  if (!row.race_verdict.empty()) {
    v1::RaceStanding* race = out->mutable_race();
    race->set_verdict(row.race_verdict);
    race->set_ratio(row.race_ratio);
    race->set_ratio_low(row.race_ratio_low);
    race->set_ratio_high(row.race_ratio_high);
  }
  if (tuner::FromRuns(row.source)) {
    wire::Fill(row.device, out->mutable_device());
    wire::Fill(row.software, out->mutable_software());
  }
}

void FillTile(const tuner::TileEstimate& e, v1::TileEstimate* out) {
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

absl::StatusOr<const tuner::GpuSpec*> GpuOf(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("gpu: required (e.g. \"h100\")");
  auto gpu = tuner::FindGpu(name);
  if (!gpu.ok()) return absl::InvalidArgumentError(std::string(gpu.status().message()));
  return gpu;
}

absl::StatusOr<tuner::DffQuery> DffQueryOf(const v1::QueryDffRequest& r) {
  tuner::DffQuery q;
  auto ratio = tuner::ParseRatio(r.ratio().empty() ? tuner::kDefaultRatio : r.ratio());
  if (!ratio.ok()) return ratio.status();
  q.dff.hidden = r.hidden();
  q.dff.ratio = *ratio;
  q.dff.window = r.has_window() ? r.window() : tuner::kDefaultWindow;
  q.dff.align = r.align() == 0 ? tuner::kDefaultAlign : r.align();
  q.tokens = r.tokens() == 0 ? tuner::kDefaultTokens : r.tokens();
  q.dff.tp = r.tp() == 0 ? tuner::kDefaultTp : r.tp();
  auto dtype = DTypeOf(r.dtype(), "dtype");
  if (!dtype.ok()) return dtype.status();
  q.dtype = *dtype;
  if (!v1::Pass_IsValid(r.pass())) {
    return absl::InvalidArgumentError(
        StrCat("pass: unknown value ", static_cast<int>(r.pass()), " (expected fwd or train)"));
  }
  q.train = r.pass() == v1::PASS_TRAIN;
  q.fuse_gate_up = !r.separate_gate_up();
  if (r.top() < 0) return absl::InvalidArgumentError("top: must be 0 (all) or more");
  q.top = r.top();
  return q;  // the ranking checks the window and sizes, naming the field
}

absl::StatusOr<answers::AnswerOptions> OptionsOf(const v1::SoftwarePin& pin,
                                                 const v1::MeasureMode& mode,
                                                 const std::string& runs, const std::string& algo) {
  answers::AnswerOptions o;
  o.pin = PinOf(pin);
  auto m = ModeOf(mode);
  if (!m.ok()) return m.status();
  o.mode = *m;
  if (!runs.empty()) {
    auto choice = answers::ParseRunChoice(runs);
    if (!choice) {
      return absl::InvalidArgumentError(
          StrCat("runs: '", runs.substr(0, 64), "' is not latest or all"));
    }
    o.runs = *choice;
  }
  if (!algo.empty()) {
    auto choice = tuner::ParseAlgoChoice(algo);
    if (!choice) {
      return absl::InvalidArgumentError(
          StrCat("algo: '", algo.substr(0, 64), "' is not best or default"));
    }
    o.algo = *choice;
  }
  return o;
}

void Fill(const answers::AnswerOptions& o, v1::SoftwarePin* pin, v1::MeasureMode* mode,
          std::string* runs, std::string* algo) {
  if (o.pin.cublaslt) pin->set_cublaslt(*o.pin.cublaslt);
  if (o.pin.cuda_runtime) pin->set_cuda_runtime(*o.pin.cuda_runtime);
  if (o.pin.driver) pin->set_driver(*o.pin.driver);
  Fill(o.mode, mode);
  *runs = std::string(answers::RunChoiceName(o.runs));
  *algo = std::string(tuner::AlgoChoiceName(o.algo));
}

store::SoftwarePin PinOf(const v1::SoftwarePin& in) {
  store::SoftwarePin pin;
  if (in.cublaslt() > 0) pin.cublaslt = in.cublaslt();
  if (in.cuda_runtime() > 0) pin.cuda_runtime = in.cuda_runtime();
  if (!in.driver().empty()) pin.driver = in.driver();
  return pin;
}

void Fill(const tuner::DffRanking& r, const tuner::GpuSpec& gpu, v1::QueryDffResponse* out) {
  out->set_gpu(std::string(gpu.name));
  out->set_naive_d_ff(r.candidates.naive);
  out->set_baseline_d_ff(r.candidates.baseline);
  out->set_baseline_note(r.candidates.baseline_note);
  out->set_baseline_found(r.baseline_found);
  RunTable runs(out->mutable_runs());
  for (const tuner::RunInfo& run : r.runs) runs.Index(run);
  if (r.baseline_found) FillRow(r.baseline, runs, out->mutable_baseline());
  for (const tuner::DffRow& row : r.rows) FillRow(row, runs, out->add_rows());
  out->set_headline(ProtoSource(r.headline));
  out->set_predicted_baseline_us(r.predicted_baseline_us);
  out->set_measured_across_runs(r.measured_across_runs);
  out->set_candidates(static_cast<int64_t>(r.candidates.values.size()));
  out->set_measured(r.measured);
  out->set_replayed(r.replayed);
  out->set_predicted(r.predicted);
  out->set_missing(r.missing);
  out->set_tied_with_best(r.tied_with_best);
  out->set_race_note(r.race_note);
  if (r.race) {
    const tuner::DffRaceInfo& race = *r.race;
    v1::DffRace* to = out->mutable_race();
    to->set_race_id(race.race_id);
    Fill(race.run, to->mutable_run());
    to->set_candidates(race.candidates);
    to->set_rounds(race.rounds);
    to->set_retaken(race.retaken);
    to->set_resolution(race.resolution);
    to->set_error_rate(race.error_rate);
    to->set_seconds(race.seconds);
    to->set_settled(race.settled);
    to->set_stop_reason(race.stop_reason);
    to->set_created_us(race.created_us);
  }
}

void Fill(const tuner::GemmShape&, const tuner::GpuSpec& gpu, const tuner::Prediction& p,
          v1::PredictResponse* out) {
  out->set_source(v1::SOURCE_PREDICTED);
  out->set_model_version(std::string(p.model_version));
  out->set_calibration(std::string(p.calibration));
  out->set_kernel_family(std::string(tuner::KernelFamilyName(p.family)));
  out->set_family_tflops(p.family_tflops);
  out->set_expected_error(p.expected_error);
  out->set_gpu(std::string(gpu.name));
  out->set_time_us(p.time_us);
  out->set_tflops(p.tflops);
  out->set_peak_tflops(p.peak_tflops);
  out->set_memory_bound(p.memory_bound);
  FillTile(p.best, out->mutable_best());
  for (const auto& e : p.tiles) FillTile(e, out->add_tiles());
  out->set_alignment_factor(p.alignment_factor);
}

void Fill(const answers::GemmAnswer& a, v1::LookupGemmResponse* out) {
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
    st->set_ci_low_us(m.result.stats.ci_low_us);
    st->set_ci_high_us(m.result.stats.ci_high_us);
    st->set_power_w(m.result.stats.power_w);
    st->set_throttle_reasons(m.result.stats.throttle_reasons);
    st->set_discarded(m.result.stats.discarded);
    st->set_clock_note(m.result.clock_note);
    st->set_settled_clock_mhz(m.settled_clock_mhz);
    Fill(m.device, out->mutable_device());
    Fill(m.software, out->mutable_software());
    out->set_tiles(m.tiles);
    out->set_waves(m.waves);
    out->set_tile_efficiency(m.tile_efficiency);
    out->set_wave_efficiency(m.wave_efficiency);
    out->set_cache_mode(std::string(tuner::CacheModeName(m.mode.cache)));
    out->set_clock_policy(std::string(tuner::ClockPolicyName(m.mode.clocks)));
    for (const tuner::RunInfo& run : a.runs) Fill(run, out->add_runs());
    out->set_pooled(a.pooled);
    out->set_pooled_low_us(a.pooled_low_us);
    out->set_pooled_high_us(a.pooled_high_us);
    out->set_pooled_us(a.pooled_us);
    out->set_lda(m.lda);
    out->set_ldb(m.ldb);
    out->set_ldc(m.ldc);
    out->set_heuristic_place(m.result.heuristic_rank >= 0 ? m.result.heuristic_rank + 1 : 0);
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
    out->set_tile_m(p.tile_m);
    out->set_tile_n(p.tile_n);
    out->set_bound(p.bound);
    out->set_expected_error(p.expected_error);
  }
}

namespace {

tuner::DffRow RowOf(const v1::DffRow& in, const google::protobuf::RepeatedPtrField<v1::Run>& runs) {
  tuner::DffRow r;
  r.d_ff = in.d_ff();
  r.time_us = in.time_us();
  r.tflops = in.tflops();
  r.speedup_vs_baseline = in.speedup_vs_baseline();
  r.mlp_params = in.mlp_params();
  r.params_delta = in.params_delta();
  r.time_low_us = in.time_low_us();
  r.time_high_us = in.time_high_us();
  r.tie_group = in.tie_group();
  r.source = SourceOf(in.source());
  r.provenance = in.provenance();
  r.device = DeviceOf(in.device());
  r.software = SoftwareOf(in.software());
  r.speedup_basis = SourceOf(in.speedup_basis());
  r.pooled = in.pooled();
  r.runs = RunsAt(runs, in.runs());
  if (in.has_race()) {
    r.race_verdict = in.race().verdict();
    r.race_ratio = in.race().ratio();
    r.race_ratio_low = in.race().ratio_low();
    r.race_ratio_high = in.race().ratio_high();
  }
  return r;
}

}  // namespace

tuner::DffRanking RankingOf(const v1::QueryDffResponse& in, tuner::DffCandidates candidates) {
  tuner::DffRanking r;
  r.candidates = std::move(candidates);
  r.baseline_found = in.baseline_found();
  r.baseline = RowOf(in.baseline(), in.runs());
  if (!r.baseline_found) r.baseline.d_ff = in.baseline_d_ff();
  for (const auto& row : in.rows()) r.rows.push_back(RowOf(row, in.runs()));
  for (const v1::Run& run : in.runs()) r.runs.push_back(RunOf(run));
  r.headline = SourceOf(in.headline());
  r.predicted_baseline_us = in.predicted_baseline_us();
  r.measured_across_runs = in.measured_across_runs();
  r.measured = in.measured();
  r.predicted = in.predicted();
  r.replayed = in.replayed();
  r.missing = in.missing();
  r.tied_with_best = in.tied_with_best();
  r.evaluated = in.measured() + in.predicted() + in.replayed();
  r.race_note = in.race_note();
  if (in.has_race()) {
    const v1::DffRace& race = in.race();
    tuner::DffRaceInfo info;
    info.race_id = race.race_id();
    info.run = RunOf(race.run());
    info.candidates = race.candidates();
    info.rounds = race.rounds();
    info.retaken = race.retaken();
    info.resolution = race.resolution();
    info.error_rate = race.error_rate();
    info.seconds = race.seconds();
    info.settled = race.settled();
    info.stop_reason = race.stop_reason();
    info.created_us = race.created_us();
    r.race = info;
  }
  return r;
}

answers::GemmAnswer AnswerOf(const v1::LookupGemmResponse& in, const tuner::GemmShape& gemm,
                             const std::string& gpu) {
  answers::GemmAnswer a;
  if (!in.found()) return a;
  if (in.source() == v1::SOURCE_MEASURED) {
    store::MeasurementRow m;
    m.device = DeviceOf(in.device());
    m.software = SoftwareOf(in.software());
    m.key = store::GemmKey::Of(gemm);
    const auto& algo = in.algorithm();
    auto& id = m.result.algo;
    id.algo_id = algo.algo_id();
    id.tile = algo.tile();
    id.tile_m = algo.tile_m();
    id.tile_n = algo.tile_n();
    id.stages = algo.stages();
    id.split_k = algo.split_k();
    id.reduction_scheme = algo.reduction_scheme();
    id.swizzle = algo.swizzle();
    id.custom_option = algo.custom_option();
    id.cluster_shape = algo.cluster_shape();
    id.bytes.assign(algo.algo_bytes().begin(), algo.algo_bytes().end());
    const auto& st = in.statistics();
    tuner::SampleStats& s = m.result.stats;
    s.median_us = st.median_us();
    s.mean_us = st.mean_us();
    s.min_us = st.min_us();
    s.stdev_us = st.stdev_us();
    s.samples = st.samples();
    s.sm_clock_mhz = st.sm_clock_mhz();
    s.ci_low_us = st.ci_low_us();
    s.ci_high_us = st.ci_high_us();
    s.power_w = st.power_w();
    s.throttle_reasons = st.throttle_reasons();
    s.discarded = st.discarded();
    m.result.clock_note = st.clock_note();
    m.settled_clock_mhz = st.settled_clock_mhz();
    m.result.verified = true;  // lookups answer from verified rows only
    m.result.tflops = in.tflops();
    m.tiles = in.tiles();
    m.waves = in.waves();
    m.tile_efficiency = in.tile_efficiency();
    m.wave_efficiency = in.wave_efficiency();
    m.mode.cache = tuner::ParseCacheMode(in.cache_mode()).value_or(tuner::CacheMode::kCold);
    m.mode.clocks =
        tuner::ParseClockPolicy(in.clock_policy()).value_or(tuner::ClockPolicy::kSustained);
    a.measured = std::move(m);
    for (const v1::Run& run : in.runs()) a.runs.push_back(RunOf(run));
    a.pooled = in.pooled();
    a.pooled_low_us = in.pooled_low_us();
    a.pooled_high_us = in.pooled_high_us();
    a.pooled_us = in.pooled_us();
    a.measured->lda = in.lda();
    a.measured->ldb = in.ldb();
    a.measured->ldc = in.ldc();
    a.measured->result.heuristic_rank = in.heuristic_place() - 1;
  } else {
    store::PredictionRow p;
    p.gpu_model = gpu;
    p.model_version = in.model_version();
    p.key = store::GemmKey::Of(gemm);
    p.time_us = in.time_us();
    p.tflops = in.tflops();
    p.tile_m = in.tile_m();
    p.tile_n = in.tile_n();
    p.tiles = in.tiles();
    p.waves = in.waves();
    p.tile_efficiency = in.tile_efficiency();
    p.wave_efficiency = in.wave_efficiency();
    p.bound = in.bound();
    p.expected_error = in.expected_error();
    a.predicted = std::move(p);
  }
  return a;
}

namespace {

// A ratio as the wire carries it: the user's text when it says this very
// value (so answers echo it), else num/den: the value is what is asked.
std::string RatioText(const tuner::Ratio& r) {
  auto parsed = tuner::ParseRatio(r.text);
  if (parsed.ok() && parsed->Value() == r.Value()) return r.text;
  return StrCat(r.num, "/", r.den);
}

}  // namespace

void Fill(const tuner::DffQuery& q, const std::string& gpu, v1::QueryDffRequest* out) {
  out->set_hidden(q.dff.hidden);
  out->set_ratio(RatioText(q.dff.ratio));
  out->set_window(q.dff.window);
  out->set_align(q.dff.align);
  out->set_tokens(q.tokens);
  out->set_tp(q.dff.tp);
  out->set_dtype(ProtoDType(q.dtype));
  out->set_pass(q.train ? v1::PASS_TRAIN : v1::PASS_FWD);
  out->set_separate_gate_up(!q.fuse_gate_up);
  out->set_gpu(gpu);
  out->set_top(q.top);
}

namespace {

tuner::TileEstimate TileOf(const v1::TileEstimate& in) {
  tuner::TileEstimate e;
  e.tile.m = in.tile_m();
  e.tile.n = in.tile_n();
  e.ctas_per_sm = in.ctas_per_sm();
  e.tiles = in.tiles();
  e.waves = in.waves();
  e.tile_efficiency = in.tile_efficiency();
  e.wave_efficiency = in.wave_efficiency();
  e.k_efficiency = in.k_efficiency();
  e.reuse_efficiency = in.reuse_efficiency();
  e.compute_us = in.compute_us();
  e.memory_us = in.memory_us();
  e.time_us = in.time_us();
  return e;
}

}  // namespace

tuner::Prediction PredictionOf(const v1::PredictResponse& in, tuner::Prediction p) {
  p.time_us = in.time_us();
  p.tflops = in.tflops();
  p.peak_tflops = in.peak_tflops();
  p.memory_bound = in.memory_bound();
  p.alignment_factor = in.alignment_factor();
  p.family = in.kernel_family() == "fallback" ? tuner::KernelFamily::kFallback
                                              : tuner::KernelFamily::kFast;
  p.family_tflops = in.family_tflops();
  p.expected_error = in.expected_error();
  p.best = TileOf(in.best());
  for (int i = 0; i < in.tiles_size() && i < static_cast<int>(p.tiles.size()); ++i) {
    p.tiles[static_cast<size_t>(i)] = TileOf(in.tiles(i));
  }
  return p;
}

// ---- comparisons (crest compare)
namespace {

void FillSide(const answers::CompareSide& s, v1::CompareSide* out) {
  Fill(s.run, out->mutable_run());
  out->set_provenance(s.provenance);
  out->set_replayed(s.replayed);
  out->set_median_us(s.median_us);
  out->set_low_us(s.low_us);
  out->set_high_us(s.high_us);
  out->set_samples(s.samples);
  out->set_algo(s.algo);
}

answers::CompareSide SideOf(const v1::CompareSide& in) {
  answers::CompareSide s;
  s.run = RunOf(in.run());
  s.provenance = in.provenance();
  s.replayed = in.replayed();
  s.median_us = in.median_us();
  s.low_us = in.low_us();
  s.high_us = in.high_us();
  s.samples = in.samples();
  s.algo = in.algo();
  return s;
}

void FillGroup(const answers::CompareGroup& g, v1::CompareGroup* out) {
  out->set_name(g.name);
  out->set_gemms(g.gemms);
  out->set_faster(g.faster);
  out->set_same(g.same);
  out->set_slower(g.slower);
  out->set_unresolved(g.unresolved);
  out->set_algo_changes(g.algo_changes);
  out->set_geomean_ratio(g.geomean_ratio);
}

answers::CompareGroup GroupOf(const v1::CompareGroup& in) {
  return {in.name(),   in.gemms(),      in.faster(),       in.same(),
          in.slower(), in.unresolved(), in.algo_changes(), in.geomean_ratio()};
}

// A verdict a crestd sent; an unknown word is an error, never "same".
absl::StatusOr<answers::Verdict> VerdictOf(std::string_view text) {
  if (auto verdict = answers::ParseVerdict(text)) return *verdict;
  return absl::InvalidArgumentError(
      StrCat("gemms.verdict: '", text, "' is not faster, same, slower or unresolved"));
}

}  // namespace

void Fill(const answers::CompareReport& r, size_t limit, v1::CompareResponse* out) {
  for (size_t i = 0; i < r.gemms.size() && i < limit; ++i) {
    const answers::GemmComparison& c = r.gemms[i];
    v1::GemmComparison* g = out->add_gemms();
    g->set_gpu_model(c.gpu_model);
    Fill(c.key.Shape(), g->mutable_gemm());
    g->set_alignment(c.alignment);
    g->set_study(c.study);
    FillSide(c.base, g->mutable_base());
    FillSide(c.now, g->mutable_new_side());
    g->set_ratio(c.ratio);
    g->set_ratio_low(c.ratio_low);
    g->set_ratio_high(c.ratio_high);
    g->set_coverage(c.coverage);
    g->set_verdict(std::string(answers::VerdictName(c.verdict)));
    g->set_algo_changed(c.algo_changed);
  }
  out->set_left_out(static_cast<int64_t>(r.gemms.size() > limit ? r.gemms.size() - limit : 0));
  FillGroup(r.all, out->mutable_all());
  for (const auto& g : r.by_alignment) FillGroup(g, out->add_by_alignment());
  for (const auto& g : r.by_study) FillGroup(g, out->add_by_study());
  out->set_only_base(r.only_base);
  out->set_only_new(r.only_now);
  out->set_same_run(r.same_run);
  out->set_replayed(r.replayed);
  for (const auto& run : r.base_runs) out->add_base_runs(run);
  for (const auto& run : r.now_runs) out->add_new_runs(run);
  out->set_threshold(r.query.threshold);
}

absl::StatusOr<answers::CompareReport> CompareReportOf(const v1::CompareResponse& in,
                                                       const answers::CompareQuery& query,
                                                       int64_t* left_out) {
  answers::CompareReport r;
  r.query = query;
  r.query.threshold = in.threshold();
  for (const v1::GemmComparison& g : in.gemms()) {
    answers::GemmComparison c;
    c.gpu_model = g.gpu_model();
    auto gemm = GemmOf(g.gemm());
    if (!gemm.ok()) return gemm.status();
    c.key = store::GemmKey::Of(*gemm);
    c.alignment = g.alignment();
    c.study = g.study();
    c.base = SideOf(g.base());
    c.now = SideOf(g.new_side());
    c.ratio = g.ratio();
    c.ratio_low = g.ratio_low();
    c.ratio_high = g.ratio_high();
    c.coverage = g.coverage();
    auto verdict = VerdictOf(g.verdict());
    if (!verdict.ok()) return verdict.status();
    c.verdict = *verdict;
    c.algo_changed = g.algo_changed();
    r.gemms.push_back(std::move(c));
  }
  r.all = GroupOf(in.all());
  for (const auto& g : in.by_alignment()) r.by_alignment.push_back(GroupOf(g));
  for (const auto& g : in.by_study()) r.by_study.push_back(GroupOf(g));
  r.only_base = in.only_base();
  r.only_now = in.only_new();
  r.same_run = in.same_run();
  r.replayed = in.replayed();
  r.base_runs.assign(in.base_runs().begin(), in.base_runs().end());
  r.now_runs.assign(in.new_runs().begin(), in.new_runs().end());
  *left_out = in.left_out();
  return r;
}

}  // namespace crest::wire
