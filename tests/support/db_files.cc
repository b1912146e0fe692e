#include "db_files.h"

#include <memory>
#include <optional>

#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "crest/sweep/runner.h"
#include "fake_results.h"

namespace crest::testing {
namespace {

absl::StatusOr<std::unique_ptr<store::Store>> Open(const std::string& path, bool read_only) {
  store::StoreOptions options;
  options.read_only = read_only;
  return store::Store::Open(path, options);
}

}  // namespace

absl::Status MakeDatabase(const std::string& path) { return Open(path, false).status(); }

absl::Status AddMeasuredOnFakeH100(const std::string& path, std::span<const tuner::GemmShape> gemms,
                                   double us) {
  auto db = Open(path, false);
  if (!db.ok()) return db.status();
  auto ids = (*db)->RegisterDevice(FakeH100(), FakeSoftware());
  if (!ids.ok()) return ids.status();
  for (const tuner::GemmShape& g : gemms) {
    auto s = (*db)->InsertMeasurement(std::nullopt, ids->first, ids->second, "H100-SXM", 132,
                                      FakeMeasurement(g, us));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CountPredictions(const std::string& path) {
  auto db = Open(path, true);
  if (!db.ok()) return db.status();
  auto stats = store::Stats(**db);
  if (!stats.ok()) return stats.status();
  return stats->predictions;
}

absl::StatusOr<bool> DatabaseIsWhole(const std::string& path) {
  auto db = Open(path, false);
  if (!db.ok()) return db.status();
  auto check = store::Check(**db);
  if (!check.ok()) return check.status();
  return check->ok;
}

absl::Status SweepInto(const std::string& path, const sweep::SweepSpec& spec,
                       tuner::Backend& backend) {
  auto db = Open(path, false);
  if (!db.ok()) return db.status();
  return sweep::RunSweep(spec, backend, **db, {}).status();
}

}  // namespace crest::testing
