// Internal to the crest CLI: the answering interface over a crestd's gRPC
// API. d_ff answers come whole (QueryDff); vocabulary and design answers are
// ranked here from GEMM sets the daemon times as one (TimeGemms: one run, or
// the pool), so they rank exactly as the same database would rank locally.
#pragma once

#include <memory>

#include "crest/answers/answers.h"
#include "remote.h"

namespace crest::cli {

std::unique_ptr<answers::Answers> RemoteAnswers(DaemonChannel channel,
                                                answers::AnswerOptions options);

}  // namespace crest::cli
