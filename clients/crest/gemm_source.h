// Internal to the crest CLI: where `crest vocab` and `crest design` get each
// GEMM's time. Without --db or --server, this build's model predicts it;
// with --db FILE, the database answers (measured, else predicted, the model
// filling what the file lacks); with --server, a crestd's LookupGemm does
// the same from its node's database. Every answer says its kind (Timing).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "crest/store/records.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gpu_catalogue.h"
#include "gemm_flags.h"

namespace crest::cli {

struct AnswerFlags {
  std::string db;
  int64_t cublaslt = 0;
  ModeFlags mode;
};

// Adds --db, --cublaslt and the measure-mode flags (--warm, --clocks).
void AddAnswerFlags(CLI::App& app, AnswerFlags& flags);

class GemmSource {
 public:
  virtual ~GemmSource() = default;
  // The GEMM's best known time; repeated GEMMs are answered once.
  // NotFound: nothing at all answers it (no model path for its dtype).
  absl::StatusOr<Timing> Time(const GemmShape& gemm);
  // "predicted by <the model in force>; not measured", "node.db", "crestd at host:port".
  virtual std::string Describe() const = 0;

 protected:
  virtual absl::StatusOr<Timing> Answer(const GemmShape& gemm) = 0;

 private:
  std::map<store::GemmKey, Timing> answered_;
};

// "2 measured, 5 predicted": how many answers of each kind, measured first.
std::string CountKinds(const std::vector<Source>& sources);

// The source the flags (and the global --server) name. InvalidArgument when
// both --db and --server are given; NotFound for a missing database file.
// `dtype` is the one the answers are for (it names the model in force).
absl::StatusOr<std::unique_ptr<GemmSource>> OpenGemmSource(const AnswerFlags& flags,
                                                           const GpuSpec& gpu, DType dtype);

}  // namespace crest::cli
