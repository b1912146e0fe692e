#include "row_readers.h"

#include "key_columns.h"
#include "measurement_columns.h"

namespace crest::store::internal {

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
