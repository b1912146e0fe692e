// A user's text as an error message quotes it: whole when short, else its
// first characters and its length, so that a huge argument (a careless or
// hostile client's) is not echoed back.
#pragma once

#include <string>
#include <string_view>

#include "crest/common/str_cat.h"

namespace crest {

inline std::string Quoted(std::string_view text) {
  constexpr size_t kShown = 40;
  if (text.size() <= kShown) return StrCat("'", text, "'");
  return StrCat("'", text.substr(0, kShown), "...' (", text.size(), " characters)");
}

}  // namespace crest
