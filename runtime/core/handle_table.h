// A thread-safe table of objects by handle, shared by the backends. Handles are never reused,
// so a stale handle is recognised as freed; objects are held by shared_ptr, so an object freed
// while another thread copies from it stays alive until that copy ends.
#pragma once

#include "hologram/runtime/backend.h"
#include "hologram/runtime/error.h"

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace hologram::runtime {

template <typename T> class HandleTable {
public:
  explicit HandleTable(std::string what) : what_(std::move(what)) {}

  uint64_t insert(std::shared_ptr<T> obj) {
    std::unique_lock lock(mutex_);
    uint64_t id = next_++;
    objects_.emplace(id, std::move(obj));
    return id;
  }

  /// The object of `id`, or Error(InvalidHandle) naming the handle and what is wrong with it.
  std::shared_ptr<T> get(uint64_t id) const {
    std::shared_lock lock(mutex_);
    auto it = objects_.find(id);
    if (it != objects_.end()) return it->second;
    throw Error(ErrorCode::InvalidHandle, describe(id));
  }

  std::shared_ptr<T> remove(uint64_t id) {
    std::unique_lock lock(mutex_);
    auto it = objects_.find(id);
    if (it == objects_.end()) throw Error(ErrorCode::InvalidHandle, describe(id));
    auto obj = std::move(it->second);
    objects_.erase(it);
    return obj;
  }

  size_t size() const {
    std::shared_lock lock(mutex_);
    return objects_.size();
  }

private:
  std::string describe(uint64_t id) const {
    if (id == 0) return what_ + " handle 0 is not a " + what_;
    if (id < next_) return what_ + " #" + std::to_string(id) + " was freed";
    return "unknown " + what_ + " #" + std::to_string(id);
  }

  std::string what_;
  mutable std::shared_mutex mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<T>> objects_;
  uint64_t next_ = 1;
};

/// Whether [offset, offset + bytes) lies in an object of `size` bytes.
inline bool in_range(uint64_t size, uint64_t offset, uint64_t bytes) {
  return offset <= size && bytes <= size - offset;
}

/// Throws Error(OutOfBounds) unless [offset, offset + bytes) lies in an object of `size` bytes.
inline void check_range(std::string_view what, uint64_t id, uint64_t size, uint64_t offset,
                        uint64_t bytes, const char *verb) {
  if (in_range(size, offset, bytes)) return;
  throw Error(ErrorCode::OutOfBounds,
              std::string(verb) + " of " + std::to_string(bytes) + " bytes at offset " +
                  std::to_string(offset) + " is outside " + std::string(what) + " #" +
                  std::to_string(id) + " of " + std::to_string(size) + " bytes");
}

/// The length of the sub-buffer or view [offset, offset + bytes) of buffer #id of `size` bytes
/// (`bytes` KernelArg::kToEnd: to its end). Throws Error(InvalidArgument) for an empty range or an
/// offset that is not a multiple of `alignment` (the device's DeviceInfo::view_alignment), and
/// Error(OutOfBounds) for a range outside the buffer.
inline uint64_t view_bytes(uint64_t id, uint64_t size, uint64_t offset, uint64_t bytes,
                           uint64_t alignment) {
  // Spelled only for an error: this runs for every view argument of every launch.
  auto what = [&] { return "a view of buffer #" + std::to_string(id); };
  if (alignment > 1 && offset % alignment != 0)
    throw Error(ErrorCode::InvalidArgument,
                what() + " starts at byte " + std::to_string(offset) +
                    ", which is not a multiple of " + std::to_string(alignment) +
                    ", the view alignment of this device (DeviceInfo::view_alignment)");
  if (bytes == KernelArg::kToEnd) {
    if (!in_range(size, offset, 0)) check_range("buffer", id, size, offset, 0, what().c_str());
    bytes = size - offset;
  }
  if (bytes == 0)
    throw Error(ErrorCode::InvalidArgument,
                what() + " at offset " + std::to_string(offset) + " holds no bytes");
  if (!in_range(size, offset, bytes))
    check_range("buffer", id, size, offset, bytes, what().c_str());
  return bytes;
}

/// The bytes a buffer argument names in its buffer of `size` bytes: all of them, or its view's
/// (checked as view_bytes checks it).
inline uint64_t arg_view_bytes(const KernelArg &a, uint64_t size, uint64_t alignment) {
  return a.is_view() ? view_bytes(a.handle, size, a.offset, a.bytes, alignment) : size;
}

} // namespace hologram::runtime
