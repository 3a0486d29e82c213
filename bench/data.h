// Deterministic benchmark inputs shared by the CPU and GPU benchmarks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

/// n floats in [lo, hi) from a fixed xorshift sequence; `seed` picks another sequence (two
/// operands of one workload must differ, or a kernel that swaps them would pass its check).
inline std::vector<float> bench_data(size_t n, float lo = -1, float hi = 1, uint64_t seed = 0) {
  std::vector<float> v(n);
  uint64_t s = 0x9E3779B97F4A7C15ull ^ (seed * 0xD1B54A32D192ED03ull);
  for (auto &x : v) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x = lo + (hi - lo) * static_cast<float>(s >> 40) / static_cast<float>(1 << 24);
  }
  return v;
}
