// Lowering of Atlas ISA modules to PTX for CUDA devices through LLVM 19's NVPTX target
// (SPEC §9.4): one SIMT thread per lane, every kernel an `.entry` of the same name.
//
// Kernel parameters, in the kernel's order: a buffer or pool is a global pointer followed by
// its size in bytes (u64); a scalar is its value (f16/bf16 as their 16 bits). Shared memory is
// one dynamic array in address space 3: the launch gives the kernel's static bytes plus its
// own. The code reads the launch geometry from PTX's special registers (%tid, %ntid, %ctaid,
// %nctaid).
//
// This is the first step of the CUDA back end (issue 16): an instruction it does not lower yet
// is an InvalidProgram error at that instruction, naming it; nothing is lowered approximately.
#pragma once

#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <optional>
#include <string>
#include <string_view>

namespace hologram::codegen {

/// A CUDA target: `cuda-sm_70` ... `cuda-sm_90`.
struct PtxTarget {
  std::string name; ///< "cuda-sm_80"
  unsigned sm = 0;  ///< 80
  /// The PTX ISA version the module declares (the oldest that has every feature used and
  /// that LLVM 19 accepts for this architecture).
  unsigned ptx_version = 0;
};

/// Whether `name` looks like a CUDA target ("cuda-..."), known or not.
bool is_ptx_target_name(std::string_view name);
/// Parses cuda-sm_70, sm_75, sm_80, sm_86, sm_89 or sm_90; nullopt otherwise.
std::optional<PtxTarget> parse_ptx_target(std::string_view name);

struct PtxOptions {
  PtxTarget target;
  unsigned opt_level = 2;
  bool fast_math = false;
};

/// The PTX text of a verified module. The same input and options give byte-identical output.
/// An instruction the back end does not lower is InvalidProgram at that instruction; a
/// failure of the back end itself is Internal.
Expected<std::string> compile_ptx(const isa::Module &module, const PtxOptions &options);

} // namespace hologram::codegen
