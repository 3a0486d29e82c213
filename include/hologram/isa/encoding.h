// The canonical binary encoding of a module and its XXH3-128 content hash (SPEC §3.6).
// Same program and options, same bytes, same hash, on every run and every machine.
#pragma once

#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace hologram::isa {

/// The options that change what a compile produces; they are part of a program's identity.
struct CompileOptions {
  unsigned opt_level = 2;
  bool fast_math = false;
  bool bounds_check = false;
  bool check_div = false;
  bool debug_info = false;
  std::array<uint32_t, 3> block = {0, 0, 0}; ///< --block; 0 = not given
  std::vector<std::string> targets;
  friend bool operator==(const CompileOptions &, const CompileOptions &) = default;
};

/// Encodes a module (source locations and the source name are not part of the encoding).
std::vector<uint8_t> encode_module(const Module &m);
/// Decodes what encode_module wrote; InvalidModule saying what is wrong with damaged input.
Expected<Module> decode_module(std::span<const uint8_t> bytes);
std::vector<uint8_t> encode_options(const CompileOptions &o);

/// What compiled artifacts carry instead of ISA text (CPU module descriptors, bundles): the
/// canonical encoding, length-prefixed, followed by the source location of every kernel,
/// parameter, label and instruction, so errors still name a line. Decoding it is a bounded
/// walk over integers, not a parse.
std::vector<uint8_t> encode_module_with_locations(const Module &m);
/// Decodes what encode_module_with_locations wrote; InvalidModule saying what is wrong with
/// damaged input.
Expected<Module> decode_module_with_locations(std::span<const uint8_t> bytes);

/// A 128-bit content hash.
struct ContentHash {
  uint64_t high = 0;
  uint64_t low = 0;
  [[nodiscard]] std::string hex() const; ///< 32 lower-case hex digits, high part first
  friend bool operator==(const ContentHash &, const ContentHash &) = default;
};

/// XXH3-128 over encode_module(m) followed by encode_options(o).
ContentHash content_hash(const Module &m, const CompileOptions &o = {});

} // namespace hologram::isa
