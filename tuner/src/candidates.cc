#include "crest/tuner/candidates.h"

#include <algorithm>
#include <numeric>

#include "crest/common/str_cat.h"
#include "crest/tuner/limits.h"
#include "sizes.h"

namespace crest::tuner {

using internal::CheckSize;

namespace {

// A window's candidates before they are listed: the baseline, and the grid
// of multiples of `step` from `first` to `hi` (the baseline added where it
// is not on it). What GenerateDffCandidates lists and CountDffCandidates
// counts, with the same checks.
struct DffGrid {
  DffCandidates head;  // naive, baseline and its note; no values
  int64_t first = 0, hi = 0, step = 1;

  int64_t OnGrid() const { return hi >= first ? (hi - first) / step + 1 : 0; }
  // The baseline lies in [first, hi] (the window is around it), so it is
  // on the grid exactly when the step divides it.
  bool BaselineOnGrid() const { return head.baseline % step == 0; }
  int64_t Count() const { return OnGrid() + (BaselineOnGrid() ? 0 : 1); }
};

absl::StatusOr<DffGrid> GridOf(const DffWindow& w) {
  if (auto s = CheckSize("hidden", w.hidden, kMaxHidden); !s.ok()) return s;
  if (auto s = CheckSize("align", w.align, kMaxDffWindow); !s.ok()) return s;
  if (auto s = CheckSize("tp", w.tp, kMaxTp); !s.ok()) return s;
  if (w.window < 0 || w.window > kMaxDffWindow) {
    return absl::InvalidArgumentError(
        StrCat("window must be between 0 and ", kMaxDffWindow, " (got ", w.window, ")"));
  }
  DffGrid grid;
  DffCandidates& out = grid.head;
  out.naive = w.ratio.FloorTimes(w.hidden);
  out.baseline = out.naive - out.naive % w.tp;
  if (out.baseline < 1 || out.naive > kMaxDff) {
    return absl::InvalidArgumentError(StrCat("ratio·hidden (", w.ratio.text, "·", w.hidden, " = ",
                                             out.naive, ") must lie in [", w.tp, ", ", kMaxDff,
                                             "]"));
  }
  if (out.baseline != out.naive) {
    out.baseline_note = StrCat("baseline rounded down from ", out.naive, " to ", out.baseline,
                               " to divide by tp=", w.tp);
  }
  // Every candidate must be a multiple of both align and tp.
  grid.step = std::lcm(w.align, w.tp);
  if (w.window > 0 && grid.step > w.window) {
    return absl::InvalidArgumentError(StrCat(
        "align (", w.align, w.tp > 1 ? StrCat(", stepping by lcm(align, tp) = ", grid.step) : "",
        ") must be at most window (", w.window,
        "): a larger step leaves no candidate but the baseline"));
  }
  const int64_t lo = std::max<int64_t>(1, out.baseline - w.window);
  grid.hi = std::min(kMaxDff, out.baseline + w.window);
  grid.first = (lo + grid.step - 1) / grid.step * grid.step;
  if (grid.OnGrid() > kMaxCandidates) {
    return absl::InvalidArgumentError(StrCat("window (", w.window, ") with align (", w.align,
                                             ") gives more than ", kMaxCandidates, " candidates"));
  }
  return grid;
}

}  // namespace

absl::StatusOr<DffCandidates> GenerateDffCandidates(const DffWindow& w) {
  auto grid = GridOf(w);
  if (!grid.ok()) return grid.status();
  DffCandidates out = std::move(grid->head);
  out.values.reserve(static_cast<size_t>(grid->Count()));
  for (int64_t v = grid->first; v <= grid->hi; v += grid->step) out.values.push_back(v);
  if (!grid->BaselineOnGrid()) {
    out.values.insert(std::lower_bound(out.values.begin(), out.values.end(), out.baseline),
                      out.baseline);
  }
  return out;
}

absl::StatusOr<int64_t> CountDffCandidates(const DffWindow& w) {
  auto grid = GridOf(w);
  if (!grid.ok()) return grid.status();
  return grid->Count();
}

absl::StatusOr<std::vector<int64_t>> HiddenSizes(int64_t from, int64_t to, int64_t step) {
  if (auto s = CheckSize("from", from, kMaxHidden); !s.ok()) return s;
  if (auto s = CheckSize("to", to, kMaxHidden); !s.ok()) return s;
  if (auto s = CheckSize("step", step, kMaxHidden); !s.ok()) return s;
  if (to < from) {
    return absl::InvalidArgumentError(StrCat("to (", to, ") must be at least from (", from, ")"));
  }
  std::vector<int64_t> out;
  for (int64_t h = from; h <= to; h += step) out.push_back(h);
  return out;
}

absl::StatusOr<std::vector<HeadChoice>> HeadCounts(int64_t hidden, int64_t min_head_dim,
                                                   int64_t max_head_dim) {
  if (auto s = CheckSize("hidden", hidden, kMaxHidden); !s.ok()) return s;
  if (auto s = CheckSize("min-head-dim", min_head_dim, kMaxHidden); !s.ok()) return s;
  if (auto s = CheckSize("max-head-dim", max_head_dim, kMaxHidden); !s.ok()) return s;
  if (max_head_dim < min_head_dim) {
    return absl::InvalidArgumentError(StrCat(
        "max-head-dim (", max_head_dim, ") must be at least min-head-dim (", min_head_dim, ")"));
  }
  std::vector<HeadChoice> out;
  for (int64_t heads = 1; heads <= std::min(hidden, kMaxHeads); ++heads) {
    if (hidden % heads != 0) continue;
    const int64_t d = hidden / heads;
    if (d < min_head_dim || d > max_head_dim || d % 8 != 0) continue;
    out.push_back({heads, d});
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> TpDegrees(int64_t heads, int64_t kv_heads, int64_t max_tp) {
  if (auto s = CheckSize("heads", heads, kMaxHeads); !s.ok()) return s;
  if (auto s = CheckSize("kv-heads", kv_heads, kMaxHeads); !s.ok()) return s;
  if (auto s = CheckSize("max-tp", max_tp, kMaxTp); !s.ok()) return s;
  std::vector<int64_t> out;
  for (int64_t t = 1; t <= max_tp; t *= 2) {
    if (heads % t == 0 && kv_heads % t == 0) out.push_back(t);
  }
  return out;
}

absl::StatusOr<std::vector<VocabPadding>> VocabPaddings(int64_t vocab, int64_t tp,
                                                        std::span<const int64_t> multiples) {
  if (auto s = CheckSize("vocab", vocab, kMaxVocab); !s.ok()) return s;
  if (auto s = CheckSize("tp", tp, kMaxTp); !s.ok()) return s;
  std::vector<VocabPadding> out;
  for (int64_t m : multiples) {
    if (auto s = CheckSize("multiple", m, 1 << 16); !s.ok()) return s;
    const int64_t unit = m * tp;
    const int64_t padded = (vocab + unit - 1) / unit * unit;
    out.push_back({m, padded, padded - vocab});
  }
  std::sort(out.begin(), out.end(), [](const VocabPadding& x, const VocabPadding& y) {
    return x.padded != y.padded ? x.padded < y.padded : x.multiple < y.multiple;
  });
  out.erase(std::unique(
                out.begin(), out.end(),
                [](const VocabPadding& x, const VocabPadding& y) { return x.padded == y.padded; }),
            out.end());
  return out;
}

}  // namespace crest::tuner
