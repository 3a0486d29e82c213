// The SPIR-V lowering's functions, blocks and control instructions: branches, loops, calls
// and returns, in either flavour's control flow (kernel_lowering.h).
#include "flavours.h"

namespace hologram::codegen::spirv {

auto KernelLowering::emit_function(uint32_t entry, bool is_kernel) -> void {
  is_kernel_fn_ = is_kernel;
  begin_function(entry, is_kernel);
  compute_specials();
  // Blocks, dominators and natural loops of this function.
  rpo_ = reverse_post_order(cfg_, entry);
  in_fn_.assign(cfg_.blocks.size(), false);
  for (uint32_t bb : rpo_) in_fn_[bb] = true;
  emit_body(entry);
  if (b_.in_block()) b_.terminate(Op::OpReturn, {});
  b_.end_function();
}

auto KernelLowering::emit_exit() -> void {
  if (!is_kernel_fn_ && exited_) store(exited_, ctrue());
  b_.terminate(Op::OpReturn, {});
}

auto KernelLowering::emit_block(uint32_t bb) -> void {
  const BasicBlock &block = cfg_.blocks[bb];
  for (uint32_t i = block.begin; i < block.end; ++i) {
    const Instruction &inst = k_.insts[i];
    inst_index_ = i;
    try {
      if (inst.info().ends_block()) {
        emit_control(as_family<ControlOpcode>(inst.op), inst, block);
        return;
      }
      emit_instruction(inst);
    } catch (const Unsupported &e) {
      if (e.loc.line != 0) throw;
      throw Unsupported(e.what(), inst.loc);
    }
  }
  if (block.ends_in_exit || block.succs.empty())
    emit_exit();
  else
    go_to(block.succs[0]);
}

auto KernelLowering::label_block(const Instruction &inst) -> uint32_t {
  for (const auto &opnd : inst.operands)
    if (opnd.kind == OperandKind::Label)
      return cfg_.block_of[std::min<uint32_t>(k_.labels.at(opnd.index).target,
                                              static_cast<uint32_t>(k_.insts.size()))];
  return cfg_.block_of[k_.insts.size()];
}

auto KernelLowering::emit_control(ControlOpcode which, const Instruction &inst,
                                  const BasicBlock &block) -> void {
  uint32_t next = cfg_.block_of[block.end];
  switch (which) {
  case ControlOpcode::Bra:
    if (!inst.guard.present) {
      go_to(label_block(inst));
    } else {
      Id p = read_pred(inst.guard.pred);
      if (inst.guard.negate) p = lnot(p);
      branch(p, label_block(inst), next);
    }
    return;
  case ControlOpcode::Loop: {
    Reg r = inst.operands[0].index;
    Id c = read_reg(r, Type::U32);
    Id more = op(Op::OpUGreaterThan, boolt(), {c, cu32(0)});
    write_reg(r, Type::U32, sel(u32t(), more, op(Op::OpISub, u32t(), {c, cu32(1)}), c));
    branch(more, label_block(inst), next);
    return;
  }
  case ControlOpcode::Call: {
    Words call{fn_ids_.at(block.call_target)};
    for (Id arg : call_arguments()) call.push_back(arg);
    b_.op(Op::OpFunctionCall, b_.t_void(), call);
    if_then(load(boolt(), exited_), [&] { b_.terminate(Op::OpReturn, {}); });
    go_to(next);
    return;
  }
  case ControlOpcode::Ret: b_.terminate(Op::OpReturn, {}); return;
  case ControlOpcode::Exit: emit_exit(); return;
  }
}

} // namespace hologram::codegen::spirv
