// Whole-launch operations (SPEC §3.8) for compiled CPU kernels: gemm and batched_gemm run the
// packed, register-blocked GEMM; row-wise (softmax, norms), element-wise (map, map2, silu,
// gelu, axpy) and reducing (reduce_all, dot) operations are split over the thread pool into
// ranges that the reference implementation runs; the rest run the reference as a whole.
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

/// Runs instruction `inst` of `kernel`; `reg` reads a source register's bits.
Status run_cpu_launch_op(const isa::Kernel &kernel, const isa::Instruction &inst,
                         std::span<const CpuArg> args, const std::function<uint64_t(isa::Reg)> &reg,
                         uint64_t &result, const CpuLibraryEnv &env);

} // namespace hologram::runtime
