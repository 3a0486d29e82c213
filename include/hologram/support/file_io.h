// Reading inputs (a path or "-" for standard input) and writing outputs atomically
// (a temporary file in the same directory, then rename), so no half-written file remains.
#pragma once

#include "hologram/support/expected.h"

#include <string>
#include <string_view>

namespace hologram {

/// Reads a whole file, or standard input for "-". InvalidArgument naming the path and the
/// system's reason when it cannot.
Expected<std::string> read_file(const std::string &path);
/// Writes `data` to `path` atomically ("-" writes standard output). InvalidArgument naming
/// the path and the system's reason when it cannot; nothing is left behind then.
Status write_file_atomic(const std::string &path, std::string_view data);

} // namespace hologram
