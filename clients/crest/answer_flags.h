// Internal to the crest CLI: where answers come from, chosen once for a
// command from its flags. Without --db or --server, this build's model;
// with --db FILE, the database (measured where it has measurements, the
// model filling what it lacks); with --server, a crestd doing the same from
// its node's database. `dff`, `vocab`, `design`, `lookup` and `explain`
// answer through what OpenAnswers returns, and nothing else.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/answers/answers.h"
#include "crest/common/cmdline.h"
#include "gemm_flags.h"

namespace crest::cli {

struct AnswerFlags {
  std::string db;
  int64_t cublaslt = 0;
  ModeFlags mode;
  std::string runs = "latest";
  std::string algo = "best";
  bool predict_only = false;  // registered by the commands that honour it (dff)
};

// Adds --db, --cublaslt, the measure-mode flags (--warm, --clocks), --runs
// and --algo.
void AddAnswerFlags(CLI::App& app, AnswerFlags& flags);

// The source the flags (and the global --server) name. InvalidArgument when
// both --db and --server are given, or --cublaslt, --runs or --algo default
// without either;
// NotFound for a missing database file.
absl::StatusOr<std::unique_ptr<answers::Answers>> OpenAnswers(const AnswerFlags& flags);

}  // namespace crest::cli
