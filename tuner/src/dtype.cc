#include "crest/tuner/dtype.h"

#include <array>
#include <string>
#include <utility>

#include "crest/common/str_cat.h"
#include "text.h"

namespace crest::tuner {

int ElementBytes(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
    case DType::kTf32:
      return 4;
    case DType::kFp16:
    case DType::kBf16:
      return 2;
    case DType::kFp8E4M3:
      return 1;
  }
  return 0;
}

DType OutputDType(DType input) {
  switch (input) {
    case DType::kTf32:
      return DType::kFp32;
    case DType::kFp8E4M3:
      return DType::kBf16;
    default:
      return input;
  }
}

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
      return "fp32";
    case DType::kTf32:
      return "tf32";
    case DType::kFp16:
      return "fp16";
    case DType::kBf16:
      return "bf16";
    case DType::kFp8E4M3:
      return "fp8";
  }
  return "?";
}

absl::StatusOr<DType> ParseDType(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, DType>, 11> kNames = {{
      {"fp32", DType::kFp32},
      {"float32", DType::kFp32},
      {"float", DType::kFp32},
      {"tf32", DType::kTf32},
      {"fp16", DType::kFp16},
      {"float16", DType::kFp16},
      {"half", DType::kFp16},
      {"bf16", DType::kBf16},
      {"bfloat16", DType::kBf16},
      {"fp8", DType::kFp8E4M3},
      {"fp8e4m3", DType::kFp8E4M3},
  }};
  const std::string key = internal::NormalizeName(text);
  for (const auto& [name, dtype] : kNames) {
    if (key == name) return dtype;
  }
  if (key == "e4m3") return DType::kFp8E4M3;
  return absl::InvalidArgumentError(
      StrCat("dtype: unknown type '", text, "' (expected fp32, tf32, fp16, bf16 or fp8)"));
}

}  // namespace crest::tuner
