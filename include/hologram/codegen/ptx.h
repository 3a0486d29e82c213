// Lowering of Atlas ISA modules to PTX for CUDA devices through LLVM 19's NVPTX target
// (SPEC §9.4): one SIMT thread per lane, every kernel an `.entry` of the same name.
//
// The kernel ABI (parameters, the status buffer) is ptx_abi.h's.
//
// This is the first step of the CUDA back end (issue 16): an instruction it does not lower yet
// is an InvalidProgram error at that instruction, naming it; nothing is lowered approximately.
#pragma once

#include "hologram/codegen/ptx_abi.h"
#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::codegen {

struct PtxOptions {
  PtxTarget target;
  unsigned opt_level = 2;
  bool fast_math = false;
  bool bounds_check = false; ///< -fbounds-check: an access outside its region fails the launch
  bool check_div = false;    ///< -fcheck-div: integer division by zero fails the launch
};

struct PtxModule {
  std::string text; ///< PTX
  std::vector<PtxKernelInfo> kernels;
};

/// The PTX of a verified module and how to launch each kernel. The same input and options give
/// byte-identical output. An instruction the back end does not lower is InvalidProgram at that
/// instruction; a failure of the back end itself is Internal.
Expected<PtxModule> compile_ptx(const isa::Module &module, const PtxOptions &options);

} // namespace hologram::codegen
