// Control-flow graph construction and dominator trees (Cooper, Harvey and Kennedy's
// iterative algorithm over reverse post-order).
#include "hologram/isa/cfg.h"

#include <algorithm>
#include <functional>
#include <utility>

namespace hologram::isa {

std::vector<uint32_t> Cfg::flow_succs(uint32_t b) const {
  const auto &bb = blocks[b];
  if (bb.call_target != kNoBlock) return {bb.call_target};
  if (bb.ends_in_ret) return return_sites;
  return bb.succs;
}

Cfg build_cfg(const Kernel &k) {
  const auto n = static_cast<uint32_t>(k.insts.size());
  std::vector<bool> leader(n + 1, false);
  leader[0] = true;
  leader[n] = true; // the virtual end block
  auto target_of = [&](const Instruction &inst) -> uint32_t {
    for (const auto &op : inst.operands)
      if (op.kind == OperandKind::Label) return std::min(k.labels.at(op.index).target, n);
    return n;
  };
  for (const auto &l : k.labels)
    if (l.target <= n) leader[l.target] = true;
  for (uint32_t i = 0; i < n; ++i)
    if (k.insts[i].info().ends_block()) leader[i + 1] = true;
  Cfg cfg;
  cfg.block_of.assign(n + 1, kNoBlock);
  for (uint32_t i = 0; i <= n; ++i) {
    if (leader[i]) {
      if (!cfg.blocks.empty()) cfg.blocks.back().end = i;
      cfg.blocks.push_back({i, i, {}, {}, kNoBlock, false, false});
    }
    cfg.block_of[i] = static_cast<uint32_t>(cfg.blocks.size() - 1);
  }
  cfg.blocks.back().end = n;
  auto &end_block = cfg.blocks.back();
  end_block.ends_in_exit = true;

  for (uint32_t b = 0; b + 1 < cfg.blocks.size(); ++b) {
    auto &bb = cfg.blocks[b];
    uint32_t next = cfg.block_of[bb.end];
    if (bb.begin == bb.end) {
      bb.succs.push_back(next);
      continue;
    }
    const auto &last = k.insts[bb.end - 1];
    if (!last.info().ends_block()) {
      bb.succs.push_back(next);
      continue;
    }
    switch (as_family<ControlOpcode>(last.op)) {
    case ControlOpcode::Bra:
      bb.succs.push_back(cfg.block_of[target_of(last)]);
      if (last.guard.present) bb.succs.push_back(next);
      break;
    case ControlOpcode::Loop:
      bb.succs.push_back(cfg.block_of[target_of(last)]);
      bb.succs.push_back(next);
      break;
    case ControlOpcode::Call:
      bb.call_target = cfg.block_of[target_of(last)];
      bb.succs.push_back(next);
      cfg.return_sites.push_back(next);
      if (std::find(cfg.function_entries.begin(), cfg.function_entries.end(), bb.call_target) ==
          cfg.function_entries.end())
        cfg.function_entries.push_back(bb.call_target);
      break;
    case ControlOpcode::Ret: bb.ends_in_ret = true; break;
    case ControlOpcode::Exit: bb.ends_in_exit = true; break;
    }
    // Two identical successors (a guarded branch to the next block) count once.
    if (bb.succs.size() == 2 && bb.succs[0] == bb.succs[1]) bb.succs.pop_back();
  }
  cfg.function_entries.insert(cfg.function_entries.begin(), 0);
  std::sort(cfg.return_sites.begin(), cfg.return_sites.end());
  cfg.return_sites.erase(std::unique(cfg.return_sites.begin(), cfg.return_sites.end()),
                         cfg.return_sites.end());
  for (uint32_t b = 0; b < cfg.blocks.size(); ++b)
    for (uint32_t s : cfg.blocks[b].succs) cfg.blocks[s].preds.push_back(b);
  return cfg;
}

namespace {
/// Reverse post-order of the nodes reachable from `entry` in a graph of n nodes given by
/// adjacency lists (iterative DFS, so deep graphs do not overflow the stack).
std::vector<uint32_t> rpo_of(size_t n, uint32_t entry,
                             const std::function<const std::vector<uint32_t> &(uint32_t)> &succs) {
  std::vector<uint32_t> order;
  std::vector<uint8_t> seen(n, 0);
  std::vector<std::pair<uint32_t, size_t>> stack{{entry, 0}};
  seen[entry] = 1;
  while (!stack.empty()) {
    auto &[b, i] = stack.back();
    const auto &next = succs(b);
    if (i < next.size()) {
      uint32_t s = next[i++];
      if (!seen[s]) {
        seen[s] = 1;
        stack.push_back({s, 0});
      }
    } else {
      order.push_back(b);
      stack.pop_back();
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}
} // namespace

std::vector<uint32_t> reverse_post_order(const Cfg &cfg, uint32_t entry) {
  return rpo_of(cfg.blocks.size(), entry,
                [&](uint32_t b) -> const std::vector<uint32_t> & { return cfg.blocks[b].succs; });
}

namespace {
// Generic CHK over an explicit graph given as predecessor lists and an RPO.
std::vector<uint32_t> chk(size_t n, uint32_t entry, const std::vector<uint32_t> &rpo,
                          const std::function<const std::vector<uint32_t> &(uint32_t)> &preds) {
  std::vector<uint32_t> idom(n, kNoBlock), index(n, kNoBlock);
  for (uint32_t i = 0; i < rpo.size(); ++i) index[rpo[i]] = i;
  idom[entry] = entry;
  auto intersect = [&](uint32_t a, uint32_t b) {
    while (a != b) {
      while (index[a] > index[b]) a = idom[a];
      while (index[b] > index[a]) b = idom[b];
    }
    return a;
  };
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint32_t b : rpo) {
      if (b == entry) continue;
      uint32_t nd = kNoBlock;
      for (uint32_t p : preds(b)) {
        if (index[p] == kNoBlock || idom[p] == kNoBlock) continue;
        nd = nd == kNoBlock ? p : intersect(p, nd);
      }
      if (nd != kNoBlock && idom[b] != nd) {
        idom[b] = nd;
        changed = true;
      }
    }
  }
  return idom;
}
} // namespace

std::vector<uint32_t> dominators(const Cfg &cfg, uint32_t entry) {
  auto rpo = reverse_post_order(cfg, entry);
  return chk(cfg.blocks.size(), entry, rpo,
             [&](uint32_t b) -> const std::vector<uint32_t> & { return cfg.blocks[b].preds; });
}

std::vector<uint32_t> post_dominators(const Cfg &cfg, const std::vector<uint32_t> &region) {
  // Reverse graph restricted to `region`, with a virtual exit (index = blocks.size()) that
  // every block without successors in the region flows to.
  const auto n = cfg.blocks.size();
  const auto vexit = static_cast<uint32_t>(n);
  std::vector<bool> in(n + 1, false);
  for (uint32_t b : region) in[b] = true;
  in[vexit] = true;
  std::vector<std::vector<uint32_t>> rsucc(n + 1), rpred(n + 1);
  for (uint32_t b : region) {
    bool any = false;
    for (uint32_t s : cfg.blocks[b].succs)
      if (in[s]) {
        rsucc[s].push_back(b);
        rpred[b].push_back(s);
        any = true;
      }
    if (!any) {
      rsucc[vexit].push_back(b);
      rpred[b].push_back(vexit);
    }
  }
  // RPO of the reverse graph from the virtual exit.
  auto order =
      rpo_of(n + 1, vexit, [&](uint32_t b) -> const std::vector<uint32_t> & { return rsucc[b]; });
  return chk(n + 1, vexit, order,
             [&](uint32_t b) -> const std::vector<uint32_t> & { return rpred[b]; });
}

bool dominates(const std::vector<uint32_t> &idom, uint32_t a, uint32_t b) {
  if (idom[b] == kNoBlock) return false;
  while (true) {
    if (a == b) return true;
    uint32_t up = idom[b];
    if (up == b) return false;
    b = up;
  }
}

size_t NaturalLoop::size() const {
  return static_cast<size_t>(std::count(body.begin(), body.end(), true));
}

std::vector<NaturalLoop> natural_loops(const Cfg &cfg) {
  std::vector<NaturalLoop> loops;
  const auto n = cfg.blocks.size();
  for (uint32_t entry : cfg.function_entries) {
    const auto idom = dominators(cfg, entry);
    const auto rpo = reverse_post_order(cfg, entry);
    // A block dominates only blocks after it in reverse post-order, so an edge forward in
    // that order is no back edge; only the others need the walk up the dominator tree.
    std::vector<uint32_t> position(n, 0);
    for (uint32_t i = 0; i < rpo.size(); ++i) position[rpo[i]] = i;
    for (uint32_t b : rpo)
      for (uint32_t h : cfg.blocks[b].succs) {
        if (position[h] > position[b] || !dominates(idom, h, b)) continue;
        auto it = std::find_if(loops.begin(), loops.end(),
                               [&](const NaturalLoop &l) { return l.header == h; });
        if (it == loops.end()) {
          loops.push_back({h, {}, std::vector<bool>(n, false), entry});
          it = std::prev(loops.end());
          it->body[h] = true;
        }
        it->latches.push_back(b);
        std::vector<uint32_t> work{b};
        while (!work.empty()) {
          const uint32_t x = work.back();
          work.pop_back();
          if (it->body[x] || idom[x] == kNoBlock) continue;
          it->body[x] = true;
          for (uint32_t p : cfg.blocks[x].preds) work.push_back(p);
        }
      }
  }
  // Innermost first; headers break ties (std::stable_sort warns under clang with libstdc++ 12).
  std::sort(loops.begin(), loops.end(), [](const NaturalLoop &a, const NaturalLoop &b) {
    return std::pair(a.size(), a.header) < std::pair(b.size(), b.header);
  });
  return loops;
}

} // namespace hologram::isa
