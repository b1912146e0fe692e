#include "sweep_input.h"

#include <charconv>
#include <string_view>

#include "crest/common/env.h"
#include "crest/common/str_cat.h"
#include "nlohmann/json.hpp"

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
  if (!text.ok())
    return absl::Status(text.status().code(), StrCat("spec: ", text.status().message()));
  return *std::move(text);
}

// "I/N" → {"index": I, "count": N}; the spec checks the bounds.
absl::StatusOr<nlohmann::json> ParseShard(const std::string& text) {
  const size_t slash = text.find('/');
  int64_t index = -1;
  int64_t count = -1;
  const auto number = [](std::string_view part, int64_t& out) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc() && end == part.data() + part.size() && !part.empty();
  };
  const std::string_view all(text);
  if (slash == std::string::npos || !number(all.substr(0, slash), index) ||
      !number(all.substr(slash + 1), count)) {
    return absl::InvalidArgumentError(
        StrCat("shard: '", all.substr(0, 32), "' is not TASK/TASKS (e.g. 0/8: the first of 8)"));
  }
  return nlohmann::json{{"index", index}, {"count", count}};
}

}  // namespace

absl::StatusOr<std::string> SweepSpecText(const std::string& spec_file, const DffFlags& window,
                                          const nlohmann::json& measure, const std::string& shard,
                                          const std::string& plan, bool revalidate) {
  auto text = BaseText(spec_file, window);
  const bool gpu_flag = !spec_file.empty() && !window.gpu.empty();
  if (!text.ok() ||
      (measure.empty() && !gpu_flag && shard.empty() && plan.empty() && !revalidate)) {
    return text;
  }
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
    // RFC 7386: each flag replaces the one field it names, nested ones too
    // ("race": {"window": …} leaves the spec's other race fields).
    doc["measure"].merge_patch(measure);
  }
  if (!shard.empty()) {
    auto parsed = ParseShard(shard);
    if (!parsed.ok()) return parsed.status();
    doc["shard"] = *parsed;
  }
  if (!plan.empty()) doc["plan"] = plan;  // the spec checks it
  if (revalidate) doc["revalidate"] = true;
  return doc.dump();
}

}  // namespace crest::cli
