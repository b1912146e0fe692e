#include "fleet_gauges.h"

#include <chrono>
#include <string>

#include "crest/answers/fleet_health.h"
#include "crest/common/str_cat.h"
#include "crest/store/store.h"
#include "log.h"

namespace crest::service {

FleetGauges::FleetGauges(StorePool& pool, Metrics& metrics, double interval_s)
    : pool_(pool), metrics_(metrics), interval_s_(interval_s), thread_([this] { Loop(); }) {}

FleetGauges::~FleetGauges() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void FleetGauges::Loop() {
  const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(interval_s_));
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    if (auto s = CheckOnce(); !s.ok()) {
      Log(Level::kWarn, "fleet_check_failed", {{"error", std::string(s.message())}});
    }
    lock.lock();
    wake_.wait_for(lock, interval, [this] { return stop_; });
  }
}

absl::Status FleetGauges::CheckOnce() {
  auto db = pool_.Acquire();
  if (!db.ok()) return db.status();
  // Nothing written since the last check: its figures stand, checked now.
  auto generation = (*db)->LatestGeneration();
  if (!generation.ok()) return generation.status();
  if (generation_ != *generation) {
    answers::FleetQuery query;
    query.max_answers = kMaxFleetAnswers;
    auto health = answers::CheckFleet(**db, query);
    if (!health.ok()) return health.status();
    generation_ = *generation;
    health_ = *std::move(health);
    for (const answers::FleetDevice& d : health_.devices) {
      if (d.verdict != answers::Verdict::kSlower) continue;
      Log(Level::kWarn, "fleet_device_slower",
          {{"device", d.uuid},
           {"host", d.host},
           {"gpu_model", d.gpu_model},
           {"ratio", Decimals(d.ratio, 4)},
           {"gemms", std::to_string(d.gemms)}});
    }
  }
  const double now_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  metrics_.SetFleet(health_, now_s);
  return absl::OkStatus();
}

}  // namespace crest::service
