#include "crest/common/posix_error.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace crest {
namespace {

absl::StatusCode CodeOf(int errno_value) {
  switch (errno_value) {
    case ENOENT:
    case ENOTDIR:
      return absl::StatusCode::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::StatusCode::kPermissionDenied;
    case ENOSPC:
    case EDQUOT:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
      return absl::StatusCode::kResourceExhausted;
    case EEXIST:
      return absl::StatusCode::kAlreadyExists;
    case EINVAL:
    case ENAMETOOLONG:
    case EISDIR:
      return absl::StatusCode::kInvalidArgument;
    case EAGAIN:
    case EINTR:
    case EBUSY:
      return absl::StatusCode::kUnavailable;
    default:
      return absl::StatusCode::kUnknown;
  }
}

}  // namespace

std::string PosixErrorText(int errno_value) {
  return std::string(std::strerror(errno_value)) + " (errno " + std::to_string(errno_value) + ")";
}

absl::Status PosixError(int errno_value, std::string_view what) {
  return absl::Status(CodeOf(errno_value), std::string(what) + ": " + PosixErrorText(errno_value));
}

absl::Status FromErrorCode(const std::error_code& ec, std::string_view what) {
  if (!ec) return absl::OkStatus();
  if (ec.category() == std::generic_category() || ec.category() == std::system_category()) {
    return PosixError(ec.value(), what);
  }
  return absl::UnknownError(std::string(what) + ": " + ec.message());
}

}  // namespace crest
