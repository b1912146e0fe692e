#include "crest/tuner/calibration_fit.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <ctime>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <vector>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"

namespace crest::tuner {
namespace {

constexpr double kPull = 1.0;            // weight of the model in force, in rows
constexpr double kHold = 1e9;            // a parameter the rows cannot separate stays
constexpr double kMinComputeRatio = 10;  // usable: compute time >= this × launch cost
constexpr int64_t kMinStudyCandidates = 8;
// Candidates further apart than this belong to different windows (a window
// aligned to 64 still counts).
constexpr int64_t kMaxStudyGap = 64;
// A class's interval is set from its own held-out errors only with this many.
constexpr size_t kMinClassErrors = 10;

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::vector<double> Ranks(std::span<const double> x) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> ranks(x.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    for (size_t t = i; t <= j; ++t) ranks[order[t]] = (static_cast<double>(i + j)) / 2;
    i = j + 1;
  }
  return ranks;
}

// Pearson's correlation; 0 when either side is constant.
double Pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double num = 0, dx = 0, dy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += (x[i] - mx) * (y[i] - my);
    dx += (x[i] - mx) * (x[i] - mx);
    dy += (y[i] - my) * (y[i] - my);
  }
  return dx > 0 && dy > 0 ? num / std::sqrt(dx * dy) : 0;
}

// Solves (AᵀWA + Λ)θ = AᵀWy + Λ·prior for a few unknowns (Gaussian
// elimination with partial pivoting), Λ the diagonal of per-parameter pulls
// toward the prior.
struct Observation {
  std::vector<double> features;
  double y = 0;
  double weight = 0;
};

std::vector<double> RidgeSolve(const std::vector<Observation>& obs,
                               const std::vector<double>& prior, const std::vector<double>& pull) {
  const size_t n = prior.size();
  std::vector<std::vector<double>> m(n, std::vector<double>(n + 1, 0));
  for (size_t i = 0; i < n; ++i) {
    m[i][i] = pull[i];
    m[i][n] = pull[i] * prior[i];
  }
  for (const Observation& o : obs) {
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) m[i][j] += o.weight * o.features[i] * o.features[j];
      m[i][n] += o.weight * o.features[i] * o.y;
    }
  }
  for (size_t c = 0; c < n; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < n; ++r) {
      if (std::abs(m[r][c]) > std::abs(m[pivot][c])) pivot = r;
    }
    std::swap(m[c], m[pivot]);
    for (size_t r = 0; r < n; ++r) {
      if (r == c || m[c][c] == 0) continue;
      const double f = m[r][c] / m[c][c];
      for (size_t k = c; k <= n; ++k) m[r][k] -= f * m[c][k];
    }
  }
  std::vector<double> theta(n);
  for (size_t i = 0; i < n; ++i) {
    // A held parameter is the prior exactly; the others were solved with it fixed.
    theta[i] = pull[i] >= kHold || m[i][i] == 0 ? prior[i] : m[i][n] / m[i][i];
  }
  return theta;
}

// A row as the fit sees it: family, classes and log(rate × factor) observed.
struct FitRow {
  KernelFamily family = KernelFamily::kFast;
  int64_t min_alignment = 0;  // fast: the GEMM's smallest operand alignment
  int64_t a_alignment = 0;    // fallback: the inputs'
  int64_t b_alignment = 0;
  bool along_misaligned_k = false;  // both inputs' contiguous dimension is a misaligned K
  int64_t k = 0;
  double y = 0;  // log(unit-rate compute time / measured compute time)
};

size_t FallbackIndex(int64_t alignment) {
  return static_cast<size_t>(std::max(std::countr_zero(static_cast<uint64_t>(alignment)), 1) - 1);
}

// Rows grouped by what they share, one observation per group (its median).
template <typename Key>
std::vector<Observation> Groups(const std::vector<FitRow>& rows,
                                const std::function<bool(const FitRow&)>& take,
                                const std::function<Key(const FitRow&)>& key,
                                const std::function<std::vector<double>(const Key&)>& features) {
  std::map<Key, std::vector<double>> groups;
  for (const FitRow& r : rows) {
    if (take(r)) groups[key(r)].push_back(r.y);
  }
  std::vector<Observation> out;
  for (const auto& [k, ys] : groups) {
    out.push_back({features(k), MedianOf(ys), static_cast<double>(ys.size())});
  }
  return out;
}

}  // namespace

