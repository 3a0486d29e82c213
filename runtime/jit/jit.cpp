// Hologram::jit: the code generators the runtime uses to compile programs at run time
// (Backend::execute_program), through the seam of core/jit_hook.h.
#include "../core/jit_hook.h"

#include "hologram/codegen/spirv.h"

namespace {

hologram::Status compile_spirv(const hologram::isa::Module &module,
                               const hologram::codegen::SpirvTarget &target,
                               hologram::codegen::SpirvModule &out) {
  hologram::codegen::SpirvOptions options;
  options.target = target;
  return hologram::codegen::compile_spirv(module, options, out);
}

constexpr hologram::runtime::JitCompiler kCompiler{&compile_spirv};

} // namespace

extern "C" const hologram::runtime::JitCompiler *hologram_jit_compiler(void) {
  return &kCompiler;
}
