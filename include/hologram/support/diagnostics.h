// The diagnostics engine shared by every front end and compiler stage: errors and warnings
// with a file, line, column, optional JSON Pointer and notes, printed as text or JSON.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace hologram {

/// A position in a source file; line and column are 1-based, 0 means "unknown".
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;
  friend bool operator==(const SourceLoc &, const SourceLoc &) = default;
};

enum class Severity { Error, Warning, Note };

/// One diagnostic as reported by a stage.
struct Diagnostic {
  Severity severity = Severity::Error;
  std::string file;
  SourceLoc loc;
  std::string pointer; ///< JSON Pointer of the offending node, for JSON inputs.
  std::string kernel;  ///< the kernel it is about, for errors after the front end ("" if none)
  std::string message;
  std::vector<std::string> notes;
};

enum class DiagnosticsFormat { Text, Json };

/// Collects diagnostics; stages report into it and return an empty result on error.
class DiagnosticEngine {
public:
  /// Reports an error at `loc` in `file`.
  void error(std::string file, SourceLoc loc, std::string message,
             std::vector<std::string> notes = {});
  /// Reports a warning; with warnings_as_errors() it counts as an error.
  void warning(std::string file, SourceLoc loc, std::string message,
               std::vector<std::string> notes = {});
  /// Reports a fully built diagnostic.
  void report(Diagnostic d);

  [[nodiscard]] bool has_errors() const { return error_count_ > 0; }
  [[nodiscard]] size_t error_count() const { return error_count_; }
  [[nodiscard]] const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  void set_warnings_as_errors(bool on) { werror_ = on; }
  void clear();

  /// Prints every diagnostic in the given format (text: `file:line:col: error: msg`).
  void print(std::ostream &os, DiagnosticsFormat format = DiagnosticsFormat::Text) const;
  /// All diagnostics as text, one per line (handy in tests and error messages).
  [[nodiscard]] std::string to_string() const;

private:
  std::vector<Diagnostic> diags_;
  size_t error_count_ = 0;
  bool werror_ = false;
};

/// Formats one diagnostic as `file:line:col: severity: message` plus indented notes.
std::string format_diagnostic(const Diagnostic &d);

/// The candidate closest to `word` by edit distance, or "" when none is close enough.
std::string closest_match(const std::string &word, const std::vector<std::string> &candidates);

/// A character of the input as a message names it: "character '$'" when it is printable
/// ASCII, else "byte 0x00" (a control character or a byte of a multi-byte sequence, which
/// printed as it is would show as nothing or as a broken character).
std::string describe_char(char c);

} // namespace hologram
