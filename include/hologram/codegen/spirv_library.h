// Whole-launch instructions on the SPIR-V backends (SPEC §3.8, §9): each library op, map,
// map2 and reduce_all is run as one or more device kernels written in the Atlas ISA itself
// (a tiled gemm with shared memory, row-wise softmax and norms with workgroup reductions,
// two-stage reductions, element-wise kernels), lowered by the SPIR-V back end like any
// kernel. A whole-launch kernel's own scalar code runs on the host (the runtime's
// interpreter), which plans the device launches of each instruction with the values of its
// registers (runtime/core/library_plan.h). compile_spirv adds the device kernels a module
// needs as entry points; their names start with kSpirvLibraryPrefix (spirv_abi.h).
#pragma once

#include "hologram/codegen/spirv.h"
#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::codegen {

/// The device kernels the instructions of `module`'s whole-launch kernels need, each once, in
/// first use order. InvalidProgram, with a diagnostic at the instruction, when one cannot run
/// on a SPIR-V device or when a kernel's scalar part touches memory (it runs on the host).
Expected<std::vector<isa::Kernel>> spirv_library_kernels(const isa::Module &module);

/// Every device library kernel: each whole-launch instruction of the table at each of its
/// types (storage types aside) and sub-operations. The build compiles them all for every
/// SPIR-V target (hologram-spirv-library-check), so none fails in a user's compile.
Expected<std::vector<isa::Kernel>> spirv_library_all();

/// What a code generator may assume of every launch of a device library kernel and should plan
/// its registers for: the block the runtime's plans always give it ({0, 0, 0}: they pick one
/// per launch), and how many of its blocks should fit on a compute unit at once (0: no wish).
struct LibraryLaunchBounds {
  std::array<uint32_t, 3> block = {0, 0, 0};
  uint32_t blocks_per_unit = 0;
};
/// The bounds of device library kernel `name`: gemm's blocks of 16x16 lanes, two (wide shape)
/// or three (narrow) of them on a compute unit, the norms' blocks of 256 lanes eight of them,
/// so that their registers leave room for them.
LibraryLaunchBounds spirv_library_launch_bounds(std::string_view name);

/// A module of `kernels`, which may be device library kernels (compile_spirv refuses their
/// names in a user's module); for the build's check of the library.
Expected<SpirvModule> compile_spirv_library(const std::vector<isa::Kernel> &kernels,
                                            const SpirvOptions &options);

} // namespace hologram::codegen
