// StrCat prints each piece as one default-formatted stream would: integers
// as numbers, characters as characters, text as it is, anything else (a
// double, a path) through a stream; StrJoin prints its items the same way.
#include "crest/common/str_cat.h"

#include <cstdint>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace crest {
namespace {

template <typename... Args>
std::string Streamed(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return std::move(out).str();
}

template <typename T>
void ExpectAsStreamed(const T& value) {
  EXPECT_EQ(StrCat("<", value, ">"), Streamed("<", value, ">"));
}

TEST(StrCat, PrintsEveryIntegerAsAStreamDoes) {
  ExpectAsStreamed(0);
  ExpectAsStreamed(-1);
  ExpectAsStreamed(std::numeric_limits<int>::min());
  ExpectAsStreamed(std::numeric_limits<int64_t>::min());
  ExpectAsStreamed(std::numeric_limits<int64_t>::max());
  ExpectAsStreamed(std::numeric_limits<uint64_t>::max());
  ExpectAsStreamed(std::numeric_limits<unsigned>::max());
  ExpectAsStreamed(static_cast<short>(-32768));
  ExpectAsStreamed(static_cast<unsigned short>(65535));
  ExpectAsStreamed(static_cast<size_t>(16384));
  EXPECT_EQ(StrCat(8, ".", 9), "8.9");
}

TEST(StrCat, PrintsCharactersAndBoolsAsAStreamDoes) {
  ExpectAsStreamed('x');
  ExpectAsStreamed(static_cast<signed char>('y'));  // int8_t: a character, not a number
  ExpectAsStreamed(static_cast<unsigned char>('z'));
  ExpectAsStreamed(true);  // "1", not "true"
  ExpectAsStreamed(false);
  EXPECT_EQ(StrCat('a', 'b'), "ab");
}

TEST(StrCat, PrintsTextAsItIs) {
  const std::string text = "mlp_down";
  const std::string_view view = "fwd";
  const char* pointer = "NT";
  const char* none = nullptr;
  EXPECT_EQ(StrCat(text, ".", view, " ", pointer), "mlp_down.fwd NT");
  EXPECT_EQ(StrCat("a", none, "b"), "ab");
  EXPECT_EQ(StrCat(std::string("with\0nul", 8)), std::string("with\0nul", 8));
  EXPECT_EQ(StrCat(), "");
}

TEST(StrCat, PrintsOtherTypesThroughAStream) {
  for (double d :
       {0.0, -0.5, 1.0 / 3, 1e-7, 123456789.0, 2.5e300, std::numeric_limits<double>::infinity()}) {
    ExpectAsStreamed(d);
  }
  ExpectAsStreamed(1.5f);
  ExpectAsStreamed(std::filesystem::path("/var/lib/crest"));  // quoted, as a stream quotes it
  EXPECT_EQ(StrCat("took ", 2.5, " ms over ", 3, " runs"), "took 2.5 ms over 3 runs");
}

TEST(StrJoin, JoinsItemsAsStrCatPrintsThem) {
  EXPECT_EQ(StrJoin(std::vector<int>{8, -1, 64}, ", "), "8, -1, 64");
  EXPECT_EQ(StrJoin(std::vector<std::string>{"fwd", "dgrad"}, "|"), "fwd|dgrad");
  EXPECT_EQ(StrJoin(std::vector<double>{0.5, 1.0 / 3}, " "), Streamed(0.5, " ", 1.0 / 3));
  EXPECT_EQ(StrJoin(std::vector<int>{}, ", "), "");
}

}  // namespace
}  // namespace crest
