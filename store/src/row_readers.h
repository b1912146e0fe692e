// Internal to crest::store: reading a measurement joined with its device
// and software, as every query that returns whole rows does.
#pragma once

#include "crest/store/records.h"
#include "device_columns.h"
#include "sqlite.h"

namespace crest::store::internal {

// A measurement's key, id, job_id, value columns (measurement_columns.h),
// device_* columns and the software's driver, cuda_runtime and cublaslt.
MeasurementRow ReadMeasurement(const Statement& s);

}  // namespace crest::store::internal
