#include "answer_flags.h"

#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/remote/remote_answers.h"
#include "crest/store/store.h"
#include "read_only_db.h"
#include "remote.h"

namespace crest::cli {

void AddAnswerFlags(CLI::App& app, AnswerFlags& flags) {
  AddOption(app, "--db", flags.db,
            "answer from this database: measured where it has measurements, else predicted "
            "(default: this build's model; --server asks a crestd)");
  AddOption(app, "--cublaslt", flags.cublaslt,
            "only measurements with this cuBLASLt version (e.g. 130100); default: any");
  AddModeFlags(app, flags.mode);
  AddOption(app, "--runs", flags.runs,
            "latest: each candidate's GEMMs from the most recent run (sweep job) that "
            "measured all of them; all: every run pooled (the median of the runs' medians, "
            "an interval covering their spread)")
      .ShowDefault();
  AddOption(app, "--algo", flags.algo,
            "which algorithm answers for each measured GEMM: best (the fastest Crest's search "
            "found) or default (cuBLASLt's first choice, what a framework that does not pin "
            "algorithms runs, PyTorch included; timed in the same rounds)")
      .ShowDefault();
}

absl::StatusOr<std::unique_ptr<answers::Answers>> OpenAnswers(const AnswerFlags& flags) {
  answers::AnswerOptions options;
  options.mode = ToMode(flags.mode);
  if (flags.cublaslt < 0) {
    return absl::InvalidArgumentError(
        StrCat("cublaslt: a version number like 130100 (got ", flags.cublaslt, ")"));
  }
  if (flags.cublaslt > 0) options.pin.cublaslt = flags.cublaslt;
  auto runs = answers::ParseRunChoice(flags.runs);
  if (!runs)
    return absl::InvalidArgumentError(StrCat("runs: '", flags.runs, "' is not latest or all"));
  options.runs = *runs;
  auto algo = tuner::ParseAlgoChoice(flags.algo);
  if (!algo) {
    return absl::InvalidArgumentError(StrCat("algo: '", flags.algo, "' is not best or default"));
  }
  options.algo = *algo;
  options.predict_only = flags.predict_only;
  if (!Remote().server.empty()) {
    if (!flags.db.empty()) return absl::InvalidArgumentError("db: give --db or --server, not both");
    auto channel = DaemonChannel::Open(Remote());
    if (!channel.ok()) return channel.status();
    return remote::RemoteAnswers(*std::move(channel), options);
  }
  if (flags.predict_only) return answers::ModelAnswers();
  if (flags.db.empty()) {
    if (flags.cublaslt != 0) {
      return absl::InvalidArgumentError("cublaslt: --cublaslt is for --db or --server");
    }
    if (options.runs != answers::RunChoice::kLatest) {
      return absl::InvalidArgumentError("runs: --runs is for --db or --server");
    }
    if (options.algo != tuner::AlgoChoice::kBest) {
      return absl::InvalidArgumentError(
          "algo: --algo default is for --db or --server (the model predicts the fastest "
          "algorithm's time)");
    }
    return answers::ModelAnswers();
  }
  auto db = OpenExisting(flags.db);
  if (!db.ok()) return db.status();
  return answers::StoreAnswers(*std::move(db), flags.db, options);
}

}  // namespace crest::cli
