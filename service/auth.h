// Internal to crestd: who may call what. With no tokens configured every
// call is allowed, every caller may cancel any job, and a client is named by
// its peer address (without the port). With tokens, mutating calls (Sweep,
// SubmitJob, CancelJob) need "authorization: Bearer TOKEN" metadata naming a
// known token; read calls do too when reads are protected (--auth-reads), and
// ExportResults does unless the operator opts out (--public-export): an
// export holds host names, GPU UUIDs and every spec. The client is then named
// by the token's name; it cancels only its own jobs unless its token has the
// operator role. Tokens travel in metadata: crestd refuses them without TLS
// except on loopback (checked in main).
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "crest/common/env.h"

namespace crest::service {

struct TokenHolder {
  std::string name;
  bool is_operator = false;  // may cancel any client's jobs
};

// Who called: the name jobs are recorded under and limits are kept by.
struct Caller {
  std::string name;
  bool authenticated = false;   // presented a known token
  bool may_cancel_any = false;  // an operator's token, or a crestd without tokens
};

// How much a method needs.
enum class Access {
  kRead,       // a token only under --auth-reads
  kSensitive,  // a token whenever tokens are on, unless the operator opted out
  kMutating,   // a token whenever tokens are on
};

class Authorizer final {
 public:
  Authorizer() = default;
  Authorizer(std::map<std::string, TokenHolder> holder_by_token, bool protect_reads,
             bool public_export)
      : holder_by_token_(std::move(holder_by_token)),
        protect_reads_(protect_reads),
        public_export_(public_export) {}

  bool enabled() const { return !holder_by_token_.empty(); }

  // The caller, or UNAUTHENTICATED naming the method and what is missing.
  absl::StatusOr<Caller> Check(const grpc::ServerContextBase& context, Access access,
                               const char* method) const;

 private:
  std::map<std::string, TokenHolder> holder_by_token_;
  bool protect_reads_ = false;
  bool public_export_ = false;
};

inline constexpr int64_t kMaxTokenFileBytes = 1 << 20;
inline constexpr size_t kMaxTokenBytes = 4096;

// Reads a token file: one token per line, "NAME TOKEN [operator]" or just
// "TOKEN" (named token-1, token-2, …); blank lines and lines starting with #
// are skipped. InvalidArgument naming the file and line for a malformed one,
// a role other than operator, a token given twice (two names for one token
// would make who submitted a job a guess), a token of bytes other than
// printable ASCII or of more than kMaxTokenBytes; naming the file when it is
// not a regular file of at most kMaxTokenFileBytes (/dev/zero) or when its
// mode lets others read it or anyone but its owner change it.
absl::StatusOr<std::map<std::string, TokenHolder>> LoadTokens(const std::string& path,
                                                              const Env& env);

}  // namespace crest::service
