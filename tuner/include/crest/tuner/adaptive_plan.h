// The adaptive plan of a sweep's d_ff studies (spec "plan": "adaptive",
// docs/sweep-spec.md): instead of timing every candidate of a window, time
// the baseline and the candidates the model cannot rule out, and stop when
// no candidate left untimed could beat the ones timed.
//
// Each round, per study:
//   1. the baseline, and every candidate whose predicted interval reaches
//      the predicted leader's time (the predicted tie group 1);
//   2. then, from the times so far: the measured leader (the least sum of
//      its GEMMs' medians among candidates timed whole), and each untimed
//      candidate's optimistic bound — the sum of its GEMMs' times, a timed
//      GEMM's median or an untimed one's prediction × the least of (1 − its
//      class's error) and the least measured/predicted ratio seen in its
//      error class (the model bounded by what it measured);
//   3. every untimed candidate whose bound is below the measured leader's
//      time is timed next, the lowest bounds first, at most kAdaptiveBatch
//      candidates a round.
// A study is decided when no untimed candidate's bound is below its
// measured leader's time. The plan never times a candidate twice; the
// candidates it leaves are answered by the model (predicted rows).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gpu_catalogue.h"

namespace crest::tuner {

// Candidates a study adds to one round, at most.
inline constexpr int kAdaptiveBatch = 8;

class AdaptivePlan {
 public:
  // Plans `studies` (their GEMMs predicted on `gpu` with the model in
  // force). InvalidArgument for a study PlanDff refuses or a GEMM the model
  // cannot predict, naming the study.
  static absl::StatusOr<AdaptivePlan> Make(std::span<const DffQuery> studies, const GpuSpec& gpu);

  // The GEMMs to time next, each once, in study and candidate order; empty
  // when every study is decided.
  std::vector<GemmShape> Next() const;
  // A timed GEMM's time [µs]: its median. A GEMM of no study is ignored.
  void Record(const GemmShape& gemm, double median_us);
  // A GEMM that could not be timed: its candidates are left to the model.
  void Failed(const GemmShape& gemm);
  // Whether `gemm` belongs to one of the studies.
  bool Plans(const GemmShape& gemm) const { return predicted_.contains(IdentityOf(gemm)); }

  struct StudyState {
    int64_t candidates = 0;
    int64_t timed = 0;  // candidates whose every GEMM is timed
    int64_t gemms = 0;  // distinct GEMMs of the study
    int64_t gemms_timed = 0;
    int64_t leader = 0;  // the measured leader's d_ff (0: none yet)
    double leader_us = 0;
  };
  // Where each study stands, in the order given.
  std::vector<StudyState> States() const;

 private:
  struct Predicted {
    double time_us = 0;
    double error = 0;
    size_t error_class = 0;
  };
  struct Study {
    DffPlan plan;
    size_t baseline = 0;  // index into plan.candidates.values
  };
  // Candidates of one study to time next (indices), by the rules above.
  std::vector<size_t> Wanted(const Study& study) const;
  bool Timed(std::span<const GemmShape> gemms) const;
  bool AnyFailed(std::span<const GemmShape> gemms) const;
  double Sum(std::span<const GemmShape> gemms) const;  // of the timed medians
  double Optimistic(std::span<const GemmShape> gemms) const;

  std::vector<Study> studies_;
  std::map<GemmIdentity, Predicted> predicted_;
  std::map<GemmIdentity, double> timed_;
  std::set<GemmIdentity> failed_;
  // The least measured/predicted ratio seen in each error class.
  std::array<double, kErrorClasses.size()> least_ratio_{};
};

}  // namespace crest::tuner
