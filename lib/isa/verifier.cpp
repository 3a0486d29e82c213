// The verifier's entry points: runs the rule families in order on each kernel.
#include "hologram/isa/verifier.h"

#include "verify_context.h"

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

void instruction_uses(const Instruction &inst, std::vector<RegAccess> &uses) {
  uses.clear();
  const auto &row = inst.info();
  if (inst.guard.present) uses.push_back({true, inst.guard.pred, Type::Pred});
  auto add_addr = [&](const Address &a) {
    if (a.base == AddrBase::Reg) uses.push_back({false, a.base_id, Type::U64});
    if (a.index != kNoReg) uses.push_back({false, a.index, Type::U64});
  };
  for (size_t i = 0; i < inst.operands.size() && i < row.num_operands(); ++i) {
    const Operand &op = inst.operands[i];
    switch (row.role(i)) {
    case OperandRole::SrcT: uses.push_back({false, op.index, inst.type}); break;
    case OperandRole::SrcPred: uses.push_back({true, op.index, Type::Pred}); break;
    case OperandRole::SrcU32:
    case OperandRole::LoopCounter: uses.push_back({false, op.index, Type::U32}); break;
    case OperandRole::SrcU64: uses.push_back({false, op.index, Type::U64}); break;
    case OperandRole::SrcF64: uses.push_back({false, op.index, Type::F64}); break;
    case OperandRole::CvtSrc: uses.push_back({false, op.index, inst.type2}); break;
    case OperandRole::Address: add_addr(op.addr); break;
    case OperandRole::RegWindow: {
      uint64_t n = i + 1 < inst.operands.size() ? inst.operands[i + 1].imm : 0;
      for (uint64_t k = 0; k < n && op.index + k < kFirstSpecialReg; ++k)
        uses.push_back({false, static_cast<Reg>(op.index + k), inst.type});
      break;
    }
    case OperandRole::BufferParam:
    case OperandRole::Count:
    case OperandRole::CvtDst:
    case OperandRole::DstPred:
    case OperandRole::DstT:
    case OperandRole::DstU32:
    case OperandRole::DstU64:
    case OperandRole::Label:
    case OperandRole::LiteralT:
    case OperandRole::MemParam:
    case OperandRole::OptBufferParam:
    case OperandRole::ScalarParam: break;
    }
  }
}

void instruction_defs(const Instruction &inst, std::vector<RegAccess> &defs) {
  defs.clear();
  const auto &row = inst.info();
  for (size_t i = 0; i < inst.operands.size() && i < row.num_operands(); ++i) {
    const Operand &op = inst.operands[i];
    switch (row.role(i)) {
    case OperandRole::DstT: defs.push_back({false, op.index, inst.type}); break;
    case OperandRole::DstPred: defs.push_back({true, op.index, Type::Pred}); break;
    case OperandRole::DstU32:
    case OperandRole::LoopCounter: defs.push_back({false, op.index, Type::U32}); break;
    case OperandRole::DstU64: defs.push_back({false, op.index, Type::U64}); break;
    case OperandRole::CvtDst: defs.push_back({false, op.index, inst.type}); break;
    case OperandRole::Address:
    case OperandRole::BufferParam:
    case OperandRole::Count:
    case OperandRole::CvtSrc:
    case OperandRole::Label:
    case OperandRole::LiteralT:
    case OperandRole::MemParam:
    case OperandRole::OptBufferParam:
    case OperandRole::RegWindow:
    case OperandRole::ScalarParam:
    case OperandRole::SrcF64:
    case OperandRole::SrcPred:
    case OperandRole::SrcT:
    case OperandRole::SrcU32:
    case OperandRole::SrcU64: break;
    }
  }
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
