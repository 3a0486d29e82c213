// Expected<T>: a value, or the Status saying why there is none. The return type of every
// library function that produces a value and can fail (std::expected is C++23).
#pragma once

#include "hologram/support/status.h"

#include <type_traits>
#include <utility>
#include <variant>

namespace hologram {

template <class T> class [[nodiscard]] Expected {
  static_assert(!std::is_same_v<T, Status>, "a Status is returned as a Status");

public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  /// An error; an ok Status here is a bug in the caller, kept as an Internal error.
  Expected(Status error) : v_(std::in_place_index<1>, std::move(error)) {
    if (std::get<1>(v_).is_ok())
      v_.template emplace<1>(ErrorCode::Internal, "an Expected made from an ok Status");
  }

  [[nodiscard]] bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T &operator*() & { return std::get<0>(v_); }
  const T &operator*() const & { return std::get<0>(v_); }
  T &&operator*() && { return std::get<0>(std::move(v_)); }
  T *operator->() { return &std::get<0>(v_); }
  const T *operator->() const { return &std::get<0>(v_); }

  /// Ok when there is a value, else the error.
  [[nodiscard]] Status status() const { return has_value() ? Status{} : std::get<1>(v_); }
  /// The error's message ("" when there is a value).
  [[nodiscard]] std::string message() const {
    return has_value() ? std::string() : std::get<1>(v_).message();
  }

private:
  std::variant<T, Status> v_;
};

} // namespace hologram
