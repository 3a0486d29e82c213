// The PTX output of the driver (SPEC §9.4, §11): `--emit=ptx` for one CUDA target.
#pragma once

#include "hologram/codegen/ptx.h"
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

/// The PTX of `module` for `target` under a driver's options (any struct with opt_level,
/// fast_math, bounds_check, check_div and block); InvalidArgument for --block, which the CUDA
/// back end does not take yet.
template <typename Options>
Expected<codegen::PtxModule> compile_ptx_for(const isa::Module &module,
                                             const codegen::PtxTarget &target, const Options &o) {
  if (o.block[0])
    return Status{ErrorCode::InvalidArgument, "target '" + target.name +
                                                  "': --block is not supported by the CUDA back "
                                                  "end yet"};
  codegen::PtxOptions po;
  po.target = target;
  po.opt_level = o.opt_level;
  po.fast_math = o.fast_math;
  po.bounds_check = o.bounds_check;
  po.check_div = o.check_div;
  return codegen::compile_ptx(module, po);
}

/// Whether `emit` is ptx.
bool is_ptx_emit(std::string_view emit);

/// The PTX text of `module` for the one CUDA target of `options`. InvalidArgument for another
/// target or several, and for the options the CUDA back end does not take yet.
Expected<std::string> emit_ptx_output(const isa::Module &module, const PtxOutputOptions &options);

} // namespace hologram::driver
