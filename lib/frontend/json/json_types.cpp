// The types of the JSON kernel language and the typing of its expressions (json_types.h).
#include "json_types.h"

#include "json_reader.h"

#include <set>

namespace hologram::frontend::json {

Type array_storage(Type t) {
  return t == Type::Pred ? Type::U8 : t;
}

std::string type_text(Type t) {
  return t == Type::Pred ? "bool" : std::string(isa::type_name(t));
}

Type unify(Type a, Type b) {
  if (a == b) return a;
  if (isa::is_float(a) || isa::is_float(b)) {
    if (isa::is_float(a) && isa::is_float(b)) return isa::type_size(a) >= isa::type_size(b) ? a : b;
    return isa::is_float(a) ? a : b;
  }
  unsigned wa = isa::type_size(a), wb = isa::type_size(b);
  if (isa::is_signed_int(a) == isa::is_signed_int(b)) return wa >= wb ? a : b;
  Type u = isa::is_unsigned_int(a) ? a : b, s = isa::is_unsigned_int(a) ? b : a;
  return isa::type_size(u) >= isa::type_size(s) ? u : s;
}

bool lossy(Type from, Type to) {
  if (from == to || from == Type::Pred) return false;
  if (to == Type::Pred) return true;
  if (isa::is_float(from)) return !isa::is_float(to) || isa::type_size(to) < isa::type_size(from);
  unsigned fb = isa::type_bits(from);
  if (isa::is_float(to)) return fb > (to == Type::F32 ? 24u : 53u);
  unsigned tb = isa::type_bits(to);
  bool fs = isa::is_signed_int(from), ts = isa::is_signed_int(to);
  if (fs == ts) return tb < fb;
  if (fs && !ts) return true; // negative values
  return tb <= fb;            // unsigned into signed needs a wider type
}

const std::vector<std::string> &builtin_names() {
  static const std::vector<std::string> names = {"get_global_id",
                                                 "get_local_id",
                                                 "get_group_id",
                                                 "get_local_size",
                                                 "get_num_groups",
                                                 "get_global_size",
                                                 "exp",
                                                 "exp2",
                                                 "log",
                                                 "log2",
                                                 "log10",
                                                 "sqrt",
                                                 "rsqrt",
                                                 "sin",
                                                 "cos",
                                                 "tan",
                                                 "tanh",
                                                 "sigmoid",
                                                 "erf",
                                                 "pow",
                                                 "atan2",
                                                 "fabs",
                                                 "abs",
                                                 "floor",
                                                 "ceil",
                                                 "round",
                                                 "trunc",
                                                 "fma",
                                                 "min",
                                                 "max",
                                                 "clamp",
                                                 "fmin",
                                                 "fmax",
                                                 "expf",
                                                 "exp2f",
                                                 "logf",
                                                 "log2f",
                                                 "log10f",
                                                 "sqrtf",
                                                 "rsqrtf",
                                                 "sinf",
                                                 "cosf",
                                                 "tanf",
                                                 "tanhf",
                                                 "sigmoidf",
                                                 "erff",
                                                 "powf",
                                                 "atan2f",
                                                 "fabsf",
                                                 "floorf",
                                                 "ceilf",
                                                 "roundf",
                                                 "truncf",
                                                 "fmaf",
                                                 "fminf",
                                                 "fmaxf",
                                                 "f32",
                                                 "f64",
                                                 "i8",
                                                 "i16",
                                                 "i32",
                                                 "i64",
                                                 "u8",
                                                 "u16",
                                                 "u32",
                                                 "u64",
                                                 "bool",
                                                 "usize",
                                                 "int",
                                                 "float",
                                                 "atomic_add",
                                                 "atomic_min",
                                                 "atomic_max",
                                                 "atomic_xchg",
                                                 "atomic_and",
                                                 "atomic_or",
                                                 "atomic_xor",
                                                 "atomic_cas",
                                                 "atomic_add_f32",
                                                 "atomic_add_u32",
                                                 "atomic_add_i32"};
  return names;
}

const std::vector<MathFn> &math_functions() {
  static const std::vector<MathFn> functions = {
      {"exp", isa::Opcode::Exp, 1},     {"exp2", isa::Opcode::Exp2, 1},
      {"log", isa::Opcode::Log, 1},     {"log2", isa::Opcode::Log2, 1},
      {"log10", isa::Opcode::Log10, 1}, {"sqrt", isa::Opcode::Sqrt, 1},
      {"rsqrt", isa::Opcode::Rsqrt, 1}, {"sin", isa::Opcode::Sin, 1},
      {"cos", isa::Opcode::Cos, 1},     {"tan", isa::Opcode::Tan, 1},
      {"tanh", isa::Opcode::Tanh, 1},   {"sigmoid", isa::Opcode::Sigmoid, 1},
      {"erf", isa::Opcode::Erf, 1},     {"fabs", isa::Opcode::Abs, 1},
      {"floor", isa::Opcode::Floor, 1}, {"ceil", isa::Opcode::Ceil, 1},
      {"round", isa::Opcode::Round, 1}, {"trunc", isa::Opcode::Trunc, 1},
      {"pow", isa::Opcode::Pow, 2},     {"atan2", isa::Opcode::Atan2, 2},
      {"fmin", isa::Opcode::Min, 2},    {"fmax", isa::Opcode::Max, 2},
      {"fma", isa::Opcode::Fma, 3},
  };
  return functions;
}

std::optional<TypeInfo> ExprTypes::infer(const Expr &e) const {
  switch (e.kind) {
  case Expr::Kind::Literal:
    if (e.dtype) return TypeInfo{*e.dtype, false, false};
    if (e.lit == Expr::Lit::Bool) return TypeInfo{Type::Pred, false, false};
    if (e.lit == Expr::Lit::Float) return TypeInfo{Type::F32, true, false};
    return TypeInfo{Type::I32, true, true};
  case Expr::Kind::Var: {
    auto it = vars_.find(e.name);
    if (it == vars_.end() || it->second.kind != Var::Kind::Scalar) return std::nullopt;
    return TypeInfo{it->second.type, false, false};
  }
  case Expr::Kind::Index: {
    auto it = vars_.find(e.args[0].name);
    if (it == vars_.end() || it->second.kind == Var::Kind::Scalar) return std::nullopt;
    return TypeInfo{it->second.type, false, false};
  }
  case Expr::Kind::Cast: return TypeInfo{*e.dtype, false, false};
  case Expr::Kind::Unary: {
    if (e.name == "not") return TypeInfo{Type::Pred, false, false};
    return infer(e.args[0]);
  }
  case Expr::Kind::Select: {
    auto a = infer(e.args[1]), b = infer(e.args[2]);
    if (!a || !b) return std::nullopt;
    if (a->literal && !b->literal) return TypeInfo{b->type, false, false};
    if (b->literal && !a->literal) return TypeInfo{a->type, false, false};
    return TypeInfo{unify(a->type, b->type), a->literal && b->literal,
                    a->int_literal && b->int_literal};
  }
  case Expr::Kind::Binary: {
    static const std::set<std::string> cmp = {"lt", "le", "gt", "ge", "eq", "ne", "and", "or"};
    if (cmp.count(e.name)) return TypeInfo{Type::Pred, false, false};
    auto l = infer(e.args[0]), r = infer(e.args[1]);
    if (!l || !r) return std::nullopt;
    if (e.name == "shl" || e.name == "shr") return l;
    if (e.name == "pow" && !isa::is_float(l->type) && !isa::is_float(r->type))
      return TypeInfo{Type::F32, false, false};
    bool ok = true;
    Type t = operand_type(e.args[0], e.args[1], ok);
    if (!ok) return std::nullopt;
    return TypeInfo{t, l->literal && r->literal, l->int_literal && r->int_literal};
  }
  case Expr::Kind::Call: {
    const std::string &f = e.name;
    if (f == "get_global_id" || f == "get_global_size") return TypeInfo{Type::U64, false, false};
    if (f.starts_with("get_")) return TypeInfo{Type::U32, false, false};
    if (auto t = parse_scalar_type(f)) return TypeInfo{*t, false, false};
    if (f == "int") return TypeInfo{Type::I32, false, false};
    if (f == "float") return TypeInfo{Type::F32, false, false};
    if (f.starts_with("atomic_")) {
      if (e.args.empty()) return std::nullopt;
      auto it = vars_.find(e.args[0].name);
      if (it == vars_.end() || it->second.kind == Var::Kind::Scalar) return std::nullopt;
      return TypeInfo{it->second.type, false, false};
    }
    bool f_suffix = f.size() > 1 && f.back() == 'f' && f != "erf";
    if (f_suffix) return TypeInfo{Type::F32, false, false};
    if (e.args.empty()) return std::nullopt;
    Type t = Type::None;
    bool all_literal = true;
    for (const auto &a : e.args) {
      auto ai = infer(a);
      if (!ai) return std::nullopt;
      if (!ai->literal) {
        t = t == Type::None ? ai->type : unify(t, ai->type);
        all_literal = false;
      }
    }
    if (all_literal) t = infer(e.args[0])->type;
    bool int_ok = f == "min" || f == "max" || f == "clamp" || f == "abs";
    if (!int_ok && !isa::is_float(t)) t = Type::F32;
    return TypeInfo{t, false, false};
  }
  }
  return std::nullopt;
}

/// The type both operands of an arithmetic or comparison operator are converted to.
Type ExprTypes::operand_type(const Expr &l, const Expr &r, bool &ok) const {
  auto li = infer(l), ri = infer(r);
  if (!li || !ri) {
    ok = false;
    return Type::None;
  }
  auto adapt = [](const TypeInfo &lit, Type other) {
    if (lit.int_literal) return other; // an integer literal takes the other side's type
    return isa::is_float(other) ? other : Type::F32;
  };
  if (li->literal && !ri->literal) return ri->type == Type::Pred ? li->type : adapt(*li, ri->type);
  if (ri->literal && !li->literal) return li->type == Type::Pred ? ri->type : adapt(*ri, li->type);
  return unify(li->type, ri->type);
}

bool ExprTypes::literal_fits(const Expr &e, Type t) {
  if (e.lit != Expr::Lit::Int || !isa::is_int(t)) return true;
  unsigned bits = isa::type_bits(t);
  if (isa::is_unsigned_int(t))
    return !e.negative && (bits == 64 || e.magnitude < (uint64_t{1} << bits));
  return e.negative ? e.magnitude <= (uint64_t{1} << (bits - 1))
                    : e.magnitude < (uint64_t{1} << (bits - 1));
}

} // namespace hologram::frontend::json
