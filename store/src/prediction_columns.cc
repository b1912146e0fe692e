#include "prediction_columns.h"

#include "crest/common/str_cat.h"
#include "key_columns.h"

namespace crest::store::internal {

std::string PredictionColumnList(std::string_view prefix) {
  // The key's seven columns sit between these.
  constexpr std::string_view kBefore[] = {"uid", "host", "gpu_model", "model_version"};
  constexpr std::string_view kAfter[] = {"time_us",         "tflops",          "tile_m",
                                         "tile_n",          "tiles",           "waves",
                                         "tile_efficiency", "wave_efficiency", "alignment_factor",
                                         "bound",           "created_us",      "expected_error"};
  return StrCat(PrefixedList(kBefore, prefix), ", ", KeyColumnList(prefix), ", ",
                PrefixedList(kAfter, prefix));
}

}  // namespace crest::store::internal
