#include "answer_cache.h"

namespace crest::service {

std::string AnswerCache::Key(const std::string& method, const std::string& request) {
  std::string key;
  key.reserve(method.size() + 1 + request.size());
  key.append(method).push_back('\0');
  key.append(request);
  return key;
}

std::optional<std::string> AnswerCache::Find(const std::string& method, const std::string& request,
                                             const store::ResultsGeneration& generation) {
  const std::string key = Key(method, request);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || !(it->second.generation == generation)) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return it->second.answer;
}

void AnswerCache::Put(const std::string& method, const std::string& request,
                      const store::ResultsGeneration& generation, std::string answer) {
  if (request.size() > kMaxRequestBytes || max_entries_ == 0) return;
  std::string key = Key(method, request);
  const size_t size = key.size() + answer.size();
  if (size > max_bytes_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    // A newer generation's answer replaces the stale one in place.
    bytes_ -= key.size() + it->second.answer.size();
    bytes_ += size;
    it->second = Entry{generation, std::move(answer)};
    return;
  }
  while (!order_.empty() && (entries_.size() >= max_entries_ || bytes_ + size > max_bytes_)) {
    EvictOldest();
  }
  bytes_ += size;
  auto it = entries_.emplace(std::move(key), Entry{generation, std::move(answer)}).first;
  order_.push_back(&it->first);
}

void AnswerCache::EvictOldest() {
  auto it = entries_.find(*order_.front());
  if (it != entries_.end()) {
    bytes_ -= it->first.size() + it->second.answer.size();
    entries_.erase(it);
  }
  order_.pop_front();
}

int64_t AnswerCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

int64_t AnswerCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

size_t AnswerCache::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

size_t AnswerCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

}  // namespace crest::service
