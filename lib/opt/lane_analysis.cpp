// Blocks, reconvergence order and divergence analysis for SPMD code generation. See
// lane_analysis.h. The order matters only for efficiency (lanes that wait at a block with a
// higher rank run later), so every kernel gets a valid order, irreducible or not; the
// divergence analysis is conservative (a slot it cannot prove uniform is varying).
#include "hologram/opt/lane_analysis.h"

#include "hologram/isa/accesses.h"

#include <algorithm>
#include <map>
#include <queue>

namespace hologram::opt {

using namespace isa;

namespace {

void build_blocks(const Kernel &k, LaneAnalysis &a) {
  const auto n = static_cast<uint32_t>(k.insts.size());
  std::vector<bool> leader(n + 1, false);
  leader[0] = true;
  for (const auto &l : k.labels)
    if (l.target <= n) leader[l.target] = true;
  for (uint32_t i = 0; i < n; ++i)
    if (k.insts[i].info().ends_lane_block()) leader[i + 1] = true;
  a.block_of.assign(n + 1, kExitBlock);
  for (uint32_t i = 0; i < n || (n == 0 && i == 0); ++i) {
    if (leader[i]) a.blocks.push_back({i, i, {}, kExitBlock});
    a.blocks.back().end = std::min(i + 1, n);
    if (i < n) a.block_of[i] = static_cast<uint32_t>(a.blocks.size() - 1);
    if (n == 0) break;
  }
  for (auto &b : a.blocks) {
    if (b.end < n) b.fallthrough = a.block_of[b.end];
    if (b.begin == b.end) { // an empty kernel: falls off the end
      b.succs = {kExitBlock};
      continue;
    }
    const Instruction &last = k.insts[b.end - 1];
    if (!last.info().ends_block()) { // falls through, a barrier included
      b.succs.push_back(b.fallthrough);
      continue;
    }
    switch (as_family<ControlOpcode>(last.op)) {
    case ControlOpcode::Bra:
      b.succs.push_back(a.target_block(k, last.operands[0]));
      if (last.guard.present) b.succs.push_back(b.fallthrough);
      break;
    case ControlOpcode::Loop:
      b.succs.push_back(a.target_block(k, last.operands[1]));
      b.succs.push_back(b.fallthrough);
      break;
    case ControlOpcode::Call: b.succs.push_back(a.target_block(k, last.operands[0])); break;
    case ControlOpcode::Ret:
    case ControlOpcode::Exit: break;
    }
  }
}

/// Successors used for ordering and reachability: a call also leads to its return site.
std::vector<uint32_t> order_succs(const Kernel &k, const LaneAnalysis &a, uint32_t b) {
  std::vector<uint32_t> s;
  for (uint32_t x : a.blocks[b].succs)
    if (x != kExitBlock) s.push_back(x);
  const auto &bb = a.blocks[b];
  if (bb.end > bb.begin && k.insts[bb.end - 1].op == Opcode::Call && bb.fallthrough != kExitBlock)
    s.push_back(bb.fallthrough);
  return s;
}

class BlockOrder {
public:
  BlockOrder(const Kernel &k, LaneAnalysis &a) : a_(a), n_(a.blocks.size()) {
    succs_.resize(n_);
    preds_.resize(n_);
    for (uint32_t b = 0; b < n_; ++b)
      for (uint32_t s : order_succs(k, a, b)) {
        succs_[b].push_back(s);
        preds_[s].push_back(b);
      }
  }

  void run() {
    find_loops();
    std::vector<bool> all(n_, false);
    for (uint32_t b = 0; b < n_; ++b) all[b] = reachable_[b];
    order_region(all, kExitBlock);
    for (uint32_t b = 0; b < n_; ++b)
      if (!reachable_[b]) a_.order.push_back(b);
    a_.rank.assign(n_, 0);
    for (uint32_t i = 0; i < a_.order.size(); ++i) a_.rank[a_.order[i]] = i;
  }

private:
  void find_loops() {
    reachable_.assign(n_, false);
    std::vector<uint8_t> state(n_, 0); // 0 new, 1 on stack, 2 done
    std::vector<std::pair<uint32_t, size_t>> stack{{0, 0}};
    state[0] = 1;
    reachable_[0] = true;
    std::map<uint32_t, std::vector<uint32_t>> latches;
    while (!stack.empty()) {
      auto &[b, i] = stack.back();
      if (i < succs_[b].size()) {
        uint32_t s = succs_[b][i++];
        if (state[s] == 1) latches[s].push_back(b);
        if (state[s] == 0) {
          state[s] = 1;
          reachable_[s] = true;
          stack.push_back({s, 0});
        }
        continue;
      }
      state[b] = 2;
      stack.pop_back();
    }
    for (const auto &[header, ls] : latches) {
      std::vector<bool> body(n_, false);
      body[header] = true;
      std::vector<uint32_t> work(ls.begin(), ls.end());
      while (!work.empty()) {
        uint32_t b = work.back();
        work.pop_back();
        if (body[b] || !reachable_[b]) continue;
        body[b] = true;
        for (uint32_t p : preds_[b]) work.push_back(p);
      }
      loops_.push_back({header, std::move(body)});
    }
    std::sort(loops_.begin(), loops_.end(), [](const Loop &x, const Loop &y) {
      auto nx = std::count(x.body.begin(), x.body.end(), true);
      auto ny = std::count(y.body.begin(), y.body.end(), true);
      return nx != ny ? nx > ny : x.header < y.header;
    });
  }

