// What a kernel's interface needs, in either flavour: which instructions it uses, its launch
// scratch sites, the boundary pool, shared memory and the status buffer (kernel_lowering.h;
// each flavour declares them: vulkan_lowering.cpp, opencl_lowering.cpp).
#include "flavours.h"

namespace hologram::codegen::spirv {

auto KernelLowering::uses(Opcode o) const -> bool {
  return std::any_of(k_.insts.begin(), k_.insts.end(),
                     [&](const Instruction &i) { return i.op == o; });
}

auto KernelLowering::plan_scratch() -> bool {
  if (!scratch_sites_.empty() || info_.scratch_bytes_per_lane) return true;
  uint64_t offset = 0;
  for (uint32_t i = 0; i < k_.insts.size(); ++i) {
    if (k_.insts[i].op != Opcode::PoolAlloc) continue;
    uint64_t size = (k_.insts[i].operands[1].imm + 7) & ~uint64_t{7};
    auto site = static_cast<uint32_t>(scratch_sites_.size() + 1);
    scratch_sites_.emplace(i, ScratchSite{site, offset, k_.insts[i].operands[1].imm});
    offset += size;
  }
  info_.scratch_bytes_per_lane = offset;
  return offset > 0;
}

auto KernelLowering::in_words(const Address &a) -> bool {
  // Reg: an address resolved to a launch scratch allocation (through_register).
  return a.base == AddrBase::Shared || a.base == AddrBase::Class || a.base == AddrBase::Boundary ||
         a.base == AddrBase::Pool || a.base == AddrBase::Reg;
}

auto KernelLowering::uses_boundary() const -> bool {
  if (uses(Opcode::NbrLd) || uses(Opcode::NbrSt)) return true;
  for (const auto &inst : k_.insts)
    for (const auto &opnd : inst.operands)
      if (opnd.kind == OperandKind::Addr &&
          (opnd.addr.base == AddrBase::Class || opnd.addr.base == AddrBase::Boundary))
        return true;
  return false;
}

auto KernelLowering::uses_shared() const -> bool {
  if (k_.shared_bytes > 0) return true;
  for (const auto &inst : k_.insts)
    for (const auto &opnd : inst.operands)
      if (opnd.kind == OperandKind::Addr && opnd.addr.base == AddrBase::Shared) return true;
  return false;
}

auto KernelLowering::needs_status() const -> bool {
  if (o_.bounds_check || o_.check_div) return true;
  // Atlas instructions fail the launch for a class, page or byte out of range.
  for (const auto &inst : k_.insts)
    if (inst.info().family == OpFamily::Atlas && inst.op != Opcode::PhaseGet &&
        inst.op != Opcode::PhaseAdv)
      return true;
  // Register addresses fail the launch for a register that holds none, and an access fails
  // it where its alignment is not proven.
  for (const auto &inst : k_.insts)
    for (const auto &opnd : inst.operands)
      if (opnd.kind == OperandKind::Addr && inst.op != Opcode::Addr &&
          (opnd.addr.base == AddrBase::Reg || !statically_aligned(opnd.addr, inst)))
        return true;
  return false;
}

auto KernelLowering::access_size(const Instruction &inst) -> unsigned {
  return std::max(1u, type_size(inst.type));
}

auto KernelLowering::alignment_needed(const Instruction &inst, const Address &a) -> unsigned {
  const unsigned size = access_size(inst);
  return in_words(a) && inst.info().family != OpFamily::Atomic ? std::min(size, 4u) : size;
}

auto KernelLowering::aligned_by_form(const Address &a, unsigned size) -> bool {
  return (a.index == kNoReg || a.scale % size == 0) && a.disp % static_cast<int64_t>(size) == 0;
}

auto KernelLowering::statically_aligned(const Address &a, const Instruction &inst,
                                        unsigned align) const -> bool {
  const unsigned size = align ? align : alignment_needed(inst, a);
  return aligned_by_form(a, size) ||
         (a.index != kNoReg && a.disp % static_cast<int64_t>(size) == 0 &&
          ranges_.scaled_multiple_of(a.index, Type::U64, a.scale, size));
}

} // namespace hologram::codegen::spirv
