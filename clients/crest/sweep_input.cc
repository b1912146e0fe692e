#include "sweep_input.h"

#include "crest/common/env.h"
#include "crest/common/str_cat.h"

namespace crest::cli {
namespace {

absl::StatusOr<std::string> BaseText(const std::string& spec_file, const DffFlags& window) {
  if (spec_file.empty()) {
    if (window.hidden == 0) {
      return absl::InvalidArgumentError("hidden: give --hidden (a d_ff sweep) or --spec FILE");
    }
    return DffFlagsToSpecJson(window);
  }
  if (window.hidden != 0) {
    return absl::InvalidArgumentError("spec: give either --spec or the d_ff flags, not both");
  }
  auto text = ReadFileToString(spec_file);
  if (!text.ok()) return absl::Status(text.status().code(), StrCat("spec: ", text.status().message()));
  return *std::move(text);
}

}  // namespace

absl::StatusOr<std::string> SweepSpecText(const std::string& spec_file, const DffFlags& window,
                                          const nlohmann::json& measure) {
  auto text = BaseText(spec_file, window);
  const bool gpu_flag = !spec_file.empty() && !window.gpu.empty();
  if (!text.ok() || (measure.empty() && !gpu_flag)) return text;
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return absl::InvalidArgumentError(StrCat("spec: '", spec_file, "' is not a JSON object"));
  }
  if (gpu_flag) {
    // --gpu names the target of a spec that leaves it out, wherever the
    // spec is run (here, a crestd, a fleet).
    if (doc.contains("gpu") && doc["gpu"] != window.gpu) {
      return absl::InvalidArgumentError(
          StrCat("gpu: --gpu ", window.gpu, " differs from the spec's \"gpu\": ",
                 doc["gpu"].is_string() ? doc["gpu"].get<std::string>() : doc["gpu"].dump()));
    }
    doc["gpu"] = window.gpu;
  }
  if (!measure.empty()) {
    if (!doc.contains("measure")) doc["measure"] = nlohmann::json::object();
    if (!doc["measure"].is_object()) {
      return absl::InvalidArgumentError("spec.measure: must be an object");
    }
    for (const auto& [field, value] : measure.items()) doc["measure"][field] = value;
  }
  return doc.dump();
}

}  // namespace crest::cli
