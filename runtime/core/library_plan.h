// The plan of a whole-launch instruction on a SPIR-V backend: the device library kernels it
// launches, in order, with their geometry and arguments (library_plan.cpp).
#pragma once

#include "hologram/isa/launch.h"
#include "hologram/isa/program.h"
#include "hologram/support/status.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::runtime {

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
  std::string_view role; ///< the operand's name in the instruction table ("y", ...): a literal
};

/// What a plan needs to know of the device (DeviceMemoryBackend fills it in).
struct LibraryDevice {
  /// The most blocks a reduction's first stage may use (at least kMinReduceBlocks): enough to
  /// keep every compute unit of the device busy.
  uint32_t reduce_blocks = 0;
  /// The device's compute units (gemm takes its wide tiles when C has one for each).
  uint64_t compute_units = 0;
  /// Whether f32 gemm may take its wide tiles at all: the device keeps a lane's values in
  /// registers across barriers (DeviceMemoryBackend::keeps_registers_across_barriers).
  bool wide_gemm = false;
};

/// A scratch buffer of a plan.
struct LibraryScratch {
  uint64_t bytes = 0;
  /// Whether it must read as zeros: false where the launches write every byte before any
  /// reads it (a reduction's partial results), so that reused scratch is not zeroed again.
  bool zeroed = true;
};

/// The device launches of one whole-launch instruction, in order.
struct LibraryPlan {
  std::vector<LibraryExtent> extents;
  std::vector<LibraryScratch> scratch;
  std::vector<LibraryLaunch> launches;
  bool has_result = false; ///< reduce_all, dot: the result register's value
  uint32_t result_scratch = 0;
  isa::Type result_type = isa::Type::None; ///< the type stored there (dot: f64)
  /// The schedule the launches follow ("tiled", "row-block", "per-item", "two-stage"), or
  /// "empty" when there is nothing to do; reported by Backend::library_path_counts().
  std::string schedule = "empty";
};

/// The reductions (reduce_all, dot) of a whole-launch kernel whose result need not come back to
/// the host: nothing reads the result register but one `st` of the same type through a buffer
/// parameter, later in the same straight run of instructions (no label and no control transfer
/// between them, no other write of the register), as the value it stores. By the reduction's
/// index in the kernel, that store's. A backend lets the reduction's last launch write where the
/// store puts the value, and the store does nothing more.
std::map<uint32_t, uint32_t> results_stored_on_device(const isa::Kernel &kernel);

/// Plans `inst` (a whole-launch instruction of `kernel`) with register values from `reg`, for
/// `device`. LaunchFailed for sizes the operation rejects (as the reference implementation
/// does).
Status plan_library_op(const isa::Kernel &kernel, const isa::Instruction &inst,
                       const std::function<uint64_t(isa::Reg)> &reg, const LibraryDevice &device,
                       LibraryPlan &plan);

} // namespace hologram::runtime
