// The Vulkan flavour's structured control flow (flavours.h), region by region: a region (a
// function body or a natural loop) lists its blocks and child loops in reverse post-order,
// which is a topological order of the region once its child loops are collapsed (the verifier
// rejects irreducible graphs). The region's first item runs unconditionally; a later item is a
// selection construct guarded by `cur == item`, where `cur` names the block control goes to,
// unless it is the only place control can be going (then it runs unguarded: a chain of blocks
// and loops stays straight-line code). A loop is a loop construct whose body is its region: a
// block of the loop's own region that leaves it branches to the construct's merge block (a
// break) or, for the back edge, to its continue block, so the rest of the body runs only for
// the lanes still in it; an inner loop's exit past this loop goes through `cur`, and the loop
// continues while `cur` names its header and breaks otherwise.
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

auto VulkanLowering::item_targets(uint32_t bb, int child, std::vector<uint32_t> &out) const
    -> void {
  auto add = [&](uint32_t from) {
    for (uint32_t s : cfg_.blocks[from].succs) {
      if (folded_[s]) s = cfg_.blocks[s].succs[0]; // runs inside `from`, then goes on
      if (child < 0 || !loops_[static_cast<size_t>(child)].body.count(s)) out.push_back(s);
    }
  };
  if (child < 0)
    add(bb);
  else
    for (uint32_t b : loops_[static_cast<size_t>(child)].body) add(b);
}

auto VulkanLowering::emit_region(int region) -> void {
  bool first = true;
  // Where control may go after the items emitted so far: the blocks and loops of this region
  // still to come, and whether it may leave the region (a break, or the loop's back edge).
  // An item that is the only place control can be going needs no `cur ==` guard: so the
  // chain of blocks and loops a kernel usually is becomes straight-line code, whose values
  // (constants above all) the driver's compiler sees without a select on `cur`.
  std::set<uint32_t> pending;
  bool may_leave = false;
  std::vector<uint32_t> targets;
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
      if (child >= 0) {
        emit_loop(child);
      } else {
        emitting_ = bb;
        emit_block(bb);
        emitting_ = UINT32_MAX;
      }
    };
    if (first) {
      emit_item();
      first = false;
    } else {
      if (!b_.in_block()) b_.begin_block(b_.fresh()); // unreachable rest of a region
      if (!may_leave && pending.size() == 1 && *pending.begin() == bb)
        emit_item();
      else
        if_then(ieq(b_.load_local(u32t(), cur_), cu32(bb)), emit_item);
    }
    pending.erase(bb);
    targets.clear();
    item_targets(bb, child, targets);
    for (uint32_t t : targets) {
      const bool inside = region < 0 || (t != loops_[static_cast<size_t>(region)].header &&
                                         loops_[static_cast<size_t>(region)].body.count(t));
      if (inside)
        pending.insert(t);
      else if (child >= 0)
        may_leave = true; // an inner loop's exit past this loop goes through `cur`
      // else a block of this loop breaks or continues directly (direct_target)
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
  frames_.push_back({l, merge, cont});
  emit_region(l);
  frames_.pop_back();
  if (b_.in_block())
    b_.terminate(Op::OpBranchConditional,
                 {ieq(b_.load_local(u32t(), cur_), cu32(header)), cont, merge});
  b_.begin_block(cont);
  b_.terminate(Op::OpBranch, {head});
  b_.begin_block(merge);
}

} // namespace hologram::codegen::spirv
