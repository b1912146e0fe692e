// crestd's structured log: a line names its level as --log-level spells it,
// and --log-level reads exactly those four words.
#include "log.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace crest::service {
namespace {

TEST(Log, ALineNamesItsLevelAsTheFlagSpellsIt) {
  std::vector<std::string> lines;
  SetLogSink([&lines](std::string_view line) { lines.emplace_back(line); });
  SetLogLevel(Level::kDebug);
  for (const char* word : {"debug", "info", "warn", "error"}) {
    Level level = Level::kInfo;
    ASSERT_TRUE(ParseLogLevel(word, &level)) << word;
    Log(level, "probe", {{"word", word}});
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines.back().find(std::string(" level=") + word + " event=probe word=" + word),
              std::string::npos)
        << lines.back();
  }
  SetLogLevel(Level::kWarn);
  Log(Level::kInfo, "dropped");
  EXPECT_EQ(lines.size(), 4u);
  SetLogSink({});
  SetLogLevel(Level::kInfo);
}

TEST(Log, TheLevelFlagRefusesOtherWordsAndKeepsTheLevel) {
  Level level = Level::kWarn;
  for (const char* word : {"", "Info", "warning", "fatal", "?"}) {
    EXPECT_FALSE(ParseLogLevel(word, &level)) << word;
    EXPECT_EQ(level, Level::kWarn);
  }
}

}  // namespace
}  // namespace crest::service
