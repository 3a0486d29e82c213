// The lane-affinity (contiguity) analysis: see lane_affinity.h. Flow-insensitive over
// (register, type), like the code generators' storage: each slot's form is the join of the
// forms its definitions compute, iterated to a fixpoint. Constants are tracked so that
// `mul rI, %gid, r4` with `mov.imm r4, 4` is known to step by 4. A definition under a guard
// or in a block that only some lanes run (divergence from isa::analyse_uniformity) has no
// form: lanes would keep different earlier values. Elsewhere every running lane takes the
// same path, so definitions that agree on a form may differ in their uniform part.
#include "hologram/opt/lane_affinity.h"

#include "hologram/isa/accesses.h"

namespace hologram::opt {

using namespace isa;

namespace {

/// Top (no definition seen) < a constant < uniform < Bottom (no known step), and
/// Top < uniform + stride * id < Bottom.
struct Form {
  enum Kind : uint8_t { Top, Const, Uniform, Stepped, Bottom } kind = Top;
  uint64_t value = 0; ///< Const
  LaneStep step;      ///< Stepped
  friend bool operator==(const Form &, const Form &) = default;
};

Form constant(uint64_t v) {
  return {Form::Const, v, {}};
}
Form uniform() {
  return {Form::Uniform, 0, {}};
}
Form bottom() {
  return {Form::Bottom, 0, {}};
}
Form stepped(LaneId id, int64_t stride) {
  return stride == 0 ? uniform() : Form{Form::Stepped, 0, {id, stride}};
}

Form join(const Form &a, const Form &b) {
  if (a.kind == Form::Top) return b;
  if (b.kind == Form::Top || a == b) return a;
  const bool ua = a.kind == Form::Const || a.kind == Form::Uniform;
  const bool ub = b.kind == Form::Const || b.kind == Form::Uniform;
  return ua && ub ? uniform() : bottom();
}

/// A special register's form: the lane ids step, the others are uniform or unknown.
Form special_form(Special s) {
  switch (s) {
  case Special::Gid: return stepped(LaneId::Gid, 1);
  case Special::GidX: return stepped(LaneId::GidX, 1);
  case Special::LaneX: return stepped(LaneId::LaneX, 1);
  case Special::LaneY:
  case Special::LaneZ:
  case Special::GidY:
  case Special::GidZ: return bottom();
  case Special::BlockX:
  case Special::BlockY:
  case Special::BlockZ:
  case Special::BdimX:
  case Special::BdimY:
  case Special::BdimZ:
  case Special::GdimX:
  case Special::GdimY:
  case Special::GdimZ:
  case Special::Gsize: return uniform();
  }
  return bottom();
}

bool is_int64(Type t) {
  return t == Type::U64 || t == Type::I64;
}

class Analysis {
public:
  Analysis(const Kernel &k, const Cfg &cfg, const Uniformity &u) : k_(k), cfg_(cfg), u_(u) {}

  std::map<TypedSlot, Form> run() {
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t i = 0; i < k_.insts.size(); ++i) {
        const Instruction &inst = k_.insts[i];
        instruction_defs(inst, defs_);
        if (defs_.size() != 1 || defs_[0].pred || is_special(defs_[0].reg)) continue;
        const TypedSlot slot{false, defs_[0].reg, defs_[0].type};
        Form f = evaluate(inst);
        // A guard, or a block only some lanes run, mixes this definition with the previous
        // value lane by lane.
        const bool divergent = u_.divergent[cfg_.block_of[i]] != 0;
        if (f.kind != Form::Top && (divergent || inst.guard.present)) f = bottom();
        Form &cur = forms_[slot];
        const Form next = join(cur, f);
        if (next != cur) {
          cur = next;
          changed = true;
        }
      }
    }
    return std::move(forms_);
  }

private:
  Form read(const Operand &o, Type t) const {
    if (o.kind != OperandKind::Reg) return bottom();
    if (is_special(o.index)) return special_form(reg_special(o.index));
    auto it = forms_.find({false, o.index, t});
    return it == forms_.end() ? Form{} : it->second; // Top: no definition seen yet
  }

  static Form add(const Form &a, const Form &b, int64_t sign) {
    if (a.kind == Form::Top || b.kind == Form::Top) return {};
    if (a.kind == Form::Bottom || b.kind == Form::Bottom) return bottom();
    if (a.kind == Form::Const && b.kind == Form::Const)
      return constant(a.value + (sign > 0 ? b.value : -b.value));
    if (a.kind != Form::Stepped && b.kind != Form::Stepped) return uniform();
    if (a.kind == Form::Stepped && b.kind == Form::Stepped) {
      if (a.step.id != b.step.id) return bottom();
      return stepped(*a.step.id, a.step.stride + sign * b.step.stride);
    }
    if (a.kind == Form::Stepped) return a;
    return stepped(*b.step.id, sign * b.step.stride);
  }

