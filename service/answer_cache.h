// Internal to crestd: answers kept as the bytes sent, by (method, request
// bytes), each for the results generation it was computed at
// (store::Store::Generation). An answer is served from memory until a write
// moves the generation; then it is computed again. Bounded in entries and
// bytes (each key held once, and counted): the oldest entries go first.
// Requests above kMaxRequestBytes are never kept: a real query is a few dozen
// bytes, and hostile ones would fill the cache with their keys.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "crest/store/records.h"

namespace crest::service {

class AnswerCache {
 public:
  static constexpr size_t kMaxRequestBytes = 4096;

  AnswerCache(size_t max_entries, size_t max_bytes)
      : max_entries_(max_entries), max_bytes_(max_bytes) {}

  // The answer to `request` at `generation`, if one is kept.
  std::optional<std::string> Find(const std::string& method, const std::string& request,
                                  const store::ResultsGeneration& generation);
  void Put(const std::string& method, const std::string& request,
           const store::ResultsGeneration& generation, std::string answer);

  int64_t hits() const;
  int64_t misses() const;
  size_t entries() const;
  size_t bytes() const;

 private:
  struct Entry {
    store::ResultsGeneration generation;
    std::string answer;
  };
  static std::string Key(const std::string& method, const std::string& request);
  void EvictOldest();  // REQUIRES: mu_ held, order_ not empty

  const size_t max_entries_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;  // GUARDED_BY(mu_)
  // Oldest first: the keys of entries_ (a node's key stays put when the map
  // rehashes), so that no key is held twice.
  std::deque<const std::string*> order_;  // GUARDED_BY(mu_)
  size_t bytes_ = 0;                      // GUARDED_BY(mu_)
  int64_t hits_ = 0;                      // GUARDED_BY(mu_)
  int64_t misses_ = 0;                    // GUARDED_BY(mu_)
};

}  // namespace crest::service
