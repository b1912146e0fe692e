// Internal to crest::wire: a response's runs, written once and referred to
// by index (RunTable), and read back (RunsAt); the d_ff rankings' and the
// times' conversions share them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "crest/tuner/device_info.h"
#include "crest/v1/crest.pb.h"
#include "crest/wire/values.h"

namespace crest::wire::internal {

// Runs written once per response, referred to by index.
class RunTable {
 public:
  explicit RunTable(google::protobuf::RepeatedPtrField<v1::Run>* runs) : runs_(runs) {}
  void Refer(const std::vector<tuner::RunInfo>& runs,
             google::protobuf::RepeatedField<int32_t>* out) {
    for (const tuner::RunInfo& r : runs) out->Add(Index(r));
  }
  int32_t Index(const tuner::RunInfo& r) {
    auto known = std::find_if(known_.begin(), known_.end(),
                              [&](const tuner::RunInfo& k) { return tuner::SameRun(k, r); });
    if (known != known_.end()) return static_cast<int32_t>(known - known_.begin());
    known_.push_back(r);
    Fill(r, runs_->Add());
    return runs_->size() - 1;
  }

 private:
  google::protobuf::RepeatedPtrField<v1::Run>* runs_;
  std::vector<tuner::RunInfo> known_;  // runs_, in order
};

inline std::vector<tuner::RunInfo> RunsAt(const google::protobuf::RepeatedPtrField<v1::Run>& runs,
                                          const google::protobuf::RepeatedField<int32_t>& at) {
  std::vector<tuner::RunInfo> out;
  for (int32_t i : at) {
    if (i >= 0 && i < runs.size()) out.push_back(RunOf(runs.Get(i)));
  }
  return out;
}

}  // namespace crest::wire::internal
