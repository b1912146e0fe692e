// Internal: a GemmKey in the seven columns every result table keys by
// (dtype, trans_a, trans_b, batch, m, n, k), bound and read in one place.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "crest/store/records.h"
#include "sqlite.h"

namespace crest::store::internal {

// "a, b, c" of `names`, each preceded by `prefix` ("sm."): how every column
// list below is spelled.
std::string PrefixedList(std::span<const std::string_view> names, std::string_view prefix);

// "dtype, trans_a, trans_b, batch, m, n, k", each name preceded by `prefix`
// ("sm."): the key's columns as every statement but the migrations names
// them.
std::string KeyColumnList(std::string_view prefix = "");

// Binds dtype, trans_a, trans_b, batch, m, n, k at `first`..first+6.
void BindKey(Statement& s, int first, const GemmKey& key);
// Reads the columns named dtype, trans_a, trans_b, batch, m, n, k.
GemmKey ReadKey(const Statement& s);

}  // namespace crest::store::internal
