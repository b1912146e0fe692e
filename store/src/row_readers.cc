#include "row_readers.h"

#include "key_columns.h"
#include "measurement_columns.h"

namespace crest::store::internal {

const char* const kDeviceColumns =
    "d.uuid AS device_uuid, d.host AS device_host, d.name AS device_name, "
    "d.gpu_model AS device_gpu_model, d.sm_count AS device_sm_count, "
    "d.cc_major AS device_cc_major, d.cc_minor AS device_cc_minor, "
    "d.l2_bytes AS device_l2_bytes, d.memory_bytes AS device_memory_bytes, "
    "d.sm_clock_mhz AS device_sm_clock_mhz, d.memory_clock_mhz AS device_memory_clock_mhz, "
    "d.replay AS device_replay";

DeviceInfo ReadDevice(const Statement& s) {
  DeviceInfo d;
  d.uuid = s.Text("device_uuid");
  d.host = s.Text("device_host");
  d.name = s.Text("device_name");
  d.gpu_model = s.Text("device_gpu_model");
  d.sm_count = static_cast<int>(s.Int("device_sm_count"));
  d.cc_major = static_cast<int>(s.Int("device_cc_major"));
  d.cc_minor = static_cast<int>(s.Int("device_cc_minor"));
  d.l2_bytes = s.Int("device_l2_bytes");
  d.memory_bytes = s.Int("device_memory_bytes");
  d.sm_clock_mhz = static_cast<int>(s.Int("device_sm_clock_mhz"));
  d.memory_clock_mhz = static_cast<int>(s.Int("device_memory_clock_mhz"));
  d.replay = s.Text("device_replay");
  return d;
}

MeasurementRow ReadMeasurement(const Statement& s) {
  MeasurementRow r;
  r.key = ReadKey(s);
  r.id = s.Int("id");
  if (!s.IsNull("job_id")) r.job_id = s.Int("job_id");
  ReadMeasurementColumns(s, r);
  r.device = ReadDevice(s);
  r.software = {s.Text("driver"), s.Int("cuda_runtime"), s.Int("cublaslt")};
  return r;
}

}  // namespace crest::store::internal
