// The operands of gemm and batched_gemm (SPEC §3.8) read once, by their names in the
// instruction table: the reference interpreter, the SPIR-V planner and the CPU fast path all
// take them from here, so none of them counts positions.
#pragma once

#include "hologram/isa/program.h"

#include <cstddef>
#include <cstdint>
#include <functional>

namespace hologram::isa {

/// C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b], row-major with leading dimensions;
/// gemm is batched_gemm with one batch and zero strides.
struct GemmOperands {
  size_t c = 0, a = 0, b = 0; ///< operand positions of the buffers C, A and B
  uint64_t batch = 1, m = 0, n = 0, k = 0;
  uint64_t lda = 0, ldb = 0, ldc = 0;
  uint64_t stride_a = 0, stride_b = 0, stride_c = 0;
  uint64_t alpha_bits = 0, beta_bits = 0; ///< scalars of the instruction's type
  bool trans_a = false, trans_b = false;
};

/// Reads the operands of `inst` (a gemm or batched_gemm); `reg` gives a register's bits.
GemmOperands gemm_operands(const Instruction &inst, const std::function<uint64_t(Reg)> &reg);

} // namespace hologram::isa
