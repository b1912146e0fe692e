// Internal to the crest CLI: which daemons `crest fleet` talks to. A list
// given on the command line (--targets host:port,...), or every address a
// DNS name resolves to (--targets-dns NAME[:PORT]; a Kubernetes headless
// Service gives one address per crestd pod).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace crest::cli {

inline constexpr int kDefaultCrestdPort = 50051;

// "a:1,b:2" → {"a:1", "b:2"}; each must be HOST:PORT ([V6]:PORT) with a port
// in 1..65535, or unix:PATH. Duplicates are dropped, order kept.
// InvalidArgument names --targets and the bad entry.
absl::StatusOr<std::vector<std::string>> ParseTargets(const std::string& list);

// Every address NAME resolves to, as "addr:PORT" (IPv6 as "[addr]:PORT"),
// sorted; PORT defaults to kDefaultCrestdPort. NotFound names the name when
// it does not resolve.
absl::StatusOr<std::vector<std::string>> ResolveTargets(const std::string& name_and_port);

}  // namespace crest::cli
