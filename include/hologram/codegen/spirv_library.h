// Whole-launch instructions on the SPIR-V backends (SPEC §3.8, §9): each library op, map,
// map2 and reduce_all is run as one or more device kernels written in the Atlas ISA itself
// (a tiled gemm with shared memory, row-wise softmax and norms with workgroup reductions,
// two-stage reductions, element-wise kernels), lowered by the SPIR-V back end like any
// kernel. A whole-launch kernel's own scalar code runs on the host (the runtime's
// interpreter), which plans the device launches of each instruction with the values of its
// registers. compile_spirv adds the device kernels a module needs as entry points; their
// names start with "__hg_".
#pragma once

#include "hologram/isa/launch.h"
#include "hologram/isa/program.h"
#include "hologram/support/status.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hologram::codegen {

/// Whether `name` is one of the device library kernels' names.
bool is_spirv_library_kernel(std::string_view name);

/// The device kernels a whole-launch kernel's instructions need, each once, in first use
/// order. InvalidProgram naming the instruction when one cannot run on a SPIR-V device, or
/// when the kernel's scalar part touches memory (it runs on the host).
Status spirv_library_kernels(const isa::Kernel &whole_launch, std::vector<isa::Kernel> &out);

/// One argument of a planned device launch.
struct LibraryArg {
  enum class Kind { Param, Scratch, Scalar };
  Kind kind = Kind::Scalar;
  uint32_t index = 0; ///< Param: the whole-launch kernel's parameter; Scratch: plan.scratch
  isa::Type type = isa::Type::None; ///< Scalar
  uint64_t bits = 0;                ///< Scalar
};

struct LibraryLaunch {
  std::string kernel; ///< a device library kernel
  LaunchConfig launch;
  std::vector<LibraryArg> args;
};

/// How a buffer parameter must be sized for the instruction (checked before anything runs).
struct LibraryExtent {
  uint32_t param = 0;
  uint64_t elements = 0; ///< UINT64_MAX: more than any buffer holds
  std::string role;      ///< "operand y", ...
};

/// The device launches of one whole-launch instruction, in order.
struct LibraryPlan {
  std::vector<LibraryExtent> extents;
  std::vector<uint64_t> scratch; ///< bytes of each zero-filled scratch buffer
  std::vector<LibraryLaunch> launches;
  bool has_result = false; ///< reduce_all, dot: the result register's value
  uint32_t result_scratch = 0;
  isa::Type result_type = isa::Type::None; ///< the type stored there (dot: f64)
  /// The schedule the launches follow ("tiled", "row-block", "per-item", "two-stage"), or
  /// "empty" when there is nothing to do; reported by Backend::library_path_counts().
  std::string schedule = "empty";
};

/// Plans `inst` (a whole-launch instruction of `kernel`) with register values from `reg`.
/// LaunchFailed for sizes the operation rejects (as the reference implementation does).
Status plan_spirv_library_op(const isa::Kernel &kernel, const isa::Instruction &inst,
                             const std::function<uint64_t(isa::Reg)> &reg, LibraryPlan &plan);

} // namespace hologram::codegen
