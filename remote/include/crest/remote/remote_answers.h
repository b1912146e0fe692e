// The answering interface (crest::answers::Answers) over a crestd's gRPC
// API, for the CLI's --server and so for the Python package in process. d_ff answers come whole
// (QueryDff); vocabulary and design answers are ranked here from GEMM sets the daemon times as one
// (TimeGemms: one run, or the pool), so they rank exactly as the same database would rank locally.
#pragma once

#include <memory>

#include "crest/answers/answers.h"
#include "crest/remote/channel.h"

namespace crest::remote {

std::unique_ptr<answers::Answers> RemoteAnswers(DaemonChannel channel,
                                                answers::AnswerOptions options);

}  // namespace crest::remote
