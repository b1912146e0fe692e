// Internal to crest::store: a finished job's runs packed by line (schema
// version 16, table run_packs). A line is the rows of one run whose GEMM
// keys agree in all but one dimension (M, N or K); its pack is one blob of
// those rows in ascending order of that dimension. A d_ff window's answer
// then reads a blob a line where it stepped SQLite a row a GEMM.
//
// A pack holds every row its run has on its line: the schema's triggers
// drop a run's packs whenever one of its rows changes, in the same
// transaction, so a pack present is its run's rows as they are. A line
// without a pack (short, a run not yet packed, or one changed since) is
// read from run_rows, as before packs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "key_batches.h"
#include "sqlite.h"

namespace crest::store::internal {

// One row of a pack: the value of its line's varying dimension and the
// run_rows figures answers read.
struct PackedRow {
  int64_t v = 0;
  int64_t measurement_id = 0;
  double median_us = 0;
  double ci_low_us = 0;
  double ci_high_us = 0;
};

// Lines shorter than this stay rows: a blob's lookup costs about what
// stepping a few rows does.
inline constexpr size_t kMinPackedRows = 8;
// A run of more rows than this is not packed (its rows would be held in
// memory at once while packing): its answers read rows.
inline constexpr size_t kMaxPackedRunRows = 1 << 20;

// Packs every run of job `job_id` (each run_ids row with that job): the
// lines of kMinPackedRows rows or more, replacing the runs' packs. Inside
// the caller's transaction.
absl::Status PackJobRuns(Connection& conn, int64_t job_id);
// Packs the finished jobs' runs that measurements after
// `last_measurement_id` belong to: a merge's, whose rows dropped their packs
// (runs it did not touch are not read again).
absl::Status PackMergedRuns(Connection& conn, int64_t last_measurement_id);
// Packs every run of a finished job that has no pack: a file upgraded from
// before packs.
absl::Status PackDoneRuns(Connection& conn);

// Calls on_row(row) for each row of run `run_id`'s pack of `range`'s line
// whose varying value lies in the range, in ascending v, and returns true;
// false where the line has no pack (read its rows instead), calling nothing.
// A blob that does not decode (not whole rows, out of order) counts as no
// pack. `range.varying` must be 0, 1 or 2.
template <typename OnRow>
absl::StatusOr<bool> ForEachPackedRow(Connection& conn, int64_t run_id, const KeyRange& range,
                                      const OnRow& on_row);

// The blob of `rows` (ascending v): kPackRowBytes a row, five 8-byte
// little-endian fields (v, measurement id, then the median and interval as
// IEEE 754 doubles), whatever the host's order, so a file moves between
// machines.
inline constexpr size_t kPackRowBytes = 40;
std::vector<uint8_t> EncodePack(std::span<const PackedRow> rows);

// A pack's blob read in place (no copy; valid while its bytes are).
class PackView {
 public:
  // nullopt where `bytes` are not a pack: not whole rows, or v not
  // strictly ascending.
  static std::optional<PackView> Of(std::span<const uint8_t> bytes);
  size_t size() const { return bytes_.size() / kPackRowBytes; }
  int64_t V(size_t i) const;
  PackedRow Row(size_t i) const;
  // The first row whose v is at least `v` (size() when none).
  size_t LowerBound(int64_t v) const;

 private:
  explicit PackView(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  std::span<const uint8_t> bytes_;
};

// The pack's statement for `range`'s line, bound and stepped: its blob is
// column 0 when it returns true (until the statement is reset).
absl::StatusOr<bool> FindPack(Connection& conn, int64_t run_id, const KeyRange& range,
                              Statement** found);

template <typename OnRow>
absl::StatusOr<bool> ForEachPackedRow(Connection& conn, int64_t run_id, const KeyRange& range,
                                      const OnRow& on_row) {
  Statement* stmt = nullptr;
  auto found = FindPack(conn, run_id, range, &stmt);
  if (!found.ok() || !*found) return found;
  struct ResetAtEnd {
    Statement* stmt;
    ~ResetAtEnd() { stmt->Reset(); }
  } reset{stmt};
  const std::optional<PackView> pack = PackView::Of(stmt->BlobBytesAt(0));
  if (!pack) return false;
  const int64_t lo = range.varying == 0 ? range.m_lo : range.varying == 1 ? range.n_lo : range.k_lo;
  const int64_t hi = range.varying == 0 ? range.m_hi : range.varying == 1 ? range.n_hi : range.k_hi;
  for (size_t i = pack->LowerBound(lo); i < pack->size() && pack->V(i) <= hi; ++i) {
    on_row(pack->Row(i));
  }
  return true;
}

}  // namespace crest::store::internal
