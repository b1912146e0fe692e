// How the d_ff, vocabulary and design answers order their candidates, in
// one place, so that every answer follows the rule it prints (kTieRule).
#pragma once

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "crest/tuner/source.h"

namespace crest::tuner {

// Where a kind of number sorts after the headline's kind: measured 0,
// replayed 1, mixed 2, predicted 3, imported 4, unknown 5.
int KindOrder(Source source);

// What the ranking reads of a row.
struct TieKey {
  Source source = Source::kUnknown;
  double time_us = 0;
  double low_us = 0;  // the low end of its interval (= time_us when exact)
};

// The rule RankWithTies follows, as answers print it.
inline constexpr std::string_view kTieRule =
    "tie = tie group: a row is tied with its group's fastest row when its interval reaches that "
    "row's time; group 1 is the best and every row tied with it, and each next group starts at "
    "the fastest row left. Rows are listed group by group, each fastest first; rows of "
    "different kinds (measured, replayed, predicted) are never in one group";

// The position of each row after ranking: kinds of number stay apart, the
// `first` kind's rows first, then the others by KindOrder. Within a kind the
// fastest row left leads a new group, and every row left whose interval
// reaches the leader's time (low_us <= leader's time_us) joins it; rows are
// listed group by group, each group fastest first (equal times keep input
// order); groups are numbered 1, 2, … in listing order. Rows whose key is
// nullopt are left out (listed last, in input order, group 0).
struct RankedOrder {
  std::vector<size_t> order;  // order[i]: the input index listed i-th
  std::vector<int> group;     // group[j]: the tie group of input row j
};
RankedOrder RankWithTies(const std::vector<std::optional<TieKey>>& keys, Source first);

// Applies RankWithTies to `rows`: reorders them and sets each row's
// tie-group field.
template <typename Row, typename KeyOf>
void RankRows(std::vector<Row>& rows, KeyOf key, int Row::*group, Source first) {
  std::vector<std::optional<TieKey>> keys;
  keys.reserve(rows.size());
  for (const Row& r : rows) keys.push_back(key(r));
  const RankedOrder ranked = RankWithTies(keys, first);
  std::vector<Row> out;
  out.reserve(rows.size());
  for (size_t i : ranked.order) {
    out.push_back(std::move(rows[i]));
    out.back().*group = ranked.group[i];
  }
  rows = std::move(out);
}

// The kind the headline best is taken from: the kind whose best row has the
// largest speed-up over its own baseline (each kind against a baseline of
// that kind, or the predicted one where it has none); a measured row wins
// an equal speed-up. `speedups` holds one (kind, speed-up) per row; a kind
// with no speed-up known (0) counts after every kind that has one, and when
// none has, the first kind by KindOrder is the headline's.
Source HeadlineKind(const std::vector<std::pair<Source, double>>& speedups);

}  // namespace crest::tuner
