#include "pinned_race.h"

#include <array>
#include <memory>

#include "lt_problem.h"

namespace crest::measure::internal {
namespace {

// One GEMM with its pinned algorithm, ready to sample.
struct PinnedLauncher {
  std::unique_ptr<LtProblem> problem;
  std::unique_ptr<CudaGemmLauncher> launcher;
  int launches = 1;  // per sample: one per operand copy
};

class PinnedSetTimer final : public CandidateTimer {
 public:
  PinnedSetTimer(std::vector<std::vector<PinnedLauncher*>> sets, const std::function<bool()>& stop)
      : sets_(std::move(sets)), stop_(stop) {}

  int Candidates() const override { return static_cast<int>(sets_.size()); }

  absl::StatusOr<double> Time(int c) override {
    if (stop_ && stop_()) return absl::CancelledError("the race was stopped");
    static constexpr std::array<int, 1> kOnly = {0};
    double us = 0;
    for (PinnedLauncher* p : sets_[static_cast<size_t>(c)]) {
      auto sample = p->launcher->Sample(kOnly);
      if (!sample.ok()) return sample.status();
      us += sample->front() / p->launches;
    }
    return us;
  }

 private:
  std::vector<std::vector<PinnedLauncher*>> sets_;
  const std::function<bool()>& stop_;
};

absl::StatusOr<PinnedLauncher> Prepare(const PinnedRaceDevice& d, const PinnedGemm& pinned) {
  PinnedLauncher out;
  auto problem = LtProblem::Describe(pinned.gemm);
  if (!problem.ok()) return problem.status();
  out.problem = *std::move(problem);
  auto algo = AlgoFromBytes(d.context.handle, *out.problem, pinned.algo.bytes, d.workspace_bytes);
  if (!algo.ok()) return algo.status();
  const OperandLayout layout = LayOut(pinned.gemm, d.l2_bytes, d.cache, d.plan);
  out.launches = layout.copies;
  out.launcher = std::make_unique<CudaGemmLauncher>(d.context, *out.problem, layout,
                                                    std::vector<cublasLtMatmulAlgo_t>{*algo});
  // Loads the kernel before anything is timed.
  if (auto once = out.launcher->TimeOneLaunch(0); !once.ok()) return once.status();
  if (auto s = out.launcher->PrepareSamples(out.launches); !s.ok()) return s;
  return out;
}

}  // namespace

absl::StatusOr<StudyRaceResult> RacePinnedSets(const PinnedRaceDevice& device,
                                               std::span<const std::vector<PinnedGemm>> sets,
                                               const StudyRaceOptions& options,
                                               const std::function<bool()>& stop,
                                               GpuMonitor& monitor, EngineClock& clock) {
  std::vector<PinnedLauncher> launchers;
  launchers.reserve([&] {
    size_t n = 0;
    for (const auto& set : sets) n += set.size();
    return n;
  }());
  std::vector<std::vector<PinnedLauncher*>> timed;
  for (const std::vector<PinnedGemm>& set : sets) {
    std::vector<PinnedLauncher*>& mine = timed.emplace_back();
    for (const PinnedGemm& pinned : set) {
      if (auto s = device.context.arena->Fill(pinned.gemm.dtype, device.context.stream); !s.ok()) {
        return s;
      }
      auto p = Prepare(device, pinned);
      if (!p.ok()) return p.status();
      launchers.push_back(*std::move(p));
      mine.push_back(&launchers.back());  // reserved: addresses stay put
    }
  }
  PinnedSetTimer timer(std::move(timed), stop);
  return RaceCandidates(timer, monitor, clock, options);
}

}  // namespace crest::measure::internal