  void order_region(const std::vector<bool> &region, uint32_t header) {
    // Collapse the outermost loops inside the region (other than its own) into their header.
    std::vector<uint32_t> item(n_, kExitBlock);
    std::vector<const Loop *> child_of(n_, nullptr);
    for (uint32_t b = 0; b < n_; ++b)
      if (region[b]) item[b] = b;
    for (const auto &loop : loops_) {
      if (loop.header == header || !region[loop.header] || item[loop.header] != loop.header)
        continue;
      bool inside = true;
      for (uint32_t b = 0; b < n_ && inside; ++b) inside = !loop.body[b] || region[b];
      if (!inside) continue;
      for (uint32_t b = 0; b < n_; ++b)
        if (loop.body[b]) item[b] = loop.header;
      child_of[loop.header] = &loop;
    }
    // Topological order of the items, ties broken by block index.
    std::map<uint32_t, std::set<uint32_t>> edges;
    std::map<uint32_t, int> indegree;
    for (uint32_t b = 0; b < n_; ++b)
      if (region[b] && item[b] == b) indegree[b] = 0;
    for (uint32_t u = 0; u < n_; ++u) {
      if (!region[u]) continue;
      for (uint32_t v : succs_[u]) {
        if (!region[v] || v == header || item[u] == item[v]) continue;
        if (edges[item[u]].insert(item[v]).second) ++indegree[item[v]];
      }
    }
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
    for (const auto &[b, d] : indegree)
      if (d == 0) ready.push(b);
    std::vector<uint32_t> items;
    std::set<uint32_t> placed;
    while (placed.size() < indegree.size()) {
      if (ready.empty()) { // a cycle the loop analysis did not resolve: take the lowest block
        for (const auto &[b, d] : indegree)
          if (!placed.count(b)) {
            ready.push(b);
            break;
          }
      }
      uint32_t b = ready.top();
      ready.pop();
      if (!placed.insert(b).second) continue;
      items.push_back(b);
      for (uint32_t v : edges[b])
        if (--indegree[v] == 0 && !placed.count(v)) ready.push(v);
    }
    for (uint32_t b : items) {
      if (child_of[b]) {
        order_region(child_of[b]->body, b);
      } else {
        a_.order.push_back(b);
      }
    }
  }

  struct Loop {
    uint32_t header;
    std::vector<bool> body;
  };

  LaneAnalysis &a_;
  size_t n_;
  std::vector<std::vector<uint32_t>> succs_, preds_;
  std::vector<bool> reachable_;
  std::vector<Loop> loops_;
};

/// Immediate post-dominators (kExitBlock for the virtual exit, n for "none": the block cannot
/// reach the exit).
std::vector<uint32_t> post_dominators(const LaneAnalysis &a) {
  const auto n = static_cast<uint32_t>(a.blocks.size());
  const uint32_t exit = n;
  std::vector<std::vector<uint32_t>> rsucc(n + 1); // edges of the reverse graph
  for (uint32_t b = 0; b < n; ++b) {
    const auto &s = a.blocks[b].succs;
    if (s.empty()) rsucc[exit].push_back(b);
    for (uint32_t x : s) rsucc[x == kExitBlock ? exit : x].push_back(b);
  }
  // Post-order of the reverse graph from the virtual exit.
  std::vector<uint32_t> post, index(n + 1, UINT32_MAX);
  std::vector<uint8_t> seen(n + 1, 0);
  std::vector<std::pair<uint32_t, size_t>> stack{{exit, 0}};
  seen[exit] = 1;
  while (!stack.empty()) {
    auto &[b, i] = stack.back();
    if (i < rsucc[b].size()) {
      uint32_t s = rsucc[b][i++];
      if (!seen[s]) {
        seen[s] = 1;
        stack.push_back({s, 0});
      }
      continue;
    }
    index[b] = static_cast<uint32_t>(post.size());
    post.push_back(b);
    stack.pop_back();
  }
  std::vector<uint32_t> idom(n + 1, UINT32_MAX);
  idom[exit] = exit;
  auto intersect = [&](uint32_t x, uint32_t y) {
    while (x != y) {
      while (index[x] < index[y]) x = idom[x];
      while (index[y] < index[x]) y = idom[y];
    }
    return x;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = post.rbegin(); it != post.rend(); ++it) {
      uint32_t b = *it;
      if (b == exit) continue;
      uint32_t nd = UINT32_MAX;
      auto consider = [&](uint32_t s) {
        if (idom[s] == UINT32_MAX) return;
        nd = nd == UINT32_MAX ? s : intersect(s, nd);
      };
      if (a.blocks[b].succs.empty()) consider(exit);
      for (uint32_t x : a.blocks[b].succs) consider(x == kExitBlock ? exit : x);
      if (nd != UINT32_MAX && idom[b] != nd) {
        idom[b] = nd;
        changed = true;
      }
    }
  }
  std::vector<uint32_t> result(n);
  for (uint32_t b = 0; b < n; ++b)
    result[b] = idom[b] == UINT32_MAX ? n : idom[b] == exit ? kExitBlock : idom[b];
  return result;
}

bool special_varies(Reg r) {
  return is_special(r) && special_varies_in_block(reg_special(r));
}

class Divergence {
public:
  Divergence(const Kernel &k, LaneAnalysis &a) : k_(k), a_(a) {}

