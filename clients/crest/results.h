// Internal to the crest CLI: what the answering commands answer, one type per
// command, the same whether the answer came from this build's model, a
// database or a crestd (those whose rows hold times are in timed_results.h).
// Printers (printer.h) print them; commands never format.
#pragma once

#include "crest/answers/answers.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"

namespace crest::cli {

// `crest dff`
struct DffResult {
  const tuner::GpuSpec& gpu;
  tuner::DffQuery query;
  tuner::DffRanking ranking;
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
