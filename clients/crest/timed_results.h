// Internal to the crest CLI: the answers whose rows hold times (tuner::Timing:
// `crest vocab`, `crest design`), apart from results.h so that the other
// answering commands and their printers do not depend on the times' types.
// Printers (printer.h) print them; commands never format.
#pragma once

#include <string>
#include <vector>

#include "crest/answers/answers.h"
#include "crest/tuner/design.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/vocab.h"

namespace crest::cli {

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

}  // namespace crest::cli
