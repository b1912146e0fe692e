#include "crest/tuner/measure/verification.h"

#include <cmath>

#include "crest/common/str_cat.h"

namespace crest::measure {

double VerifyTolerance(DType dtype) {
  // Inputs are generated exactly representable in their dtype; the error is
  // the accumulation (fp32) plus rounding the output: unit roundoff 2^-24
  // (fp32), 2^-11 (tf32 inputs, fp16 out), 2^-8 (bf16 out), with margin.
  switch (dtype) {
    case DType::kFp32:
      return 1e-5;
    case DType::kTf32:
      return 5e-3;
    case DType::kFp16:
      return 5e-3;
    case DType::kBf16:
    case DType::kFp8E4M3:
      return 2e-2;
  }
  return 0;
}

VerifyResult VerifySamples(std::span<const SampledElement> elements, DType dtype) {
  VerifyResult r;
  const double tolerance = VerifyTolerance(dtype);
  for (size_t i = 0; i < elements.size(); ++i) {
    const SampledElement& e = elements[i];
    if (!std::isfinite(e.out)) {
      r.note = StrCat("element ", i, " is not finite (", e.out, ")");
      r.max_error = INFINITY;
      return r;
    }
    const double scale = e.magnitude > 0 ? e.magnitude : 1.0;
    const double error = std::abs(e.out - e.ref) / scale;
    if (error > r.max_error) r.max_error = error;
  }
  r.ok = r.max_error <= tolerance;
  if (!r.ok) {
    r.note = StrCat("max scaled error ", r.max_error, " above the ", DTypeName(dtype),
                    " tolerance ", tolerance);
  }
  return r;
}

}  // namespace crest::measure
