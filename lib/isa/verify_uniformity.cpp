// Verifier rule family: uniformity. A forward taint analysis finds the values that provably
// differ between the lanes of a block (derived from %lane.*, %gid*, results the table marks
// lane-varying, or defined under lane-varying control flow); a barrier inside the region
// controlled by a branch on such a value is rejected, since not every lane would reach it.
#include "dataflow.h"
#include "verify_context.h"

#include <deque>

namespace hologram::isa::detail {

namespace {

using Taint = std::vector<uint8_t>;

class Uniformity {
public:
  explicit Uniformity(VerifyContext &cx) : cx_(cx), cfg_(cx.cfg), k_(cx.kernel) {}

  void run() {
    bool has_barrier = false;
    for (const auto &inst : k_.insts) has_barrier |= (inst.info().flags & kFlagBarrier) != 0;
    if (!has_barrier) return;
    influenced_.assign(cfg_.blocks.size(), kNoBlock);
    // Iterate: values defined under varying control become varying, which can make more
    // branches varying. Monotone, so a few rounds reach the fixpoint.
    for (int round = 0; round < 8; ++round) {
      solve();
      if (!mark_influence()) break;
    }
    for (uint32_t b = 0; b < cfg_.blocks.size(); ++b) {
      if (influenced_[b] == kNoBlock) continue;
      for (uint32_t i = cfg_.blocks[b].begin; i < cfg_.blocks[b].end; ++i)
        if (k_.insts[i].info().flags & kFlagBarrier) {
          uint32_t br = cfg_.blocks[influenced_[b]].end - 1;
          cx_.error_at(i, "bar.sync is under lane-varying control flow",
                       {"the branch at line " + std::to_string(k_.insts[br].loc.line) + " ('" +
                            print_instruction(k_, k_.insts[br]) +
                            "') depends on a value that differs between the lanes of a block",
                        "every lane of the block must reach the barrier"});
        }
    }
  }

private:
  bool varying_use(const Taint &t, const RegAccess &u) {
    if (!u.pred && is_special(u.reg)) return special_varies_in_block(reg_special(u.reg));
    return t[slot_of(u)];
  }

  /// Applies the instructions [begin, end) of block b (end defaults to the block's end).
  void transfer(uint32_t b, Taint &t, uint32_t end = kNoBlock) {
    if (end == kNoBlock) end = cfg_.blocks[b].end;
    for (uint32_t i = cfg_.blocks[b].begin; i < end; ++i) {
      const auto &inst = k_.insts[i];
      instruction_uses(inst, uses_);
      bool v = influenced_[b] != kNoBlock || inst.info().lane_varying();
      for (const auto &u : uses_) v = v || varying_use(t, u);
      instruction_defs(inst, defs_);
      for (const auto &d : defs_)
        if (d.pred || !is_special(d.reg)) t[slot_of(d)] = v;
    }
  }

  void solve() {
    in_ = solve_forward(
        cfg_, Taint(kNumSlots, 0), Taint(kNumSlots, 0),
        [&](uint32_t b, Taint &t) { transfer(b, t); },
        [](Taint &into, const Taint &from) {
          bool changed = false;
          for (unsigned r = 0; r < kNumSlots; ++r)
            if (from[r] && !into[r]) {
              into[r] = 1;
              changed = true;
            }
          return changed;
        },
        /*visit_all=*/true);
  }

  /// Is the two-way branch at the end of block b lane-varying?
  bool varying_branch(uint32_t b) {
    const auto &bb = cfg_.blocks[b];
    if (bb.succs.size() < 2 || bb.end == bb.begin) return false;
    const auto &last = k_.insts[bb.end - 1];
    Taint t = in_[b];
    transfer(b, t, bb.end - 1); // the state just before the branch
    instruction_uses(last, uses_);
    for (const auto &u : uses_)
      if (varying_use(t, u)) return true;
    return false;
  }

  /// Marks the blocks controlled by varying branches; returns true if anything changed.
  bool mark_influence() {
    bool changed = false;
    for (uint32_t entry : cfg_.function_entries) {
      auto region = reverse_post_order(cfg_, entry);
      auto ipdom = post_dominators(cfg_, region);
      for (uint32_t b : region) {
        if (!varying_branch(b)) continue;
        uint32_t join = ipdom[b];
        std::deque<uint32_t> q(cfg_.blocks[b].succs.begin(), cfg_.blocks[b].succs.end());
        std::vector<uint8_t> seen(cfg_.blocks.size(), 0);
        while (!q.empty()) {
          uint32_t x = q.front();
          q.pop_front();
          if (x == join || x >= cfg_.blocks.size() || seen[x]) continue;
          seen[x] = 1;
          if (influenced_[x] == kNoBlock) {
            influenced_[x] = b;
            changed = true;
          }
          for (uint32_t s : cfg_.blocks[x].succs) q.push_back(s);
        }
      }
    }
    return changed;
  }

  VerifyContext &cx_;
  const Cfg &cfg_;
  const Kernel &k_;
  std::vector<Taint> in_;
  std::vector<uint32_t> influenced_;
  std::vector<RegAccess> uses_, defs_;
};

} // namespace

void verify_uniformity(VerifyContext &cx) {
  Uniformity(cx).run();
}

} // namespace hologram::isa::detail