double SpearmanCorrelation(std::span<const double> x, std::span<const double> y) {
  if (x.size() < 2 || x.size() != y.size()) return 0;
  return Pearson(Ranks(x), Ranks(y));
}

namespace {

// One distinct GEMM: the median of its measured times, and the prediction.
struct Timed {
  GemmShape gemm;
  double measured = 0;
  double predicted = 0;
  double error = 0;  // the prediction's interval half-width, relative
  size_t error_class = 0;
};

std::map<GemmIdentity, Timed> Collapse(std::span<const TimedGemm> rows, const GpuSpec& gpu,
                                       const ModelParams& params) {
  std::map<GemmIdentity, std::pair<GemmShape, std::vector<double>>> times;
  for (const TimedGemm& r : rows) {
    if (r.time_us <= 0) continue;
    auto& entry = times[IdentityOf(r.gemm)];
    entry.first = r.gemm;
    entry.second.push_back(r.time_us);
  }
  std::map<GemmIdentity, Timed> out;
  for (auto& [key, entry] : times) {
    auto p = PredictWith(entry.first, gpu, params);
    if (!p.ok()) continue;
    out[key] = {entry.first, MedianOf(entry.second), p->time_us, p->expected_error, p->error_class};
  }
  return out;
}

double MedianError(const std::vector<double>& predicted, const std::vector<double>& measured) {
  std::vector<double> errors;
  for (size_t i = 0; i < predicted.size(); ++i) {
    errors.push_back(std::abs(predicted[i] - measured[i]) / measured[i]);
  }
  return MedianOf(std::move(errors));
}

// One candidate of a d_ff window: its MLP time measured and predicted, and
// the prediction's interval.
struct StudyRow {
  int64_t dff = 0;
  double measured = 0;
  double predicted = 0;
  double low = 0;
  double high = 0;
  bool operator<(const StudyRow& o) const { return dff < o.dff; }
};

// A d_ff window is a run of neighbouring candidates; the same model's other
// MLPs (tensor-parallel shards f/t, other configurations) share its tokens
// and hidden size but lie far away, and are not part of the study.
std::vector<std::vector<StudyRow>> ContiguousRuns(std::vector<StudyRow>& rows) {
  std::sort(rows.begin(), rows.end());
  std::vector<std::vector<StudyRow>> runs;
  for (const StudyRow& row : rows) {
    if (runs.empty() || row.dff - runs.back().back().dff > kMaxStudyGap) {
      runs.emplace_back();
    }
    runs.back().push_back(row);
  }
  return runs;
}

void AddStudy(std::pair<int64_t, int64_t> key, const std::vector<StudyRow>& rows,
              std::vector<StudyFit>& out) {
  if (static_cast<int64_t>(rows.size()) < kMinStudyCandidates) return;
  std::vector<double> measured, predicted;
  int64_t covered = 0, multiples = 0, multiples_covered = 0;
  for (const StudyRow& r : rows) {
    measured.push_back(r.measured);
    predicted.push_back(r.predicted);
    const bool inside = r.low <= r.measured && r.measured <= r.high;
    covered += inside;
    if (r.dff % 8 == 0) {
      ++multiples;
      multiples_covered += inside;
    }
  }
  const auto best_measured = std::min_element(measured.begin(), measured.end());
  const auto best_predicted = std::min_element(predicted.begin(), predicted.end());
  StudyFit s;
  s.tokens = key.first;
  s.hidden = key.second;
  s.candidates = static_cast<int64_t>(rows.size());
  s.measured_best = rows[static_cast<size_t>(best_measured - measured.begin())].dff;
  const size_t chosen = static_cast<size_t>(best_predicted - predicted.begin());
  s.predicted_best = rows[chosen].dff;
  s.best_gap = measured[chosen] / *best_measured - 1;
  s.spearman = SpearmanCorrelation(predicted, measured);
  s.median_error = MedianError(predicted, measured);
  s.coverage = static_cast<double>(covered) / static_cast<double>(rows.size());
  s.multiples_of_8 = multiples;
  if (multiples > 0) {
    s.coverage_multiples_of_8 =
        static_cast<double>(multiples_covered) / static_cast<double>(multiples);
  }
  out.push_back(s);
}

// SwiGLU MLP windows: candidates whose gate+up [T, 2f, h] and down [T, h, f]
// (forward, NT, unbatched) are both present.
std::vector<StudyFit> Studies(const std::map<GemmIdentity, Timed>& timed) {
  std::map<std::pair<int64_t, int64_t>, std::vector<StudyRow>> windows;
  for (const auto& [key, up] : timed) {
    const GemmShape& g = up.gemm;
    if (g.batch != 1 || g.a_transposed || !g.b_transposed || g.n % 2 != 0) continue;
    const int64_t f = g.n / 2;
    const auto down = timed.find({g.m, g.k, f, 1, false, true, g.dtype});
    if (down == timed.end()) continue;
    const Timed& dn = down->second;
    windows[{g.m, g.k}].push_back({f, up.measured + dn.measured, up.predicted + dn.predicted,
                                   up.predicted * (1 - up.error) + dn.predicted * (1 - dn.error),
                                   up.predicted * (1 + up.error) + dn.predicted * (1 + dn.error)});
  }
  std::vector<StudyFit> out;
  for (auto& [key, all] : windows) {
    for (const auto& rows : ContiguousRuns(all)) AddStudy(key, rows, out);
  }
  return out;
}

}  // namespace

