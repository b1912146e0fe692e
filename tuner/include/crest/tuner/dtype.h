// Element types of a GEMM and their storage sizes.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

namespace crest::tuner {

// The input type of a GEMM. kTf32 is fp32 storage multiplied on tensor cores
// in tf32; kFp32 is plain fp32 arithmetic.
enum class DType { kFp32, kTf32, kFp16, kBf16, kFp8E4M3 };

// Every DType, in the order of their names (as listings show them).
inline constexpr DType kDTypesByName[] = {DType::kBf16, DType::kFp16, DType::kFp32, DType::kFp8E4M3,
                                          DType::kTf32};

// Bytes one element occupies in memory [bytes]. tf32 is stored as fp32.
int ElementBytes(DType dtype);

// The output type Crest uses for a GEMM with these inputs: fp8 writes bf16,
// tf32 writes fp32, the others write their own type.
DType OutputDType(DType input);

// Canonical lower-case name: "fp32", "tf32", "fp16", "bf16", "fp8".
std::string_view DTypeName(DType dtype);

// Case-insensitive; accepts the canonical names and "float32", "float16",
// "half", "bfloat16", "fp8_e4m3", "e4m3". An unknown name is InvalidArgument
// naming the accepted values.
absl::StatusOr<DType> ParseDType(std::string_view text);

}  // namespace crest::tuner
