#include "run_packs.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <ranges>
#include <string>

#include "crest/store/records.h"
#include "crest/tuner/dtype.h"

namespace crest::store::internal {

namespace {

void Put(uint64_t value, uint8_t* out) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out, &value, 8);
  } else {
    for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
  }
}

uint64_t Get(const uint8_t* in) {
  uint64_t value = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&value, in, 8);
  } else {
    for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(in[i]) << (8 * i);
  }
  return value;
}

// One row of a run as packing reads it.
struct RunRow {
  GemmKey key;
  PackedRow figures;
};

// Run `run_id`'s rows in its key's order (the table's); false in `fits`
// when it has more than kMaxPackedRunRows. A row whose dtype is not a name DTypeName gives is
// left out, as the answers' reads (which bind DTypeName's) leave it.
absl::Status ReadRun(Connection& conn, int64_t run_id, std::vector<RunRow>& rows, bool& fits) {
  auto stmt = conn.Prepare(
      "SELECT dtype, trans_a, trans_b, batch, m, n, k, measurement_id, median_us, ci_low_us, "
      "ci_high_us FROM run_rows WHERE run_id = ?1 "
      "ORDER BY dtype, trans_a, trans_b, batch, m, n, k");
  if (!stmt.ok()) return stmt.status();
  (*stmt)->Bind(1, run_id);
  fits = true;
  return (*stmt)->ForEachRow("reading a run to pack", [&](const Statement& s) {
    if (!fits || rows.size() == kMaxPackedRunRows) {
      fits = false;
      return;
    }
    const std::string text = s.Text("dtype");
    auto dtype = tuner::ParseDType(text);
    if (!dtype.ok() || tuner::DTypeName(*dtype) != text) return;
    RunRow row;
    row.key.dtype = *dtype;
    row.key.a_transposed = s.IntAt(1) != 0;
    row.key.b_transposed = s.IntAt(2) != 0;
    row.key.batch = s.IntAt(3);
    row.key.m = s.IntAt(4);
    row.key.n = s.IntAt(5);
    row.key.k = s.IntAt(6);
    row.figures.measurement_id = s.IntAt(7);
    row.figures.median_us = s.DoubleAt(8);
    row.figures.ci_low_us = s.DoubleAt(9);
    row.figures.ci_high_us = s.DoubleAt(10);
    rows.push_back(row);
  });
}

