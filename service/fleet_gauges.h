// Internal to crestd: the fleet check behind the crest_fleet_* gauges
// (metrics.h). Every `interval_s`, on a thread of its own (never a serving
// thread), it sets each device of the database against the fleet median of
// its GPU model (answers::CheckFleet, on a pooled read connection, at most
// kMaxFleetAnswers answers) and exports the devices that have a fleet; when
// nothing was written since (the results generation), the last figures
// stand and are not computed again. A
// node's own database rarely holds a fleet: the figures come from a crestd
// serving a catalogue that `crest fleet pull` fills (docs/deploy.md).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "crest/answers/fleet_health.h"
#include "crest/store/records.h"
#include "metrics.h"
#include "store_pool.h"

namespace crest::service {

// Answers (GEMM × device) one check reads; a larger database is refused,
// logged, and exports nothing.
inline constexpr int64_t kMaxFleetAnswers = 400'000;

class FleetGauges final {
 public:
  // Starts checking at once, then every interval_s (> 0).
  FleetGauges(StorePool& pool, Metrics& metrics, double interval_s);
  ~FleetGauges();  // stops, after a check in progress ends
  FleetGauges(const FleetGauges&) = delete;
  FleetGauges& operator=(const FleetGauges&) = delete;

 private:
  absl::Status CheckOnce();
  void Loop();

  StorePool& pool_;
  Metrics& metrics_;
  const double interval_s_;
  // The last check's database generation and figures (the thread's own).
  std::optional<store::ResultsGeneration> generation_;
  answers::FleetHealth health_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;  // GUARDED_BY(mutex_)
  std::thread thread_;
};

}  // namespace crest::service
