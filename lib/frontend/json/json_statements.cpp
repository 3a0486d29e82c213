// The JSON emitter's statements (json_emitter.h): let, assignments, if, loops, shared arrays,
// library operations, and the kernel as a whole.
#include "hologram/isa/numeric.h"
#include "hologram/support/unreachable.h"
#include "json_emitter.h"
#include "json_reader.h"

#include <cmath>
#include <functional>
#include <limits>
#include <set>

namespace hologram::frontend::json {

// =============================================================================================
// Statements

Var *KernelEmitter::declare(const Node &n, const std::string &name, Type t) {
  Var v;
  v.kind = Var::Kind::Scalar;
  v.type = t;
  v.reg = new_var_reg(n);
  return &vars_.emplace(name, v).first->second;
}

void KernelEmitter::store_var(const Node &n, Var &v, Value val) {
  Type storage = v.type == Type::Pred ? Type::U32 : v.type;
  Value c = convert(n, val, storage);
  b_.emit(Opcode::Mov, storage, {isa::R(v.reg), isa::R(c.reg)});
}

void KernelEmitter::lower_let(const Stmt &s) {
  TempScope scope(*this);
  auto it = vars_.find(s.name);
  if (it != vars_.end() && it->second.kind != Var::Kind::Scalar) {
    error(s, "'" + s.name + "' is an array and cannot be assigned a value");
    return;
  }
  Var *var;
  if (it == vars_.end()) {
    auto info = types_.infer(*s.value);
    if (!info) {
      emit(*s.value); // reports the error
      return;
    }
    var = declare(s, s.name, info->type);
  } else {
    var = &it->second;
  }
  auto v = emit(*s.value, var->type);
  if (!v) return;
  store_var(*s.value, *var,
            implicit(*s.value, *v, var->type, "the assignment to '" + s.name + "'"));
}

void KernelEmitter::lower_assign(const Stmt &s) {
  TempScope scope(*this);
  const Expr &target = *s.target;
  if (target.kind == Expr::Kind::Var) {
    auto it = vars_.find(target.name);
    if (it == vars_.end()) {
      error(target, "assignment to undeclared variable '" + target.name + "'", [&] {
        auto n = suggest(target.name, var_names());
        n.push_back("declare it with a 'let' statement first");
        return n;
      }());
      return;
    }
    if (it->second.kind != Var::Kind::Scalar) {
      error(target, "'" + target.name + "' is an array and cannot be assigned a value");
      return;
    }
    auto v = emit(*s.value, it->second.type);
    if (!v) return;
    store_var(*s.value, it->second, implicit(*s.value, *v, it->second.type, "an assignment"));
    return;
  }
  // Array element.
  auto ai = vars_.find(target.args[0].name);
  Type elem =
      ai != vars_.end() && ai->second.kind != Var::Kind::Scalar ? ai->second.type : Type::F32;
  auto v = emit(*s.value, elem);
  if (!v) return;
  Var *var = nullptr;
  auto addr = element_address(target.args[0], target.args[1], var, true);
  if (!addr) return;
  Value cv = implicit(*s.value, *v, var->type, "a store");
  Type st = array_storage(var->type);
  Reg r = as_reg(*s.value, cv, st);
  b_.emit(var->kind == Var::Kind::Shared ? Opcode::Sts : Opcode::St, st, {*addr, isa::R(r)});
}

void KernelEmitter::lower_if(const Stmt &s) {
  unsigned else_label = new_label(), end_label = new_label();
  {
    TempScope scope(*this);
    auto c = emit(*s.value, Type::Pred);
    if (!c) return;
    unsigned p = as_pred(*s.value, *c);
    b_.bra(s.else_body.empty() ? end_label : else_label, static_cast<int>(p), /*negate=*/true);
  }
  lower_body(s.body);
  if (!s.else_body.empty()) {
    b_.bra(end_label);
    b_.bind(else_label);
    lower_body(s.else_body);
  }
  b_.bind(end_label);
}

namespace {

/// Folds a constant integer expression in its own type (for the direction of a for step).
std::optional<int> constant_sign(const Expr &e, Type t) {
  struct C {
    bool ok;
    long double v;
  };
  std::function<C(const Expr &)> fold = [&](const Expr &x) -> C {
    switch (x.kind) {
    case Expr::Kind::Literal:
      if (x.lit == Expr::Lit::Float) return {true, x.fvalue};
      if (x.lit == Expr::Lit::Bool) return {true, x.bvalue ? 1.0L : 0.0L};
      return {true, x.negative ? -static_cast<long double>(x.magnitude)
                               : static_cast<long double>(x.magnitude)};
    case Expr::Kind::Unary:
      if (x.name == "neg") {
        C a = fold(x.args[0]);
        return {a.ok, -a.v};
      }
      return {false, 0};
    case Expr::Kind::Binary: {
      C a = fold(x.args[0]), b = fold(x.args[1]);
      if (!a.ok || !b.ok) return {false, 0};
      if (x.name == "add") return {true, a.v + b.v};
      if (x.name == "sub") return {true, a.v - b.v};
      if (x.name == "mul") return {true, a.v * b.v};
      return {false, 0};
    }
    case Expr::Kind::Cast: return fold(x.args[0]);
    case Expr::Kind::Call:
    case Expr::Kind::Index:
    case Expr::Kind::Select:
    case Expr::Kind::Var: return {false, 0};
    }
    unreachable_enum("Kind");
  };
  C c = fold(e);
  if (!c.ok) return std::nullopt;
  if (isa::is_unsigned_int(t)) {
    // Wraps in the step's own unsigned type: only zero is zero, everything else is positive.
    return c.v == 0 ? 0 : 1;
  }
  return c.v > 0 ? 1 : (c.v < 0 ? -1 : 0);
}

} // namespace

void KernelEmitter::lower_for(const Stmt &s) {
  Expr zero_lit, one_lit;
  zero_lit.kind = one_lit.kind = Expr::Kind::Literal;
  zero_lit.ptr = one_lit.ptr = s.ptr;
  zero_lit.loc = one_lit.loc = s.loc;
  one_lit.magnitude = 1;
  const Expr &start = s.start ? *s.start : zero_lit;
  const Expr &step = s.step ? *s.step : one_lit;
  // The loop variable has the type of start and stop after the usual conversions.
  bool ok = true;
  Type vt = types_.operand_type(start, *s.stop, ok);
  if (!ok) {
    TempScope scope(*this);
    if (emit(start) && emit(*s.stop)) error(s, "cannot type the loop bounds");
    return;
  }
  if (!isa::is_numeric(vt)) {
    error(*s.stop, "loop bounds must be numbers, not " + type_text(vt));
    return;
  }
  auto it = vars_.find(s.name);
  Var *var;
  if (it == vars_.end())
    var = declare(s, s.name, vt);
  else if (it->second.kind != Var::Kind::Scalar) {
    error(s, "'" + s.name + "' is an array and cannot be a loop variable");
    return;
  } else {
    var = &it->second;
    vt = var->type;
  }
  auto step_info = types_.infer(step);
  Type step_type = step_info ? (step_info->literal ? vt : step_info->type) : vt;
  if (step_info && step_info->literal && step_info->int_literal)
    step_type = isa::is_float(vt) ? vt : Type::I32;
  std::optional<int> direction = constant_sign(step, step_type);
  if (direction && *direction == 0) {
    error(step, "the step of a 'for' loop cannot be zero");
    return;
  }
  // Hidden variables: stop (evaluated once), step in the variable's type and in its own type.
  Reg stop_reg = new_var_reg(s), step_reg = new_var_reg(s), step_own = new_var_reg(s);
  {
    TempScope scope(*this);
    auto sv = emit(start, vt);
    if (!sv) return;
    store_var(start, *var, implicit(start, *sv, vt, "the loop start"));
    auto stv = emit(*s.stop, vt);
    if (!stv) return;
    b_.emit(Opcode::Mov, vt,
            {isa::R(stop_reg), isa::R(implicit(*s.stop, *stv, vt, "the loop bound").reg)});
    auto stepv = emit(step, step_type);
    if (!stepv) return;
    Value own = convert(step, *stepv, step_type);
    if (!isa::is_numeric(own.type)) {
      error(step, "the step must be a number");
      return;
    }
    b_.emit(Opcode::Mov, step_type, {isa::R(step_own), isa::R(own.reg)});
    b_.emit(Opcode::Mov, vt, {isa::R(step_reg), isa::R(convert(step, own, vt).reg)});
  }
  unsigned head = new_label(), cont = new_label(), end = new_label();
  b_.bind(head);
  {
    TempScope scope(*this);
    unsigned go = pred(s);
    auto cmp = [&](isa::CmpCode cc, unsigned p) {
      b_.emit_sub(Opcode::Set, static_cast<uint8_t>(cc), vt,
                  {isa::P(p), isa::R(var->reg), isa::R(stop_reg)});
    };
    if (direction) {
      cmp(*direction > 0 ? isa::CmpCode::Lt : isa::CmpCode::Gt, go);
    } else {
      // Run-time direction: positive steps run while v < stop, negative while v > stop.
      unsigned up = pred(s), down = pred(s), lt = pred(s), gt = pred(s);
      Reg z = zero(s, step_type);
      b_.emit_sub(Opcode::Set, static_cast<uint8_t>(isa::CmpCode::Gt), step_type,
                  {isa::P(up), isa::R(step_own), isa::R(z)});
      b_.emit_sub(Opcode::Set, static_cast<uint8_t>(isa::CmpCode::Lt), step_type,
                  {isa::P(down), isa::R(step_own), isa::R(z)});
      cmp(isa::CmpCode::Lt, lt);
      cmp(isa::CmpCode::Gt, gt);
      b_.emit(Opcode::PAnd, Type::None, {isa::P(lt), isa::P(lt), isa::P(up)});
      b_.emit(Opcode::PAnd, Type::None, {isa::P(gt), isa::P(gt), isa::P(down)});
      b_.emit(Opcode::POr, Type::None, {isa::P(go), isa::P(lt), isa::P(gt)});
    }
    b_.bra(end, static_cast<int>(go), /*negate=*/true);
  }
  lower_loop_body(s.body, end, cont);
  b_.bind(cont);
  b_.emit(Opcode::Add, vt, {isa::R(var->reg), isa::R(var->reg), isa::R(step_reg)});
  b_.bra(head);
  b_.bind(end);
}

/// A loop body: break and continue jump to the given labels.
void KernelEmitter::lower_loop_body(const std::vector<Stmt> &body, unsigned break_label,
                                    unsigned continue_label) {
  loops_.push_back({break_label, continue_label});
  lower_body(body);
  loops_.pop_back();
}

void KernelEmitter::lower_while(const Stmt &s) {
  unsigned head = new_label(), end = new_label();
  b_.bind(head);
  {
    TempScope scope(*this);
    auto c = emit(*s.value, Type::Pred);
    if (!c) return;
    b_.bra(end, static_cast<int>(as_pred(*s.value, *c)), /*negate=*/true);
  }
  lower_loop_body(s.body, end, head);
  b_.bra(head);
  b_.bind(end);
}

void KernelEmitter::lower_shared(const Stmt &s) {
  if (vars_.count(s.name)) {
    error(s, "'" + s.name + "' is already declared");
    return;
  }
  Type st = array_storage(s.element);
  uint32_t size = isa::type_size(st);
  uint64_t offset = (uint64_t{shared_bytes_} + size - 1) / size * size;
  uint64_t end = offset + s.length * size;
  if (end > (uint64_t{1} << 30)) {
    error(s, "shared arrays exceed 1 GiB per block");
    return;
  }
  Var v;
  v.kind = Var::Kind::Shared;
  v.type = s.element;
  v.offset = static_cast<uint32_t>(offset);
  vars_.emplace(s.name, v);
  shared_bytes_ = static_cast<uint32_t>(end);
}

void KernelEmitter::lower_library(const Stmt &s) {
  TempScope scope(*this);
  const isa::OpcodeInfo *row = nullptr;
  std::vector<std::string> names;
  for (const auto &r : isa::opcode_table())
    if (r.family == isa::OpFamily::Library) {
      names.emplace_back(r.mnemonic);
      if (r.mnemonic == s.name) row = &r;
    }
  if (!row) {
    error(s, "unknown library op '" + s.name + "'", suggest(s.name, names));
    return;
  }
  auto operand_names = isa::operand_names(row->opcode);
  std::vector<std::string> known(operand_names.begin(), operand_names.end());
  for (const auto &[name, e] : s.lib_args)
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      auto notes = suggest(name, known);
      notes.push_back("'" + s.name + "' takes: " + [&] {
        std::string all;
        for (const auto &k : known) all += (all.empty() ? "" : ", ") + k;
        return all;
      }());
      error(e, "unknown operand '" + name + "' for '" + s.name + "'", notes);
      return;
    }
  auto find_arg = [&](const std::string &n) -> const Expr * {
    for (const auto &[name, e] : s.lib_args)
      if (name == n) return &e;
    return nullptr;
  };
  // The element type: that of the first array operand.
  Type t = Type::None;
  for (size_t i = 0; i < row->num_operands(); ++i) {
    auto role = row->role(i);
    if (role != isa::OperandRole::BufferParam) continue;
    const Expr *a = find_arg(known[i]);
    if (a && a->kind == Expr::Kind::Var)
      if (auto it = vars_.find(a->name); it != vars_.end() && it->second.kind == Var::Kind::Array) {
        t = it->second.type;
        break;
      }
  }
  if (!isa::is_float(t)) {
    error(s, "library op '" + s.name + "' needs f32 or f64 array parameters");
    return;
  }
  std::vector<Operand> ops;
  for (size_t i = 0; i < row->num_operands(); ++i) {
    auto role = row->role(i);
    const std::string &oname = known[i];
    const Expr *a = find_arg(oname);
    if (role == isa::OperandRole::DstT) { // a register result
      if (!s.result) {
        error(s, "'" + s.name +
                     "' produces a value: name the variable that receives it with \"result\"");
        return;
      }
      ops.push_back(isa::R(0)); // patched below
      continue;
    }
    if (!a) {
      if (role == isa::OperandRole::OptBufferParam) {
        ops.push_back(Operand::none());
        continue;
      }
      if (role == isa::OperandRole::Count) {
        ops.push_back(isa::N(0));
        continue;
      }
      error(s, "'" + s.name + "' is missing the operand '" + oname + "'");
      return;
    }
    if (role == isa::OperandRole::BufferParam || role == isa::OperandRole::OptBufferParam) {
      auto it = a->kind == Expr::Kind::Var ? vars_.find(a->name) : vars_.end();
      if (it == vars_.end() || it->second.kind != Var::Kind::Array) {
        error(*a, "operand '" + oname + "' of '" + s.name + "' must name an array parameter",
              suggest(a->name, var_names()));
        return;
      }
      if (it->second.type != t) {
        error(*a, "operand '" + oname + "' is an array of " + type_text(it->second.type) +
                      ", but '" + s.name + "' works on " + type_text(t) + " here");
        return;
      }
      it->second.loaded = true;
      if (i == 0) it->second.stored = true;
      ops.push_back(Operand::param(it->second.param));
      continue;
    }
    if (role == isa::OperandRole::Count) {
      bool flag = a->kind == Expr::Kind::Literal &&
                  (a->lit == Expr::Lit::Bool ||
                   (a->lit == Expr::Lit::Int && !a->negative && a->magnitude <= 1));
      if (!flag) {
        error(*a, "operand '" + oname + "' must be the constant true/false (or 1/0)");
        return;
      }
      ops.push_back(isa::N(a->lit == Expr::Lit::Bool ? a->bvalue : a->magnitude));
      continue;
    }
    Type want = role == isa::OperandRole::SrcU64 ? Type::U64 : t;
    auto v = emit(*a, want);
    if (!v) return;
    if (v->type == Type::Pred) {
      error(*a, "operand '" + oname + "' must be a number");
      return;
    }
    ops.push_back(isa::R(implicit(*a, *v, want, "a library operand").reg));
  }
  Reg result_reg = 0;
  if (s.result) {
    auto it = vars_.find(*s.result);
    Var *var = it == vars_.end() ? declare(s, *s.result, t) : &it->second;
    if (var->kind != Var::Kind::Scalar || var->type != t) {
      error(s, "the result variable '" + *s.result + "' must be a " + type_text(t) + " scalar");
      return;
    }
    result_reg = var->reg;
    for (size_t i = 0; i < row->num_operands(); ++i)
      if (row->role(i) == isa::OperandRole::DstT) ops[i] = isa::R(result_reg);
  }
  auto &inst = b_.emit(row->opcode, t, {});
  inst.operands = std::move(ops);
}

