// The error value of every library boundary that does not throw: Status (ok, or a code and a
// message) and, through expected.h, Expected<T>. A compiler stage's error about a place in
// the program carries that place as a Diagnostic, which the caller reports through its
// DiagnosticEngine; the runtime's C++ API converts a Status into hologram::Error.
#pragma once

#include "hologram/support/diagnostics.h"

#include <memory>
#include <string>
#include <utility>

namespace hologram {

/// Error categories shared by the compiler, the interpreter and the runtime (and mirrored by
/// the C API).
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

/// Ok, or an error code with a message naming the object concerned. Discarding one is a
/// compile warning (an error under HOLOGRAM_WERROR).
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  /// An error about a place in a program (a kernel, an instruction, its source location):
  /// `where.message` is the message, and the caller reports `where` as a diagnostic.
  Status(ErrorCode code, Diagnostic where)
      : code_(code), message_(where.message),
        where_(std::make_shared<const Diagnostic>(std::move(where))) {}
  static Status ok() { return {}; }

  [[nodiscard]] bool is_ok() const { return code_ == ErrorCode::Ok; }
  explicit operator bool() const { return is_ok(); }
  [[nodiscard]] ErrorCode code() const { return code_; }
  [[nodiscard]] const std::string &message() const { return message_; }
  /// The place in the program this error is about, or nullptr.
  [[nodiscard]] const Diagnostic *diagnostic() const { return where_.get(); }
  /// The message with its place, as one diagnostic prints it (`file:line:col: error: ...`
  /// and notes), or the bare message when it has no place.
  [[nodiscard]] std::string describe() const;

private:
  ErrorCode code_ = ErrorCode::Ok;
  std::string message_;
  std::shared_ptr<const Diagnostic> where_;
};

/// Reports an error Status into `diags`: its own diagnostic when it has one (with `file`
/// filled in when the stage did not know it), else an error at no location of `file`.
void report(DiagnosticEngine &diags, const Status &status, const std::string &file = "");

} // namespace hologram
