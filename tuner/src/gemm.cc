#include "crest/tuner/gemm.h"

namespace crest::tuner {

std::string_view PassName(Pass pass) {
  switch (pass) {
    case Pass::kFwd:
      return "fwd";
    case Pass::kDgrad:
      return "dgrad";
    case Pass::kWgrad:
      return "wgrad";
  }
  return "?";
}

double GemmShape::Flops() const {
  return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) *
         static_cast<double>(k);
}

std::string GemmShape::Layout() const {
  return {a_transposed ? 'T' : 'N', b_transposed ? 'T' : 'N'};
}

bool ParseLayout(std::string_view text, bool* a_transposed, bool* b_transposed) {
  if (text.size() != 2) return false;
  // Compared, not case-mapped: this runs for every GEMM of every ranked
  // candidate, and toupper is a call into the C locale.
  const auto flag = [](char c, bool* out) {
    if (c != 'N' && c != 'n' && c != 'T' && c != 't') return false;
    *out = c == 'T' || c == 't';
    return true;
  };
  bool a = false;
  bool b = false;
  if (!flag(text[0], &a) || !flag(text[1], &b)) return false;
  *a_transposed = a;
  *b_transposed = b;
  return true;
}

}  // namespace crest::tuner
