// Internal to crestd: read-only Store connections shared by request
// threads. A Store is single-threaded; the pool hands each request its own.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/store/records.h"

namespace crest::store {
class Store;  // crest/store/store.h, which a user of a lease's store includes
}  // namespace crest::store

namespace crest::service {

class StorePool final {
 public:
  explicit StorePool(std::string path);
  ~StorePool();

  // A connection returned to the pool when the lease ends.
  class Lease final {
   public:
    Lease(StorePool* pool, std::unique_ptr<store::Store> db);
    ~Lease();
    Lease(Lease&&) = default;
    store::Store& operator*() const { return *db_; }
    store::Store* operator->() const { return db_.get(); }

   private:
    StorePool* pool_;
    std::unique_ptr<store::Store> db_;
  };

  absl::StatusOr<Lease> Acquire();
  // The results generation of `gpu_model` (Store::Generation), read on a
  // leased connection.
  absl::StatusOr<store::ResultsGeneration> Generation(const std::string& gpu_model);

 private:
  void Release(std::unique_ptr<store::Store> db);

  std::string path_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<store::Store>> idle_;  // GUARDED_BY(mutex_)
};

}  // namespace crest::service
