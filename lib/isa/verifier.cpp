// The verifier's entry points: runs the rule families in order on each kernel.
#include "hologram/isa/verifier.h"

#include "verify_context.h"

#include "hologram/support/unreachable.h"

namespace hologram::isa {

namespace detail {

std::string VerifyContext::describe_block(uint32_t b) const {
  const auto &bb = cfg.blocks[b];
  std::string where = bb.begin < kernel.insts.size()
                          ? "line " + std::to_string(kernel.insts[bb.begin].loc.line)
                          : "the end of the kernel";
  for (const auto &l : kernel.labels)
    if (l.target == bb.begin) return "@" + l.name + " (" + where + ")";
  return where;
}

} // namespace detail

Type read_type(const Instruction &inst, OperandRole role) {
  switch (role) {
  case OperandRole::SrcT: return inst.type;
  case OperandRole::SrcPred: return Type::Pred;
  case OperandRole::SrcU32:
  case OperandRole::LoopCounter: return Type::U32;
  case OperandRole::SrcU64: return Type::U64;
  case OperandRole::SrcF64: return Type::F64;
  case OperandRole::CvtSrc: return inst.type2;
  case OperandRole::DstT:
  case OperandRole::DstPred:
  case OperandRole::DstU32:
  case OperandRole::DstU64:
  case OperandRole::CvtDst:
  case OperandRole::LiteralT:
  case OperandRole::Count:
  case OperandRole::Label:
  case OperandRole::ScalarParam:
  case OperandRole::BufferParam:
  case OperandRole::OptBufferParam:
  case OperandRole::MemParam:
  case OperandRole::Address:
  case OperandRole::RegWindow: return Type::None;
  }
  unreachable_enum("OperandRole");
}

Type write_type(const Instruction &inst, OperandRole role) {
  switch (role) {
  case OperandRole::DstT:
  case OperandRole::CvtDst: return inst.type;
  case OperandRole::DstPred: return Type::Pred;
  case OperandRole::DstU32:
  case OperandRole::LoopCounter: return Type::U32;
  case OperandRole::DstU64: return Type::U64;
  case OperandRole::SrcT:
  case OperandRole::SrcPred:
  case OperandRole::SrcU32:
  case OperandRole::SrcU64:
  case OperandRole::SrcF64:
  case OperandRole::CvtSrc:
  case OperandRole::LiteralT:
  case OperandRole::Count:
  case OperandRole::Label:
  case OperandRole::ScalarParam:
  case OperandRole::BufferParam:
  case OperandRole::OptBufferParam:
  case OperandRole::MemParam:
  case OperandRole::Address:
  case OperandRole::RegWindow: return Type::None;
  }
  unreachable_enum("OperandRole");
}

void instruction_uses(const Instruction &inst, std::vector<RegAccess> &uses) {
  uses.clear();
  const auto &row = inst.info();
  if (inst.guard.present) uses.push_back({true, inst.guard.pred, Type::Pred});
  for (size_t i = 0; i < inst.operands.size() && i < row.num_operands(); ++i) {
    const Operand &op = inst.operands[i];
    const OperandRole role = row.role(i);
    if (role == OperandRole::Address) {
      if (op.addr.base == AddrBase::Reg) uses.push_back({false, op.addr.base_id, Type::U64});
      if (op.addr.index != kNoReg) uses.push_back({false, op.addr.index, Type::U64});
    } else if (role == OperandRole::RegWindow) {
      uint64_t n = i + 1 < inst.operands.size() ? inst.operands[i + 1].imm : 0;
      for (uint64_t k = 0; k < n && op.index + k < kFirstSpecialReg; ++k)
        uses.push_back({false, static_cast<Reg>(op.index + k), inst.type});
    } else if (const Type t = read_type(inst, role); t != Type::None) {
      uses.push_back({t == Type::Pred, op.index, t});
    }
  }
}

void instruction_defs(const Instruction &inst, std::vector<RegAccess> &defs) {
  defs.clear();
  const auto &row = inst.info();
  for (size_t i = 0; i < inst.operands.size() && i < row.num_operands(); ++i)
    if (const Type t = write_type(inst, row.role(i)); t != Type::None)
      defs.push_back({t == Type::Pred, inst.operands[i].index, t});
}

bool verify_kernel(const Kernel &k, const std::string &file, DiagnosticEngine &diags,
                   const VerifyOptions &opts) {
  detail::VerifyContext cx{k, file, diags, opts, {}, 0};
  detail::verify_operands(cx);
  if (cx.errors) return false;
  cx.cfg = build_cfg(k);
  detail::verify_control(cx);
  if (cx.errors) return false;
  detail::verify_registers(cx);
  detail::verify_pools(cx);
  if (cx.errors) return false;
  detail::verify_uniformity(cx);
  return cx.errors == 0;
}

bool verify_module(const Module &m, DiagnosticEngine &diags, const VerifyOptions &opts) {
  bool ok = true;
  if (m.kernels.empty()) {
    diags.error(m.source_name, {}, "the module contains no kernel");
    return false;
  }
  for (const auto &k : m.kernels) ok = verify_kernel(k, m.source_name, diags, opts) && ok;
  return ok;
}

} // namespace hologram::isa
