// Blocks and reconvergence order for SPMD code generation, with the divergence facts of the
// shared isa::analyse_uniformity. See lane_analysis.h. The order matters only for efficiency
// (lanes that wait at a block with a higher rank run later), so every kernel gets a valid
// order, irreducible or not.
#include "hologram/opt/lane_analysis.h"

#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/isa/uniformity.h"

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
  /// The kernel's natural loops (isa::natural_loops, over the CFG), as sets of lane blocks:
  /// a lane block belongs to a loop when the CFG block it starts in does.
  void find_loops() {
    reachable_.assign(n_, false);
    std::vector<uint32_t> work{0};
    while (!work.empty()) {
      const uint32_t b = work.back();
      work.pop_back();
      if (reachable_[b]) continue;
      reachable_[b] = true;
      for (uint32_t s : succs_[b]) work.push_back(s);
    }
    const Cfg &cfg = a_.cfg;
    for (const NaturalLoop &loop : natural_loops(cfg)) {
      std::vector<bool> body(n_, false);
      for (uint32_t b = 0; b < n_; ++b)
        body[b] = reachable_[b] && loop.body[cfg.block_of[a_.blocks[b].begin]];
      const uint32_t header = a_.block_of[cfg.blocks[loop.header].begin];
      if (header < n_ && reachable_[header]) loops_.push_back({header, std::move(body)});
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

} // namespace

bool LaneAnalysis::uniform_read(bool pred, Reg reg, Type type) const {
  if (!pred && is_special(reg)) return !special_varies_in_block(reg_special(reg));
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
  a.cfg = build_cfg(kernel);
  BlockOrder(kernel, a).run();
  // Divergence from the shared analysis, per (register, type); with calls, lanes keep their
  // own return stacks, so every block may run with some lanes only and every value varies.
  a.uniformity = analyse_uniformity(kernel, a.cfg, UniformityPrecision::PerRegister);
  Uniformity &u = a.uniformity;
  if (a.has_calls) {
    u.varying = u.written;
    std::fill(u.divergent.begin(), u.divergent.end(), 1);
  }
  a.slots = u.written;
  a.varying = u.varying;
  a.divergent.resize(a.blocks.size());
  for (uint32_t b = 0; b < a.blocks.size(); ++b)
    a.divergent[b] = u.divergent[a.cfg.block_of[a.blocks[b].begin]] != 0;
  return a;
}

} // namespace hologram::opt
