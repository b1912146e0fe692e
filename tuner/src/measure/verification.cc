#include "crest/tuner/measure/verification.h"

#include <cmath>

#include "crest/common/str_cat.h"
#include "crest/tuner/measure/operand_values.h"

namespace crest::measure {

int MantissaBits(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
      return 23;
    case DType::kTf32:
    case DType::kFp16:
      return 10;
    case DType::kBf16:
      return 7;
    case DType::kFp8E4M3:
      return 3;
  }
  return 7;
}

std::vector<OutputIndex> PickOutputElements(const GemmShape& g, int count) {
  std::vector<OutputIndex> out;
  uint64_t state = MixBits(static_cast<uint64_t>(g.m) ^ (static_cast<uint64_t>(g.n) << 20) ^
                           (static_cast<uint64_t>(g.k) << 40) ^ static_cast<uint64_t>(g.batch));
  const auto next = [&](int64_t bound) {
    state = MixBits(state + 0x9e3779b97f4a7c15ULL);
    return static_cast<int64_t>(state % static_cast<uint64_t>(bound));
  };
  for (int s = 0; s < count; ++s) {
    if (s == 0) {
      out.push_back({0, 0, 0});
    } else if (s == 1) {
      out.push_back({g.batch - 1, g.m - 1, g.n - 1});
    } else {
      const int64_t b = next(g.batch);
      const int64_t i = next(g.m);
      out.push_back({b, i, next(g.n)});
    }
  }
  return out;
}

SampledElement ReferenceElement(const GemmShape& g, const OperandSource& source,
                                const OutputIndex& at) {
  // A is M×K as used, stored [M,K] or ([K,M] when transposed); B is K×N as
  // used, stored [K,N] or ([N,K] when transposed). Batches follow each other.
  const int bits = MantissaBits(g.dtype);
  const int64_t a_base = source.a_element + at.b * g.m * g.k;
  const int64_t b_base = source.b_element + at.b * g.k * g.n;
  SampledElement e;
  for (int64_t k = 0; k < g.k; ++k) {
    const int64_t a_at = a_base + (g.a_transposed ? k * g.m + at.i : at.i * g.k + k);
    const int64_t b_at = b_base + (g.b_transposed ? at.j * g.k + k : k * g.n + at.j);
    const double x = OperandValue(source.seed, static_cast<uint64_t>(a_at), bits);
    const double y = OperandValue(source.seed, static_cast<uint64_t>(b_at), bits);
    e.ref += x * y;
    e.magnitude += std::abs(x * y);
  }
  return e;
}

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
