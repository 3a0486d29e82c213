// See ptx_output.h.
#include "hologram/driver/ptx_output.h"

#include "hologram/codegen/ptx.h"

namespace hologram::driver {

namespace {
constexpr const char *kCudaTargets = "cuda-sm_70, cuda-sm_75, cuda-sm_80, cuda-sm_86, cuda-sm_89 "
                                     "or cuda-sm_90";
} // namespace

bool is_ptx_emit(std::string_view emit) {
  return emit == "ptx";
}

Expected<std::string> emit_ptx_output(const isa::Module &module, const PtxOutputOptions &o) {
  if (o.targets.size() != 1)
    return Status{ErrorCode::InvalidArgument,
                  std::string("--emit=ptx writes one module: name exactly one target (") +
                      kCudaTargets + ")"};
  auto target = codegen::parse_ptx_target(o.targets[0]);
  if (!target)
    return Status{ErrorCode::InvalidArgument, "--emit=ptx needs a CUDA target, not '" +
                                                  o.targets[0] + "' (" + kCudaTargets + ")"};
  auto m = compile_ptx_for(module, *target, o);
  if (!m) return m.status();
  return std::move(m->text);
}

} // namespace hologram::driver
