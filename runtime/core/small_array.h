// A launch's per-argument arrays without an allocation per launch: up to N elements live
// inline (on the caller's stack), more go to the heap. Elements are default-initialised, so
// for plain types (pointers, integers) they are indeterminate until the caller assigns them:
// zeroing them first was a third of an empty launch (three `rep stos` per launch).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>

namespace hologram::runtime {

template <typename T, size_t N> class SmallArray {
  static_assert(std::is_trivially_destructible_v<T>, "elements are never destroyed");

public:
  /// n default-initialised elements.
  explicit SmallArray(size_t n) : size_(n) {
    if (n > N) {
      heap_ = std::make_unique_for_overwrite<T[]>(n);
      data_ = heap_.get();
    } else {
      data_ = reinterpret_cast<T *>(inline_);
      std::uninitialized_default_construct_n(data_, n);
    }
  }
  SmallArray(const SmallArray &) = delete;
  SmallArray &operator=(const SmallArray &) = delete;

  T *data() { return data_; }
  const T *data() const { return data_; }
  size_t size() const { return size_; }
  T &operator[](size_t i) { return data_[i]; }
  const T &operator[](size_t i) const { return data_[i]; }
  std::span<const T> span() const { return {data_, size_}; }

private:
  alignas(T) std::byte inline_[N * sizeof(T)];
  std::unique_ptr<T[]> heap_;
  T *data_;
  size_t size_;
};

} // namespace hologram::runtime
