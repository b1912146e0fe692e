#include "store_pool.h"

#include "crest/store/store.h"

namespace crest::service {

StorePool::StorePool(std::string path) : path_(std::move(path)) {}
StorePool::~StorePool() = default;

StorePool::Lease::Lease(StorePool* pool, std::unique_ptr<store::Store> db)
    : pool_(pool), db_(std::move(db)) {}

StorePool::Lease::~Lease() {
  if (db_ != nullptr) pool_->Release(std::move(db_));
}

absl::StatusOr<StorePool::Lease> StorePool::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<store::Store> db = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(db));
    }
  }
  store::StoreOptions options;
  options.read_only = true;
  options.memory_map = false;  // see StoreOptions::memory_map: a sweep writes meanwhile
  auto db = store::Store::Open(path_, options);
  if (!db.ok()) return db.status();
  return Lease(this, *std::move(db));
}

absl::StatusOr<store::ResultsGeneration> StorePool::Generation(const std::string& gpu_model) {
  auto db = Acquire();
  if (!db.ok()) return db.status();
  return (*db)->Generation(gpu_model);
}

void StorePool::Release(std::unique_ptr<store::Store> db) {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(db));
}

}  // namespace crest::service
