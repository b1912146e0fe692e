#include "sweep_input.h"

#include <fstream>
#include <sstream>

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
  std::ifstream in(spec_file);
  if (!in) return absl::NotFoundError(StrCat("spec: cannot read '", spec_file, "'"));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace crest::cli
