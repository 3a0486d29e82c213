// The launch geometry of SPEC §3.2 and §10: a grid of blocks of lanes in three dimensions.
#pragma once

#include <cstdint>

namespace hologram {

/// Three extents; a zero extent is a misuse reported by every launch.
struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  [[nodiscard]] uint64_t count() const { return uint64_t{x} * y * z; }
  friend bool operator==(const Dim3 &, const Dim3 &) = default;
};

/// Grid (in blocks) and block (in lanes) dimensions plus per-block shared memory in bytes.
struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  uint32_t shared_memory = 0;

  /// One lane per element for n elements: grid = ceil(n / block), block = (block, 1, 1).
  static LaunchConfig linear(uint64_t n, uint32_t block = 256) {
    LaunchConfig c;
    if (block == 0) block = 1;
    c.block = {block, 1, 1};
    c.grid = {static_cast<uint32_t>((n + block - 1) / block), 1, 1};
    return c;
  }
  /// A 2-D grid covering width x height lanes with blocks of bx x by lanes.
  static LaunchConfig grid_2d(uint32_t width, uint32_t height, uint32_t bx = 16, uint32_t by = 16) {
    LaunchConfig c;
    if (bx == 0) bx = 1;
    if (by == 0) by = 1;
    c.block = {bx, by, 1};
    c.grid = {(width + bx - 1) / bx, (height + by - 1) / by, 1};
    return c;
  }
  [[nodiscard]] uint64_t lanes_per_block() const { return block.count(); }
  [[nodiscard]] uint64_t total_lanes() const { return grid.count() * block.count(); }
};

} // namespace hologram
