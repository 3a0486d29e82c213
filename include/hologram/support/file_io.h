// Reading inputs (a path or "-" for standard input) and writing outputs atomically
// (a temporary file in the same directory, then rename), so no half-written file remains.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hologram {

/// Reads a whole file, or standard input for "-"; nullopt with `error` set on failure.
std::optional<std::string> read_file(const std::string &path, std::string *error);
/// Writes `data` to `path` atomically ("-" writes standard output); false with `error` set.
bool write_file_atomic(const std::string &path, std::string_view data, std::string *error);

} // namespace hologram
