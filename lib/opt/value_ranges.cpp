// Value ranges (value_ranges.h): intervals of unsigned integer slots, joined over their
// definitions to a fixpoint, with widening for slots that keep growing.
#include "hologram/opt/value_ranges.h"

#include "hologram/isa/accesses.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <vector>

namespace hologram::opt {

using namespace isa;

namespace {

bool modelled(Type t) {
  return t == Type::U32 || t == Type::U64;
}

/// The largest value of t's bits as an unsigned integer.
uint64_t max_of(Type t) {
  return type_bits(t) >= 64 ? ~uint64_t{0} : (uint64_t{1} << type_bits(t)) - 1;
}

/// A special register read as an integer type of its width has its range, as bits.
std::optional<ValueRange> special_bits(Special s, Type t, const LaunchLimits &limits) {
  if (!is_int(t) || type_bits(t) != type_bits(special_type(s))) return std::nullopt;
  return special_range(s, limits);
}

ValueRange whole(Type t) {
  return {0, max_of(t)};
}

/// Any value of t that is a multiple of 2^zeros.
ValueRange multiples(Type t, uint32_t zeros) {
  return {0, max_of(t), std::min(zeros, type_bits(t))};
}

/// The low zero bits of v as a value of t (all of them for 0).
uint32_t zeros_of(uint64_t v, Type t) {
  return v == 0 ? type_bits(t) : std::min<uint32_t>(std::countr_zero(v), type_bits(t));
}

ValueRange join(const ValueRange &a, const ValueRange &b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi), std::min(a.zeros, b.zeros)};
}

/// How many times a slot may grow before it widens to its whole type: enough for chains of
/// definitions, few enough that a counter stepped in a loop stops at once.
constexpr int kGrowthsBeforeWidening = 8;

class Analysis {
public:
  Analysis(const Kernel &k, const LaunchLimits &limits) : k_(k), limits_(limits) {}

  std::map<TypedSlot, ValueRange> run() {
    std::map<TypedSlot, int> growths;
    for (bool changed = true; changed;) {
      changed = false;
      for (const Instruction &inst : k_.insts) {
        instruction_defs(inst, defs_);
        for (const RegAccess &d : defs_) {
          if (d.pred || is_special(d.reg)) continue;
          const TypedSlot slot{false, d.reg, d.type};
          // One result of a known instruction is modelled; every other write is anything.
          std::optional<ValueRange> r =
              defs_.size() == 1 && modelled(d.type) ? evaluate(inst) : std::optional(whole(d.type));
          if (!r) continue; // a source without a definition seen yet
          auto [it, fresh] = ranges_.try_emplace(slot, *r);
          if (fresh) {
            changed = true;
            continue;
          }
          ValueRange next = join(it->second, *r);
          if (next == it->second) continue;
          // Widening keeps the zero bits: they only ever fall, at most once per bit.
          if (++growths[slot] > kGrowthsBeforeWidening) next = multiples(d.type, next.zeros);
          it->second = next;
          changed = true;
        }
      }
    }
    return std::move(ranges_);
  }

private:
  /// A source's range; nullopt while no definition of it has been seen (the fixpoint comes
  /// back to it).
  std::optional<ValueRange> read(const Operand &o, Type t) const {
    if (o.kind != OperandKind::Reg) return whole(t);
    if (is_special(o.index))
      return special_bits(reg_special(o.index), t, limits_).value_or(whole(t));
    if (!modelled(t)) return whole(t);
    auto it = ranges_.find({false, o.index, t});
    if (it == ranges_.end()) return std::nullopt;
    return it->second;
  }

  // Low zero bits survive wrapping: arithmetic modulo 2^width keeps them.
  static ValueRange add(Type t, const ValueRange &a, const ValueRange &b) {
    const uint32_t zeros = std::min(a.zeros, b.zeros);
    uint64_t hi = 0;
    if (__builtin_add_overflow(a.hi, b.hi, &hi) || hi > max_of(t)) return multiples(t, zeros);
    return {a.lo + b.lo, hi, zeros};
  }

  static ValueRange mul(Type t, const ValueRange &a, const ValueRange &b) {
    const uint32_t zeros = std::min(a.zeros + b.zeros, type_bits(t));
    uint64_t hi = 0;
    if (__builtin_mul_overflow(a.hi, b.hi, &hi) || hi > max_of(t)) return multiples(t, zeros);
    return {a.lo * b.lo, hi, zeros};
  }

