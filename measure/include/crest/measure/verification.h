// Checks a GEMM's output against a reference on sampled elements. The
// reference is recomputed on the host from the operand generator
// (operand_values.h), so no copy of an operand is kept. The error of element
// (i, j) is |out - ref| / Σ_k |a_ik·b_kj|: scaled by the magnitude the dot
// product could reach, so cancellation in ref does not make a correct answer
// look wrong. Tolerances follow each dtype's rounding.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "crest/tuner/dtype.h"
#include "crest/tuner/gemm.h"

namespace crest::measure {

// Random mantissa bits the generator gives an input of this dtype (its
// stored mantissa width; tf32 10, the width its tensor cores multiply).
int MantissaBits(tuner::DType dtype);

// Largest scaled error an output in this dtype may show [unitless].
double VerifyTolerance(tuner::DType dtype);

// Where copy 0 of A and B start in the arena's input region [elements of
// the GEMM's input dtype], and the seed the region was filled with.
struct OperandSource {
  uint64_t seed = 0;
  int64_t a_element = 0;
  int64_t b_element = 0;
};

// An element of C: batch b, row i, column j.
struct OutputIndex {
  int64_t b = 0;
  int64_t i = 0;
  int64_t j = 0;
  // Its position in C [elements], C being batch × M × N, row-major.
  int64_t Offset(const tuner::GemmShape& gemm) const { return (b * gemm.m + i) * gemm.n + j; }
};

// The elements to check: a grid of 8 rows by 8 columns of C (64 elements),
// the first and last row and column among them (so both corners and every
// edge tile are checked), the rest random; each row in its own random batch,
// the first in batch 0 and the last in the last batch. A fixed sequence per
// shape, so a re-run checks the same elements. Rows and columns are shared
// by the grid, so the host regenerates 16 operand vectors, not 128.
std::vector<OutputIndex> PickOutputElements(const tuner::GemmShape& gemm);

struct SampledElement {
  double out = 0;        // what the GEMM wrote
  double ref = 0;        // Σ_k a_ik·b_kj, in double
  double magnitude = 0;  // Σ_k |a_ik·b_kj|
};

// The reference of one output element, from the generator: O(K).
SampledElement ReferenceElement(const tuner::GemmShape& gemm, const OperandSource& source,
                                const OutputIndex& at);
// The references of many elements, each row of A and column of B generated
// once however many elements share it.
std::vector<SampledElement> ReferenceElements(const tuner::GemmShape& gemm,
                                              const OperandSource& source,
                                              std::span<const OutputIndex> elements);

struct VerifyResult {
  bool ok = false;
  double max_error = 0;  // largest scaled error seen
  std::string note;      // why it failed
};

// ok when every element is finite and within VerifyTolerance(dtype).
VerifyResult VerifySamples(std::span<const SampledElement> elements, tuner::DType dtype);

}  // namespace crest::measure
