// The Vulkan flavour's structured control flow (flavours.h), region by region: a region (a
// function body or a natural loop) lists its blocks and child loops in reverse post-order,
// which is a topological order of the region once its child loops are collapsed (the verifier
// rejects irreducible graphs). The region's first item runs unconditionally; every later item
// is a selection construct guarded by `cur == item`, where `cur` names the block control goes
// to. A loop is a loop construct whose body is its region; it continues while `cur` names its
// header and breaks otherwise, so exits to any outer block (or outer loop's header) need no
// further structure.
#include "flavours.h"

namespace hologram::codegen::spirv {

auto VulkanLowering::find_loops(uint32_t entry) -> void {
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

auto VulkanLowering::find_foldable(uint32_t entry) -> void {
  folded_.assign(cfg_.blocks.size(), false);
  std::vector<bool> folding(cfg_.blocks.size(), false);
  for (uint32_t bb : rpo_) {
    const isa::BasicBlock &b = cfg_.blocks[bb];
    if (b.end == b.begin || folding[bb]) continue; // a folded block's branch stays a branch
    const Instruction &last = k_.insts[b.end - 1];
    if (last.op != Opcode::Bra || !last.guard.present || b.succs.size() != 2) continue;
    const uint32_t t = b.succs[0], f = b.succs[1];
    if (t == f || !in_fn_[f] || f == entry) continue;
    const isa::BasicBlock &fb = cfg_.blocks[f];
    if (fb.preds.size() != 1 || fb.succs.size() != 1 || fb.succs[0] != t || fb.ends_in_exit ||
        fb.end == fb.begin || fb.end - fb.begin > kMaxFolded || innermost_[f] != innermost_[bb])
      continue;
    bool pure = true;
    for (uint32_t i = fb.begin; i < fb.end && pure; ++i) {
      const Instruction &inst = k_.insts[i];
      const bool divides = inst.op == Opcode::Div || inst.op == Opcode::Rem;
      pure = inst.info().pure() && !(divides && o_.check_div);
    }
    folded_[f] = folding[f] = pure;
  }
}

auto VulkanLowering::emit_region(int region) -> void {
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
    if (folded_[bb]) continue; // emitted by the branch in front of it
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

auto VulkanLowering::emit_loop(int l) -> void {
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

} // namespace hologram::codegen::spirv