  /// What one definition can produce (the ops it does not model give anything of the type).
  std::optional<ValueRange> evaluate(const Instruction &inst) const {
    const auto &ops = inst.operands;
    const Type t = inst.type;
    const Opcode op = inst.op;
    auto src = [&](size_t i) { return read(ops[i], t); };
    if (op == Opcode::MovImm) {
      const uint64_t v = ops[1].imm & max_of(t);
      return ValueRange{v, v, zeros_of(v, t)};
    }
    if (op == Opcode::Mov) return src(1);
    if (op == Opcode::Cvt) {
      if (!modelled(inst.type2)) return whole(t);
      auto s = read(ops[1], inst.type2);
      if (!s) return std::nullopt;
      // Widening keeps the range; narrowing may cut it, but not the low zero bits.
      return s->hi <= max_of(t) ? *s : multiples(t, s->zeros);
    }
    if (op == Opcode::Sel) {
      auto a = src(2), b = src(3);
      if (!a || !b) return std::nullopt;
      return join(*a, *b);
    }
    if (op == Opcode::Mad) {
      auto a = src(1), b = src(2), c = src(3);
      if (!a || !b || !c) return std::nullopt;
      return add(t, mul(t, *a, *b), *c);
    }
    if (op == Opcode::Shl) {
      auto a = src(1), amount = read(ops[2], Type::U32);
      if (!a || !amount) return std::nullopt;
      if (amount->lo != amount->hi) return multiples(t, a->zeros);
      const uint64_t factor = uint64_t{1} << (amount->lo & (type_bits(t) - 1));
      return mul(t, *a, {factor, factor, zeros_of(factor, t)});
    }
    const bool binary_op = op == Opcode::Add || op == Opcode::Sub || op == Opcode::Mul ||
                           op == Opcode::Min || op == Opcode::Max || op == Opcode::Div ||
                           op == Opcode::Rem || op == Opcode::And || op == Opcode::Shr;
    if (!binary_op) return whole(t);
    auto a = src(1), b = op == Opcode::Shr ? read(ops[2], Type::U32) : src(2);
    if (!a || !b) return std::nullopt;
    return binary(op, t, *a, *b);
  }

  static ValueRange binary(Opcode op, Type t, const ValueRange &a, const ValueRange &b) {
    if (op == Opcode::Add) return add(t, a, b);
    if (op == Opcode::Mul) return mul(t, a, b);
    const uint32_t either = std::min(a.zeros, b.zeros); // the zeros both have
    if (op == Opcode::Sub) {
      if (a.lo < b.hi) return multiples(t, either); // may go below zero and wrap
      return {a.lo - b.hi, a.hi - b.lo, either};
    }
    // min and max give one of the two values.
    if (op == Opcode::Min) return {std::min(a.lo, b.lo), std::min(a.hi, b.hi), either};
    if (op == Opcode::Max) return {std::max(a.lo, b.lo), std::max(a.hi, b.hi), either};
    if (op == Opcode::Div) // division by zero yields 0 (SPEC §3.4)
      return b.lo == 0 ? ValueRange{0, a.hi} : ValueRange{a.lo / b.hi, a.hi / b.lo};
    if (op == Opcode::Rem) // a remainder by zero yields 0
      return b.lo == 0 ? ValueRange{0, a.hi} : ValueRange{0, std::min(a.hi, b.hi - 1)};
    // A bit of a & b is zero where either operand's is.
    if (op == Opcode::And) return {0, std::min(a.hi, b.hi), std::max(a.zeros, b.zeros)};
    // Shr: the amount is taken modulo the width.
    if (b.lo != b.hi) return {0, a.hi};
    const uint32_t shift = static_cast<uint32_t>(b.lo & (type_bits(t) - 1));
    return {a.lo >> shift, a.hi >> shift, a.zeros > shift ? a.zeros - shift : 0};
  }

  const Kernel &k_;
  const LaunchLimits &limits_;
  std::map<TypedSlot, ValueRange> ranges_;
  mutable std::vector<RegAccess> defs_;
};

} // namespace

ValueRange special_range(Special s, const LaunchLimits &limits) {
  const uint64_t u32_max = 0xffffffffu;
  switch (s) {
  case Special::LaneX:
  case Special::LaneY:
  case Special::LaneZ: return {0, limits.block_lanes - 1};
  case Special::BdimX:
  case Special::BdimY:
  case Special::BdimZ: return {1, limits.block_lanes};
  case Special::BlockX:
  case Special::BlockY:
  case Special::BlockZ: return {0, u32_max - 1};
  case Special::GdimX:
  case Special::GdimY:
  case Special::GdimZ: return {1, u32_max};
  case Special::Gid:
  case Special::GidX:
  case Special::GidY:
  case Special::GidZ: return {0, limits.launch_lanes - 1};
  case Special::Gsize: return {1, limits.launch_lanes};
  }
  return whole(special_type(s));
}

ValueRanges::ValueRanges(const Kernel &k, const LaunchLimits &limits)
    : ranges_(Analysis(k, limits).run()), limits_(limits) {}

ValueRange ValueRanges::of(Reg r, Type t) const {
  if (is_special(r)) return special_bits(reg_special(r), t, limits_).value_or(whole(t));
  if (!modelled(t)) return whole(t);
  auto it = ranges_.find({false, r, t});
  return it == ranges_.end() ? whole(t) : it->second;
}

bool ValueRanges::adds_without_wrap(Reg r, Type t, uint64_t k) const {
  if (!is_int(t)) return false;
  const uint64_t signed_max = max_of(t) >> 1;
  const ValueRange v = of(r, t);
  return k <= signed_max && v.hi <= signed_max - k;
}

bool ValueRanges::fits_u32(Reg r, Type t) const {
  return is_int(t) && of(r, t).hi <= 0xffffffffu;
}

bool ValueRanges::scaled_multiple_of(Reg r, Type t, uint64_t scale, uint64_t align) const {
  if (scale == 0 || align <= 1) return true;
  if (!is_int(t)) return false;
  // r * scale is a multiple of 2^(zeros + ctz(scale)) modulo 2^width.
  const uint32_t zeros = std::min<uint32_t>(
      of(r, t).zeros + static_cast<uint32_t>(std::countr_zero(scale)), type_bits(t));
  return zeros >= static_cast<uint32_t>(std::countr_zero(align));
}

} // namespace hologram::opt
