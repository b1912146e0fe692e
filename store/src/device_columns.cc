#include "device_columns.h"

#include <array>

#include "crest/common/str_cat.h"

namespace crest::store::internal {
namespace {

using S = Statement&;
using R = const Statement&;
using C = std::string_view;
using D = const tuner::DeviceInfo&;

constexpr std::array kDeviceColumns{
    DeviceColumn{"uuid", "device_uuid", [](S s, int i, D d) { s.Bind(i, d.uuid); },
                 [](R s, C c, tuner::DeviceInfo& d) { d.uuid = s.Text(c); }},
    DeviceColumn{"host", "device_host", [](S s, int i, D d) { s.Bind(i, d.host); },
                 [](R s, C c, tuner::DeviceInfo& d) { d.host = s.Text(c); }},
    DeviceColumn{"name", "device_name", [](S s, int i, D d) { s.Bind(i, d.name); },
                 [](R s, C c, tuner::DeviceInfo& d) { d.name = s.Text(c); }},
    DeviceColumn{"gpu_model", "device_gpu_model", [](S s, int i, D d) { s.Bind(i, d.gpu_model); },
                 [](R s, C c, tuner::DeviceInfo& d) { d.gpu_model = s.Text(c); }},
    DeviceColumn{"sm_count", "device_sm_count", [](S s, int i, D d) { s.Bind(i, d.sm_count); },
                 [](R s, C c, tuner::DeviceInfo& d) { d.sm_count = static_cast<int>(s.Int(c)); }},
    DeviceColumn{"cc_major", "device_cc_major", [](S s, int i, D d) { s.Bind(i, d.cc_major); },
                 [](R s, C c, tuner::DeviceInfo& d) { d.cc_major = static_cast<int>(s.Int(c)); }},
    DeviceColumn{"cc_minor", "device_cc_minor", [](S s, int i, D d) { s.Bind(i, d.cc_minor); },
                 [](R s, C c, tuner::DeviceInfo& d) { d.cc_minor = static_cast<int>(s.Int(c)); }},
    DeviceColumn{"l2_bytes", "device_l2_bytes", [](S s, int i, D d) { s.Bind(i, d.l2_bytes); },
                 [](R s, C c, tuner::DeviceInfo& d) { d.l2_bytes = s.Int(c); }},
    DeviceColumn{"memory_bytes", "device_memory_bytes",
                 [](S s, int i, D d) { s.Bind(i, d.memory_bytes); },
                 [](R s, C c, tuner::DeviceInfo& d) { d.memory_bytes = s.Int(c); }},
    DeviceColumn{
        "sm_clock_mhz", "device_sm_clock_mhz", [](S s, int i, D d) { s.Bind(i, d.sm_clock_mhz); },
        [](R s, C c, tuner::DeviceInfo& d) { d.sm_clock_mhz = static_cast<int>(s.Int(c)); }},
    DeviceColumn{
        "memory_clock_mhz", "device_memory_clock_mhz",
        [](S s, int i, D d) { s.Bind(i, d.memory_clock_mhz); },
        [](R s, C c, tuner::DeviceInfo& d) { d.memory_clock_mhz = static_cast<int>(s.Int(c)); }},
    DeviceColumn{"replay", "device_replay", [](S s, int i, D d) { s.Bind(i, d.replay); },
                 [](R s, C c, tuner::DeviceInfo& d) { d.replay = s.Text(c); }},
};

}  // namespace

std::span<const DeviceColumn> DeviceColumns() { return kDeviceColumns; }

std::string DeviceColumnList(std::string_view prefix) {
  std::string out;
  for (const DeviceColumn& c : kDeviceColumns) {
    if (!out.empty()) out += ", ";
    out += StrCat(prefix, c.name);
  }
  return out;
}

std::string JoinedDeviceColumns() {
  std::string out;
  for (const DeviceColumn& c : kDeviceColumns) {
    if (!out.empty()) out += ", ";
    out += StrCat("d.", c.name, " AS ", c.joined);
  }
  return out;
}

int BindDeviceColumns(Statement& s, int first, const tuner::DeviceInfo& device) {
  for (const DeviceColumn& c : kDeviceColumns) c.bind(s, first++, device);
  return first;
}

tuner::DeviceInfo ReadDevice(const Statement& s) {
  tuner::DeviceInfo d;
  for (const DeviceColumn& c : kDeviceColumns) c.read(s, c.joined, d);
  return d;
}

}  // namespace crest::store::internal
