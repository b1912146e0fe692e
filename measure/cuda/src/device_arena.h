// Internal: the backend's one device allocation (crest/measure/arena.h
// says its layout), and the generator state of its input region.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "crest/measure/arena.h"
#include "crest/tuner/dtype.h"

namespace crest::measure::internal {

class DeviceArena final {
 public:
  explicit DeviceArena(uint64_t seed) : seed_(seed) {}
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // Makes the arena hold `plan`: nothing happens when it already does; else
  // it is reallocated (ResourceExhausted, nothing allocated, when the device
  // lacks the memory) and its contents are forgotten.
  absl::Status Hold(const ArenaPlan& plan);
  // Fills the input region with the generator's values for `dtype`, unless
  // it already holds them. Asynchronous on `stream`.
  absl::Status Fill(tuner::DType dtype, cudaStream_t stream);

  const ArenaPlan& plan() const { return plan_; }
  uint64_t seed() const { return seed_; }
  void* At(int64_t offset) const { return static_cast<char*>(base_) + offset; }

 private:
  uint64_t seed_;
  ArenaPlan plan_;
  void* base_ = nullptr;
  std::optional<tuner::DType> filled_;
};

}  // namespace crest::measure::internal
