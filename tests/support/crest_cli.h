// Test support: running the `crest` binary (CREST_BIN, defined by the test's
// CMake target) and reading its --json output.
#pragma once

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "run_command.h"

namespace crest::testing {

inline CommandResult Crest(const std::string& args) {
  return RunCommand(std::string(CREST_BIN) + " " + args);
}

// The document of a run that must succeed (a failure is reported, and the
// result is discarded JSON).
inline nlohmann::json Json(const CommandResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

}  // namespace crest::testing
