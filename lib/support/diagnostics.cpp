// Diagnostics engine: collection, text and JSON rendering, and "did you mean" suggestions.
#include "hologram/support/diagnostics.h"
#include "hologram/support/status.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>
#include <sstream>

namespace hologram {

namespace {
std::string_view severity_name(Severity s) {
  switch (s) {
  case Severity::Error: return "error";
  case Severity::Warning: return "warning";
  case Severity::Note: return "note";
  }
  return "error";
}

size_t edit_distance(const std::string &a, const std::string &b) {
  // Optimal string alignment distance: insertions, deletions, substitutions, transpositions.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}
} // namespace

void DiagnosticEngine::error(std::string file, SourceLoc loc, std::string message,
                             std::vector<std::string> notes) {
  report({Severity::Error, std::move(file), loc, {}, {}, std::move(message), std::move(notes)});
}

void DiagnosticEngine::warning(std::string file, SourceLoc loc, std::string message,
                               std::vector<std::string> notes) {
  report({Severity::Warning, std::move(file), loc, {}, {}, std::move(message), std::move(notes)});
}

void DiagnosticEngine::report(Diagnostic d) {
  if (d.severity == Severity::Warning && werror_) d.severity = Severity::Error;
  if (d.severity == Severity::Error) ++error_count_;
  diags_.push_back(std::move(d));
}

void DiagnosticEngine::clear() {
  diags_.clear();
  error_count_ = 0;
}

std::string format_diagnostic(const Diagnostic &d) {
  std::ostringstream os;
  os << (d.file.empty() ? "<input>" : d.file);
  if (d.loc.line) os << ':' << d.loc.line << ':' << d.loc.col;
  os << ": " << severity_name(d.severity) << ": " << d.message;
  if (!d.pointer.empty()) os << " [at " << d.pointer << ']';
  for (const auto &n : d.notes) os << "\n  note: " << n;
  return os.str();
}

void DiagnosticEngine::print(std::ostream &os, DiagnosticsFormat format) const {
  if (format == DiagnosticsFormat::Text) {
    for (const auto &d : diags_) os << format_diagnostic(d) << '\n';
    return;
  }
  for (const auto &d : diags_) {
    nlohmann::json j = {{"severity", severity_name(d.severity)},
                        {"file", d.file},
                        {"line", d.loc.line},
                        {"column", d.loc.col},
                        {"message", d.message}};
    if (!d.pointer.empty()) j["pointer"] = d.pointer;
    if (!d.kernel.empty()) j["kernel"] = d.kernel;
    if (!d.notes.empty()) j["notes"] = d.notes;
    os << j.dump() << '\n';
  }
}

std::string DiagnosticEngine::to_string() const {
  std::ostringstream os;
  print(os);
  return os.str();
}

std::string closest_match(const std::string &word, const std::vector<std::string> &candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto &c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

} // namespace hologram

namespace hologram {

const char *error_code_name(ErrorCode code) {
  switch (code) {
  case ErrorCode::Ok: return "ok";
  case ErrorCode::InvalidArgument: return "invalid_argument";
  case ErrorCode::InvalidProgram: return "invalid_program";
  case ErrorCode::OutOfBounds: return "out_of_bounds";
  case ErrorCode::DivisionByZero: return "division_by_zero";
  case ErrorCode::LaunchFailed: return "launch_failed";
  case ErrorCode::StepLimitExceeded: return "step_limit_exceeded";
  case ErrorCode::InvalidHandle: return "invalid_handle";
  case ErrorCode::OutOfMemory: return "out_of_memory";
  case ErrorCode::BackendUnavailable: return "backend_unavailable";
  case ErrorCode::InvalidModule: return "invalid_module";
  case ErrorCode::Internal: return "internal";
  }
  return "unknown";
}

std::string Status::describe() const {
  if (!where_) return message_;
  return format_diagnostic(*where_);
}

void report(DiagnosticEngine &diags, const Status &status, const std::string &file) {
  if (status.is_ok()) return;
  if (const Diagnostic *d = status.diagnostic()) {
    Diagnostic copy = *d;
    if (copy.file.empty()) copy.file = file;
    diags.report(std::move(copy));
    return;
  }
  diags.error(file, {}, status.message());
}

std::string describe_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("character '") + c + "'";
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
}

} // namespace hologram
