// The SPIR-V outputs of the driver (SPEC §9, §11): a binary module (`--emit=spirv`) or its
// disassembly (`--emit=spirv-asm`) for one Vulkan or OpenCL target.
#pragma once

#include "hologram/codegen/spirv.h"
#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::driver {

struct SpirvOutputOptions {
  std::vector<std::string> targets = {"vulkan1.1"}; ///< exactly one SPIR-V target
  unsigned opt_level = 2;
  bool fast_math = false;
  bool bounds_check = false;
  bool check_div = false;
  std::array<uint32_t, 3> block = {0, 0, 0}; ///< --block; 0 = not given
};

/// The SPIR-V back end's options for `target` from a driver's options (any struct with
/// opt_level, fast_math, bounds_check and check_div).
template <typename Options>
codegen::SpirvOptions spirv_options(const codegen::SpirvTarget &target, const Options &o) {
  codegen::SpirvOptions so;
  so.target = target;
  so.opt_level = o.opt_level;
  so.fast_math = o.fast_math;
  so.bounds_check = o.bounds_check;
  so.check_div = o.check_div;
  so.block = o.block;
  return so;
}

/// Whether `emit` is spirv or spirv-asm.
bool is_spirv_emit(std::string_view emit);

/// Produces the bytes of the `emit` output for `module`. A target that is not a SPIR-V
/// target, or more than one, is an InvalidArgument error.
Expected<std::string> emit_spirv_output(const isa::Module &module,
                                        const SpirvOutputOptions &options, std::string_view emit);

} // namespace hologram::driver
