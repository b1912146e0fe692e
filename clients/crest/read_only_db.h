// Internal to the crest CLI: opening an existing result database (answers,
// `calibrate`, `db stats|check|export`). A missing or unreadable file is a
// database problem (exit 1, as README says), never bad input.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace crest::store {
class Store;  // crest/store/store.h: a caller of OpenExisting includes it to use the result
}  // namespace crest::store

namespace crest::cli {

// Opens `path`, never creating it: read-only, or for writing (an upgrade).
// FailedPrecondition names the file when it does not exist. A path ending in
// .gz (a shipped database, bench/results/) opens read-only as shipped: it is
// decompressed once per process into a private folder under $TMPDIR, removed
// when the process exits; for writing it is refused, saying so.
absl::StatusOr<std::unique_ptr<store::Store>> OpenExisting(const std::string& path,
                                                           bool read_only = true);

}  // namespace crest::cli
