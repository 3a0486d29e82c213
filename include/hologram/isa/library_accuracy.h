// How far a backend's f32 library operation (SPEC §3.8) may be from the interpreter's f64
// reference, for every backend. docs/isa.md ("Accuracy of library operations") derives each
// bound; the conformance tests use these values as their tolerances, so the two cannot drift.
// f64 rows sum in plain f64 (the reference's order, over ranges of rows): their bound is the
// summation bound, a few ulp of the row's magnitude (docs/isa.md).
#pragma once

#include <cstdint>

namespace hologram::isa::accuracy {

/// 2^-24, the unit roundoff of f32.
inline constexpr double kF32Unit = 0x1p-24;

/// softmax: every element within this many ulp, however long the row and however spread its
/// values (the CPU evaluates exp of the exact difference and sums with compensation).
inline constexpr uint32_t kSoftmaxUlps = 16;

/// log_softmax: within this many ulp, or within kLogSoftmaxAbs: the row sum's relative error
/// enters log(sum) as an absolute error, which dominates outputs near 0.
inline constexpr uint32_t kLogSoftmaxUlps = 16;
inline constexpr double kLogSoftmaxAbs = 16 * kF32Unit;

/// rmsnorm: every element within this many ulp.
inline constexpr uint32_t kRmsNormUlps = 16;

/// layernorm: |y - ref| <= kLayerNormUnits * 2^-24 * (|gamma| * inv * (|x - mean| + mean|x|) +
/// |beta|), inv = 1/sqrt(var + eps): the terms the result is computed from, since x - mean
/// and the add of beta cancel.
inline constexpr double kLayerNormUnits = 16;

/// gemm and batched_gemm: |C - ref| <= gemm_units(K) * u * (|alpha| * sum_k |a_ik * b_kj| +
/// |beta * c_ij|), u the unit roundoff of the element type (2^-24 for f32): the K products are
/// summed in the element type (each step rounded once), alpha, beta and C combined and the
/// result rounded once; K + 1 roundings, counted twice for the blocked sums' other orders.
inline constexpr double gemm_units(uint64_t k) {
  return 2 * (static_cast<double>(k) + 2);
}

} // namespace hologram::isa::accuracy
