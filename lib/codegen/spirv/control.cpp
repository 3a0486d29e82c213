// The SPIR-V lowering's functions and structured control flow: natural loops, regions and
// selection merges, branches, calls and returns (kernel_lowering.h).
#include "kernel_lowering.h"

namespace hologram::codegen::spirv {

auto KernelLowering::emit_function(uint32_t entry, bool is_kernel) -> void {
  is_kernel_fn_ = is_kernel;
  Id void_t = b_.t_void();
  if (!cl_) {
    b_.begin_function(void_t, b_.t_function(void_t, {}), fn_ids_.at(entry));
    b_.begin_block(b_.fresh());
  } else {
    // The kernel takes its arguments and owns the registers; a subroutine takes them all.
    std::vector<Id> params;
    for (const auto &c : context_)
      if (!c.var_type || !is_kernel) params.push_back(c.type);
    b_.begin_function(void_t, b_.t_function(void_t, params), fn_ids_.at(entry));
    for (const auto &c : context_)
      if (!c.var_type || !is_kernel) {
        *c.ref = b_.function_param(c.type);
        if (is_kernel) b_.name(*c.ref, c.name);
      }
    b_.begin_block(b_.fresh());
    if (is_kernel)
      for (const auto &c : context_) {
        if (!c.var_type) continue;
        *c.ref = b_.local_variable(c.var_type);
        store(*c.ref, b_.c_null(c.var_type));
      }
  }
  // Registers become SSA values unless subroutines share them through memory, or the
  // control flow is the ISA's own (OpenCL), not the structured form the builder follows.
  b_.set_ssa_locals(!cl_ && cfg_.function_entries.size() == 1);
  compute_specials();
  if (!cl_) cur_ = b_.local_variable(u32t());

  // Blocks, dominators and natural loops of this function.
  rpo_ = reverse_post_order(cfg_, entry);
  in_fn_.assign(cfg_.blocks.size(), false);
  for (uint32_t bb : rpo_) in_fn_[bb] = true;
  if (cl_) {
    // Kernel modules need no structure: the ISA's own blocks and branches, the control
    // flow OpenCL compilers expect (PoCL's work-group loops handle barriers there).
    labels_.clear();
    for (uint32_t bb : rpo_) labels_[bb] = b_.fresh();
    b_.terminate(Op::OpBranch, {labels_.at(rpo_.front())});
    for (uint32_t bb : rpo_) {
      b_.begin_block(labels_.at(bb));
      emit_block(bb);
      if (b_.in_block()) b_.terminate(Op::OpUnreachable, {});
    }
  } else {
    find_loops(entry);
    emit_region(-1);
  }
  if (b_.in_block()) b_.terminate(Op::OpReturn, {});
  b_.end_function();
}

auto KernelLowering::jump(uint32_t bb) -> void {
  auto it = labels_.find(bb);
  if (it == labels_.end()) return emit_exit();
  b_.terminate(Op::OpBranch, {it->second});
}

auto KernelLowering::jump_if(Id c, uint32_t then_bb, uint32_t else_bb) -> void {
  Id t = b_.fresh(), e = b_.fresh();
  b_.terminate(Op::OpBranchConditional, {c, t, e});
  b_.begin_block(t);
  jump(then_bb);
  b_.begin_block(e);
  jump(else_bb);
}

auto KernelLowering::find_loops(uint32_t entry) -> void {
  loops_.clear();
  std::vector<uint32_t> rpo_index(cfg_.blocks.size(), UINT32_MAX);
  for (uint32_t i = 0; i < rpo_.size(); ++i) rpo_index[rpo_[i]] = i;
  std::vector<const NaturalLoop *> mine;
  for (const NaturalLoop &l : natural_loops_)
    if (l.function_entry == entry) mine.push_back(&l);
  auto first_latch = [&](const NaturalLoop *l) {
    const uint32_t u = l->latches.front();
    const auto &succs = cfg_.blocks[u].succs;
    const auto at = std::find(succs.begin(), succs.end(), l->header) - succs.begin();
    return std::pair(rpo_index[u], at);
  };
  std::sort(mine.begin(), mine.end(), [&](const NaturalLoop *a, const NaturalLoop *b) {
    return first_latch(a) < first_latch(b);
  });
  for (const NaturalLoop *l : mine) {
    Loop loop{l->header, {}, -1};
    for (uint32_t b = 0; b < l->body.size(); ++b)
      if (l->body[b]) loop.body.insert(b);
    loops_.push_back(std::move(loop));
  }
  for (size_t i = 0; i < loops_.size(); ++i) {
    size_t best = SIZE_MAX;
    for (size_t j = 0; j < loops_.size(); ++j)
      if (j != i && loops_[j].body.count(loops_[i].header) &&
          loops_[j].body.size() > loops_[i].body.size() &&
          (best == SIZE_MAX || loops_[j].body.size() < loops_[best].body.size()))
        best = j;
    loops_[i].parent = best == SIZE_MAX ? -1 : static_cast<int>(best);
  }
  innermost_.assign(cfg_.blocks.size(), -1);
  for (uint32_t bb : rpo_) {
    int best = -1;
    for (size_t j = 0; j < loops_.size(); ++j)
      if (loops_[j].body.count(bb) &&
          (best < 0 || loops_[j].body.size() < loops_[static_cast<size_t>(best)].body.size()))
        best = static_cast<int>(j);
    innermost_[bb] = best;
  }
}

auto KernelLowering::emit_region(int region) -> void {
  bool first = true;
  for (uint32_t bb : rpo_) {
    int inner = innermost_[bb];
    bool is_block = inner == region;
    int child = -1;
    if (!is_block) {
      if (inner < 0) continue;
      // A child loop of this region starts at its header.
      int l = inner;
      while (l >= 0 && loops_[static_cast<size_t>(l)].parent != region)
        l = loops_[static_cast<size_t>(l)].parent;
      if (l < 0 || loops_[static_cast<size_t>(l)].header != bb) continue;
      child = l;
    }
    if (region >= 0 && !loops_[static_cast<size_t>(region)].body.count(bb)) continue;
    auto emit_item = [&] {
      if (child >= 0)
        emit_loop(child);
      else
        emit_block(bb);
    };
    if (first) {
      emit_item();
      first = false;
    } else {
      if (!b_.in_block()) b_.begin_block(b_.fresh()); // unreachable rest of a region
      if_then(ieq(b_.load_local(u32t(), cur_), cu32(bb)), emit_item);
    }
  }
}

auto KernelLowering::emit_loop(int l) -> void {
  uint32_t header = loops_[static_cast<size_t>(l)].header;
  Id head = b_.fresh(), body = b_.fresh(), cont = b_.fresh(), merge = b_.fresh();
  b_.terminate(Op::OpBranch, {head});
  b_.begin_block(head);
  b_.op_void(Op::OpLoopMerge, {merge, cont, 0});
  b_.terminate(Op::OpBranch, {body});
  b_.begin_block(body);
  emit_region(l);
  if (b_.in_block())
    b_.terminate(Op::OpBranchConditional,
                 {ieq(b_.load_local(u32t(), cur_), cu32(header)), cont, merge});
  b_.begin_block(cont);
  b_.terminate(Op::OpBranch, {head});
  b_.begin_block(merge);
}

auto KernelLowering::go_to(uint32_t block) -> void {
  if (cl_) return jump(block);
  b_.store_local(cur_, cu32(block));
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
      if (cl_) return jump_if(p, label_block(inst), next);
      b_.store_local(cur_, sel(u32t(), p, cu32(label_block(inst)), cu32(next)));
    }
    return;
  case ControlOpcode::Loop: {
    Reg r = inst.operands[0].index;
    Id c = read_reg(r, Type::U32);
    Id more = op(Op::OpUGreaterThan, boolt(), {c, cu32(0)});
    write_reg(r, Type::U32, sel(u32t(), more, op(Op::OpISub, u32t(), {c, cu32(1)}), c));
    if (cl_) return jump_if(more, label_block(inst), next);
    b_.store_local(cur_, sel(u32t(), more, cu32(label_block(inst)), cu32(next)));
    return;
  }
  case ControlOpcode::Call: {
    Words call{fn_ids_.at(block.call_target)};
    for (const auto &c : context_) call.push_back(*c.ref);
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
