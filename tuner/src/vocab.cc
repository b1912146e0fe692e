#include "crest/tuner/vocab.h"

#include <algorithm>
#include <map>

#include "crest/tuner/limits.h"
#include "crest/tuner/shapes.h"
#include "sizes.h"

namespace crest {
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

absl::Status Time(const VocabQuery& q, const GemmTimer& timer, VocabRow& row) {
  ShapeOptions options;
  options.include_backward = true;
  auto gemms = LogitsGemms(q.tokens, q.hidden, row.padded, q.tp, q.dtype, options);
  if (!gemms.ok()) return gemms.status();
  auto fwd = SumGemmTimes(std::span<const GemmShape>(gemms->data(), 1), timer);
  if (!fwd.ok()) return fwd.status();
  auto train = SumGemmTimes(*gemms, timer);
  if (!train.ok()) return train.status();
  row.fwd = *std::move(fwd);
  row.train = *std::move(train);
  double flops = 0;
  for (const GemmShape& g : *gemms) flops += g.Flops();
  row.train_tflops = flops / row.train.time_us / 1e6;
  return absl::OkStatus();
}

const Timing& Ranked(const VocabQuery& q, const VocabRow& r) { return q.rank_by_train ? r.train : r.fwd; }

}  // namespace

absl::StatusOr<VocabRanking> RankVocabPaddings(const VocabQuery& q, const GemmTimer& timer) {
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
  }
  const VocabRow base = out.rows.front();
  for (VocabRow& row : out.rows) {
    if (Ranked(q, row).source == Ranked(q, base).source) {
      row.speedup = Ranked(q, base).time_us / Ranked(q, row).time_us;
    }
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [&](const VocabRow& a, const VocabRow& b) {
    return std::pair(KindOrder(Ranked(q, a).source), Ranked(q, a).time_us) <
           std::pair(KindOrder(Ranked(q, b).source), Ranked(q, b).time_us);
  });
  GroupTiesWithinKind(
      out.rows,
      [&q](const VocabRow& r) -> std::optional<TieKey> {
        const Timing& t = Ranked(q, r);
        return TieKey{t.source, t.low_us, t.high_us};
      },
      &VocabRow::tie_group);
  return out;
}

}  // namespace crest
