// See ptx_output.h.
#include "hologram/driver/ptx_output.h"

#include "hologram/codegen/ptx.h"

namespace hologram::driver {

bool is_ptx_emit(std::string_view emit) {
  return emit == "ptx";
}

Expected<std::string> emit_ptx_output(const isa::Module &module, const PtxOutputOptions &o) {
  if (o.targets.size() != 1)
    return Status{ErrorCode::InvalidArgument,
                  "--emit=ptx writes one module: name exactly one target (" +
                      codegen::ptx_target_names() + ")"};
  auto target = codegen::parse_ptx_target(o.targets[0]);
  if (!target)
    return Status{ErrorCode::InvalidArgument, "--emit=ptx needs a CUDA target, not '" +
                                                  o.targets[0] + "' (" +
                                                  codegen::ptx_target_names() + ")"};
  auto m = compile_ptx_for(module, *target, o);
  if (!m) return m.status();
  return std::move(m->text);
}

} // namespace hologram::driver
