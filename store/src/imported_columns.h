// Internal to crest::store: the columns of an imported timing, declared once.
// The import's insert and the merge are made from this list; its binding
// (imported.cc) follows it. Adding a column is an entry here and in
// BindImported, a migration (schema.cc) and ImportBatch's or
// ImportedTiming's field.
#pragma once

#include <cstdint>
#include <string>

#include "crest/store/records.h"
#include "sqlite.h"

namespace crest::store::internal {

// "uid, gpu_model, device, tool, source_file, source_hash, host, <the key's
// seven>, time_us, created_us": every column but the id.
std::string ImportedColumnList();

// Binds one imported row in ImportedColumnList's order, from ?1.
void BindImported(Statement& s, const std::string& uid, const std::string& host, int64_t created_us,
                  const ImportBatch& batch, const ImportedTiming& row);

}  // namespace crest::store::internal
