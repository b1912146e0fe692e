// Reading a sweep spec's JSON values (spec.cc's and spec_items.cc's one
// vocabulary): every value bounded before it is used, every error naming
// the field's path ("spec.dff[0].hidden: …"). Internal to crest::sweep.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace crest::sweep::internal {

// InvalidArgument "PATH: WHY".
absl::Status Bad(const std::string& path, const std::string& why);
// An object with no field but the `known` ones.
absl::Status OnlyKnownFields(const nlohmann::json& object, const std::string& path,
                             std::initializer_list<std::string_view> known);
// A value as the user wrote it, cut to a length an error message can quote.
std::string Quoted(const nlohmann::json& v);
// A whole number. One beyond int64 is refused as the user wrote it, never wrapped.
absl::StatusOr<int64_t> Int(const nlohmann::json& v, const std::string& path);
// A whole number from 0 to `max`.
absl::StatusOr<int64_t> Bounded(const nlohmann::json& v, const std::string& path, int64_t max);
// A dimension: a number, a list of numbers, or {"from","to","step"}; every
// value from 0 to `max`, and at most kMaxCandidates of them, counted before
// any is made.
absl::StatusOr<std::vector<int64_t>> Values(const nlohmann::json& v, const std::string& path,
                                            int64_t max);
// object[key] as a string, or `fallback` when absent.
absl::StatusOr<std::string> Text(const nlohmann::json& object, const char* key,
                                 const std::string& path, const std::string& fallback);
// object[key] as true or false, or `fallback` when absent.
absl::StatusOr<bool> Flag(const nlohmann::json& object, const char* key, const std::string& path,
                          bool fallback);
// A name the spec gives (the spec's, a model's, a GEMM's): bounded, since
// names travel in every job listing.
absl::StatusOr<std::string> Name(const nlohmann::json& object, const std::string& path,
                                 const std::string& fallback);
// The document, refusing what JSON parsers disagree on: a key given twice in
// one object (which value counts?).
absl::StatusOr<nlohmann::json> ParseStrict(const std::string& text);

}  // namespace crest::sweep::internal
