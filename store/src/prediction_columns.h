// Internal to crest::store: the columns of a stored prediction, declared
// once: the insert (after its job_id) and the merge (the job remapped) are
// made from this list. Adding a column is an entry here and its bind in
// InsertPredictions (results.cc), and a migration (schema.cc).
#pragma once

#include <string>
#include <string_view>

namespace crest::store::internal {

// "uid, host, gpu_model, model_version, <the key's seven>, time_us, …,
// expected_error": every column but the id and the job_id, each name
// preceded by `prefix` ("sp.").
std::string PredictionColumnList(std::string_view prefix = "");

}  // namespace crest::store::internal
