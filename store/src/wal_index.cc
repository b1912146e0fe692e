#include "wal_index.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace crest::store::internal {
namespace {

constexpr uint32_t kWalIndexVersion = 3007000;  // iVersion, walformat.html
constexpr size_t kIsInitOffset = 12;

}  // namespace

std::optional<WalIndexMark> WalIndexMark::Open(const std::string& db_path) {
  const int fd = open((db_path + "-shm").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  return WalIndexMark(fd);
}

WalIndexMark::WalIndexMark(WalIndexMark&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

WalIndexMark::~WalIndexMark() {
  if (fd_ >= 0) close(fd_);
}

std::optional<WalIndexMark::Header> WalIndexMark::Read() const {
  std::array<unsigned char, 2 * sizeof(Header)> both;
  if (pread(fd_, both.data(), both.size(), 0) != static_cast<ssize_t>(both.size())) {
    return std::nullopt;
  }
  Header first, second;
  std::memcpy(first.data(), both.data(), first.size());
  std::memcpy(second.data(), both.data() + first.size(), second.size());
  uint32_t version = 0;
  std::memcpy(&version, first.data(), sizeof(version));  // native byte order, as SQLite writes it
  if (first != second || version != kWalIndexVersion || first[kIsInitOffset] != 1) {
    return std::nullopt;
  }
  return first;
}

}  // namespace crest::store::internal
