// Test support: a database made, filled and read by its file's path, for
// the tests of crestd and the CLI. They reach the database as their users
// do, as a file, so they need not include the store's interface
// (crest/store/store.h) and are not recompiled when it changes.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "crest/tuner/gemm.h"

namespace crest::sweep {
struct SweepSpec;
}  // namespace crest::sweep
namespace crest::tuner {
class Backend;
}  // namespace crest::tuner

namespace crest::testing {

// Makes the database at `path` (the current schema), or opens and closes
// one that is there.
absl::Status MakeDatabase(const std::string& path);

// Writes a measurement of each of `gemms`, `us` apiece, on FakeH100 with
// FakeSoftware (fake_results.h), as the engine writes one.
absl::Status AddMeasuredOnFakeH100(const std::string& path, std::span<const tuner::GemmShape> gemms,
                                   double us);

// The predictions the database holds (store::Stats), read only.
absl::StatusOr<int64_t> CountPredictions(const std::string& path);

// Whether store::Check finds the database whole.
absl::StatusOr<bool> DatabaseIsWhole(const std::string& path);

// Runs `spec` on `backend` into the database at `path` (sweep::RunSweep,
// default options).
absl::Status SweepInto(const std::string& path, const sweep::SweepSpec& spec,
                       tuner::Backend& backend);

}  // namespace crest::testing
