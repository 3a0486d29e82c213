// The f32 element-wise functions the CPU library ops evaluate in f32 vectors (exp, sigmoid,
// silu), their f64 references, and the error of a result in ulp of the correctly rounded value;
// shared by the dense-sample unit test and the exhaustive sweep (test/tools/math_sweep.cpp).
#pragma once

#include "cpu/gemm_kernel.h"
#include "hologram/codegen/cpu.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace hologram::runtime::test {

/// Deterministic sampled inputs: 64-bit xorshift, the same sequence on every platform.
struct XorShift64 {
  uint64_t s;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

struct LibraryFunction {
  const char *name;
  MapKind kind;
  double ulps; ///< the bound (SPEC §3.4, docs/isa.md)
  /// The reference in f64: its error (about 2^-52 relative) is far below an f32 ulp.
  double (*exact)(double);
};

inline const std::vector<LibraryFunction> &library_functions() {
  static const std::vector<LibraryFunction> fns = {
      {"exp", map_kind(isa::MapUnaryOp::Exp), 2, [](double x) { return std::exp(x); }},
      // Exactly 0 once exp(-x) overflows f32 (SPEC §3.4).
      {"sigmoid", map_kind(isa::MapUnaryOp::Sigmoid), 4,
       [](double x) {
         const double e = std::exp(-x);
         return e > std::numeric_limits<float>::max() ? 0.0 : 1.0 / (1.0 + e);
       }},
      {"silu", MapKind::Silu, 4, [](double x) { return x / (1.0 + std::exp(-x)); }},
  };
  return fns;
}

/// The x86 levels (2, 3, 4) this CPU runs: up to the one hologram-cc picks for the host.
inline std::vector<int> runnable_levels() {
  const int best = codegen::host_cpu_level().back() - '0';
  std::vector<int> levels;
  for (int level = 2; level <= best; ++level) levels.push_back(level);
  return levels;
}

/// f32 map `kind` of the library kernels of x86 level `level`.
inline void run_map(int level, MapKind kind, const float *x, float *y, uint64_t n) {
  HG_LEVEL_CALL(level, map, kind, x, y, n);
}

/// |got - want| in ulp of want rounded to T (subnormal spacing below the normal range); a
/// wrong NaN or infinity is infinitely far.
template <typename T>
inline double ulp_error(T got, long double want) { // long double: the row tests' sums
  using L = std::numeric_limits<T>;
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  const T rounded = static_cast<T>(want);
  if (std::isinf(rounded) || std::isinf(got)) return got == rounded ? 0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  const int exponent =
      rounded == 0 ? L::min_exponent - 1 : std::max(std::ilogb(rounded), L::min_exponent - 1);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) /
                             std::ldexp(1.0L, exponent - (L::digits - 1)));
}

} // namespace hologram::runtime::test
