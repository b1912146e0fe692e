// Generators of candidate dimensions: d_ff near r·h, hidden sizes, head
// counts, TP degrees and vocabulary paddings.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/defaults.h"
#include "crest/tuner/ratio.h"

namespace crest::tuner {

// Which d_ff values a question is about: those within ±window of ⌊r·h⌋.
struct DffWindow {
  int64_t hidden = 0;
  Ratio ratio;                      // 8/3 (kDefaultRatio)
  int64_t window = kDefaultWindow;  // candidates lie within ±window of the baseline
  int64_t align = kDefaultAlign;    // keep only multiples of this step (1 = every integer)
  int64_t tp = kDefaultTp;          // every candidate must divide by the TP degree
};

struct DffCandidates {
  int64_t naive = 0;            // ⌊r·h⌋, what int(8/3*h) gives
  int64_t baseline = 0;         // naive, or rounded down to a multiple of tp
  std::string baseline_note;    // why baseline != naive; empty otherwise
  std::vector<int64_t> values;  // ascending, each divisible by align and tp;
                                // always holds the baseline
};

// InvalidArgument names the field: hidden, ratio, window, align or tp.
absl::StatusOr<DffCandidates> GenerateDffCandidates(const DffWindow& window);
// How many values GenerateDffCandidates(window) gives, or its error, without
// listing them.
absl::StatusOr<int64_t> CountDffCandidates(const DffWindow& window);

// from, from+step, ... ≤ to.
absl::StatusOr<std::vector<int64_t>> HiddenSizes(int64_t from, int64_t to, int64_t step);

struct HeadChoice {
  int64_t heads = 0;
  int64_t head_dim = 0;
};
// Every head count a that divides hidden with head_dim = hidden/a inside
// [min_head_dim, max_head_dim] and a multiple of 8, fewest heads first.
absl::StatusOr<std::vector<HeadChoice>> HeadCounts(int64_t hidden, int64_t min_head_dim,
                                                   int64_t max_head_dim);

// Powers of two up to max_tp that divide heads and kv_heads.
absl::StatusOr<std::vector<int64_t>> TpDegrees(int64_t heads, int64_t kv_heads, int64_t max_tp);

struct VocabPadding {
  int64_t multiple = 0;  // padded to a multiple of multiple·tp
  int64_t padded = 0;
  int64_t extra_rows = 0;  // padded - vocab
};
// For each multiple m, the vocab rounded up to a multiple of m·tp (as
// Megatron's make-vocab-size-divisible-by does), ascending and deduplicated.
absl::StatusOr<std::vector<VocabPadding>> VocabPaddings(int64_t vocab, int64_t tp,
                                                        std::span<const int64_t> multiples);

}  // namespace crest::tuner
