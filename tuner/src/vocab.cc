#include "crest/tuner/vocab.h"

#include <algorithm>
#include <map>

#include "crest/common/str_cat.h"
#include "crest/tuner/limits.h"
#include "crest/tuner/shapes.h"
#include "crest/tuner/timing_ops.h"
#include "sizes.h"

namespace crest::tuner {
namespace {

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

absl::Status Validate(const VocabQuery& q) {
  using internal::CheckSize;
  if (auto s = CheckSize("vocab", q.vocab, kMaxVocab); !s.ok()) return s;
  if (auto s = CheckSize("hidden", q.hidden, kMaxHidden); !s.ok()) return s;
  if (auto s = CheckSize("tp", q.tp, kMaxTp); !s.ok()) return s;
  return CheckSize("tokens", q.tokens, kMaxTokens);
}

// V itself (when t divides it) and V rounded up to each multiple m·t.
std::vector<VocabRow> Candidates(const VocabQuery& q) {
  std::map<int64_t, VocabRow> by_size;
  if (q.vocab % q.tp == 0) by_size[q.vocab].unpadded = true;
  for (int64_t m : kVocabMultiples) {
    const int64_t padded = RoundUp(q.vocab, m * q.tp);
    if (padded > kMaxVocab) continue;
    by_size[padded].multiple = m * q.tp;  // ascending m: the largest wins
  }
  std::vector<VocabRow> rows;
  for (auto& [padded, row] : by_size) {
    row.padded = padded;
    row.extra_params = (padded - q.vocab) * q.hidden;
    row.extra_params_per_rank = row.extra_params / q.tp;
    rows.push_back(row);
  }
  return rows;
}

absl::StatusOr<std::vector<GemmShape>> Gemms(const VocabQuery& q, int64_t padded) {
  ShapeOptions options;
  options.include_backward = true;
  return LogitsGemms(q.tokens, q.hidden, padded, q.tp, q.dtype, options);
}

// The forward GEMM comes first: its time is the first part's.
absl::Status Time(const VocabQuery& q, const GemmSetTimer& timer, VocabRow& row) {
  auto gemms = Gemms(q, row.padded);
  if (!gemms.ok()) return gemms.status();
  auto parts = timer(*gemms);
  if (!parts.ok()) return parts.status();
  row.fwd = SumTimings(std::span<const Timing>(parts->data(), 1));
  row.train = SumTimings(*parts);
  double flops = 0;
  for (const GemmShape& g : *gemms) flops += g.Flops();
  row.train_tflops = flops / row.train.time_us / 1e6;
  return absl::OkStatus();
}

const Timing& Ranked(const VocabQuery& q, const VocabRow& r) {
  return q.rank_by_train ? r.train : r.fwd;
}

// The baseline's ranked time predicted; 0 when the model has none.
double PredictedBaseline(const VocabQuery& q, const GemmSetTimer& predict, int64_t baseline) {
  if (!predict) return 0;
  auto gemms = Gemms(q, baseline);
  if (!gemms.ok()) return 0;
  auto parts = predict(*gemms);
  if (!parts.ok()) return 0;
  return q.rank_by_train ? SumTimings(*parts).time_us : (*parts)[0].time_us;
}

void SetSpeedups(const VocabQuery& q, const GemmSetTimer& predict, VocabRanking& out) {
  const Timing base = Ranked(q, out.rows.front());  // the baseline: the smallest size
  double predicted = base.source == Source::kPredicted ? base.time_us : -1;
  for (VocabRow& row : out.rows) {
    const Timing& t = Ranked(q, row);
    if (t.source == base.source) {
      row.speedup = base.time_us / t.time_us;
      row.speedup_basis = base.source;
      continue;
    }
    if (predicted < 0) predicted = PredictedBaseline(q, predict, out.baseline);
    if (predicted > 0) {
      row.speedup = predicted / t.time_us;
      row.speedup_basis = Source::kPredicted;
    }
  }
}

}  // namespace

absl::StatusOr<VocabRanking> RankVocabPaddings(const VocabQuery& q, const GemmSetTimer& timer,
                                               const GemmSetTimer& predict) {
  if (auto s = Validate(q); !s.ok()) return s;
  VocabRanking out;
  out.rows = Candidates(q);
  if (out.rows.empty()) {
    return absl::InvalidArgumentError(
        StrCat("vocab (", q.vocab, ") padded to a multiple of 8·tp exceeds ", kMaxVocab));
  }
  out.baseline = out.rows.front().padded;
  for (VocabRow& row : out.rows) {
    if (auto s = Time(q, timer, row); !s.ok()) return s;
    MergeRuns(out.runs, row.train.runs);
  }
  SetSpeedups(q, predict, out);
  std::vector<std::pair<Source, double>> speedups;
  for (const VocabRow& r : out.rows) speedups.emplace_back(Ranked(q, r).source, r.speedup);
  RankRows(
      out.rows,
      [&q](const VocabRow& r) -> std::optional<TieKey> {
        const Timing& t = Ranked(q, r);
        return TieKey{t.source, t.time_us, LowOf(t)};
      },
      &VocabRow::tie_group, HeadlineKind(speedups));
  return out;
}

}  // namespace crest::tuner
