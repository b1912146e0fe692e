// Internal to the crest CLI: a d_ff answer's row as named fields, declared
// once. The JSON candidate (DffRowJson) writes the fields marked `in_json`
// under these names; the Python extension hands a row over as a tuple of the
// fields its DffRow names, or as one column per field, read from the same
// table (no JSON between).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "crest/tuner/dff_ranking.h"

namespace crest::cli {

// A field's value: absent (null), a number, a flag, text (a view into the
// row) or job ids.
using DffFieldValue =
    std::variant<std::monostate, int64_t, double, bool, std::string_view, std::vector<int64_t>>;

// What a field holds, whatever the row: an integer, a real (null: no value,
// NaN in a column), a flag, text (null: None) or job ids.
enum class DffFieldKind { kInt, kReal, kFlag, kText, kJobIds };

struct DffRowField {
  std::string_view name;
  DffFieldKind kind;
  // `rank`: the row's place in its answer, 1 the headline best.
  DffFieldValue (*get)(const tuner::DffRow& row, int64_t rank);
  // The JSON candidate carries it under `name` (race_verdict and race_ratio
  // it nests under "race" instead, with the ratio's interval).
  bool in_json = true;
};

// Every flat field of a row, in Python's DffRow order.
std::span<const DffRowField> DffRowFields();

}  // namespace crest::cli
