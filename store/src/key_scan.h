// Internal to crest::store: reads the rows of a set of GEMM keys by index
// range scans (key_batches.h), a handful of queries for a d_ff window.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "key_batches.h"
#include "sqlite.h"

namespace crest::store::internal {

// The WHERE clause for a KeyRange (after the caller's conditions): equality
// on fixed dimensions and BETWEEN only on the one that varies, so the index
// serves every column up to the range. Parameters ?3..?12.
const std::string& KeyRangeWhere(int varying);  // varying: -1..2
// Binds ?3..?12 of KeyRangeWhere(range.varying).
void BindRange(Statement& s, const KeyRange& range);
// The column that varies over `range`'s rows (M for a single key).
std::string_view VaryingColumn(const KeyRange& range);

// Runs "SELECT <varying dimension> AS v, `columns` `from_where`" over
// `ranges` (BatchKeys' of the wanted keys), calling on_row(i, row) for each
// row whose key is wanted key i (KeyRange::SlotAt); v is the row's column 0,
// `columns` follow it from column 1. `from_where` is
// "FROM table WHERE …" with the caller's conditions, which may use ?1, ?2
// and ?13 up (bound by `bind(statement)`); the key's conditions are added.
// A row's key is its range's with v in the varying dimension, so the seven
// key columns are neither selected nor read.
template <typename Bind, typename OnRow>
absl::Status ScanRanges(Connection& conn, std::string_view columns, std::string_view from_where,
                        std::span<const KeyRange> ranges, const Bind& bind, const OnRow& on_row,
                        std::string_view doing) {
  for (const KeyRange& range : ranges) {
    std::string sql = "SELECT ";
    sql.append(VaryingColumn(range)).append(" AS v, ").append(columns).append(" ");
    sql.append(from_where).append(" AND ").append(KeyRangeWhere(range.varying));
    auto stmt = conn.Prepare(sql);
    if (!stmt.ok()) return stmt.status();
    bind(**stmt);
    BindRange(**stmt, range);
    size_t next = 0;  // the index's rows come in ascending v
    auto s = (*stmt)->ForEachRow(doing, [&](const Statement& row) {
      const int64_t slot = range.SlotAt(row.IntAt(0), next);  // v
      if (slot >= 0) on_row(static_cast<size_t>(slot), row);
    });
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// ScanRanges over the ranges that cover `wanted` (sorted and unique:
// SortedUnique); i indexes `wanted`.
template <typename Bind, typename OnRow>
absl::Status ScanKeyRanges(Connection& conn, std::string_view columns, std::string_view from_where,
                           std::span<const GemmKey> wanted, const Bind& bind, const OnRow& on_row,
                           std::string_view doing) {
  return ScanRanges(conn, columns, from_where, BatchKeys(wanted), bind, on_row, doing);
}

}  // namespace crest::store::internal
