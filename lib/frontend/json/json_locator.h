// Where each value and key of a JSON document starts, by JSON Pointer. nlohmann-json parses
// and validates the document but keeps no positions; this index supplies them for
// diagnostics. It runs only on text that nlohmann-json has already accepted.
#pragma once

#include "hologram/support/diagnostics.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hologram::frontend::json {

class JsonLocator {
public:
  explicit JsonLocator(std::string_view text);

  /// Position of the value at `pointer` (or the closest enclosing value that has one).
  [[nodiscard]] SourceLoc value(const std::string &pointer) const;
  /// Position of the key whose value is at `pointer` (falls back to the value).
  [[nodiscard]] SourceLoc key(const std::string &pointer) const;
  /// Line and column of a byte offset.
  [[nodiscard]] SourceLoc at_offset(size_t offset) const;

  /// Escapes a key for use in a JSON Pointer (~ -> ~0, / -> ~1).
  static std::string escape(std::string_view key);

private:
  void parse_value(const std::string &pointer, unsigned depth);
  void skip_value();
  void build_index() const;
  void skip_ws();
  std::string read_string();

  std::string_view text_;
  size_t pos_ = 0;
  mutable bool indexed_ = false; // the index is built on first use, on validated text only
  std::unordered_map<std::string, size_t> values_, keys_;
  std::vector<size_t> line_starts_;
};

} // namespace hologram::frontend::json
