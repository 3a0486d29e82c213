// A value-or-error result used at library boundaries that do not throw (the interpreter,
// the loaders); the runtime's C++ API converts it into hologram::Error.
#pragma once

#include <string>
#include <utility>

namespace hologram {

/// Error categories shared by the interpreter and the runtime (and mirrored by the C API).
enum class ErrorCode {
  Ok = 0,
  InvalidArgument,    ///< wrong argument count, kind or type; bad launch configuration
  InvalidProgram,     ///< the program failed verification
  OutOfBounds,        ///< a memory access outside its buffer, pool or window
  DivisionByZero,     ///< integer division by zero under -fcheck-div
  LaunchFailed,       ///< any other fault during a launch (barrier misuse, call depth...)
  StepLimitExceeded,  ///< the interpreter's step budget ran out
  InvalidHandle,      ///< an unknown or freed buffer, pool or backend handle
  OutOfMemory,        ///< an allocation the device cannot satisfy
  BackendUnavailable, ///< no backend matches a preference, or it failed to start
  InvalidModule,      ///< a compiled module or bundle that cannot be loaded
  Internal,           ///< a bug in hologram itself
};

/// A stable name for an error code ("out_of_bounds").
const char *error_code_name(ErrorCode code);

/// Ok, or an error code with a message naming the object concerned.
class Status {
public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return {}; }

  [[nodiscard]] bool is_ok() const { return code_ == ErrorCode::Ok; }
  explicit operator bool() const { return is_ok(); }
  [[nodiscard]] ErrorCode code() const { return code_; }
  [[nodiscard]] const std::string &message() const { return message_; }

private:
  ErrorCode code_ = ErrorCode::Ok;
  std::string message_;
};

} // namespace hologram
