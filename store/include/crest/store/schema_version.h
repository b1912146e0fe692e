// The schema version this build of the store reads and writes. Its own
// header, included by the few files that need the number, so that a
// schema change rebuilds those and not every user of store.h.
#pragma once

namespace crest::store {

// The schema this build reads and writes (PRAGMA user_version). An older
// file is upgraded when opened for writing; a newer one is refused.
inline constexpr int kSchemaVersion = 16;

}  // namespace crest::store
