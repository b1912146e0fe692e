#include "crest/measure/verification.h"

#include <cmath>
#include <map>

#include "crest/common/str_cat.h"
#include "crest/measure/operand_values.h"

namespace crest::measure {

int MantissaBits(tuner::DType dtype) {
  switch (dtype) {
    case tuner::DType::kFp32:
      return 23;
    case tuner::DType::kTf32:
    case tuner::DType::kFp16:
      return 10;
    case tuner::DType::kBf16:
      return 7;
    case tuner::DType::kFp8E4M3:
      return 3;
  }
  return 7;
}

std::vector<OutputIndex> PickOutputElements(const tuner::GemmShape& g) {
  constexpr int kSide = 8;
  uint64_t state = MixBits(static_cast<uint64_t>(g.m) ^ (static_cast<uint64_t>(g.n) << 20) ^
                           (static_cast<uint64_t>(g.k) << 40) ^ static_cast<uint64_t>(g.batch));
  const auto next = [&](int64_t bound) {
    state = MixBits(state + 0x9e3779b97f4a7c15ULL);
    return static_cast<int64_t>(state % static_cast<uint64_t>(bound));
  };
  std::vector<std::pair<int64_t, int64_t>> rows;  // (batch, row)
  std::vector<int64_t> cols;
  for (int r = 0; r < kSide; ++r) {
    if (r == 0) {
      rows.emplace_back(0, 0);
    } else if (r == kSide - 1) {
      rows.emplace_back(g.batch - 1, g.m - 1);
    } else {
      const int64_t b = next(g.batch);
      rows.emplace_back(b, next(g.m));
    }
  }
  for (int c = 0; c < kSide; ++c) cols.push_back(c == 0 ? 0 : c == kSide - 1 ? g.n - 1 : next(g.n));
  std::vector<OutputIndex> out;
  for (const auto& [b, i] : rows) {
    for (int64_t j : cols) out.push_back({b, i, j});
  }
  return out;
}

namespace {

// Row i of A (as used) in batch b, or column j of B, from the generator.
std::vector<double> OperandVector(const tuner::GemmShape& g, const OperandSource& s, bool of_a,
                                  int64_t b, int64_t index) {
  const int bits = MantissaBits(g.dtype);
  std::vector<double> out(static_cast<size_t>(g.k));
  const int64_t base = of_a ? s.a_element + b * g.m * g.k : s.b_element + b * g.k * g.n;
  // A is M×K as used, stored [M,K] or ([K,M] when transposed); B is K×N as
  // used, stored [K,N] or ([N,K] when transposed).
  const bool contiguous = of_a ? !g.a_transposed : g.b_transposed;
  const int64_t stride = contiguous ? 1 : (of_a ? g.m : g.n);
  const int64_t first = contiguous ? index * g.k : index;
  for (int64_t k = 0; k < g.k; ++k) {
    out[static_cast<size_t>(k)] =
        OperandValue(s.seed, static_cast<uint64_t>(base + first + k * stride), bits);
  }
  return out;
}

// Σ a·b and Σ |a·b| in double, with four independent partial sums each
// (the additions pipeline; the order differs from a plain loop only in the
// last bits, far inside every tolerance).
SampledElement Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double ref[4] = {0, 0, 0, 0};
  double magnitude[4] = {0, 0, 0, 0};
  const size_t n = a.size();
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    for (size_t u = 0; u < 4; ++u) {
      const double p = a[k + u] * b[k + u];
      ref[u] += p;
      magnitude[u] += std::abs(p);
    }
  }
  for (; k < n; ++k) {
    const double p = a[k] * b[k];
    ref[0] += p;
    magnitude[0] += std::abs(p);
  }
  return {0, (ref[0] + ref[1]) + (ref[2] + ref[3]),
          (magnitude[0] + magnitude[1]) + (magnitude[2] + magnitude[3])};
}

}  // namespace

SampledElement ReferenceElement(const tuner::GemmShape& g, const OperandSource& source,
                                const OutputIndex& at) {
  return Dot(OperandVector(g, source, true, at.b, at.i),
             OperandVector(g, source, false, at.b, at.j));
}

std::vector<SampledElement> ReferenceElements(const tuner::GemmShape& g,
                                              const OperandSource& source,
                                              std::span<const OutputIndex> elements) {
  std::map<std::pair<int64_t, int64_t>, std::vector<double>> rows;
  std::map<std::pair<int64_t, int64_t>, std::vector<double>> cols;
  std::vector<SampledElement> out;
  out.reserve(elements.size());
  for (const OutputIndex& at : elements) {
    auto row = rows.try_emplace({at.b, at.i});
    if (row.second) row.first->second = OperandVector(g, source, true, at.b, at.i);
    auto col = cols.try_emplace({at.b, at.j});
    if (col.second) col.first->second = OperandVector(g, source, false, at.b, at.j);
    out.push_back(Dot(row.first->second, col.first->second));
  }
  return out;
}

double VerifyTolerance(tuner::DType dtype) {
  // Inputs are generated exactly representable in their dtype; the error is
  // the accumulation (fp32) plus rounding the output: unit roundoff 2^-24
  // (fp32), 2^-11 (tf32 inputs, fp16 out), 2^-8 (bf16 out), with margin.
  switch (dtype) {
    case tuner::DType::kFp32:
      return 1e-5;
    case tuner::DType::kTf32:
      return 5e-3;
    case tuner::DType::kFp16:
      return 5e-3;
    case tuner::DType::kBf16:
    case tuner::DType::kFp8E4M3:
      return 2e-2;
  }
  return 0;
}

VerifyResult VerifySamples(std::span<const SampledElement> elements, tuner::DType dtype) {
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
    r.note = StrCat("max scaled error ", r.max_error, " above the ", tuner::DTypeName(dtype),
                    " tolerance ", tolerance);
  }
  return r;
}

}  // namespace crest::measure
