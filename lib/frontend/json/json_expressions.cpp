// The JSON emitter's expressions (json_emitter.h): conversions, literals, variables,
// operators, indexing, calls, atomics and select.
#include "hologram/isa/numeric.h"
#include "hologram/isa/text.h"
#include "hologram/support/unreachable.h"
#include "json_emitter.h"
#include "json_reader.h"

#include <cmath>
#include <functional>
#include <limits>
#include <set>

namespace hologram::frontend::json {

// =============================================================================================
// Conversions

Value KernelEmitter::convert(const Node &n, Value v, Type to) {
  if (v.type == to) return v;
  Value out;
  out.type = to;
  if (to == Type::Pred) {
    out.pred = pred(n);
    Reg z = zero(n, v.type);
    // Truthiness: any non-zero value, and NaN, is true.
    auto cc = isa::is_float(v.type) ? isa::CmpCode::Neu : isa::CmpCode::Ne;
    b_.emit_sub(Opcode::Set, static_cast<uint8_t>(cc), v.type,
                {isa::P(out.pred), isa::R(v.reg), isa::R(z)});
    return out;
  }
  out.reg = temp(n);
  if (v.type == Type::Pred) {
    Reg one = imm(n, to, isa::is_float(to) ? isa::float_bits(to, 1.0) : 1);
    Reg z = zero(n, to);
    b_.emit(Opcode::Sel, to, {isa::R(out.reg), isa::P(v.pred), isa::R(one), isa::R(z)});
    return out;
  }
  b_.emit_cvt(to, v.type, out.reg, v.reg);
  return out;
}

Value KernelEmitter::implicit(const Node &n, Value v, Type to, const std::string &context) {
  if (lossy(v.type, to))
    report(Severity::Warning, n,
           "implicit conversion from " + type_text(v.type) + " to " + type_text(to) + " in " +
               context + " may change the value [-Wconversion]",
           {"write an explicit cast, e.g. {\"type\": \"cast\", \"dtype\": \"" + type_text(to) +
            "\", ...}"});
  return convert(n, v, to);
}

// =============================================================================================
// Expressions

std::optional<Value> KernelEmitter::emit_literal(const Expr &e, Type t) {
  if (t == Type::Pred || (e.lit == Expr::Lit::Bool && !e.dtype)) {
    bool v = e.lit == Expr::Lit::Bool
                 ? e.bvalue
                 : (e.lit == Expr::Lit::Float ? e.fvalue != 0 : e.magnitude != 0);
    Value out{Type::Pred, 0, pred(e)};
    Reg z = zero(e, Type::U32);
    b_.emit_sub(Opcode::Set, static_cast<uint8_t>(v ? isa::CmpCode::Eq : isa::CmpCode::Ne),
                Type::U32, {isa::P(out.pred), isa::R(z), isa::R(z)});
    return out;
  }
  if (!ExprTypes::literal_fits(e, t)) {
    error(e, "the literal " + std::string(e.negative ? "-" : "") + std::to_string(e.magnitude) +
                 " does not fit in " + type_text(t));
    return std::nullopt;
  }
  uint64_t bits;
  if (isa::is_float(t)) {
    double v = e.lit == Expr::Lit::Float  ? e.fvalue
               : e.lit == Expr::Lit::Bool ? (e.bvalue ? 1.0 : 0.0)
                                          : (e.negative ? -static_cast<double>(e.magnitude)
                                                        : static_cast<double>(e.magnitude));
    bits = isa::float_bits(t, v);
  } else if (e.lit == Expr::Lit::Float) {
    // A float literal where an integer is needed: truncate (like a cast), warning if inexact.
    if (std::trunc(e.fvalue) != e.fvalue)
      report(Severity::Warning, e,
             "the literal " + isa::format_literal(Type::F64, isa::f64_bits(e.fvalue)) +
                 " is truncated to " + type_text(t) + " [-Wconversion]");
    int64_t v = static_cast<int64_t>(e.fvalue);
    bits = static_cast<uint64_t>(v);
  } else if (e.lit == Expr::Lit::Bool) {
    bits = e.bvalue ? 1 : 0;
  } else {
    bits = e.negative ? ~e.magnitude + 1 : e.magnitude;
  }
  unsigned w = isa::type_bits(t);
  if (w < 64) bits &= (uint64_t{1} << w) - 1;
  return Value{t, imm(e, t, bits), 0};
}

std::optional<Value> KernelEmitter::emit_var(const Expr &e) {
  auto it = vars_.find(e.name);
  if (it == vars_.end()) {
    bool later = false;
    std::function<void(const std::vector<Stmt> &)> scan = [&](const std::vector<Stmt> &body) {
      for (const auto &s : body) {
        if ((s.kind == Stmt::Kind::Let || s.kind == Stmt::Kind::For) && s.name == e.name)
          later = true;
        scan(s.body);
        scan(s.else_body);
      }
    };
    scan(decl_.body);
    if (later)
      error(e, "variable '" + e.name + "' is read before it is assigned",
            {"its first assignment comes later in the kernel"});
    else
      error(e, "unknown variable '" + e.name + "'", suggest(e.name, var_names()));
    return std::nullopt;
  }
  Var &v = it->second;
  if (v.kind != Var::Kind::Scalar) {
    error(e, "'" + e.name + "' is an array; index it to read an element");
    return std::nullopt;
  }
  if (flow_.maybe_unassigned.count(&e)) {
    error(e, "variable '" + e.name + "' may be used before it is assigned on some path");
    return std::nullopt;
  }
  if (v.type == Type::Pred) {
    Value out{Type::Pred, 0, pred(e)};
    Reg z = zero(e, Type::U32);
    b_.emit_sub(Opcode::Set, static_cast<uint8_t>(isa::CmpCode::Ne), Type::U32,
                {isa::P(out.pred), isa::R(v.reg), isa::R(z)});
    return out;
  }
  return Value{v.type, v.reg, 0};
}

std::optional<Value> KernelEmitter::emit(const Expr &e, std::optional<Type> want) {
  switch (e.kind) {
  case Expr::Kind::Literal: {
    auto info = types_.infer(e);
    Type t = info->type;
    if (info->literal && want && (*want == Type::Pred || isa::is_numeric(*want))) {
      // An untyped literal takes the type its context needs (a float literal stays float).
      if (info->int_literal || isa::is_float(*want)) t = *want;
    }
    if (e.dtype) t = *e.dtype;
    return emit_literal(e, t);
  }
  case Expr::Kind::Var: return emit_var(e);
  case Expr::Kind::Binary:
    if (e.name == "and" || e.name == "or") return emit_logical(e);
    return emit_binary(e);
  case Expr::Kind::Unary: return emit_unary(e);
  case Expr::Kind::Index: return emit_index(e);
  case Expr::Kind::Call: return emit_call(e, false);
  case Expr::Kind::Select: return emit_select(e);
  case Expr::Kind::Cast: {
    auto v = emit(e.args[0], *e.dtype);
    if (!v) return std::nullopt;
    return convert(e, *v, *e.dtype);
  }
  }
  return std::nullopt;
}

std::optional<Value> KernelEmitter::emit_binary(const Expr &e) {
  static const std::map<std::string, Opcode> kArith = {
      {"add", Opcode::Add},   {"sub", Opcode::Sub},    {"mul", Opcode::Mul},
      {"div", Opcode::Div},   {"mod", Opcode::Rem},    {"min", Opcode::Min},
      {"max", Opcode::Max},   {"pow", Opcode::Pow},    {"bit_and", Opcode::And},
      {"bit_or", Opcode::Or}, {"bit_xor", Opcode::Xor}};
  static const std::map<std::string, isa::CmpCode> kCmp = {
      {"lt", isa::CmpCode::Lt}, {"le", isa::CmpCode::Le}, {"gt", isa::CmpCode::Gt},
      {"ge", isa::CmpCode::Ge}, {"eq", isa::CmpCode::Eq}, {"ne", isa::CmpCode::Ne}};
  static const std::vector<std::string> kAll = {
      "add", "sub", "mul", "div", "mod",     "floor_div", "pow",     "lt",  "le",  "gt",  "ge",
      "eq",  "ne",  "and", "or",  "bit_and", "bit_or",    "bit_xor", "shl", "shr", "min", "max"};
  const std::string &op = e.name;
  bool v11_op =
      op != "add" && op != "sub" && op != "mul" && op != "div" && op != "mod" && !kCmp.count(op);
  if (std::find(kAll.begin(), kAll.end(), op) == kAll.end()) {
    std::vector<std::string> notes = suggest(op, kAll);
    if (op == "unknown")
      notes.push_back("the Python compiler writes \"unknown\" for //, **, << and bit operators; "
                      "use floor_div, pow, shl, bit_and, ... (version 1.1)");
    error(e, "unknown binary operator '" + op + "'", notes);
    return std::nullopt;
  }
  if (v11_op && decl_.version != "1.1") {
    error(e, "the operator '" + op + "' needs \"version\": \"1.1\"");
    return std::nullopt;
  }
  const Expr &l = e.args[0], &r = e.args[1];
  if (op == "shl" || op == "shr") {
    auto li = types_.infer(l);
    auto lv = emit(l, li ? std::optional<Type>(li->type) : std::nullopt);
    auto rv = emit(r, Type::U32);
    if (!lv || !rv) return std::nullopt;
    if (!isa::is_int(lv->type)) {
      error(e, "'" + op + "' needs an integer left operand, not " + type_text(lv->type));
      return std::nullopt;
    }
    if (!isa::is_int(rv->type)) {
      error(r, "a shift amount must be an integer, not " + type_text(rv->type));
      return std::nullopt;
    }
    Reg amount = as_reg(r, *rv, Type::U32);
    Value out{lv->type, temp(e), 0};
    b_.emit(op == "shl" ? Opcode::Shl : Opcode::Shr, lv->type,
            {isa::R(out.reg), isa::R(lv->reg), isa::R(amount)});
    return out;
  }
  bool ok = true;
  Type t = types_.operand_type(l, r, ok);
  if (!ok) { // report the failing side
    if (!emit(l)) return std::nullopt;
    if (!emit(r)) return std::nullopt;
    return std::nullopt;
  }
  if (op == "pow" && !isa::is_float(t)) t = Type::F32;
  bool is_cmp = kCmp.count(op) > 0;
  if (t == Type::Pred) {
    if (op != "eq" && op != "ne") {
      error(e, "'" + op + "' is not defined on bool operands");
      return std::nullopt;
    }
    t = Type::U32; // compare truth values as 0/1
  }
  bool int_only = op == "bit_and" || op == "bit_or" || op == "bit_xor";
  if (int_only && !isa::is_int(t)) {
    error(e, "'" + op + "' needs integer operands, not " + type_text(t));
    return std::nullopt;
  }
  auto lv = emit_as(l, t), rv = emit_as(r, t);
  if (!lv || !rv) return std::nullopt;
  if (is_cmp) {
    isa::CmpCode cc = kCmp.at(op);
    if (isa::is_float(t) && cc == isa::CmpCode::Ne) cc = isa::CmpCode::Neu; // NaN != x is true
    Value out{Type::Pred, 0, pred(e)};
    b_.emit_sub(Opcode::Set, static_cast<uint8_t>(cc), t,
                {isa::P(out.pred), isa::R(lv->reg), isa::R(rv->reg)});
    return out;
  }
  Value out{t, temp(e), 0};
  if (op == "floor_div") {
    if (isa::is_float(t)) {
      b_.emit(Opcode::Div, t, {isa::R(out.reg), isa::R(lv->reg), isa::R(rv->reg)});
      b_.emit(Opcode::Floor, t, {isa::R(out.reg), isa::R(out.reg)});
      return out;
    }
    b_.emit(Opcode::Div, t, {isa::R(out.reg), isa::R(lv->reg), isa::R(rv->reg)});
    if (isa::is_signed_int(t)) {
      // q -= 1 when the remainder is non-zero and the operands have opposite signs.
      Reg rem = temp(e), z = zero(e, t), one = imm(e, t, 1), adj = temp(e);
      unsigned p1 = pred(e), p2 = pred(e), p3 = pred(e);
      b_.emit(Opcode::Rem, t, {isa::R(rem), isa::R(lv->reg), isa::R(rv->reg)});
      b_.emit_sub(Opcode::Set, static_cast<uint8_t>(isa::CmpCode::Ne), t,
                  {isa::P(p1), isa::R(rem), isa::R(z)});
      b_.emit(Opcode::Xor, t, {isa::R(adj), isa::R(rem), isa::R(rv->reg)});
      b_.emit_sub(Opcode::Set, static_cast<uint8_t>(isa::CmpCode::Lt), t,
                  {isa::P(p2), isa::R(adj), isa::R(z)});
      b_.emit(Opcode::PAnd, Type::None, {isa::P(p3), isa::P(p1), isa::P(p2)});
      b_.emit(Opcode::Sel, t, {isa::R(adj), isa::P(p3), isa::R(one), isa::R(z)});
      b_.emit(Opcode::Sub, t, {isa::R(out.reg), isa::R(out.reg), isa::R(adj)});
    }
    return out;
  }
  b_.emit(kArith.at(op), t, {isa::R(out.reg), isa::R(lv->reg), isa::R(rv->reg)});
  return out;
}

std::optional<Value> KernelEmitter::emit_logical(const Expr &e) {
  if (decl_.version != "1.1") {
    error(e, "the operator '" + e.name + "' needs \"version\": \"1.1\"");
    return std::nullopt;
  }
  // Short-circuit: the right operand runs only when it decides the result.
  bool is_and = e.name == "and";
  Value out{Type::Pred, 0, pred(e)};
  auto l = emit(e.args[0], Type::Pred);
  if (!l) return std::nullopt;
  unsigned lp = as_pred(e.args[0], *l);
  b_.emit(Opcode::PAnd, Type::None, {isa::P(out.pred), isa::P(lp), isa::P(lp)});
  unsigned done = new_label();
  b_.bra(done, static_cast<int>(lp), /*negate=*/is_and);
  auto r = emit(e.args[1], Type::Pred);
  if (!r) return std::nullopt;
  unsigned rp = as_pred(e.args[1], *r);
  b_.emit(Opcode::PAnd, Type::None, {isa::P(out.pred), isa::P(rp), isa::P(rp)});
  b_.bind(done);
  return out;
}

std::optional<Value> KernelEmitter::emit_unary(const Expr &e) {
  const std::string &op = e.name;
  if (op != "neg" && op != "not" && op != "bit_not") {
    error(e, "unknown unary operator '" + op + "'", suggest(op, {"neg", "not", "bit_not"}));
    return std::nullopt;
  }
  if (op == "not") {
    auto v = emit(e.args[0], Type::Pred);
    if (!v) return std::nullopt;
    unsigned p = as_pred(e.args[0], *v);
    Value out{Type::Pred, 0, pred(e)};
    b_.emit(Opcode::PNot, Type::None, {isa::P(out.pred), isa::P(p)});
    return out;
  }
  auto info = types_.infer(e.args[0]);
  auto v = emit(e.args[0], info ? std::optional<Type>(info->type) : std::nullopt);
  if (!v) return std::nullopt;
  if (v->type == Type::Pred || (op == "bit_not" && !isa::is_int(v->type))) {
    error(e, "'" + op + "' is not defined on " + type_text(v->type));
    return std::nullopt;
  }
  Value out{v->type, temp(e), 0};
  b_.emit(op == "neg" ? Opcode::Neg : Opcode::Not, v->type, {isa::R(out.reg), isa::R(v->reg)});
  return out;
}

std::optional<isa::Operand> KernelEmitter::element_address(const Expr &array, const Expr &index,
                                                           Var *&var, bool store) {
  auto it = vars_.find(array.name);
  if (it == vars_.end()) {
    error(array, "unknown array '" + array.name + "'", suggest(array.name, var_names()));
    return std::nullopt;
  }
  var = &it->second;
  if (var->kind == Var::Kind::Scalar) {
    error(array, "'" + array.name + "' is a " + type_text(var->type) + " scalar, not an array");
    return std::nullopt;
  }
  auto iv = emit(index, Type::U64);
  if (!iv) return std::nullopt;
  if (!isa::is_int(iv->type)) {
    error(index, "an array index must be an integer, not " + type_text(iv->type));
    return std::nullopt;
  }
  Reg idx = as_reg(index, *iv, Type::U64);
  Type st = array_storage(var->type);
  (store ? var->stored : var->loaded) = true;
  if (var->kind == Var::Kind::Shared) return isa::shared_mem(idx, isa::type_size(st), var->offset);
  return isa::mem(var->param, idx, isa::type_size(st));
}

std::optional<Value> KernelEmitter::emit_index(const Expr &e) {
  Var *var = nullptr;
  auto addr = element_address(e.args[0], e.args[1], var, false);
  if (!addr) return std::nullopt;
  Type st = array_storage(var->type);
  Reg r = temp(e);
  b_.emit(var->kind == Var::Kind::Shared ? Opcode::Lds : Opcode::Ld, st, {isa::R(r), *addr});
  Value v{st, r, 0};
  if (var->type == Type::Pred) return convert(e, v, Type::Pred);
  return v;
}

std::optional<Value> KernelEmitter::emit_atomic(const Expr &e, const std::string &fn) {
  static const std::map<std::string, isa::AtomicOp> kOps = {
      {"add", isa::AtomicOp::Add},   {"min", isa::AtomicOp::Min}, {"max", isa::AtomicOp::Max},
      {"xchg", isa::AtomicOp::Xchg}, {"and", isa::AtomicOp::And}, {"or", isa::AtomicOp::Or},
      {"xor", isa::AtomicOp::Xor}};
  std::string name = fn.substr(7);
  std::optional<Type> suffix;
  if (name.starts_with("add_")) {
    suffix = parse_scalar_type(name.substr(4));
    name = "add";
  }
  bool cas = name == "cas";
  size_t want_args = cas ? 4 : 3;
  if (e.args.size() != want_args) {
    error(e, "'" + fn + "' takes " + std::to_string(want_args) + " arguments (array, index, " +
                 (cas ? "expected, new" : "value") + "), got " + std::to_string(e.args.size()));
    return std::nullopt;
  }
  if (!cas && !kOps.count(name)) {
    error(e, "unknown atomic '" + fn + "'", suggest(fn, builtin_names()));
    return std::nullopt;
  }
  if (e.args[0].kind != Expr::Kind::Var) {
    error(e.args[0], "the first argument of '" + fn + "' must name an array");
    return std::nullopt;
  }
  Var *var = nullptr;
  auto addr = element_address(e.args[0], e.args[1], var, true);
  if (!addr) return std::nullopt;
  var->loaded = true;
  Type t = var->type;
  if (suffix && *suffix != t) {
    error(e, "'" + fn + "' works on " + type_text(*suffix) + " arrays, but '" + e.args[0].name +
                 "' holds " + type_text(t));
    return std::nullopt;
  }
  if (!isa::types::kAtomic.contains(t) || (cas && !isa::types::kAtomicInt.contains(t))) {
    error(e, "atomics are defined on 32- and 64-bit elements (" +
                 std::string(cas ? "integers" : "and floats") + "), not " + type_text(t));
    return std::nullopt;
  }
  auto v = emit(e.args[2], t);
  if (!v) return std::nullopt;
  Reg vr = implicit(e.args[2], *v, t, "an atomic operand").reg;
  Value out{t, temp(e), 0};
  if (cas) {
    auto n = emit(e.args[3], t);
    if (!n) return std::nullopt;
    Reg nr = implicit(e.args[3], *n, t, "an atomic operand").reg;
    b_.emit(Opcode::AtomCas, t, {isa::R(out.reg), *addr, isa::R(vr), isa::R(nr)});
  } else {
    b_.emit_sub(Opcode::Atom, static_cast<uint8_t>(kOps.at(name)), t,
                {isa::R(out.reg), *addr, isa::R(vr)});
  }
  return out;
}

std::optional<Value> KernelEmitter::emit_call(const Expr &e, bool statement) {
  const std::string &f = e.name;
  auto nargs = e.args.size();
  auto arity_error = [&](const std::string &want) {
    error(e, "'" + f + "' takes " + want + " argument(s), got " + std::to_string(nargs));
    return std::nullopt;
  };
  // Launch geometry.
  if (f.starts_with("get_")) {
    static const std::map<std::string, std::array<isa::Special, 3>> kGeom = {
        {"get_global_id", {isa::Special::GidX, isa::Special::GidY, isa::Special::GidZ}},
        {"get_local_id", {isa::Special::LaneX, isa::Special::LaneY, isa::Special::LaneZ}},
        {"get_group_id", {isa::Special::BlockX, isa::Special::BlockY, isa::Special::BlockZ}},
        {"get_local_size", {isa::Special::BdimX, isa::Special::BdimY, isa::Special::BdimZ}},
        {"get_num_groups", {isa::Special::GdimX, isa::Special::GdimY, isa::Special::GdimZ}},
        {"get_global_size", {isa::Special::GdimX, isa::Special::GdimY, isa::Special::GdimZ}}};
    auto it = kGeom.find(f);
    if (it == kGeom.end()) {
      error(e, "unknown function '" + f + "'", suggest(f, builtin_names()));
      return std::nullopt;
    }
    if (nargs > 1) return arity_error("0 or 1");
    unsigned dim = 0;
    if (nargs == 1) {
      const Expr &a = e.args[0];
      if (a.kind != Expr::Kind::Literal || a.lit != Expr::Lit::Int || a.negative ||
          a.magnitude > 2) {
        error(a, "the dimension of '" + f + "' must be the constant 0, 1 or 2");
        return std::nullopt;
      }
      dim = static_cast<unsigned>(a.magnitude);
    }
    Reg special = isa::special_reg(it->second[dim]);
    if (f != "get_global_size") return Value{isa::special_type(it->second[dim]), special, 0};
    static const isa::Special kBdim[] = {isa::Special::BdimX, isa::Special::BdimY,
                                         isa::Special::BdimZ};
    Reg g = temp(e), bd = temp(e), out = temp(e);
    b_.emit_cvt(Type::U64, Type::U32, g, special);
    b_.emit_cvt(Type::U64, Type::U32, bd, isa::special_reg(kBdim[dim]));
    b_.emit(Opcode::Mul, Type::U64, {isa::R(out), isa::R(g), isa::R(bd)});
    return Value{Type::U64, out, 0};
  }
  if (f.starts_with("atomic_")) {
    if (f.starts_with("atomic_add_") && !statement) {
      error(e, "'" + f +
                   "' returns nothing; use it as a statement or call atomic_add for the old value");
      return std::nullopt;
    }
    return emit_atomic(e, f);
  }
  // Casts.
  std::optional<Type> cast = parse_scalar_type(f);
  if (f == "int") cast = Type::I32;
  if (f == "float") cast = Type::F32;
  if (cast) {
    if (nargs != 1) return arity_error("1");
    auto v = emit(e.args[0], *cast);
    if (!v) return std::nullopt;
    return convert(e, *v, *cast);
  }
  // Math.
  std::string base = f;
  bool f32_only = false;
  if (base.size() > 1 && base.back() == 'f' && base != "erf") {
    base.pop_back();
    f32_only = true;
  }
  auto info = types_.infer(e);
  Type t = info ? info->type : Type::F32;
  if (base == "min" || base == "max" || base == "clamp" || base == "abs") {
    if (base == "clamp" && nargs != 3) return arity_error("3");
    if (base == "abs" && nargs != 1) return arity_error("1");
    if ((base == "min" || base == "max") && nargs != 2) return arity_error("2");
    if (t == Type::Pred) {
      error(e, "'" + f + "' is not defined on bool");
      return std::nullopt;
    }
    std::vector<Reg> regs;
    for (const auto &a : e.args) {
      auto v = emit(a, t);
      if (!v) return std::nullopt;
      regs.push_back(implicit(a, *v, t, "an argument").reg);
    }
    Value out{t, temp(e), 0};
    if (base == "abs")
      b_.emit(Opcode::Abs, t, {isa::R(out.reg), isa::R(regs[0])});
    else if (base == "clamp")
      b_.emit(Opcode::Clamp, t,
              {isa::R(out.reg), isa::R(regs[0]), isa::R(regs[1]), isa::R(regs[2])});
    else
      b_.emit(base == "min" ? Opcode::Min : Opcode::Max, t,
              {isa::R(out.reg), isa::R(regs[0]), isa::R(regs[1])});
    return out;
  }
  for (const auto &m : math_functions()) {
    if (base != m.name) continue;
    if (nargs != m.arity) return arity_error(std::to_string(m.arity));
    if (f32_only) t = Type::F32;
    if (!isa::is_float(t)) t = Type::F32;
    std::vector<Reg> regs;
    for (const auto &a : e.args) {
      auto v = emit(a, t);
      if (!v) return std::nullopt;
      if (v->type == Type::Pred) {
        error(a, "'" + f + "' needs a number, not bool");
        return std::nullopt;
      }
      // Integers convert to the float type without a warning (the call asks for a float).
      regs.push_back(isa::is_int(v->type) ? convert(a, *v, t).reg
                                          : implicit(a, *v, t, "an argument").reg);
    }
    Value out{t, temp(e), 0};
    if (m.arity == 1)
      b_.emit(m.op, t, {isa::R(out.reg), isa::R(regs[0])});
    else if (m.arity == 2)
      b_.emit(m.op, t, {isa::R(out.reg), isa::R(regs[0]), isa::R(regs[1])});
    else
      b_.emit(m.op, t, {isa::R(out.reg), isa::R(regs[0]), isa::R(regs[1]), isa::R(regs[2])});
    return out;
  }
  error(e, "unknown function '" + f + "'", suggest(f, builtin_names()));
  return std::nullopt;
}

namespace {

bool is_simple(const Expr &e) {
  if (e.kind == Expr::Kind::Index || e.kind == Expr::Kind::Call) return false;
  if (e.kind == Expr::Kind::Binary && (e.name == "and" || e.name == "or")) return false;
  for (const auto &a : e.args)
    if (!is_simple(a)) return false;
  return true;
}

} // namespace

std::optional<Value> KernelEmitter::emit_select(const Expr &e) {
  auto info = types_.infer(e);
  if (!info) { // report whichever operand fails
    for (const auto &a : e.args)
      if (!emit(a)) return std::nullopt;
    return std::nullopt;
  }
  Type t = info->type;
  auto cv = emit(e.args[0], Type::Pred);
  if (!cv) return std::nullopt;
  unsigned c = as_pred(e.args[0], *cv);
  Type storage = t == Type::Pred ? Type::U32 : t;
  if (is_simple(e.args[1]) && is_simple(e.args[2])) {
    auto a = emit_as(e.args[1], storage), b = emit_as(e.args[2], storage);
    if (!a || !b) return std::nullopt;
    Value out{storage, temp(e), 0};
    b_.emit(Opcode::Sel, storage, {isa::R(out.reg), isa::P(c), isa::R(a->reg), isa::R(b->reg)});
    return convert(e, out, t);
  }
  // Only the chosen operand is evaluated (it may index an array that the condition guards).
  Value out{storage, temp(e), 0};
  unsigned other = new_label(), done = new_label();
  b_.bra(other, static_cast<int>(c), /*negate=*/true);
  auto a = emit_as(e.args[1], storage);
  if (!a) return std::nullopt;
  b_.emit(Opcode::Mov, storage, {isa::R(out.reg), isa::R(a->reg)});
  b_.bra(done);
  b_.bind(other);
  auto b = emit_as(e.args[2], storage);
  if (!b) return std::nullopt;
  b_.emit(Opcode::Mov, storage, {isa::R(out.reg), isa::R(b->reg)});
  b_.bind(done);
  return convert(e, out, t);
}

} // namespace hologram::frontend::json
