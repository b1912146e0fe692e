// Internal: a GemmKey in the seven columns every result table keys by
// (dtype, trans_a, trans_b, batch, m, n, k), bound and read in one place.
#pragma once

#include "crest/store/records.h"
#include "sqlite.h"

namespace crest::store::internal {

// Binds dtype, trans_a, trans_b, batch, m, n, k at `first`..first+6.
void BindKey(Statement& s, int first, const GemmKey& key);
// Reads the columns named dtype, trans_a, trans_b, batch, m, n, k.
GemmKey ReadKey(const Statement& s);

}  // namespace crest::store::internal
