// The PTX output of the driver (SPEC §9.4, §11): `--emit=ptx` for one CUDA target.
#pragma once

#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::driver {

struct PtxOutputOptions {
  std::vector<std::string> targets; ///< exactly one CUDA target
  unsigned opt_level = 2;
  bool fast_math = false;
  bool bounds_check = false;
  bool check_div = false;
  std::array<uint32_t, 3> block = {0, 0, 0}; ///< --block; 0 = not given
};

/// Whether `emit` is ptx.
bool is_ptx_emit(std::string_view emit);

/// The PTX text of `module` for the one CUDA target of `options`. InvalidArgument for another
/// target or several, and for the options the CUDA back end does not take yet.
Expected<std::string> emit_ptx_output(const isa::Module &module, const PtxOutputOptions &options);

} // namespace hologram::driver