  static Form mul(const Form &a, const Form &b) {
    if (a.kind == Form::Top || b.kind == Form::Top) return {};
    if (a.kind == Form::Const && b.kind == Form::Const) return constant(a.value * b.value);
    if (a.kind == Form::Stepped && b.kind == Form::Const)
      return stepped(*a.step.id, a.step.stride * static_cast<int64_t>(b.value));
    if (b.kind == Form::Stepped && a.kind == Form::Const) return mul(b, a);
    if (a.kind == Form::Uniform && b.kind != Form::Bottom && b.kind != Form::Stepped)
      return uniform();
    if (b.kind == Form::Uniform && a.kind == Form::Const) return uniform();
    return bottom();
  }

  Form evaluate(const Instruction &inst) const {
    const auto &ops = inst.operands;
    const Type t = inst.type;
    if (inst.op == Opcode::MovImm) return constant(ops[1].imm);
    if (inst.op == Opcode::Param) return uniform();
    if (inst.op == Opcode::Mov) return read(ops[1], t);
    if (inst.op == Opcode::Cvt) {
      // Between the 64-bit integers, or widening an unsigned 32-bit lane id (no wrap).
      const Form s = read(ops[1], inst.type2);
      if (s.kind != Form::Stepped || (is_int64(t) && is_int64(inst.type2))) return s;
      const bool lane_id = s.step.id == LaneId::LaneX && s.step.stride == 1;
      return is_int64(t) && inst.type2 == Type::U32 && lane_id ? s : bottom();
    }
    if (!is_int64(t)) return unmodelled(inst);
    if (inst.op == Opcode::Add) return add(read(ops[1], t), read(ops[2], t), 1);
    if (inst.op == Opcode::Sub) return add(read(ops[1], t), read(ops[2], t), -1);
    if (inst.op == Opcode::Mul) return mul(read(ops[1], t), read(ops[2], t));
    if (inst.op == Opcode::Mad)
      return add(mul(read(ops[1], t), read(ops[2], t)), read(ops[3], t), 1);
    if (inst.op == Opcode::Shl) {
      const Form amount = read(ops[2], Type::U32);
      if (amount.kind != Form::Const) return unmodelled(inst);
      return mul(read(ops[1], t), constant(uint64_t{1} << (amount.value & 63)));
    }
    return unmodelled(inst);
  }

  /// An instruction the analysis does not model: uniform when the uniformity analysis says
  /// its result is, else unknown.
  Form unmodelled(const Instruction &inst) const {
    instruction_defs(inst, defs_);
    return u_.varying.count({false, defs_[0].reg, defs_[0].type}) ? bottom() : uniform();
  }

  const Kernel &k_;
  const Cfg &cfg_;
  const Uniformity &u_;
  std::map<TypedSlot, Form> forms_;
  mutable std::vector<RegAccess> defs_;
};

} // namespace

namespace {
std::optional<LaneStep> to_step(const Form &f) {
  if (f.kind == Form::Stepped) return f.step;
  if (f.kind == Form::Const || f.kind == Form::Uniform) return LaneStep{};
  return std::nullopt;
}
} // namespace

LaneAffinity::LaneAffinity(const Kernel &k, const Cfg &cfg, const Uniformity &u)
    : params_read_(k.params.size(), false) {
  for (const auto &[slot, f] : Analysis(k, cfg, u).run()) steps_[slot] = to_step(f);
  for (const Instruction &inst : k.insts) {
    if (!(info(inst.op).flags & kFlagReadsMemory)) continue;
    for (const Operand &o : inst.operands) {
      if (o.kind == OperandKind::Param) params_read_[o.index] = true; // whole-launch operands
      if (o.kind != OperandKind::Addr) continue;
      switch (o.addr.base) {
      case AddrBase::Param:
      case AddrBase::Pool: params_read_[o.addr.base_id] = true; break;
      case AddrBase::Reg: raw_reads_ = true; break;
      case AddrBase::Shared:
      case AddrBase::Class:
      case AddrBase::Boundary: break;
      }
    }
  }
}

bool LaneAffinity::write_only(const Address &a) const {
  return a.base == AddrBase::Param && !raw_reads_ && !params_read_[a.base_id];
}

std::optional<LaneStep> LaneAffinity::step_of(Reg r, Type t) const {
  if (is_special(r)) return to_step(special_form(reg_special(r)));
  auto it = steps_.find({false, r, t});
  return it == steps_.end() ? std::nullopt : it->second;
}

std::optional<LaneStep> LaneAffinity::offset_step(const Address &a) const {
  if (a.index == kNoReg) return LaneStep{};
  auto s = step_of(a.index, Type::U64);
  if (s) s->stride *= a.scale;
  return s;
}

} // namespace hologram::opt