void KernelEmitter::lower(const Stmt &s) {
  // Every instruction a statement emits points back to that statement's JSON node.
  size_t first = b_.size();
  lower_statement(s);
  for (size_t i = first; i < b_.size(); ++i) // nested statements tagged theirs already
    if (b_.inst(i).loc.line == 0) b_.inst(i).loc = s.loc;
  pointers_.emplace(std::pair{s.loc.line, s.loc.col}, s.ptr);
}

void KernelEmitter::lower_statement(const Stmt &s) {
  if (flow_.unreachable.count(&s)) report(Severity::Warning, s, "this statement is never executed");
  switch (s.kind) {
  case Stmt::Kind::Let: lower_let(s); break;
  case Stmt::Kind::Assign: lower_assign(s); break;
  case Stmt::Kind::If: lower_if(s); break;
  case Stmt::Kind::For: lower_for(s); break;
  case Stmt::Kind::While: lower_while(s); break;
  case Stmt::Kind::Break:
  case Stmt::Kind::Continue:
    if (loops_.empty()) {
      error(s, std::string("'") + (s.kind == Stmt::Kind::Break ? "break" : "continue") +
                   "' outside a loop");
      return;
    }
    b_.bra(s.kind == Stmt::Kind::Break ? loops_.back().break_label : loops_.back().continue_label);
    break;
  case Stmt::Kind::Return: b_.emit(Opcode::Exit, Type::None, {}); break;
  case Stmt::Kind::Barrier: b_.emit(Opcode::BarSync, Type::None, {isa::N(0)}); break;
  case Stmt::Kind::ExprStmt: {
    TempScope scope(*this);
    if (s.value->kind != Expr::Kind::Call) {
      report(Severity::Warning, *s.value, "the value of this expression is not used");
      emit(*s.value);
      break;
    }
    emit_call(*s.value, /*statement=*/true);
    break;
  }
  case Stmt::Kind::Shared: lower_shared(s); break;
  case Stmt::Kind::Library: lower_library(s); break;
  }
}

