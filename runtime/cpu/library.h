// Whole-launch operations (SPEC §3.8) for compiled CPU kernels: gemm and batched_gemm run the
// packed, register-blocked GEMM; row-wise (softmax, norms), element-wise (map, map2, silu,
// gelu, axpy) and reducing (reduce_all, dot) operations are split over the thread pool into
// ranges that the reference implementation runs; the rest run the reference as a whole.
#pragma once

#include "cpu_module.h"

#include <functional>

namespace hologram::runtime {

/// Runs instruction `inst` of `kernel`; `reg` reads a source register's bits.
Status run_cpu_launch_op(const isa::Kernel &kernel, const isa::Instruction &inst,
                         std::span<const CpuArg> args, const std::function<uint64_t(isa::Reg)> &reg,
                         uint64_t &result);

} // namespace hologram::runtime
