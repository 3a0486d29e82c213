// A bundle read from a file for a backend's load_module (internal to the runtime; the CPU
// backend and the SPIR-V backends share it).
#pragma once

#include "hologram/artifact/bundle.h"
#include "hologram/runtime/error.h"
#include "hologram/support/file_io.h"

#include <string>
#include <utility>

namespace hologram::runtime {

/// The bundle at `path`, read and checked; throws InvalidModule saying why it cannot be read
/// or is not a valid bundle.
inline artifact::Bundle read_bundle_file(const std::string &path) {
  auto bytes = read_file(path);
  if (!bytes) throw Error(ErrorCode::InvalidModule, bytes.message());
  auto bundle = artifact::read_bundle(std::move(*bytes));
  if (!bundle)
    throw Error(ErrorCode::InvalidModule,
                "'" + path + "' is not a valid bundle: " + bundle.message());
  return std::move(*bundle);
}

/// The file a bundle was compiled from, for the messages of failed launches: its one source,
/// or "" when it has several (their kernels' lines do not say which).
inline std::string bundle_source(const artifact::Bundle &b) {
  return b.sources.size() == 1 ? b.sources.front() : std::string();
}

} // namespace hologram::runtime
