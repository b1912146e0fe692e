// The answer cache: an answer is served only for the generation it was
// computed at, and the cache stays within its bounds, oldest out first.
#include "answer_cache.h"

#include <malloc.h>

#include "gtest/gtest.h"

namespace crest::service {
namespace {

const store::ResultsGeneration kG1{10, 5};
const store::ResultsGeneration kG2{11, 5};

TEST(AnswerCache, ServesAnAnswerOnlyAtTheGenerationItWasComputedAt) {
  AnswerCache cache(16, 1 << 20);
  EXPECT_EQ(cache.Find("QueryDff", "req", kG1), std::nullopt);
  cache.Put("QueryDff", "req", kG1, "answer-1");
  EXPECT_EQ(cache.Find("QueryDff", "req", kG1), "answer-1");
  EXPECT_EQ(cache.Find("QueryDff", "req", kG2), std::nullopt) << "a write moved the generation";
  EXPECT_EQ(cache.Find("LookupGemm", "req", kG1), std::nullopt) << "methods do not share answers";
  cache.Put("QueryDff", "req", kG2, "answer-2");
  EXPECT_EQ(cache.Find("QueryDff", "req", kG2), "answer-2");
  EXPECT_EQ(cache.entries(), 1u) << "the newer answer replaced the stale one";
  EXPECT_EQ(cache.hits(), 2);
  EXPECT_EQ(cache.misses(), 3);
}

TEST(AnswerCache, StaysWithinItsEntriesAndBytesDroppingTheOldestFirst) {
  AnswerCache cache(3, 1 << 20);
  for (int i = 0; i < 5; ++i) cache.Put("m", std::to_string(i), kG1, "a");
  EXPECT_EQ(cache.entries(), 3u);
  EXPECT_EQ(cache.Find("m", "0", kG1), std::nullopt);
  EXPECT_EQ(cache.Find("m", "1", kG1), std::nullopt);
  EXPECT_EQ(cache.Find("m", "4", kG1), "a");

  AnswerCache small(100, 64);
  for (int i = 0; i < 10; ++i) small.Put("m", std::to_string(i), kG1, std::string(20, 'x'));
  EXPECT_LE(small.bytes(), 64u);
  EXPECT_EQ(small.Find("m", "9", kG1), std::string(20, 'x'));
  small.Put("m", "huge", kG1, std::string(1000, 'x'));
  EXPECT_EQ(small.Find("m", "huge", kG1), std::nullopt) << "an answer above the budget is not kept";
}

// A hostile client's big requests would fill the cache with their keys: they
// are answered, never kept. Each kept key is held once, so the heap the cache
// takes is about what it counts (before, a second copy of every key was held
// uncounted: the 3,000,000-request soak's heap grew past the 64 MiB cap).
TEST(AnswerCache, KeepsNoBigRequestAndHoldsEachKeyOnce) {
  AnswerCache cache(1000, size_t{64} << 20);
  cache.Put("m", std::string(AnswerCache::kMaxRequestBytes + 1, 'r'), kG1, "a");
  EXPECT_EQ(cache.entries(), 0u);
  const size_t before = mallinfo2().uordblks;
  for (int i = 0; i < 200; ++i) {
    std::string request(AnswerCache::kMaxRequestBytes, 'r');
    request.replace(0, 8, std::to_string(10000000 + i));
    cache.Put("m", request, kG1, "a");
  }
  ASSERT_EQ(cache.entries(), 200u);
  const size_t grown = mallinfo2().uordblks - before;
  EXPECT_GT(grown, cache.bytes());
  EXPECT_LT(grown, cache.bytes() * 3 / 2) << "each 4 KiB key held once, not twice";
}

TEST(AnswerCache, NoEntriesMeansNoCache) {
  AnswerCache off(0, 1 << 20);
  off.Put("m", "r", kG1, "a");
  EXPECT_EQ(off.Find("m", "r", kG1), std::nullopt);
}

}  // namespace
}  // namespace crest::service
