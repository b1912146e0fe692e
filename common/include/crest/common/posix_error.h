// The one translation of POSIX errors (errno, std::error_code) into status
// values. The message names what was being done and the system's words:
// "cannot read '/etc/crest/tokens': No such file or directory (errno 2)".
#pragma once

#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"

namespace crest {

// `errno_value` → its absl code (ENOENT → NotFound, EACCES/EPERM →
// PermissionDenied, ENOSPC → ResourceExhausted, EEXIST → AlreadyExists,
// EINVAL → InvalidArgument, else Unknown), with "<what>: <strerror> (errno N)".
absl::Status PosixError(int errno_value, std::string_view what);

// The system's words alone, for a message that is not a Status of its own
// (a doctor's check, a metrics listener's reason): "<strerror> (errno N)".
std::string PosixErrorText(int errno_value);

// The same for a std::error_code from <filesystem>; OK when `ec` holds no error.
absl::Status FromErrorCode(const std::error_code& ec, std::string_view what);

}  // namespace crest