FitMetrics Evaluate(std::span<const TimedGemm> rows, const GpuSpec& gpu,
                    const ModelParams& params) {
  const auto timed = Collapse(rows, gpu, params);
  FitMetrics m;
  std::vector<double> measured, predicted;
  for (const auto& [key, t] : timed) {
    measured.push_back(t.measured);
    predicted.push_back(t.predicted);
  }
  m.rows = static_cast<int64_t>(measured.size());
  m.spearman = SpearmanCorrelation(predicted, measured);
  m.median_error = MedianError(predicted, measured);
  m.studies = Studies(timed);
  return m;
}

ModelParams ExplicitRates(const ModelParams& p, const GpuSpec& gpu, DType dtype) {
  ModelParams out = p;
  out.fast_tflops = p.fast_tflops > 0
                        ? p.fast_tflops
                        : gpu.PeakTflops(dtype) * p.compute_efficiency * p.sustained_clock_ratio;
  out.fallback_tflops =
      p.fallback_tflops > 0 ? p.fallback_tflops : out.fast_tflops * p.fallback_ratio;
  return out;
}

namespace {

// Rates of 1 TFLOP/s, no alignment factor, no launch cost or memory limit:
// a GEMM's compute time under it is its quantized work.
ModelParams UnitModel(ModelParams p) {
  p.fast_tflops = 1;
  p.fallback_tflops = 1;
  p.fast_align = {1, 1, 1, 1};
  p.fallback_input = {1, 1, 1};
  p.fallback_k_residue = OnesByResidue();
  p.launch_us = 0;
  p.memory_efficiency = 1e12;
  return p;
}

struct Usable {
  std::vector<FitRow> rows;
  int64_t memory_bound = 0;
  int64_t too_short = 0;
  int64_t other_dtype = 0;
};

Usable Prepare(std::span<const TimedGemm> all, const FitRequest& request,
               const ModelParams& start) {
  Usable out;
  std::vector<TimedGemm> mine;
  for (const TimedGemm& r : all) {
    if (r.gemm.dtype == request.dtype) {
      mine.push_back(r);
    } else {
      ++out.other_dtype;
    }
  }
  const GpuSpec& gpu = *request.gpu;
  const ModelParams unit = UnitModel(start);
  for (const auto& [key, t] : Collapse(mine, gpu, start)) {
    auto full = PredictWith(t.gemm, gpu, start);
    auto work = PredictWith(t.gemm, gpu, unit);
    if (!full.ok() || !work.ok()) continue;
    const double compute_us = t.measured - start.launch_us;
    if (full->memory_bound) {
      ++out.memory_bound;
    } else if (compute_us < kMinComputeRatio * start.launch_us) {
      ++out.too_short;
    } else {
      out.rows.push_back(
          {work->family, std::min({work->a.alignment, work->b.alignment, work->c.alignment}),
           work->a.alignment, work->b.alignment,
           work->family == KernelFamily::kFallback && BothInputsAlongMisalignedK(t.gemm, gpu),
           t.gemm.k, std::log(work->best.compute_us / compute_us)});
    }
  }
  return out;
}

// The fast family: log rate and the factors of classes 16, 32, 64 B (128 B
// is 1 by definition). Returns the names of the parameters the rows set.
std::vector<std::string> FitFast(const std::vector<FitRow>& rows, ModelParams& p) {
  const auto groups = Groups<int64_t>(
      rows, [](const FitRow& r) { return r.family == KernelFamily::kFast; },
      [](const FitRow& r) { return std::min<int64_t>(r.min_alignment, 128); },
      [](const int64_t& c) {
        return std::vector<double>{1, c == 16 ? 1.0 : 0, c == 32 ? 1.0 : 0, c == 64 ? 1.0 : 0};
      });
  if (groups.empty()) return {};
  std::vector<bool> present(4, false);  // classes 16, 32, 64, 128
  for (const Observation& o : groups) {
    size_t c = 3;
    for (size_t i = 1; i < 4; ++i) {
      if (o.features[i] > 0) c = i - 1;
    }
    present[c] = true;
  }
  std::vector<double> prior = {std::log(p.fast_tflops), std::log(p.fast_align[0]),
                               std::log(p.fast_align[1]), std::log(p.fast_align[2])};
  std::vector<double> pull(4, kPull);
  if (!present[3]) {  // no 128-byte rows: hold the highest class present to separate the rate
    size_t highest = 0;
    for (size_t c = 0; c < 3; ++c) {
      if (present[c]) highest = c;
    }
    pull[highest + 1] = kHold;
  }
  const auto theta = RidgeSolve(groups, prior, pull);
  p.fast_tflops = std::exp(theta[0]);
  std::vector<std::string> fitted = {"fast_tflops"};
  constexpr const char* kNames[] = {"fast_align.16", "fast_align.32", "fast_align.64"};
  for (size_t c = 0; c < 3; ++c) {
    p.fast_align[c] = std::exp(theta[c + 1]);
    if (present[c] && pull[c + 1] == kPull) fitted.emplace_back(kNames[c]);
  }
  // Larger alignment never costs rate.
  p.fast_align[3] = 1.0;
  for (size_t c = 3; c-- > 0;) p.fast_align[c] = std::min(p.fast_align[c], p.fast_align[c + 1]);
  return fitted;
}

// The fallback family: log rate and the factor per misaligned input at 2,
// 4, 8 B. The rate is separable from the factors when some rows have both
// inputs aligned (only C misaligned) or a class appears once and twice;
// otherwise the factor of the widest class present stays (the rate takes its
// correction) and the other classes' factors are fitted against it, so a
// sweep over every K residue (one input misaligned at 2, 4 or 8 B) still
// fits each class.
std::vector<std::string> FitFallback(const std::vector<FitRow>& rows, ModelParams& p) {
  using Counts = std::array<int, 3>;
  const auto groups = Groups<Counts>(
      rows, [](const FitRow& r) { return r.family == KernelFamily::kFallback; },
      [](const FitRow& r) {
        Counts c = {0, 0, 0};
        for (int64_t a : {r.a_alignment, r.b_alignment}) {
          if (a < 16) ++c[FallbackIndex(a)];
        }
        return c;
      },
      [](const Counts& c) {
        return std::vector<double>{1, static_cast<double>(c[0]), static_cast<double>(c[1]),
                                   static_cast<double>(c[2])};
      });
  if (groups.empty()) return {};
  bool rate_alone = false;
  std::array<std::set<int>, 3> counts;
  for (const Observation& o : groups) {
    rate_alone = rate_alone || (o.features[1] + o.features[2] + o.features[3] == 0);
    for (size_t c = 0; c < 3; ++c) {
      if (o.features[c + 1] > 0) counts[c].insert(static_cast<int>(o.features[c + 1]));
    }
  }
  bool separable = rate_alone;
  for (const auto& seen : counts) separable = separable || seen.size() > 1;
  std::vector<double> prior = {std::log(p.fallback_tflops), std::log(p.fallback_input[0]),
                               std::log(p.fallback_input[1]), std::log(p.fallback_input[2])};
  std::vector<double> pull = {kPull, kPull, kPull, kPull};
  if (!separable) {
    for (size_t c = 3; c-- > 0;) {
      if (!counts[c].empty()) {
        pull[c + 1] = kHold;
        break;
      }
    }
  }
  const auto theta = RidgeSolve(groups, prior, pull);
  p.fallback_tflops = std::exp(theta[0]);
  std::vector<std::string> fitted = {"fallback_tflops"};
  constexpr const char* kNames[] = {"fallback_input.2", "fallback_input.4", "fallback_input.8"};
  for (size_t c = 0; c < 3; ++c) {
    p.fallback_input[c] = std::min(1.0, std::exp(theta[c + 1]));  // misalignment never helps
    if (pull[c + 1] == kPull && !counts[c].empty()) fitted.emplace_back(kNames[c]);
  }
  return fitted;
}

// The K-residue factors are fitted for a class only when two halves of its
// rows with different K (K/128 even, odd) agree on them this well over at
// least this many residues: a Pearson correlation of 0.6 over 12 residues
// arises from noise alone less than 2% of the time.
constexpr double kMinResidueAgreement = 0.6;
constexpr int kMinResidues = 12;

// Each residue's (K mod 128) median log rate of some rows of one class
// against what the class factors predict for them (`base`).
std::map<int, double> ResidueLogRates(const std::vector<const FitRow*>& rows, double base) {
  std::map<int, std::vector<double>> by_residue;
  for (const FitRow* r : rows) {
    by_residue[static_cast<int>(r->k % kKResiduePeriod)].push_back(r->y - base);
  }
  std::map<int, double> out;
  for (auto& [residue, ys] : by_residue) out[residue] = MedianOf(std::move(ys));
  return out;
}

double MedianValue(const std::map<int, double>& by_residue) {
  std::vector<double> values;
  for (const auto& [residue, v] : by_residue) values.push_back(v);
  return MedianOf(std::move(values));
}

// How well two halves of the rows (K/128 even, odd) agree on the pattern:
// Pearson's r over the residues both have, and how many those are.
std::pair<double, int> HalvesAgree(const std::vector<const FitRow*>& rows) {
  std::vector<const FitRow*> halves[2];
  for (const FitRow* r : rows) halves[(r->k / kKResiduePeriod) % 2].push_back(r);
  const auto even = ResidueLogRates(halves[0], 0);
  const auto odd = ResidueLogRates(halves[1], 0);
  std::vector<double> x, y;
  for (const auto& [residue, v] : even) {
    if (auto it = odd.find(residue); it != odd.end()) {
      x.push_back(v);
      y.push_back(it->second);
    }
  }
  return {x.size() >= 2 ? Pearson(x, y) : 0, static_cast<int>(x.size())};
}

// One class's residue factors, if its halves agree; else they stay as they
// were. A factor is the residue's rate against the class factors' product
// (both inputs count), its departure from the class's typical residue
// shrunk by the split-half reliability.
KResidueFit FitResidueClass(int class_bytes, const std::vector<const FitRow*>& rows,
                            ModelParams& p) {
  KResidueFit fit;
  fit.class_bytes = class_bytes;
  fit.rows = static_cast<int64_t>(rows.size());
  std::tie(fit.agreement, fit.residues) = HalvesAgree(rows);
  fit.fitted = fit.residues >= kMinResidues && fit.agreement >= kMinResidueAgreement;
  if (!fit.fitted) return fit;
  fit.shrink = 2 * fit.agreement / (1 + fit.agreement);  // Spearman-Brown
  const double base =
      std::log(p.fallback_tflops) + 2 * std::log(p.fallback_input[FallbackIndex(class_bytes)]);
  const auto rates = ResidueLogRates(rows, base);
  const double level = MedianValue(rates);
  fit.low = fit.high = std::exp(level);
  for (const auto& [residue, v] : rates) {
    const double factor = std::exp(level + fit.shrink * (v - level));
    p.fallback_k_residue[static_cast<size_t>(residue)] = factor;
    fit.low = std::min(fit.low, factor);
    fit.high = std::max(fit.high, factor);
  }
  return fit;
}

// The fallback rate's factors by K mod 128 where both inputs run along a
// misaligned K, per input class (2, 4, 8 B), where they replicate.
std::vector<std::string> FitKResidue(const std::vector<FitRow>& rows, ModelParams& p,
                                     std::vector<KResidueFit>& report) {
  std::map<int, std::vector<const FitRow*>> by_class;
  for (const FitRow& r : rows) {
    if (r.along_misaligned_k)
      by_class[static_cast<int>(std::max<int64_t>(r.a_alignment, 2))].push_back(&r);
  }
  std::vector<std::string> fitted;
  for (const auto& [class_bytes, members] : by_class) {
    report.push_back(FitResidueClass(class_bytes, members, p));
    if (report.back().fitted) fitted.push_back(StrCat("fallback_k_residue.", class_bytes));
  }
  return fitted;
}

// The parameters fitted to usable rows, starting from `start`.
struct Fitted {
  ModelParams params;
  std::vector<std::string> fitted;  // the names of those the rows set
  std::vector<KResidueFit> k_residue;
};

Fitted FitParams(const std::vector<FitRow>& rows, const ModelParams& start) {
  Fitted f{start, {}, {}};
  f.fitted = FitFast(rows, f.params);
  for (auto& name : FitFallback(rows, f.params)) f.fitted.push_back(std::move(name));
  for (auto& name : FitKResidue(rows, f.params, f.k_residue)) f.fitted.push_back(std::move(name));
  return f;
}

using ClassErrors = std::array<std::vector<double>, kErrorClasses.size()>;

// |predicted - measured| / measured of every timed row (each run of a GEMM
// on its own, so the errors hold the runs' differences too), by error class.
void AddErrors(std::span<const TimedGemm> rows, const GpuSpec& gpu, const ModelParams& params,
               ClassErrors& into) {
  for (const TimedGemm& r : rows) {
    if (r.time_us <= 0) continue;
    auto p = PredictWith(r.gemm, gpu, params);
    if (!p.ok()) continue;
    into[p->error_class].push_back(std::abs(p->time_us - r.time_us) / r.time_us);
  }
}

// A GEMM of the d_ff window of (tokens, hidden): its dimensions hold both
// (twice the one figure when tokens = hidden).
bool InWindow(const GemmShape& g, int64_t tokens, int64_t hidden) {
  const auto count = [&](int64_t d) { return (g.m == d) + (g.n == d) + (g.k == d); };
  return tokens == hidden ? count(tokens) >= 2 : count(tokens) >= 1 && count(hidden) >= 1;
}

// Each d_ff window left out of a refit in turn: the window's rows and the
// parameters fitted without them.
struct LeftOut {
  std::vector<TimedGemm> rows;
  ModelParams params;
};

std::vector<LeftOut> LeaveWindowsOut(std::span<const TimedGemm> mine, const FitRequest& request,
                                     const ModelParams& start,
                                     const std::vector<StudyFit>& studies) {
  std::set<std::pair<int64_t, int64_t>> windows;
  for (const StudyFit& st : studies) windows.insert({st.tokens, st.hidden});
  std::vector<LeftOut> out;
  for (const auto& [tokens, hidden] : windows) {
    std::vector<TimedGemm> rest;
    LeftOut left;
    for (const TimedGemm& r : mine) {
      (InWindow(r.gemm, tokens, hidden) ? left.rows : rest).push_back(r);
    }
    const Usable usable = Prepare(rest, request, start);
    if (static_cast<int64_t>(usable.rows.size()) < kMinFitRows) continue;
    left.params = FitParams(usable.rows, start).params;
    out.push_back(std::move(left));
  }
  return out;
}

double QuantileOf(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const size_t below = static_cast<size_t>(at);
  const size_t above = std::min(below + 1, v.size() - 1);
  return v[below] + (at - static_cast<double>(below)) * (v[above] - v[below]);
}

// The held-out errors of a layout's fast classes together.
std::vector<double> FastOfLayout(const ClassErrors& held, size_t cls) {
  std::vector<double> out;
  const size_t first = cls - cls % kErrorKinds;
  for (size_t c = first; c < first + kErrorKinds - 1; ++c) {
    out.insert(out.end(), held[c].begin(), held[c].end());
  }
  return out;
}

// The errors a class's half-width is set from: its own held-out ones when
// there are enough, else (fast) those of its layout's fast classes, else its
// own in-sample ones; none: the class keeps its figure.
std::vector<double> ErrorsFor(size_t cls, const ClassErrors& held, const ClassErrors& in_sample) {
  if (held[cls].size() >= kMinClassErrors) return held[cls];
  if (!IsFallbackClass(cls)) {
    std::vector<double> fast = FastOfLayout(held, cls);
    if (fast.size() >= kMinClassErrors) return fast;
  }
  return in_sample[cls];
}

// Sets the calibration's interval half-widths by error class from the
// windows left out (or, with none, the rows in sample), and how often they
// held those windows' MLP times.
void SetIntervals(Calibration& c, std::span<const TimedGemm> mine, const FitRequest& request,
                  const ModelParams& start) {
  const GpuSpec& gpu = *request.gpu;
  // The windows are those the fitted model's report finds among the rows.
  std::vector<LeftOut> left =
      LeaveWindowsOut(mine, request, start, Studies(Collapse(mine, gpu, c.params)));
  ClassErrors held, in_sample;
  for (const LeftOut& w : left) AddErrors(w.rows, gpu, w.params, held);
  AddErrors(mine, gpu, c.params, in_sample);
  IntervalFit& fit = c.interval;
  fit.basis =
      left.empty() ? "the fit's own rows (no d_ff window to leave out)" : "held-out d_ff windows";
  fit.windows = static_cast<int64_t>(left.size());
  fit.quantile = kIntervalQuantile;
  for (size_t cls = 0; cls < kErrorClasses.size(); ++cls) {
    fit.gemms += static_cast<int64_t>(held[cls].size());
    const std::vector<double> errors = ErrorsFor(cls, held, in_sample);
    if (errors.empty()) continue;
    // Never below 1%: no model is truer than a GPU repeats itself.
    c.params.expected_error[cls] = std::max(0.01, QuantileOf(errors, kIntervalQuantile));
    c.fitted.push_back(StrCat("expected_error.", kErrorClasses[cls]));
  }
  int64_t covered = 0, multiples_covered = 0;
  for (LeftOut& w : left) {
    w.params.expected_error = c.params.expected_error;
    for (const StudyFit& st : Studies(Collapse(w.rows, gpu, w.params))) {
      fit.candidates += st.candidates;
      covered += std::llround(st.coverage * static_cast<double>(st.candidates));
      fit.multiples_of_8 += st.multiples_of_8;
      multiples_covered += std::llround(std::max(0.0, st.coverage_multiples_of_8) *
                                        static_cast<double>(st.multiples_of_8));
    }
  }
  if (fit.candidates > 0)
    fit.coverage = static_cast<double>(covered) / static_cast<double>(fit.candidates);
  if (fit.multiples_of_8 > 0) {
    fit.coverage_multiples_of_8 =
        static_cast<double>(multiples_covered) / static_cast<double>(fit.multiples_of_8);
  }
}

std::string Today() {
  const std::time_t now = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

}  // namespace

absl::StatusOr<Calibration> FitCalibration(std::span<const TimedGemm> rows,
                                           const FitRequest& request) {
  const GpuSpec& gpu = *request.gpu;
  const ModelParams start = ExplicitRates(request.before, gpu, request.dtype);
  const Usable usable = Prepare(rows, request, start);
  if (static_cast<int64_t>(usable.rows.size()) < kMinFitRows) {
    return absl::FailedPreconditionError(
        StrCat("calibrate: ", usable.rows.size(), " usable ", DTypeName(request.dtype),
               " GEMMs on ", gpu.name, "; at least ", kMinFitRows,
               " are needed (left out: ", usable.memory_bound, " memory-bound, ", usable.too_short,
               " too short against the launch cost, ", usable.other_dtype, " of other dtypes)"));
  }
  Calibration c;
  c.gpu = std::string(gpu.name);
  c.dtype = request.dtype;
  Fitted fitted = FitParams(usable.rows, start);
  c.params = fitted.params;
  c.fitted = std::move(fitted.fitted);
  c.k_residue = std::move(fitted.k_residue);
  std::vector<TimedGemm> mine;
  for (const TimedGemm& r : rows) {
    if (r.gemm.dtype == request.dtype) mine.push_back(r);
  }
  SetIntervals(c, mine, request, start);
  c.before = Evaluate(mine, gpu, request.before);
  c.after = Evaluate(mine, gpu, c.params);
  c.provenance = request.provenance;
  c.provenance.rows = static_cast<int64_t>(usable.rows.size());
  if (c.provenance.date.empty()) c.provenance.date = Today();
  NameCalibration(c);
  return c;
}

}  // namespace crest::tuner
