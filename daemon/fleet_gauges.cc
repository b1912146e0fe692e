#include "fleet_gauges.h"

#include <chrono>
#include <string>
#include <vector>

#include "crest/answers/fleet_health.h"
#include "crest/common/str_cat.h"
#include "log.h"

namespace crest::crestd {

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
  answers::FleetQuery query;
  query.max_answers = kMaxFleetAnswers;
  auto health = answers::CheckFleet(**db, query);
  if (!health.ok()) return health.status();
  std::vector<FleetFigure> figures;
  for (const answers::FleetDevice& d : health->devices) {
    if (d.gemms == 0) continue;  // no fleet to set it against
    const bool slower = d.verdict == answers::Verdict::kSlower;
    figures.push_back({d.gpu_model, d.cublaslt, d.host, d.uuid, d.ratio, slower, d.gemms});
    if (slower) {
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
  metrics_.SetFleet(figures, now_s);
  return absl::OkStatus();
}

}  // namespace crest::crestd
