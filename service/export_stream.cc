#include "export_stream.h"

#include <filesystem>
#include <thread>

#include "client_view.h"
#include "crest/store/admin.h"
#include "log.h"
#include "raw_message.h"

namespace crest::service {

ExportStream::ExportStream(StorePool& pool, Env& env, std::string snapshot_path,
                           std::unique_ptr<WatchedWrites> writes, std::function<void()> on_done)
    : pool_(pool),
      env_(env),
      snapshot_path_(std::move(snapshot_path)),
      writes_(std::move(writes)),
      on_done_(std::move(on_done)) {}

void ExportStream::RemoveSnapshot() {
  if (auto s = env_.RemoveFile(snapshot_path_); !s.ok()) {
    Log(Level::kWarn, "export_cleanup_failed", {{"message", std::string(s.message())}});
  }
}

void ExportStream::Begin() {
  // VACUUM INTO takes seconds on a large database: not on the serving thread.
  std::thread([this] {
    absl::Status status;
    {
      auto db = pool_.Acquire();
      status = db.ok() ? store::ExportTo(**db, snapshot_path_) : db.status();
    }
    if (status.ok()) {
      std::error_code ec;
      total_ = static_cast<int64_t>(std::filesystem::file_size(snapshot_path_, ec));
      in_.open(snapshot_path_, std::ios::binary);
      if (ec || !in_) status = absl::InternalError("cannot read the snapshot " + snapshot_path_);
      // The open stream keeps the bytes; the name goes now, whatever happens next.
      RemoveSnapshot();
    }
    if (!status.ok()) {
      Log(Level::kWarn, "export_failed", {{"message", std::string(status.message())}});
      Finish(ToGrpc(status));
      return;
    }
    Log(Level::kInfo, "export_started", {{"bytes", std::to_string(total_)}});
    WriteNext();
  }).detach();
}

void ExportStream::WriteNext() {
  if (offset_ >= total_) {
    Finish(grpc::Status::OK);
    return;
  }
  const int64_t n = std::min(kChunkBytes, total_ - offset_);
  std::string* data = chunk_.mutable_data();
  data->resize(static_cast<size_t>(n));
  in_.read(data->data(), n);
  if (!in_) {
    Finish(grpc::Status(grpc::StatusCode::INTERNAL, "reading the snapshot failed"));
    return;
  }
  chunk_.set_offset(offset_);
  chunk_.set_total_bytes(total_);
  offset_ += n;
  if (auto s = ToBytes(chunk_, &chunk_bytes_); !s.ok()) {
    Finish(ToGrpc(s));
    return;
  }
  writes_->Writing();
  StartWrite(&chunk_bytes_);
}

void ExportStream::OnWriteDone(bool ok) {
  writes_->Wrote();
  if (!ok) {
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client left"));
    return;
  }
  WriteNext();
}

void ExportStream::OnDone() {
  writes_.reset();
  RemoveSnapshot();
  if (on_done_) on_done_();
  delete this;
}

}  // namespace crest::service
