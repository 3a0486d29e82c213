// Lowering of Atlas ISA modules to SPIR-V (SPEC §9): the Shader/GLCompute flavour for Vulkan
// and the Kernel flavour for OpenCL, our own emitter (no detour through GLSL or OpenCL C).
// Every module is validated with SPIRV-Tools for its environment and, from -O1, optimised
// with spirv-opt. The reflection tells a runtime how to bind and launch each kernel.
#pragma once

#include "hologram/codegen/spirv_abi.h"
#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace hologram::codegen {

struct SpirvOptions {
  SpirvTarget target;
  unsigned opt_level = 2;    ///< 0: no spirv-opt; 1-2: a short pass list; 3: its performance passes
  bool fast_math = false;    ///< -ffast-math: the target's own math precision
  bool bounds_check = false; ///< -fbounds-check
  bool check_div = false;    ///< -fcheck-div
  /// --block: the local size of every kernel, a constant of the module (Vulkan) or its
  /// required work-group size (OpenCL); a launch with another is refused. {0, 0, 0}: any.
  std::array<uint32_t, 3> block = {0, 0, 0};
};

/// Lowers a verified module: one SPIR-V module holding one entry point per kernel. An
/// instruction the target cannot run is InvalidProgram with a diagnostic at the instruction
/// (in module.source_name) naming the kernel and the target; a failure of the back end itself
/// (a SPIRV-Tools validation failure) is Internal.
Expected<SpirvModule> compile_spirv(const isa::Module &module, const SpirvOptions &options);

/// SPIR-V assembly as spirv-dis writes it (friendly names, no header comments).
Expected<std::string> disassemble_spirv(const std::vector<uint32_t> &words);
/// Validates `words` for `target`'s environment.
Status validate_spirv(const std::vector<uint32_t> &words, const SpirvTarget &target);

} // namespace hologram::codegen
