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
/// Writes `data` to `path` atomically ("-" writes standard output). A symbolic link keeps
/// naming the new file, and a replaced file keeps its permissions. /dev/stdout, /dev/stderr,
/// /dev/fd/N and /proc/self/fd/N are written through that descriptor; another path that names a
/// device, FIFO or socket (/dev/null) is written in place, not replaced; a directory is refused.
/// InvalidArgument naming the path and the system's reason when it cannot; nothing is left behind
/// then.
Status write_file_atomic(const std::string &path, std::string_view data);
/// Whether `a` and `b` are one existing file (through links or other spellings of the path);
/// false where either is "-" or does not exist. A tool refuses an output that is one of its
/// inputs: writing it would lose the input.
bool same_file(const std::string &a, const std::string &b);

} // namespace hologram
