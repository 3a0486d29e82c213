// Verifier rule family: launch scratch pools. Every pool.alloc is freed exactly once on every
// path before the lane exits, is not allocated again while live, and pool.free / pool.ld /
// pool.st name a handle that pool.alloc produced (or a pool parameter's address).
#include "dataflow.h"
#include "verify_context.h"

#include <map>

namespace hologram::isa::detail {

namespace {

constexpr uint64_t kOther = uint64_t{1} << 63; // "holds something that is not an alloc handle"
constexpr unsigned kMaxAllocs = 63;

struct PoolState {
  std::vector<uint64_t> origin; // per register r0..r251: set of alloc ids | kOther
  uint64_t live = 0;            // may be live
  uint64_t freed = 0;           // may have been freed
  bool reached = false;
};

class PoolPairing {
public:
  explicit PoolPairing(VerifyContext &cx) : cx_(cx), cfg_(cx.cfg), k_(cx.kernel) {}

  void run() {
    for (uint32_t i = 0; i < k_.insts.size(); ++i)
      if (k_.insts[i].op == Opcode::PoolAlloc) {
        alloc_id_[i] = static_cast<unsigned>(allocs_.size());
        allocs_.push_back(i);
      }
    if (allocs_.empty()) return;
    if (allocs_.size() > kMaxAllocs) {
      cx_.error_kernel("kernel '" + k_.name + "' has more than 63 pool.alloc instructions");
      return;
    }
    solve();
    check();
  }

private:
  // Applies instruction i to s; reports errors when `report` is set.
  void step(uint32_t i, PoolState &s, bool report) {
    const auto &inst = k_.insts[i];
    auto err = [&](const std::string &m, std::vector<std::string> notes = {}) {
      if (report) cx_.error_at(i, m, std::move(notes));
    };
    auto alloc_line = [&](unsigned a) { return std::to_string(k_.insts[allocs_[a]].loc.line); };
    if (family_of(inst.op) == OpFamily::Pool) switch (as_family<PoolOpcode>(inst.op)) {
      case PoolOpcode::PoolAlloc: {
        unsigned a = alloc_id_.at(i);
        if (s.live & (uint64_t{1} << a))
          err("pool.alloc runs again while its previous allocation may still be live",
              {"free it with pool.free before allocating again"});
        s.live |= uint64_t{1} << a;
        s.freed &= ~(uint64_t{1} << a);
        s.origin[inst.operands[0].index] = uint64_t{1} << a;
        return;
      }
      case PoolOpcode::PoolFree: {
        Reg r = inst.operands[0].index;
        uint64_t o = is_special(r) ? kOther : s.origin[r];
        if (o & kOther || o == 0) {
          err("pool.free needs a handle produced by pool.alloc; " + reg_name(r) +
              " may hold something else");
          return;
        }
        for (unsigned a = 0; a < allocs_.size(); ++a)
          if ((o >> a & 1) && (s.freed >> a & 1))
            err("the scratch pool allocated at line " + alloc_line(a) +
                " may already be freed here");
        s.live &= ~o;
        s.freed |= o;
        return;
      }
      case PoolOpcode::PoolLd:
      case PoolOpcode::PoolSt: {
        const Address &ad = inst.operands[inst.op == Opcode::PoolLd ? 1 : 0].addr;
        if (ad.base == AddrBase::Reg && !is_special(ad.base_id)) {
          uint64_t o = s.origin[ad.base_id];
          for (unsigned a = 0; a < allocs_.size(); ++a)
            if ((o >> a & 1) && (s.freed >> a & 1))
              err("the scratch pool allocated at line " + alloc_line(a) +
                  " may be used after pool.free");
        }
        break;
      }
      }
    if (inst.op == Opcode::Mov && inst.type == Type::U64 && !is_special(inst.operands[1].index)) {
      s.origin[inst.operands[0].index] = s.origin[inst.operands[1].index];
      return;
    }
    instruction_defs(inst, defs_);
    for (const auto &d : defs_)
      if (!d.pred && !is_special(d.reg)) s.origin[d.reg] = kOther;
  }

  void solve() {
    PoolState bottom{std::vector<uint64_t>(kFirstSpecialReg, 0), 0, 0, false};
    PoolState entry{std::vector<uint64_t>(kFirstSpecialReg, kOther), 0, 0, true};
    in_ = solve_forward(
        cfg_, bottom, entry,
        [&](uint32_t b, PoolState &s) {
          for (uint32_t i = cfg_.blocks[b].begin; i < cfg_.blocks[b].end; ++i) step(i, s, false);
        },
        [](PoolState &t, const PoolState &out) {
          bool changed = !t.reached;
          t.reached = true;
          for (unsigned r = 0; r < kFirstSpecialReg; ++r) {
            uint64_t m = t.origin[r] | out.origin[r];
            changed |= m != t.origin[r];
            t.origin[r] = m;
          }
          uint64_t live = t.live | out.live, freed = t.freed | out.freed;
          changed |= live != t.live || freed != t.freed;
          t.live = live;
          t.freed = freed;
          return changed;
        });
  }

  void check() {
    for (uint32_t b = 0; b < cfg_.blocks.size(); ++b) {
      if (!in_[b].reached) continue;
      PoolState s = in_[b];
      for (uint32_t i = cfg_.blocks[b].begin; i < cfg_.blocks[b].end; ++i) step(i, s, true);
      if (cfg_.blocks[b].ends_in_exit && s.live) {
        for (unsigned a = 0; a < allocs_.size(); ++a)
          if (s.live >> a & 1) {
            std::string where =
                cfg_.blocks[b].end > cfg_.blocks[b].begin
                    ? "line " + std::to_string(k_.insts[cfg_.blocks[b].end - 1].loc.line)
                    : "the end of the kernel";
            cx_.error_at(
                allocs_[a], "this scratch pool is not freed on every path",
                {"the lane can exit at " + where + " with it still allocated; add pool.free"});
            return;
          }
      }
    }
  }

  VerifyContext &cx_;
  const Cfg &cfg_;
  const Kernel &k_;
  std::vector<uint32_t> allocs_;
  std::map<uint32_t, unsigned> alloc_id_;
  std::vector<PoolState> in_;
  std::vector<RegAccess> defs_;
};

} // namespace

void verify_pools(VerifyContext &cx) {
  PoolPairing(cx).run();
}

} // namespace hologram::isa::detail
