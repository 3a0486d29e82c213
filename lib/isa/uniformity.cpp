// Uniformity and divergence, shared by the verifier's barrier rule and the SPMD code
// generators (through opt::LaneAnalysis). A definition is lane-varying when its instruction's
// result is (flag V of the table), when it reads a lane-varying value, or when its block runs
// under lane-varying control (sync dependence); a block is under lane-varying control between
// a branch on a lane-varying value and the branch's immediate post-dominator. Both facts feed
// each other, so the analysis iterates to their common fixpoint (everything only grows).
#include "hologram/isa/uniformity.h"

#include "dataflow.h"

namespace hologram::isa {

namespace {

using Bits = std::vector<uint8_t>;

TypedSlot typed(const RegAccess &a) {
  return {a.pred, a.reg, a.pred ? Type::Pred : a.type};
}

class Analysis {
public:
  Analysis(const Kernel &k, const Cfg &cfg, Uniformity &u) : k_(k), cfg_(cfg), u_(u) {}

  void run() {
    const auto n = cfg_.blocks.size();
    u_.controlled_by.assign(n, kNoBlock);
    u_.divergent.assign(n, 0);
    for (const auto &inst : k_.insts) {
      u_.has_calls |= inst.op == Opcode::Call;
      instruction_defs(inst, defs_);
      for (const auto &d : defs_)
        if (d.pred || !is_special(d.reg)) u_.written.insert(typed(d));
    }
    // Each function's blocks and post-dominators, once: the rounds below only read them.
    for (uint32_t entry : cfg_.function_entries) {
      auto region = reverse_post_order(cfg_, entry);
      auto ipdom = post_dominators(cfg_, region);
      functions_.push_back({std::move(region), std::move(ipdom)});
    }
    do {
      propagate_values();
    } while (mark_control());
    if (per_point()) record_varying_definitions();
  }

private:
  [[nodiscard]] bool per_point() const { return u_.precision == UniformityPrecision::PerPoint; }

  bool varying_use(const Bits *state, const RegAccess &a) const {
    if (!a.pred && is_special(a.reg)) return special_varies_in_block(reg_special(a.reg));
    return state ? (*state)[slot_of(a)] != 0 : u_.varying.count(typed(a)) != 0;
  }

  /// Whether the definitions of instruction i (in block b) are lane-varying.
  bool varying_def(uint32_t b, uint32_t i, const Bits *state) {
    const Instruction &inst = k_.insts[i];
    if (u_.divergent[b] || inst.info().lane_varying()) return true;
    instruction_uses(inst, uses_);
    for (const auto &a : uses_)
      if (varying_use(state, a)) return true;
    return false;
  }

  /// Applies instructions [begin, end) of block b to `state` (PerPoint) or to the varying set
  /// (PerRegister, state == nullptr, and PerPoint while recording); returns whether the varying
  /// set grew.
  bool transfer(uint32_t b, Bits *state, uint32_t end) {
    bool grew = false;
    for (uint32_t i = cfg_.blocks[b].begin; i < end; ++i) {
      const bool v = varying_def(b, i, state);
      instruction_defs(k_.insts[i], defs_);
      for (const auto &d : defs_) {
        if (!d.pred && is_special(d.reg)) continue;
        if (state) (*state)[slot_of(d)] = v;
        if (v && (!state || recording_)) grew |= u_.varying.insert(typed(d)).second;
      }
    }
    return grew;
  }

  void propagate_values() {
    if (!per_point()) {
      for (bool grew = true; grew;) {
        grew = false;
        for (uint32_t b = 0; b < cfg_.blocks.size(); ++b)
          grew |= transfer(b, nullptr, cfg_.blocks[b].end);
      }
      return;
    }
    u_.varying_in = detail::solve_forward(
        cfg_, Bits(kNumSlots, 0), Bits(kNumSlots, 0),
        [&](uint32_t b, Bits &t) { transfer(b, &t, cfg_.blocks[b].end); },
        [](Bits &into, const Bits &from) {
          bool changed = false;
          for (unsigned r = 0; r < kNumSlots; ++r)
            if (from[r] && !into[r]) into[r] = changed = true;
          return changed;
        },
        /*visit_all=*/true);
  }

  /// Whether the two-way branch that ends block b reads a lane-varying value.
  bool varying_branch(uint32_t b) {
    const auto &bb = cfg_.blocks[b];
    if (bb.succs.size() < 2 || bb.end == bb.begin) return false;
    if (!per_point()) {
      instruction_uses(k_.insts[bb.end - 1], uses_);
      for (const auto &a : uses_)
        if (varying_use(nullptr, a)) return true;
      return false;
    }
    Bits state = u_.varying_in[b];
    transfer(b, &state, bb.end - 1); // the state just before the branch
    instruction_uses(k_.insts[bb.end - 1], uses_);
    for (const auto &a : uses_)
      if (varying_use(&state, a)) return true;
    return false;
  }

  /// Whether a lane that enters block b finishes at once.
  bool exits_at(uint32_t b) const {
    const auto &bb = cfg_.blocks[b];
    return bb.begin == bb.end ? bb.ends_in_exit : k_.insts[bb.begin].op == Opcode::Exit;
  }

  /// Marks the blocks that lane-varying branches control; returns whether anything changed.
  bool mark_control() {
    bool changed = false;
    for (const auto &[region, ipdom] : functions_) {
      for (uint32_t b : region) {
        if (!varying_branch(b)) continue;
        bool splits = true;
        for (uint32_t s : cfg_.blocks[b].succs) splits = splits && !exits_at(s);
        std::vector<uint32_t> work(cfg_.blocks[b].succs.begin(), cfg_.blocks[b].succs.end());
        std::vector<uint8_t> seen(cfg_.blocks.size(), 0);
        while (!work.empty()) {
          const uint32_t x = work.back();
          work.pop_back();
          if (x == ipdom[b] || seen[x]) continue;
          seen[x] = 1;
          if (u_.controlled_by[x] == kNoBlock) {
            u_.controlled_by[x] = b;
            changed = true;
          }
          if (splits && !u_.divergent[x]) u_.divergent[x] = changed = true;
          for (uint32_t s : cfg_.blocks[x].succs) work.push_back(s);
        }
      }
    }
    return changed;
  }

  /// PerPoint: the (register, type) pairs that some lane-varying definition writes.
  void record_varying_definitions() {
    recording_ = true;
    for (uint32_t b = 0; b < cfg_.blocks.size(); ++b) {
      Bits state = u_.varying_in[b];
      transfer(b, &state, cfg_.blocks[b].end);
    }
  }

  const Kernel &k_;
  const Cfg &cfg_;
  Uniformity &u_;
  std::vector<RegAccess> uses_, defs_;
  /// Per function: its blocks in reverse post-order, and their immediate post-dominators.
  std::vector<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> functions_;
  bool recording_ = false; ///< PerPoint: transfer also collects the varying definitions
};

} // namespace

bool Uniformity::varying_read(const RegAccess &u) const {
  if (!u.pred && is_special(u.reg)) return special_varies_in_block(reg_special(u.reg));
  return varying.count(typed(u)) != 0;
}

Uniformity analyse_uniformity(const Kernel &k, const Cfg &cfg, UniformityPrecision precision) {
  Uniformity u;
  u.precision = precision;
  Analysis(k, cfg, u).run();
  return u;
}

} // namespace hologram::isa
