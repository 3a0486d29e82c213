// The exception the runtime's C++ API throws: an error code and a message that names the
// object concerned (the C API turns it into a status code and hg_last_error()).
#pragma once

#include "hologram/support/status.h"

#include <stdexcept>
#include <string>

namespace hologram {

class Error : public std::runtime_error {
public:
  Error(ErrorCode code, const std::string &message) : std::runtime_error(message), code_(code) {}
  explicit Error(const Status &s) : Error(s.code(), s.message()) {}
  [[nodiscard]] ErrorCode code() const { return code_; }

private:
  ErrorCode code_;
};

/// Throws Error for a failed status.
inline void throw_if_failed(const Status &s) {
  if (!s.is_ok()) throw Error(s);
}

} // namespace hologram
