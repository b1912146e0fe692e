// Test support: run a command line and capture its exit code and output.
#pragma once

#include <string>

namespace crest::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `command` through /bin/sh; stderr is captured through a temp file.
CommandResult RunCommand(const std::string& command);

}  // namespace crest::testing
