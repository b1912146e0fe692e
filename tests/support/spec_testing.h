// Test support: a sweep spec from its JSON text, failing the test when it
// does not parse (apart from sweep_testing.h, which needs the store's
// interface, so a test that only writes specs does not).
#pragma once

#include <string>
#include <utility>

#include "crest/sweep/spec.h"
#include "gtest/gtest.h"

namespace crest::testing {

// The spec of `json`; a spec that does not parse fails the test.
inline sweep::SweepSpec Spec(const std::string& json) {
  auto spec = sweep::ParseSweepSpec(json);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *std::move(spec) : sweep::SweepSpec{};
}

}  // namespace crest::testing
