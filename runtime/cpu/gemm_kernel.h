// The CPU GEMM: C = alpha * op(A) * op(B) + beta * C, row-major with leading dimensions, for
// f32 and f64, and the other vectorised kernels of the CPU library ops. Panels of A and B are
// packed so the micro-kernel streams them from cache; the micro-kernel keeps an MR x NR tile of C
// in vector registers (register blocking). The file gemm_kernel.cpp is compiled once per x86 level;
// cpu_gemm runs the level it is given and spreads blocks of C over the thread pool.
#pragma once

#include "hologram/isa/opcode.h"

#include <cstddef>
#include <cstdint>

namespace hologram::runtime {

/// Element-wise operations the level kernels vectorise: the values of isa::MapUnaryOp, and
/// these activations after them.
enum class MapKind : uint8_t { Silu = 64, Gelu, GeluTanh };
constexpr MapKind map_kind(isa::MapUnaryOp op) {
  return static_cast<MapKind>(op);
}
using MapKind2 = isa::MapBinaryOp;

template <typename T> struct GemmArgs {
  bool trans_a = false, trans_b = false;
  uint64_t m = 0, n = 0, k = 0;
  T alpha = 1, beta = 0;
  const T *a = nullptr;
  uint64_t lda = 0;
  const T *b = nullptr;
  uint64_t ldb = 0;
  T *c = nullptr;
  uint64_t ldc = 0;
};

/// C = alpha * op(A) * op(B) + beta * C with the kernels of x86 level `level` (2, 3 or 4).
void cpu_gemm(const GemmArgs<float> &g, int level);
void cpu_gemm(const GemmArgs<double> &g, int level);
/// Sum of x[i] * y[i], or of x[i] when y is null, vectorised and reassociated.
float cpu_sum(const float *x, const float *y, uint64_t n, int level);
double cpu_sum(const double *x, const double *y, uint64_t n, int level);

// The kernels of each x86 level (level_kernels.inc lists them once).
namespace gemm_v2 {
#include "level_kernels.inc"
} // namespace gemm_v2
namespace gemm_v3 {
#include "level_kernels.inc"
} // namespace gemm_v3
namespace gemm_v4 {
#include "level_kernels.inc"
} // namespace gemm_v4

} // namespace hologram::runtime

/// Calls fn of x86 level `level` (2, 3 or 4), from inside namespace hologram::runtime.
#define HG_LEVEL_CALL(level, fn, ...)                                                              \
  ((level) == 4   ? gemm_v4::fn(__VA_ARGS__)                                                       \
   : (level) == 3 ? gemm_v3::fn(__VA_ARGS__)                                                       \
                  : gemm_v2::fn(__VA_ARGS__))
