// Sets of GEMMs kept end to end in one array, set i a span of it: a d_ff
// plan's candidates' MLPs. One array for every set, where a vector a set was
// an allocation a set (and its move and free), in a plan made for every
// ranking.
#pragma once

#include <cstddef>
#include <iterator>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "crest/tuner/gemm.h"

namespace crest::tuner {

class GemmSets {
 public:
  // Set i's GEMMs (i < size()); a span valid until a set is added.
  std::span<const GemmShape> operator[](size_t i) const {
    const size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::span<const GemmShape>(gemms_).subspan(begin, ends_[i] - begin);
  }
  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  // Every set's GEMMs, set after set.
  std::span<const GemmShape> all() const { return gemms_; }

  // Room for `sets` sets of `gemms` GEMMs in all.
  void Reserve(size_t sets, size_t gemms) {
    ends_.reserve(sets);
    gemms_.reserve(gemms);
  }
  // Adds a set: `append(gemms)` appends its GEMMs to `gemms` (and changes
  // nothing else there). On an error nothing is added.
  template <typename Append>
  absl::Status AddWith(Append&& append) {
    const size_t before = gemms_.size();
    if (absl::Status s = append(gemms_); !s.ok()) {
      gemms_.resize(before);
      return s;
    }
    ends_.push_back(gemms_.size());
    return absl::OkStatus();
  }
  // Adds a copy of `set`.
  void Add(std::span<const GemmShape> set) {
    gemms_.insert(gemms_.end(), set.begin(), set.end());
    ends_.push_back(gemms_.size());
  }

  // The sets in order, each a span.
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::span<const GemmShape>;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = std::span<const GemmShape>;
    Iterator() = default;
    Iterator(const GemmSets* sets, size_t i) : sets_(sets), i_(i) {}
    std::span<const GemmShape> operator*() const { return (*sets_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator was = *this;
      ++i_;
      return was;
    }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    const GemmSets* sets_ = nullptr;
    size_t i_ = 0;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }

 private:
  std::vector<GemmShape> gemms_;
  std::vector<size_t> ends_;  // ends_[i]: one past set i's last GEMM in gemms_
};

}  // namespace crest::tuner