  void run() {
    const auto n = static_cast<uint32_t>(a_.blocks.size());
    a_.divergent.assign(n, a_.has_calls);
    std::vector<RegAccess> uses, defs;
    for (const auto &inst : k_.insts) {
      instruction_defs(inst, defs);
      for (const auto &d : defs) {
        Slot s{d.pred, d.reg, d.pred ? Type::Pred : d.type};
        a_.slots.insert(s);
        if (a_.has_calls) a_.varying.insert(s);
      }
    }
    if (a_.has_calls) return; // per-lane return stacks: every block may diverge
    ipdom_ = post_dominators(a_);
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t b = 0; b < n; ++b) {
        for (uint32_t i = a_.blocks[b].begin; i < a_.blocks[b].end; ++i) {
          const Instruction &inst = k_.insts[i];
          instruction_uses(inst, uses);
          bool varying = a_.divergent[b] || inst.info().lane_varying();
          for (const auto &u : uses) varying = varying || !uniform(u);
          if (!varying) continue;
          instruction_defs(inst, defs);
          for (const auto &d : defs)
            changed |= a_.varying.insert({d.pred, d.reg, d.pred ? Type::Pred : d.type}).second;
        }
        changed |= mark_influence(b);
      }
    }
  }

private:
  bool uniform(const RegAccess &u) const {
    if (!u.pred && special_varies(u.reg)) return false;
    if (!u.pred && is_special(u.reg)) return true;
    return !a_.is_varying({u.pred, u.reg, u.pred ? Type::Pred : u.type});
  }

  /// When block b ends in a lane-varying branch, marks every block between the branch and
  /// its reconvergence point as divergent. Returns whether anything changed.
  bool mark_influence(uint32_t b) {
    const auto &bb = a_.blocks[b];
    if (bb.end == bb.begin) return false;
    const Instruction &last = k_.insts[bb.end - 1];
    bool varying = false;
    if (last.op == Opcode::Bra && last.guard.present)
      varying = a_.is_varying({true, last.guard.pred, Type::Pred});
    else if (last.op == Opcode::Loop)
      varying = a_.is_varying({false, last.operands[0].index, Type::U32});
    if (!varying) return false;
    // Lanes that branch to an exit finish there; the others stay together, so a branch with
    // an exit on one side splits nothing.
    for (uint32_t x : bb.succs)
      if (a_.exits_at(k_, x)) return false;
    const uint32_t stop = ipdom_[b];
    bool changed = false;
    std::vector<uint32_t> work(bb.succs.begin(), bb.succs.end());
    std::vector<bool> seen(a_.blocks.size(), false);
    while (!work.empty()) {
      uint32_t x = work.back();
      work.pop_back();
      if (x == kExitBlock || x == stop || seen[x]) continue;
      seen[x] = true;
      if (!a_.divergent[x]) {
        a_.divergent[x] = true;
        changed = true;
      }
      for (uint32_t s : a_.blocks[x].succs) work.push_back(s);
    }
    return changed;
  }

  const Kernel &k_;
  LaneAnalysis &a_;
  std::vector<uint32_t> ipdom_;
};

} // namespace

bool LaneAnalysis::uniform_read(bool pred, Reg reg, Type type) const {
  if (!pred && is_special(reg)) return !special_varies(reg);
  return !is_varying({pred, reg, pred ? Type::Pred : type});
}

bool LaneAnalysis::exits_at(const Kernel &k, uint32_t block) const {
  if (block == kExitBlock) return true;
  const LaneBlock &b = blocks[block];
  if (b.begin == b.end) return b.succs.size() == 1 && b.succs[0] == kExitBlock;
  return k.insts[b.begin].op == Opcode::Exit;
}

uint32_t LaneAnalysis::target_block(const Kernel &k, const Operand &label) const {
  uint32_t t = k.labels[label.index].target;
  return t < block_of.size() ? block_of[t] : kExitBlock;
}

LaneAnalysis analyse_lanes(const Kernel &kernel) {
  LaneAnalysis a;
  for (const auto &inst : kernel.insts) {
    a.has_calls |= inst.op == Opcode::Call || inst.op == Opcode::Ret;
    a.has_barriers |= (inst.info().flags & kFlagBarrier) != 0;
  }
  build_blocks(kernel, a);
  BlockOrder(kernel, a).run();
  Divergence(kernel, a).run();
  return a;
}

} // namespace hologram::opt