void KernelEmitter::lower_body(const std::vector<Stmt> &body) {
  for (const auto &s : body) lower(s);
}

std::optional<isa::Kernel> KernelEmitter::run() {
  // Parameters: arrays become buffers; scalars are read into their variables at entry.
  for (const auto &p : decl_.params) {
    if (p.array) {
      Var v;
      v.kind = Var::Kind::Array;
      v.type = p.type;
      v.param = b_.buffer(p.name, array_storage(p.type), isa::Access::ReadWrite);
      vars_.emplace(p.name, v);
    } else {
      Type storage = p.type == Type::Pred ? Type::U32 : p.type;
      unsigned idx = b_.scalar(p.name, storage);
      Var *v = declare(p, p.name, p.type);
      b_.emit(Opcode::Param, storage, {isa::R(v->reg), Operand::param(idx)});
    }
  }
  lower_body(decl_.body);
  if (failed_) return std::nullopt;
  isa::Kernel k = b_.finish();
  k.shared_bytes = shared_bytes_;
  for (const auto &[name, v] : vars_)
    if (v.kind == Var::Kind::Array) {
      auto &p = k.params[v.param];
      p.access = v.stored && v.loaded ? isa::Access::ReadWrite
                 : v.stored           ? isa::Access::Write
                                      : isa::Access::Read;
    }
  return k;
}

} // namespace hologram::frontend::json
