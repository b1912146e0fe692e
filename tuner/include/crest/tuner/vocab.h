// Vocabulary padding: a vocabulary of V rows padded up to a multiple of m·t
// (m = 8 … 1024, t the tensor-parallel degree), ranked by the time of the
// logits GEMM (forward, and forward + data and weight gradients), with the
// parameters the padding adds.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/defaults.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/timing.h"

namespace crest::tuner {

struct VocabQuery {
  int64_t vocab = 0;                // V, as the tokenizer has it
  int64_t hidden = 0;               // h
  int64_t tp = 1;                   // t: the logits GEMM's N is V_padded / t
  int64_t tokens = kDefaultTokens;  // M: tokens per rank
  DType dtype = DType::kBf16;
  bool rank_by_train = true;  // rank by the train time (false: forward)
};

inline constexpr int64_t kVocabMultiples[] = {8, 16, 32, 64, 128, 256, 512, 1024};

struct VocabRow {
  int64_t padded = 0;       // V_padded
  int64_t multiple = 0;     // the largest m·t of kVocabMultiples·t it is a multiple of (0: none)
  bool unpadded = false;    // V itself (only when t divides V)
  Timing fwd;               // the logits GEMM, forward
  Timing train;             // forward + dgrad + wgrad
  double train_tflops = 0;  // of the three GEMMs
  // The baseline's time / this time (of the ranked pass), against the
  // baseline's time of this row's kind where there is one, else the
  // predicted baseline's (speedup_basis); 0 only when nothing answers it.
  double speedup = 0;
  Source speedup_basis = Source::kUnknown;
  int64_t extra_params = 0;  // (V_padded − V)·h: per V×h table (embedding, output layer)
  int64_t extra_params_per_rank = 0;  // extra_params / t
  int tie_group = 0;                  // ranking.h
};

struct VocabRanking {
  int64_t baseline = 0;  // V when t divides it, else the smallest padding
  // Ranked by the rule of ranking.h: the headline best first (the largest
  // speed-up over its own kind's baseline), then its kind, then the others.
  std::vector<VocabRow> rows;
  std::vector<RunInfo> runs;  // the runs measured rows come from, each once
};

// The three GEMMs of each padding (forward, data and weight gradient) are
// timed together by `timer`; `predict` (optional) is the model alone, for
// a baseline of the predicted kind. InvalidArgument names the bad field
// (vocab, hidden, tp, tokens). A timer's NotFound for a candidate fails the
// ranking (nothing is dropped).
absl::StatusOr<VocabRanking> RankVocabPaddings(const VocabQuery& query, const GemmSetTimer& timer,
                                               const GemmSetTimer& predict = {});

}  // namespace crest::tuner
