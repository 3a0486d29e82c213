// The seam between the runtime and the optional compiler library, Hologram::jit. The runtime
// never links a code generator: Backend::execute_program asks hologram_jit_compiler(), a weak
// symbol that is null unless the application links Hologram::jit (whose link interface names
// the symbol as undefined, so the linker takes its definition out of the archive).
#pragma once

#include "hologram/codegen/cpu_abi.h"
#include "hologram/codegen/ptx.h"
#include "hologram/codegen/spirv_abi.h"
#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <memory>

namespace hologram::runtime {

/// x86 code linked in memory: `descriptor` is valid while `owner` lives.
struct JitCpuModule {
  std::shared_ptr<const void> owner;
  const hg_cpu_module_desc *descriptor = nullptr;
};

/// What Hologram::jit compiles for the runtime.
struct JitCompiler {
  /// A verified module for a SPIR-V target: words and reflection, every kernel's entry point
  /// and the device library kernels its whole-launch kernels need. InvalidProgram with a
  /// diagnostic at the instruction the target cannot run.
  Expected<codegen::SpirvModule> (*compile_spirv)(const isa::Module &module,
                                                  const codegen::SpirvTarget &target);
  /// A verified module as x86 code for this CPU, at the variant set_cpu_isa and
  /// $HOLOGRAM_CPU_ISA allow (the best level it runs, by default), optimised at -O2 and
  /// linked in memory by LLVM's ORC JIT (no external linker).
  Expected<JitCpuModule> (*compile_cpu)(const isa::Module &module);
  /// A verified module as PTX for a CUDA target, with every kernel's launch ABI (their
  /// parameters are the module's). InvalidProgram at an instruction the back end does not lower.
  Expected<codegen::PtxModule> (*compile_ptx)(const isa::Module &module,
                                              const codegen::PtxTarget &target);
};

} // namespace hologram::runtime

/// Hologram::jit's compilers; the symbol is absent (null) when it is not linked.
extern "C" [[gnu::weak]] const hologram::runtime::JitCompiler *hologram_jit_compiler(void);

namespace hologram::runtime {

/// The linked compiler, or nullptr.
inline const JitCompiler *linked_jit() {
  return hologram_jit_compiler != nullptr ? hologram_jit_compiler() : nullptr;
}

} // namespace hologram::runtime
