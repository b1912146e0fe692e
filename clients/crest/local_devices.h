// Internal to the crest CLI: what `crest info` reports of this machine when
// no daemon is named — the backends built in and the CUDA devices found.
#pragma once

#include "nlohmann/json.hpp"

namespace crest::cli {

// {"backends": [...], "devices": [...]} plus "device_error" when none could be
// listed (a build without CUDA, no driver, no device).
nlohmann::json BackendsAndDevices();

}  // namespace crest::cli
