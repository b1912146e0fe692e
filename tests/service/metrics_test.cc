// crestd's metrics listener (metrics.cc): what it says when it cannot listen.
#include "metrics.h"

#include "gtest/gtest.h"

namespace crest::service {
namespace {

TEST(Metrics, APortAlreadyTakenIsRefusedInTheSystemsWordsWithItsErrno) {
  int port = 0;
  auto first = Metrics::Serve("127.0.0.1:0", &port);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_GT(port, 0);
  int again = 0;
  auto second = Metrics::Serve("127.0.0.1:" + std::to_string(port), &again);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  const std::string message(second.status().message());
  EXPECT_NE(message.find("--metrics-listen 127.0.0.1:" + std::to_string(port)), std::string::npos)
      << message;
  EXPECT_NE(message.find("Address already in use (errno 98)"), std::string::npos) << message;
}

}  // namespace
}  // namespace crest::service
