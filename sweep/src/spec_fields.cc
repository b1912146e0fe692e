#include "spec_fields.h"

#include <set>

#include "crest/common/str_cat.h"
#include "crest/sweep/spec.h"
#include "crest/tuner/limits.h"

namespace crest::sweep::internal {

using nlohmann::json;

absl::Status Bad(const std::string& path, const std::string& why) {
  return absl::InvalidArgumentError(StrCat(path, ": ", why));
}

absl::Status OnlyKnownFields(const json& object, const std::string& path,
                             std::initializer_list<std::string_view> known) {
  if (!object.is_object()) return Bad(path, "must be an object");
  for (const auto& [key, value] : object.items()) {
    bool found = false;
    for (auto k : known) found = found || k == key;
    if (!found) return Bad(path, StrCat("unknown field '", key, "'"));
  }
  return absl::OkStatus();
}

std::string Quoted(const json& v) {
  constexpr size_t kMaxQuoted = 64;
  std::string text = v.dump();
  if (text.size() > kMaxQuoted) text = StrCat(text.substr(0, kMaxQuoted), "...");
  return text;
}

absl::StatusOr<int64_t> Int(const json& v, const std::string& path) {
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}) {
    return Bad(path,
               StrCat("is ", Quoted(v), ", beyond the largest whole number (", INT64_MAX, ")"));
  }
  if (!v.is_number_integer())
    return Bad(path, StrCat("must be a whole number (got ", Quoted(v), ")"));
  return v.get<int64_t>();
}

absl::StatusOr<int64_t> Bounded(const json& v, const std::string& path, int64_t max) {
  auto x = Int(v, path);
  if (!x.ok()) return x.status();
  if (*x < 0 || *x > max) return Bad(path, StrCat("is ", *x, "; it must be from 0 to ", max));
  return *x;
}

absl::StatusOr<std::vector<int64_t>> Values(const json& v, const std::string& path, int64_t max) {
  std::vector<int64_t> out;
  if (v.is_number()) {
    auto x = Bounded(v, path, max);
    if (!x.ok()) return x.status();
    out.push_back(*x);
  } else if (v.is_array()) {
    if (v.empty()) return Bad(path, "must not be empty");
    if (v.size() > static_cast<size_t>(tuner::kMaxCandidates)) {
      return Bad(path, StrCat("holds ", v.size(), " values; at most ", tuner::kMaxCandidates));
    }
    for (size_t i = 0; i < v.size(); ++i) {
      auto x = Bounded(v[i], StrCat(path, "[", i, "]"), max);
      if (!x.ok()) return x.status();
      out.push_back(*x);
    }
  } else if (v.is_object()) {
    if (auto s = OnlyKnownFields(v, path, {"from", "to", "step"}); !s.ok()) return s;
    if (!v.contains("from") || !v.contains("to")) return Bad(path, "a range needs from and to");
    auto from = Bounded(v["from"], path + ".from", max);
    auto to = Bounded(v["to"], path + ".to", max);
    auto step = v.contains("step") ? Int(v["step"], path + ".step") : absl::StatusOr<int64_t>(1);
    if (!from.ok()) return from.status();
    if (!to.ok()) return to.status();
    if (!step.ok()) return step.status();
    if (*step < 1) return Bad(path + ".step", StrCat("is ", *step, "; it must be positive"));
    if (*to < *from) return Bad(path, StrCat("to (", *to, ") must be at least from (", *from, ")"));
    // from and to are bounded, so neither the difference nor from + i·step
    // (at most to) can overflow, whatever the step.
    const int64_t count = (*to - *from) / *step + 1;
    if (count > tuner::kMaxCandidates) {
      return Bad(path, StrCat("gives ", count, " values; at most ", tuner::kMaxCandidates));
    }
    for (int64_t i = 0; i < count; ++i) out.push_back(*from + i * *step);
  } else {
    return Bad(path, "must be a number, a list of numbers or {\"from\", \"to\", \"step\"}");
  }
  return out;
}

absl::StatusOr<std::string> Text(const json& object, const char* key, const std::string& path,
                                 const std::string& fallback) {
  if (!object.contains(key)) return fallback;
  if (!object[key].is_string()) return Bad(StrCat(path, ".", key), "must be a string");
  return object[key].get<std::string>();
}

absl::StatusOr<bool> Flag(const json& object, const char* key, const std::string& path,
                          bool fallback) {
  if (!object.contains(key)) return fallback;
  if (!object[key].is_boolean()) return Bad(StrCat(path, ".", key), "must be true or false");
  return object[key].get<bool>();
}

absl::StatusOr<std::string> Name(const json& object, const std::string& path,
                                 const std::string& fallback) {
  auto name = Text(object, "name", path, fallback);
  if (!name.ok()) return name.status();
  if (name->size() > kMaxSpecNameBytes) {
    return Bad(path + ".name",
               StrCat("is ", name->size(), " bytes long; at most ", kMaxSpecNameBytes));
  }
  return name;
}

absl::StatusOr<json> ParseStrict(const std::string& text) {
  std::vector<std::set<std::string>> keys;  // per open object
  std::string duplicate;
  const json::parser_callback_t check = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.empty() &&
        !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty()) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json doc = json::parse(text, check, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Bad("spec", "is not valid JSON");
  if (!duplicate.empty()) {
    return Bad("spec", StrCat("gives the key \"", duplicate.substr(0, 64),
                              "\" twice in one object; give each key once"));
  }
  return doc;
}

}  // namespace crest::sweep::internal
