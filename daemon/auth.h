// Internal to crestd: who may call what. With no tokens configured every
// call is allowed and a client is named by its peer address (without the
// port). With tokens, mutating calls (Sweep, SubmitJob, CancelJob) need
// "authorization: Bearer TOKEN" metadata naming a known token, and read
// calls do too when reads are protected (--auth-reads). The client is then
// named by the token's name. Tokens travel in metadata: crestd refuses them
// without TLS except on loopback (checked in main).
#pragma once

#include <grpcpp/grpcpp.h>

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "crest/common/env.h"

namespace crest::crestd {

class Authorizer final {
 public:
  Authorizer() = default;
  Authorizer(std::map<std::string, std::string> name_by_token, bool protect_reads)
      : name_by_token_(std::move(name_by_token)), protect_reads_(protect_reads) {}

  bool enabled() const { return !name_by_token_.empty(); }

  // The caller's name, or UNAUTHENTICATED naming the method and what is missing.
  absl::StatusOr<std::string> Check(const grpc::CallbackServerContext& context, bool mutating,
                                    const char* method) const;

 private:
  std::map<std::string, std::string> name_by_token_;
  bool protect_reads_ = false;
};

// Reads a token file: one token per line, "NAME TOKEN" or just "TOKEN"
// (named token-1, token-2, …); blank lines and lines starting with # are
// skipped. InvalidArgument naming the file and line for a malformed one.
absl::StatusOr<std::map<std::string, std::string>> LoadTokens(const std::string& path,
                                                               const Env& env);

}  // namespace crest::crestd
