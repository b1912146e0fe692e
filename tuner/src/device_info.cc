#include "crest/tuner/device_info.h"

#include <ctime>

#include "crest/common/str_cat.h"

namespace crest::tuner {

bool SameRun(const RunInfo& a, const RunInfo& b) {
  return a.job_id == b.job_id && a.job_uid == b.job_uid && a.device_uuid == b.device_uuid;
}

std::string DescribeRun(const RunInfo& run) {
  if (run.job_id == 0 && run.job_uid.empty()) {
    return StrCat("measurements outside any job on ", run.device_uuid);
  }
  std::string out = StrCat("job ", run.job_id);
  if (!run.name.empty()) out += StrCat(" '", run.name, "'");
  if (run.started_us > 0) {
    const auto seconds = static_cast<std::time_t>(run.started_us / 1000000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &utc);
    out += StrCat(" (", when, ")");
  }
  return out;
}

}  // namespace crest::tuner
