// Whole-launch operations (SPEC §3.8) for compiled CPU kernels: gemm and batched_gemm run the
// packed, register-blocked GEMM; row-wise (softmax, norms), element-wise (map, map2, silu,
// gelu, axpy) and reducing (reduce_all, dot) operations run vectorised kernels or are split
// over the thread pool into ranges that the reference implementation runs; the rest run the
// reference as a whole. Element-wise chains run fused (fused_chain.cpp).
#pragma once

#include "../core/library_paths.h"
#include "cpu_module.h"

#include <functional>

namespace hologram::runtime {

/// Where whole-launch operations run: the x86 level of the vectorised kernels (that of the
/// module variant the dispatcher chose, so forcing dispatch down forces these down too) and
/// where the schedule that ran is counted (may be null).
struct CpuLibraryEnv {
  int level = 2;
  LibraryPathCounter *paths = nullptr;
};

/// The x86 level (2, 3 or 4) of the library kernels for a variant that needs `features`
/// (comma-separated, as in hg_cpu_module_desc::variant_features).
int library_level(std::string_view features);

/// What running whole-launch instructions ended with: ok, or the error of the instruction at
/// index `failed` of the kernel.
struct [[nodiscard]] LaunchOpsOutcome {
  Status status;
  uint32_t failed = 0;
};

/// Runs whole-launch instructions [first, first + count) of `kernel` for generated code
/// (hg_cpu_launch_op_fn): one instruction, or an element-wise chain (isa::elementwise_chains),
/// fused range by range when the launch's arrays give that the data effect of running them one
/// after another (fused_chain.cpp). `regs` holds the bits of their operands, one instruction's
/// after another's; `result` receives the value of a last reduce_all or dot.
LaunchOpsOutcome run_cpu_launch_ops(const isa::Kernel &kernel, uint32_t first, uint32_t count,
                                    std::span<const CpuArg> args, const uint64_t *regs,
                                    uint64_t &result, const CpuLibraryEnv &env);

/// Runs instruction `inst` of `kernel`; `reg` reads a source register's bits.
Status run_cpu_launch_op(const isa::Kernel &kernel, const isa::Instruction &inst,
                         std::span<const CpuArg> args, const std::function<uint64_t(isa::Reg)> &reg,
                         uint64_t &result, const CpuLibraryEnv &env);

} // namespace hologram::runtime
