// Internal to the crest CLI: what the answering commands answer, one type per
// command, the same whether the answer came from this build's model, a
// database or a crestd. Printers (printer.h) print them; commands never
// format.
#pragma once

#include <string>
#include <vector>

#include "crest/answers/answers.h"
#include "crest/tuner/design.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/vocab.h"

namespace crest::cli {

// `crest dff`
struct DffResult {
  const tuner::GpuSpec& gpu;
  tuner::DffQuery query;
  tuner::DffRanking ranking;
  answers::AnswerOrigin origin;
};

// `crest vocab`
struct VocabResult {
  const tuner::GpuSpec& gpu;
  tuner::VocabQuery query;
  tuner::VocabRanking ranking;
  answers::AnswerOrigin origin;
};

// `crest design`
struct DesignResult {
  const tuner::GpuSpec& gpu;
  tuner::DType dtype;
  tuner::DesignOptions options;
  std::vector<tuner::DesignRow> rows;  // ranked (RankDesigns)
  std::string search;                  // "searched near …", or empty for explicit configs
  int top = tuner::kDefaultTop;        // rows of each kind (0 = all)
  answers::AnswerOrigin origin;
};

// `crest lookup`
struct LookupResult {
  const tuner::GpuSpec& gpu;
  tuner::GemmShape gemm;
  answers::GemmAnswer answer;  // measured or predicted (never both empty)
  answers::AnswerOrigin origin;
};

// `crest explain`
struct ExplainResult {
  const tuner::GpuSpec& gpu;
  tuner::GemmShape gemm;
  tuner::Prediction prediction;
  answers::AnswerOrigin origin;
};

}  // namespace crest::cli
