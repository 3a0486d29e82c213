// Strength reduction of index arithmetic: in a natural loop, a product `mul.T x, i, c` of an
// induction variable `i` (its one definition in the loop is `add.T i, i, s`) and a value `c`
// the loop never writes becomes a running sum. In front of the loop `x' = i * c` and
// `s' = s * c`; after the increment of `i`, `x' += s'`; the product becomes `mov x, x'`
// (copy propagation and DCE then remove the copy). Integers wrap modulo 2^w, so x' == i * c
// holds exactly at every point of the loop. x' and s' are registers the kernel never uses;
// a kernel with none left is left as it is.
//
// The increment and the product must each run once per trip (their blocks are in no inner
// loop), and the loop header must be entered from outside by falling through, where the
// set-up goes (the same preheader rule as licm).
#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/opt/pass_manager.h"
#include "kernel_edit.h"

#include <map>
#include <optional>

namespace hologram::opt {

using namespace isa;

namespace {

bool is_integer_type(Type t) {
  return t == Type::U32 || t == Type::I32 || t == Type::U64 || t == Type::I64;
}

Instruction make(Opcode op, Type t, std::initializer_list<Reg> regs, const SourceLoc &loc) {
  Instruction m;
  m.op = op;
  m.type = t;
  for (Reg r : regs) m.operands.push_back(Operand::reg(r));
  m.loc = loc;
  return m;
}

class Reducer {
public:
  Reducer(Kernel &k, const Cfg &cfg, const NaturalLoop &loop, const std::vector<NaturalLoop> &all)
      : k_(k), cfg_(cfg), loop_(loop), writes_(kNumSlots, 0), def_at_(kNumSlots, 0) {
    for (uint32_t b = 0; b < cfg.blocks.size(); ++b) {
      if (!loop.body[b]) continue;
      bool inner = false; // inside a smaller loop nested in this one
      for (const NaturalLoop &l : all)
        inner = inner || (l.header != loop.header && l.body[b] && loop.body[l.header] &&
                          l.size() < loop.size());
      for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
        once_[i] = !inner;
        instruction_defs(k.insts[i], defs_);
        for (const auto &d : defs_) {
          if (!d.pred && is_special(d.reg)) continue;
          ++writes_[slot_of(d)];
          def_at_[slot_of(d)] = i;
        }
      }
    }
  }

  /// Reduces the first product it can; returns whether it changed the kernel.
  bool reduce_one(std::vector<bool> &used) {
    for (uint32_t b = 0; b < cfg_.blocks.size(); ++b) {
      if (!loop_.body[b]) continue;
      for (uint32_t i = cfg_.blocks[b].begin; i < cfg_.blocks[b].end; ++i) {
        const Instruction &mul = k_.insts[i];
        if (mul.op != Opcode::Mul || mul.guard.present || !is_integer_type(mul.type) ||
            !once_.count(i) || !once_.at(i))
          continue;
        for (int side = 0; side < 2; ++side) {
          const Reg iv = mul.operands[1 + side].index, c = mul.operands[2 - side].index;
          if (is_special(iv) || !invariant(c)) continue;
          auto inc = increment_of(iv, mul.type);
          if (!inc) continue;
          auto x = detail::free_register(used), step = detail::free_register(used);
          if (!x || !step) return false;
          const Reg s = k_.insts[*inc].operands[1].index == iv ? k_.insts[*inc].operands[2].index
                                                               : k_.insts[*inc].operands[1].index;
          const Type t = mul.type;
          const uint32_t pre = cfg_.blocks[loop_.header].begin;
          detail::insert_before(k_, {{pre, make(Opcode::Mul, t, {*x, iv, c}, mul.loc)},
                                     {pre, make(Opcode::Mul, t, {*step, s, c}, mul.loc)},
                                     {*inc + 1, make(Opcode::Add, t, {*x, *x, *step}, mul.loc)}});
          // Where the product is now: after every insertion at or before its index.
          const uint32_t at = i + (pre <= i ? 2 : 0) + (*inc + 1 <= i ? 1 : 0);
          k_.insts[at] = detail::mov(k_.insts[at], k_.insts[at].operands[0].index, *x, t);
          return true;
        }
      }
    }
    return false;
  }

private:
  [[nodiscard]] bool invariant(Reg r) const {
    return is_special(r) || writes_[slot_of({false, r, Type::None})] == 0;
  }

  /// The one instruction of the loop that writes `iv`, when it is `add.T iv, iv, s` (either
  /// order) with s invariant, unguarded, once per trip.
  [[nodiscard]] std::optional<uint32_t> increment_of(Reg iv, Type t) const {
    const unsigned slot = slot_of({false, iv, t});
    if (writes_[slot] != 1) return std::nullopt;
    const uint32_t j = def_at_[slot];
    const Instruction &add = k_.insts[j];
    if (add.op != Opcode::Add || add.type != t || add.guard.present || !once_.at(j) ||
        add.operands[0].index != iv)
      return std::nullopt;
    const Reg a = add.operands[1].index, b = add.operands[2].index;
    if (a == iv && b != iv && invariant(b)) return j;
    if (b == iv && a != iv && invariant(a)) return j;
    return std::nullopt;
  }

  Kernel &k_;
  const Cfg &cfg_;
  const NaturalLoop &loop_;
  std::vector<uint32_t> writes_, def_at_;
  std::map<uint32_t, bool> once_; // loop instruction -> runs once per trip
  std::vector<RegAccess> defs_;
};

} // namespace

bool reduce_strength(Kernel &k) {
  bool changed = false;
  std::vector<bool> used = detail::used_registers(k);
  for (size_t guard = 0; guard < k.insts.size(); ++guard) {
    const Cfg cfg = build_cfg(k);
    const auto loops = natural_loops(cfg);
    bool once = false;
    for (const NaturalLoop &loop : loops) {
      if (!detail::enters_by_falling_through(k, cfg, loop)) continue;
      if (Reducer(k, cfg, loop, loops).reduce_one(used)) {
        once = changed = true;
        break;
      }
    }
    if (!once) break;
  }
  return changed;
}

} // namespace hologram::opt
