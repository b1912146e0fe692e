// Internal to crestd: the ExportResults reactor. It takes a consistent
// snapshot of the database (VACUUM INTO a temporary file in the state
// directory) on its own thread, streams the file in 1 MiB chunks and
// deletes it when the call ends, however it ends.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <string>

#include "crest/common/env.h"
#include "crest/v1/crest.grpc.pb.h"
#include "queued_calls.h"
#include "store_pool.h"
#include "write_watchdog.h"

namespace crest::service {

// Chunks go out as serialized crest.v1.ExportChunk bytes (raw_message.h).
class ExportStream final : public StreamReactor {
 public:
  // `writes` (not null) is told of every write.
  ExportStream(StorePool& pool, Env& env, std::string snapshot_path,
               std::unique_ptr<WatchedWrites> writes, std::function<void()> on_done);

  void Begin() override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  void RemoveSnapshot();  // logs when the name cannot be removed
  static constexpr int64_t kChunkBytes = 1 << 20;
  void WriteNext();

  StorePool& pool_;
  Env& env_;
  const std::string snapshot_path_;
  std::unique_ptr<WatchedWrites> writes_;
  std::function<void()> on_done_;
  std::ifstream in_;
  int64_t total_ = 0;
  int64_t offset_ = 0;
  v1::ExportChunk chunk_;
  grpc::ByteBuffer chunk_bytes_;  // chunk_, serialized: owned by the write in flight
};

}  // namespace crest::service
