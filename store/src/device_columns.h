// Internal to crest::store: a device's columns, declared once (as
// measurement_columns.h and job_columns.h declare theirs). Each column of the
// devices table but its id is one entry: its name, how a DeviceInfo's value
// is bound and how it is read back. Registering a device, the selects that
// join a device (as device_<name>) and the merge are made from it; adding a
// column is an entry here, a migration (schema.cc) and DeviceInfo's field.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "crest/tuner/device_info.h"
#include "sqlite.h"

namespace crest::store::internal {

struct DeviceColumn {
  std::string_view name;
  std::string_view joined;  // "device_<name>": the column in a select that joins a device
  void (*bind)(Statement& s, int index, const tuner::DeviceInfo& device);
  void (*read)(const Statement& s, std::string_view column, tuner::DeviceInfo& device);
};

// Every column but id, in the table's order of declaration.
std::span<const DeviceColumn> DeviceColumns();

// "uuid, host, …" (every column but id), each name preceded by `prefix`.
std::string DeviceColumnList(std::string_view prefix = "");

// "d.uuid AS device_uuid, …": a device joined as `d`, as ReadDevice reads it.
std::string JoinedDeviceColumns();

// Binds every column of `device` from parameter `first` on; returns the next
// free index.
int BindDeviceColumns(Statement& s, int first, const tuner::DeviceInfo& device);

// The device_* columns of a row (JoinedDeviceColumns).
tuner::DeviceInfo ReadDevice(const Statement& s);

}  // namespace crest::store::internal
