#include "sweep_input.h"

#include "crest/common/read_file.h"
#include "crest/common/str_cat.h"

namespace crest::cli {

absl::StatusOr<std::string> SweepSpecText(const std::string& spec_file, const DffFlags& window) {
  if (spec_file.empty()) {
    if (window.hidden == 0) {
      return absl::InvalidArgumentError("hidden: give --hidden (a d_ff sweep) or --spec FILE");
    }
    return DffFlagsToSpecJson(window);
  }
  if (window.hidden != 0) {
    return absl::InvalidArgumentError("spec: give either --spec or the d_ff flags, not both");
  }
  auto text = ReadWholeFile(spec_file);
  if (!text) return absl::NotFoundError(StrCat("spec: cannot read '", spec_file, "'"));
  return *std::move(text);
}

}  // namespace crest::cli
