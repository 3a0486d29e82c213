// The Atlas structures of SPEC §4: the 96 classes, byte <-> class numbering, the Atlas graph
// (mirror, neighbours, unity) and the boundary pool geometry.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace hologram::atlas {

inline constexpr uint32_t kNumClasses = 96;
inline constexpr uint32_t kPagesPerClass = 48;
inline constexpr uint32_t kBytesPerPage = 256;
inline constexpr uint32_t kClassBytes = kPagesPerClass * kBytesPerPage;   // 12,288
inline constexpr uint32_t kBoundaryPoolBytes = kNumClasses * kClassBytes; // 1,179,648
inline constexpr uint32_t kPhaseModulus = 768;
inline constexpr uint32_t kMaxNeighbours = 5;

/// The coordinates (h2, d, l) of a class: class = 24*h2 + 8*d + l.
struct ClassCoords {
  uint32_t h2, d, l;
};

constexpr ClassCoords class_coords(uint32_t c) {
  return {c / 24, (c % 24) / 8, c % 8};
}
constexpr uint32_t class_of(ClassCoords k) {
  return 24 * k.h2 + 8 * k.d + k.l;
}

/// Sigil numbering: byte -> class.
constexpr uint32_t byte_to_class(uint32_t byte) {
  uint32_t h2 = (byte >> 6) & 3, d = ((byte >> 4) & 3) % 3, l = (byte >> 1) & 7;
  return 24 * h2 + 8 * d + l;
}
/// Canonical byte of a class: 64*h2 + 16*d + 2*l.
constexpr uint32_t class_to_byte(uint32_t c) {
  auto k = class_coords(c);
  return 64 * k.h2 + 16 * k.d + 2 * k.l;
}
/// Mirror flips d (1 <-> 2; 0 fixed).
constexpr uint32_t mirror(uint32_t c) {
  auto k = class_coords(c);
  k.d = k.d == 0 ? 0 : 3 - k.d;
  return class_of(k);
}
/// Unity classes: d = 0 and l = 0 (0, 24, 48, 72).
constexpr bool is_unity(uint32_t c) {
  auto k = class_coords(c);
  return k.d == 0 && k.l == 0;
}

/// The neighbours of a class in ascending order (R+-1, T+-1, and M when d != 0).
struct Neighbours {
  std::array<uint32_t, kMaxNeighbours> items{};
  uint32_t count = 0;
};
Neighbours neighbours(uint32_t c);

/// bound.map: class*12288 + page*256 + byte (the caller checks class < 96, page < 48).
constexpr uint64_t bound_map(uint32_t c, uint32_t page, uint32_t byte) {
  return uint64_t{c} * kClassBytes + uint64_t{page} * kBytesPerPage + byte;
}

} // namespace hologram::atlas
