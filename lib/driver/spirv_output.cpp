#include "hologram/driver/spirv_output.h"

#include "hologram/codegen/spirv.h"

#include <cstring>

namespace hologram::driver {

bool is_spirv_emit(std::string_view emit) {
  return emit == "spirv" || emit == "spirv-asm";
}

Expected<std::string> emit_spirv_output(const isa::Module &module, const SpirvOutputOptions &o,
                                        std::string_view emit) {
  if (o.targets.size() != 1)
    return Status{ErrorCode::InvalidArgument,
                  "--emit=" + std::string(emit) +
                      " writes one module: name exactly one target "
                      "(vulkan1.1, vulkan1.2, vulkan1.3, opencl1.2, opencl2.0 or opencl3.0)"};
  auto target = codegen::parse_spirv_target(o.targets[0]);
  if (!target)
    return Status{ErrorCode::InvalidArgument,
                  "--emit=" + std::string(emit) + " needs a SPIR-V target, not '" + o.targets[0] +
                      "' (vulkan1.1, vulkan1.2, vulkan1.3, opencl1.2, opencl2.0 or opencl3.0)"};
  auto m = codegen::compile_spirv(module, spirv_options(*target, o));
  if (!m) return m.status();
  if (emit == "spirv-asm") return codegen::disassemble_spirv(m->words);
  std::string bytes(m->words.size() * 4, '\0');
  std::memcpy(bytes.data(), m->words.data(), bytes.size());
  return bytes;
}

} // namespace hologram::driver