// Writes the pack of one line (`line`: its rows in ascending varying value).
absl::Status WriteLine(Connection& conn, int64_t run_id, int varying,
                       std::span<const RunRow* const> line) {
  std::vector<PackedRow> packed;
  packed.reserve(line.size());
  for (const RunRow* row : line) {
    PackedRow p = row->figures;
    p.v = KeyDim(row->key, varying);
    packed.push_back(p);
  }
  auto stmt = conn.Prepare(
      "INSERT INTO run_packs(run_id, dtype, trans_a, trans_b, batch, varying, m, n, k, rows) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  if (!stmt.ok()) return stmt.status();
  const GemmKey& first = line.front()->key;
  Statement& s = **stmt;
  s.Bind(1, run_id).Bind(2, tuner::DTypeName(first.dtype));
  s.Bind(3, static_cast<int64_t>(first.a_transposed));
  s.Bind(4, static_cast<int64_t>(first.b_transposed));
  s.Bind(5, first.batch).Bind(6, varying);
  for (int d = 0; d < 3; ++d) s.Bind(7 + d, d == varying ? 0 : KeyDim(first, d));
  s.BindBlob(10, EncodePack(packed));
  return s.Run("writing a run's pack");
}

absl::Status PackRun(Connection& conn, int64_t run_id) {
  auto clear = conn.Prepare("DELETE FROM run_packs WHERE run_id = ?1");
  if (!clear.ok()) return clear.status();
  if (auto s = (*clear)->Bind(1, run_id).Run("replacing a run's packs"); !s.ok()) return s;
  std::vector<RunRow> rows;
  bool fits = true;
  if (auto s = ReadRun(conn, run_id, rows, fits); !s.ok() || !fits) return s;
  std::vector<const GemmKey*> keys;
  keys.reserve(rows.size());
  for (const RunRow& row : rows) keys.push_back(&row.key);
  std::vector<const RunRow*> line;
  for (int varying = 0; varying < 3; ++varying) {
    // Each line's rows together, as BatchKeys groups keys; in the run's key
    // order within a line, so ascending in v.
    const std::vector<uint32_t> order = FixedOrder(keys, varying);
    for (size_t i = 0; i < order.size();) {
      const FixedParts fixed = FixedPartsOf(rows[order[i]].key, varying);
      line.clear();
      for (; i < order.size() && FixedPartsOf(rows[order[i]].key, varying) == fixed; ++i) {
        line.push_back(&rows[order[i]]);
      }
      if (line.size() < kMinPackedRows) continue;
      if (auto s = WriteLine(conn, run_id, varying, line); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

// Packs each run `select` lists (its parameters bound by `bind`).
absl::Status PackRunsOf(Connection& conn, const std::string& select,
                        const std::function<void(Statement&)>& bind) {
  auto stmt = conn.Prepare(select);
  if (!stmt.ok()) return stmt.status();
  std::vector<int64_t> runs;
  bind(**stmt);
  auto listed = (*stmt)->ForEachRow("listing runs to pack",
                                    [&](const Statement& s) { runs.push_back(s.IntAt(0)); });
  if (!listed.ok()) return listed;
  for (int64_t run_id : runs) {
    if (auto s = PackRun(conn, run_id); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<uint8_t> EncodePack(std::span<const PackedRow> rows) {
  std::vector<uint8_t> out(rows.size() * kPackRowBytes);
  uint8_t* at = out.data();
  for (const PackedRow& row : rows) {
    Put(static_cast<uint64_t>(row.v), at);
    Put(static_cast<uint64_t>(row.measurement_id), at + 8);
    Put(std::bit_cast<uint64_t>(row.median_us), at + 16);
    Put(std::bit_cast<uint64_t>(row.ci_low_us), at + 24);
    Put(std::bit_cast<uint64_t>(row.ci_high_us), at + 32);
    at += kPackRowBytes;
  }
  return out;
}

std::optional<PackView> PackView::Of(std::span<const uint8_t> bytes) {
  if (bytes.size() % kPackRowBytes != 0) return std::nullopt;
  const PackView view(bytes);
  for (size_t i = 1; i < view.size(); ++i) {
    if (view.V(i) <= view.V(i - 1)) return std::nullopt;
  }
  return view;
}

int64_t PackView::V(size_t i) const {
  return static_cast<int64_t>(Get(bytes_.data() + i * kPackRowBytes));
}

PackedRow PackView::Row(size_t i) const {
  const uint8_t* at = bytes_.data() + i * kPackRowBytes;
  PackedRow row;
  row.v = static_cast<int64_t>(Get(at));
  row.measurement_id = static_cast<int64_t>(Get(at + 8));
  row.median_us = std::bit_cast<double>(Get(at + 16));
  row.ci_low_us = std::bit_cast<double>(Get(at + 24));
  row.ci_high_us = std::bit_cast<double>(Get(at + 32));
  return row;
}

size_t PackView::LowerBound(int64_t v) const {
  return *std::ranges::partition_point(std::views::iota(size_t{0}, size()),
                                       [&](size_t i) { return V(i) < v; });
}

absl::Status PackJobRuns(Connection& conn, int64_t job_id) {
  return PackRunsOf(conn, "SELECT id FROM run_ids WHERE job_id = ?1",
                    [job_id](Statement& s) { s.Bind(1, job_id); });
}

absl::Status PackMergedRuns(Connection& conn, int64_t last_measurement_id) {
  return PackRunsOf(conn,
                    "SELECT DISTINCT r.id FROM measurements AS m "
                    "JOIN run_ids AS r ON r.gpu_model = m.gpu_model AND "
                    "r.cache_mode = m.cache_mode AND r.clock_policy = m.clock_policy AND "
                    "r.software_id = m.software_id AND r.job_id = coalesce(m.job_id, 0) AND "
                    "r.device_id = m.device_id "
                    "JOIN jobs AS j ON j.id = r.job_id WHERE m.id > ?1 AND j.state = ?2",
                    [last_measurement_id](Statement& s) {
                      s.Bind(1, last_measurement_id).Bind(2, JobStateName(JobState::kDone));
                    });
}

absl::Status PackDoneRuns(Connection& conn) {
  return PackRunsOf(
      conn,
      "SELECT r.id FROM run_ids AS r JOIN jobs AS j ON j.id = r.job_id "
      "WHERE j.state = ?1 AND NOT EXISTS (SELECT 1 FROM run_packs WHERE run_id = r.id)",
      [](Statement& s) { s.Bind(1, JobStateName(JobState::kDone)); });
}

absl::StatusOr<bool> FindPack(Connection& conn, int64_t run_id, const KeyRange& range,
                              Statement** found) {
  auto stmt = conn.Prepare(
      "SELECT rows FROM run_packs WHERE run_id = ?1 AND dtype = ?2 AND trans_a = ?3 AND "
      "trans_b = ?4 AND batch = ?5 AND varying = ?6 AND m = ?7 AND n = ?8 AND k = ?9");
  if (!stmt.ok()) return stmt.status();
  Statement& s = **stmt;
  s.Bind(1, run_id).Bind(2, tuner::DTypeName(range.prefix.dtype));
  s.Bind(3, static_cast<int64_t>(range.prefix.a_transposed));
  s.Bind(4, static_cast<int64_t>(range.prefix.b_transposed));
  s.Bind(5, range.prefix.batch).Bind(6, range.varying);
  const GemmKey line = range.KeyAt(0);  // the fixed dimensions, 0 in the varying one
  s.Bind(7, line.m).Bind(8, line.n).Bind(9, line.k);
  auto row = s.Step("looking up a run's pack");
  if (!row.ok() || !*row) s.Reset();
  *found = &s;
  return row;
}

}  // namespace crest::store::internal
