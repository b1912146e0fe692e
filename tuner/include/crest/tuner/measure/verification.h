// Checks a GEMM's output against a reference on sampled elements. The
// error of element (i, j) is |out - ref| / Σ_k |a_ik·b_kj|: scaled by the
// magnitude the dot product could reach, so cancellation in ref does not
// make a correct answer look wrong. Tolerances follow each dtype's rounding.
#pragma once

#include <span>
#include <string>

#include "crest/tuner/dtype.h"

namespace crest::measure {

// Largest scaled error an output in this dtype may show [unitless].
double VerifyTolerance(DType dtype);

struct SampledElement {
  double out = 0;        // what the GEMM wrote
  double ref = 0;        // Σ_k a_ik·b_kj, in double
  double magnitude = 0;  // Σ_k |a_ik·b_kj|
};

struct VerifyResult {
  bool ok = false;
  double max_error = 0;  // largest scaled error seen
  std::string note;      // why it failed
};

// ok when every element is finite and within VerifyTolerance(dtype).
VerifyResult VerifySamples(std::span<const SampledElement> elements, DType dtype);

}  // namespace crest::measure
