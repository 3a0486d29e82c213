// Copy propagation over the whole kernel: after `mov.T rA, rB` (rB a register or a read-only
// special such as %gid.x), a read of rA as T reads rB instead wherever that copy reaches on
// every path with neither register written since ("available copies", a forward dataflow
// whose meet keeps the copies every predecessor agrees on). Dead-code elimination then
// removes the copies nothing reads. A called function and the code after a call start with no
// copies (the callee may write any register).
#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/opt/pass_manager.h"

#include <array>
#include <bit>
#include <optional>

namespace hologram::opt {

using namespace isa;

namespace {

struct Copy {
  Reg src;
  Type type;
  friend bool operator==(const Copy &, const Copy &) = default;
};

/// The copies available at a point: `copy[r]` holds when bit r of `held` is set. A def looks
/// only at the held copies (few in real kernels), not at every register.
class Copies {
public:
  /// The copy r holds, if any (a special register holds none).
  [[nodiscard]] const Copy *find(Reg r) const {
    return !is_special(r) && held(r) ? &copy_[r] : nullptr;
  }

  void add(Reg dst, Copy c) {
    copy_[dst] = c;
    held_[dst / 64] |= bit(dst);
  }

  /// A write of r: r holds no copy any more, and no copy of r survives.
  void kill(Reg r) {
    drop(r);
    for_each_held([&](Reg d) {
      if (copy_[d].src == r) drop(d);
    });
  }

  /// The meet: keeps the copies `other` holds too; returns whether any was dropped.
  bool meet(const Copies &other) {
    bool changed = false;
    for_each_held([&](Reg d) {
      if (!other.held(d) || other.copy_[d] != copy_[d]) {
        drop(d);
        changed = true;
      }
    });
    return changed;
  }

private:
  static constexpr unsigned kWords = (kFirstSpecialReg + 63) / 64;
  static uint64_t bit(Reg r) { return uint64_t{1} << (r % 64); }
  [[nodiscard]] bool held(Reg r) const { return (held_[r / 64] & bit(r)) != 0; }
  void drop(Reg r) { held_[r / 64] &= ~bit(r); }
  template <typename F> void for_each_held(F f) const {
    for (unsigned w = 0; w < kWords; ++w)
      for (uint64_t m = held_[w]; m != 0; m &= m - 1)
        f(static_cast<Reg>(w * 64 + static_cast<unsigned>(std::countr_zero(m))));
  }

  std::array<Copy, kFirstSpecialReg> copy_{};
  std::array<uint64_t, kWords> held_{};
};

/// Reads rB for a read of r as `t` when r holds a copy of rB of that type.
bool rewrite(Reg &r, Type t, const Copies &copies) {
  const Copy *c = copies.find(r);
  if (!c || c->type != t) return false;
  r = c->src;
  return true;
}

/// The copies after `inst`, given those before it.
void transfer(const Instruction &inst, Copies &copies, std::vector<RegAccess> &defs) {
  instruction_defs(inst, defs);
  for (const RegAccess &d : defs)
    if (!d.pred) copies.kill(d.reg);
  if (inst.op == Opcode::Mov) {
    const Reg dst = inst.operands[0].index, src = inst.operands[1].index;
    if (src != dst) copies.add(dst, Copy{src, inst.type});
  }
}

/// Rewrites the register reads of `inst` through `copies`; returns whether any changed.
bool rewrite_reads(Instruction &inst, const Copies &copies) {
  const OpcodeInfo &row = inst.info();
  bool changed = false;
  for (size_t j = 0; j < inst.operands.size() && j < row.num_operands(); ++j) {
    Operand &o = inst.operands[j];
    // A loop counter is read and written in place, so it keeps its register.
    if (o.kind == OperandKind::Reg && row.role(j) != OperandRole::LoopCounter) {
      const Type t = read_type(inst, row.role(j));
      if (t != Type::None) changed |= rewrite(o.index, t, copies);
    } else if (o.kind == OperandKind::Addr) {
      // A base register stays a general register; an index may become a special.
      const Copy *base = o.addr.base == AddrBase::Reg ? copies.find(o.addr.base_id) : nullptr;
      if (base && !is_special(base->src)) changed |= rewrite(o.addr.base_id, Type::U64, copies);
      if (o.addr.index != kNoReg) changed |= rewrite(o.addr.index, Type::U64, copies);
    }
  }
  return changed;
}

} // namespace

bool propagate_copies(Kernel &k) {
  const Cfg cfg = build_cfg(k);
  const auto n = cfg.blocks.size();
  // in[b]: copies available on entry; nullopt = not reached yet (the meet's identity).
  std::vector<std::optional<Copies>> in(n);
  std::vector<bool> fresh(n, false); // entered with no copies: kernel and function entries,
  for (uint32_t e : cfg.function_entries) fresh[e] = true; // and return sites
  for (uint32_t r : cfg.return_sites) fresh[r] = true;
  std::vector<RegAccess> defs;
  std::vector<uint32_t> order;
  std::vector<bool> ordered(n, false);
  for (uint32_t e : cfg.function_entries)
    for (uint32_t b : reverse_post_order(cfg, e))
      if (!ordered[b]) {
        ordered[b] = true;
        order.push_back(b);
      }
  for (uint32_t b : order)
    if (fresh[b]) in[b] = Copies{};
  // Sweeps in reverse post-order; a block is walked again only when its entry changed since
  // (a loop's back edge), so a loop-free kernel is walked once.
  std::vector<bool> dirty(n, true);
  for (bool again = true; again;) {
    again = false;
    for (uint32_t b : order) {
      if (!in[b] || !dirty[b]) continue;
      dirty[b] = false;
      Copies out = *in[b];
      for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i)
        transfer(k.insts[i], out, defs);
      for (uint32_t s : cfg.blocks[b].succs) {
        if (fresh[s]) continue;
        bool changed = !in[s];
        if (changed)
          in[s] = out;
        else
          changed = in[s]->meet(out);
        if (changed && !dirty[s]) {
          dirty[s] = true;
          again = true;
        }
      }
    }
  }
  bool changed = false;
  for (uint32_t b = 0; b < n; ++b) {
    if (!in[b]) continue; // unreachable
    Copies copies = *in[b];
    for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
      changed |= rewrite_reads(k.insts[i], copies);
      transfer(k.insts[i], copies, defs);
    }
  }
  return changed;
}

} // namespace hologram::opt
