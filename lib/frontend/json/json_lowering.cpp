// JSON kernels -> Atlas ISA: static typing (SPEC §5.3), definite assignment, and lowering of
// structured statements to reducible control flow. Variables live in fixed registers for the
// whole kernel; expression temporaries are allocated per statement from the top of the file.
#include "hologram/frontend/json.h"

#include "hologram/isa/builder.h"
#include "hologram/isa/numeric.h"
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"
#include "hologram/support/unreachable.h"
#include "json_flow.h"
#include "json_locator.h"
#include "json_reader.h"

#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

namespace hologram::frontend {

namespace json {
namespace {

using isa::Opcode;
using isa::Operand;
using isa::Reg;

/// A scalar variable, an array parameter or a shared array.
struct Var {
  enum class Kind { Scalar, Array, Shared } kind = Kind::Scalar;
  Type type = Type::None; ///< scalar type (Pred = bool) or element type
  Reg reg = 0;            ///< scalar storage (a bool lives in a u32 register as 0 or 1)
  unsigned param = 0;     ///< array parameter index
  uint32_t offset = 0;    ///< shared array byte offset
  bool loaded = false, stored = false;
};

/// The result of an expression: a register of a numeric type, or a predicate.
struct Value {
  Type type = Type::None;
  Reg reg = 0;
  unsigned pred = 0;
};

/// What the front end knows of an expression's type before emitting it.
struct TypeInfo {
  Type type = Type::None;
  bool literal = false; ///< an untyped literal: takes the type its context needs
  bool int_literal = false;
};

/// The storage type of a JSON type: bool arrays and variables are bytes / u32.
Type array_storage(Type t) {
  return t == Type::Pred ? Type::U8 : t;
}

std::string type_text(Type t) {
  return t == Type::Pred ? "bool" : std::string(isa::type_name(t));
}

/// C's usual arithmetic conversions (no promotion of small integers).
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

/// Whether converting `from` to `to` can change the value (-Wconversion).
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

struct MathFn {
  const char *name;
  Opcode op;
  unsigned arity;
};
constexpr MathFn kMath[] = {
    {"exp", Opcode::Exp, 1},     {"exp2", Opcode::Exp2, 1},   {"log", Opcode::Log, 1},
    {"log2", Opcode::Log2, 1},   {"log10", Opcode::Log10, 1}, {"sqrt", Opcode::Sqrt, 1},
    {"rsqrt", Opcode::Rsqrt, 1}, {"sin", Opcode::Sin, 1},     {"cos", Opcode::Cos, 1},
    {"tan", Opcode::Tan, 1},     {"tanh", Opcode::Tanh, 1},   {"sigmoid", Opcode::Sigmoid, 1},
    {"erf", Opcode::Erf, 1},     {"fabs", Opcode::Abs, 1},    {"floor", Opcode::Floor, 1},
    {"ceil", Opcode::Ceil, 1},   {"round", Opcode::Round, 1}, {"trunc", Opcode::Trunc, 1},
    {"pow", Opcode::Pow, 2},     {"atan2", Opcode::Atan2, 2}, {"fmin", Opcode::Min, 2},
    {"fmax", Opcode::Max, 2},    {"fma", Opcode::Fma, 3},
};

class KernelLowering {
public:
  KernelLowering(const KernelDecl &decl, const std::string &file, DiagnosticEngine &diags)
      : decl_(decl), file_(file), diags_(diags), b_(decl.name) {}

  std::optional<isa::Kernel> run();

private:
  // --- diagnostics -------------------------------------------------------------------------
  void report(Severity sev, const Node &n, std::string msg, std::vector<std::string> notes = {}) {
    Diagnostic d;
    d.severity = sev;
    d.file = file_;
    d.loc = n.loc;
    d.pointer = n.ptr;
    d.message = std::move(msg);
    d.notes = std::move(notes);
    diags_.report(std::move(d));
    if (sev == Severity::Error) failed_ = true;
  }
  void error(const Node &n, std::string msg, std::vector<std::string> notes = {}) {
    report(Severity::Error, n, std::move(msg), std::move(notes));
  }
  std::vector<std::string> suggest(const std::string &word,
                                   const std::vector<std::string> &options) {
    auto near = closest_match(word, options);
    if (near.empty()) return {};
    return {"did you mean '" + near + "'?"};
  }
  std::vector<std::string> var_names() const {
    std::vector<std::string> v;
    for (const auto &[k, _] : vars_) v.push_back(k);
    return v;
  }

  // --- registers ---------------------------------------------------------------------------
  Reg new_var_reg(const Node &n) {
    if (next_var_ >= temp_floor_) {
      error(n, "the kernel needs more than 252 registers for its variables and temporaries");
      return 0;
    }
    return next_var_++;
  }
  Reg temp(const Node &n) {
    if (temp_top_ <= next_var_) {
      error(n, "expression too large: out of temporary registers");
      return 0;
    }
    temp_floor_ = std::min(temp_floor_, static_cast<Reg>(temp_top_ - 1));
    return --temp_top_;
  }
  unsigned pred(const Node &n) {
    if (pred_top_ >= isa::kNumPreds) {
      error(n, "expression too complex: more than 16 live conditions");
      return 0;
    }
    return pred_top_++;
  }
  struct TempScope {
    KernelLowering &l;
    Reg saved_temp;
    unsigned saved_pred;
    explicit TempScope(KernelLowering &x)
        : l(x), saved_temp(x.temp_top_), saved_pred(x.pred_top_) {}
    ~TempScope() {
      l.temp_top_ = saved_temp;
      l.pred_top_ = saved_pred;
    }
  };

  // --- emission helpers --------------------------------------------------------------------
  Reg imm(const Node &n, Type t, uint64_t bits) {
    Reg r = temp(n);
    b_.mov_imm_bits(t, r, bits);
    return r;
  }
  Reg zero(const Node &n, Type t) { return imm(n, t, 0); }
  Value convert(const Node &n, Value v, Type to);
  Value implicit(const Node &n, Value v, Type to, const std::string &context);
  Reg as_reg(const Node &n, Value v, Type t) { return convert(n, v, t).reg; }
  unsigned as_pred(const Node &n, Value v) { return convert(n, v, Type::Pred).pred; }
  unsigned new_label() { return b_.label("L" + std::to_string(label_counter_++)); }

  // --- typing ------------------------------------------------------------------------------
  std::optional<TypeInfo> infer(const Expr &e);
  Type operand_type(const Expr &l, const Expr &r, bool &ok);
  std::optional<Type> literal_fits(const Expr &e, Type t);

  // --- expressions -------------------------------------------------------------------------
  std::optional<Value> emit(const Expr &e, std::optional<Type> want = std::nullopt);
  std::optional<Value> emit_as(const Expr &e, Type t) {
    auto v = emit(e, t);
    if (!v) return std::nullopt;
    return convert(e, *v, t);
  }
  std::optional<Value> emit_literal(const Expr &e, Type t);
  std::optional<Value> emit_var(const Expr &e);
  std::optional<Value> emit_binary(const Expr &e);
  std::optional<Value> emit_logical(const Expr &e);
  std::optional<Value> emit_unary(const Expr &e);
  std::optional<Value> emit_index(const Expr &e);
  std::optional<Value> emit_call(const Expr &e, bool statement);
  std::optional<Value> emit_select(const Expr &e);
  std::optional<isa::Operand> element_address(const Expr &array, const Expr &index, Var *&var,
                                              bool store);
  std::optional<Value> emit_atomic(const Expr &e, const std::string &fn);

  // --- statements --------------------------------------------------------------------------
  void lower_body(const std::vector<Stmt> &body);
  void lower(const Stmt &s);
  void lower_statement(const Stmt &s);
  void lower_let(const Stmt &s);
  void lower_assign(const Stmt &s);
  void lower_if(const Stmt &s);
  void lower_for(const Stmt &s);
  void lower_while(const Stmt &s);
  void lower_loop_body(const std::vector<Stmt> &body, unsigned break_label,
                       unsigned continue_label);
  void lower_shared(const Stmt &s);
  void lower_library(const Stmt &s);
  Var *declare(const Node &n, const std::string &name, Type t);
  void store_var(const Node &n, Var &v, Value val);

  struct Loop {
    unsigned break_label, continue_label;
  };

public:
  /// The JSON Pointer of the statement at each source position (for the ISA verifier's
  /// diagnostics, which name instructions by the position of the statement they came from).
  std::map<std::pair<uint32_t, uint32_t>, std::string> pointers_;

private:
  const KernelDecl &decl_;
  const std::string &file_;
  DiagnosticEngine &diags_;
  isa::KernelBuilder b_;
  std::map<std::string, Var> vars_;
  FlowFacts flow_ = analyse_flow(decl_); ///< definite assignment and reachability
  std::vector<Loop> loops_;
  Reg next_var_ = 0;
  Reg temp_top_ = isa::kFirstSpecialReg; // temporaries grow down from r251
  Reg temp_floor_ = isa::kFirstSpecialReg;
  unsigned pred_top_ = 0;
  unsigned label_counter_ = 0;
  uint32_t shared_bytes_ = 0;
  bool failed_ = false;
};

// =============================================================================================
// Conversions

Value KernelLowering::convert(const Node &n, Value v, Type to) {
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

Value KernelLowering::implicit(const Node &n, Value v, Type to, const std::string &context) {
  if (lossy(v.type, to))
    report(Severity::Warning, n,
           "implicit conversion from " + type_text(v.type) + " to " + type_text(to) + " in " +
               context + " may change the value [-Wconversion]",
           {"write an explicit cast, e.g. {\"type\": \"cast\", \"dtype\": \"" + type_text(to) +
            "\", ...}"});
  return convert(n, v, to);
}

// =============================================================================================
// Typing

std::optional<TypeInfo> KernelLowering::infer(const Expr &e) {
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
Type KernelLowering::operand_type(const Expr &l, const Expr &r, bool &ok) {
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

/// Checks that an integer literal fits `t` (floats always fit, with rounding).
std::optional<Type> KernelLowering::literal_fits(const Expr &e, Type t) {
  if (e.lit != Expr::Lit::Int || !isa::is_int(t)) return t;
  unsigned bits = isa::type_bits(t);
  bool fits;
  if (isa::is_unsigned_int(t))
    fits = !e.negative && (bits == 64 || e.magnitude < (uint64_t{1} << bits));
  else
    fits = e.negative ? e.magnitude <= (uint64_t{1} << (bits - 1))
                      : e.magnitude < (uint64_t{1} << (bits - 1));
  if (fits) return t;
  error(e, "the literal " + std::string(e.negative ? "-" : "") + std::to_string(e.magnitude) +
               " does not fit in " + type_text(t));
  return std::nullopt;
}

// =============================================================================================
// Expressions

std::optional<Value> KernelLowering::emit_literal(const Expr &e, Type t) {
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
  if (!literal_fits(e, t)) return std::nullopt;
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

std::optional<Value> KernelLowering::emit_var(const Expr &e) {
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

std::optional<Value> KernelLowering::emit(const Expr &e, std::optional<Type> want) {
  switch (e.kind) {
  case Expr::Kind::Literal: {
    auto info = infer(e);
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

std::optional<Value> KernelLowering::emit_binary(const Expr &e) {
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
    auto li = infer(l);
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
  Type t = operand_type(l, r, ok);
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

std::optional<Value> KernelLowering::emit_logical(const Expr &e) {
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

std::optional<Value> KernelLowering::emit_unary(const Expr &e) {
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
  auto info = infer(e.args[0]);
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

std::optional<isa::Operand> KernelLowering::element_address(const Expr &array, const Expr &index,
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

std::optional<Value> KernelLowering::emit_index(const Expr &e) {
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

std::optional<Value> KernelLowering::emit_atomic(const Expr &e, const std::string &fn) {
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

std::optional<Value> KernelLowering::emit_call(const Expr &e, bool statement) {
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
  auto info = infer(e);
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
  for (const auto &m : kMath) {
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

bool is_simple(const Expr &e) {
  if (e.kind == Expr::Kind::Index || e.kind == Expr::Kind::Call) return false;
  if (e.kind == Expr::Kind::Binary && (e.name == "and" || e.name == "or")) return false;
  for (const auto &a : e.args)
    if (!is_simple(a)) return false;
  return true;
}

std::optional<Value> KernelLowering::emit_select(const Expr &e) {
  auto info = infer(e);
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

// =============================================================================================
// Statements

Var *KernelLowering::declare(const Node &n, const std::string &name, Type t) {
  Var v;
  v.kind = Var::Kind::Scalar;
  v.type = t;
  v.reg = new_var_reg(n);
  return &vars_.emplace(name, v).first->second;
}

void KernelLowering::store_var(const Node &n, Var &v, Value val) {
  Type storage = v.type == Type::Pred ? Type::U32 : v.type;
  Value c = convert(n, val, storage);
  b_.emit(Opcode::Mov, storage, {isa::R(v.reg), isa::R(c.reg)});
}

void KernelLowering::lower_let(const Stmt &s) {
  TempScope scope(*this);
  auto it = vars_.find(s.name);
  if (it != vars_.end() && it->second.kind != Var::Kind::Scalar) {
    error(s, "'" + s.name + "' is an array and cannot be assigned a value");
    return;
  }
  Var *var;
  if (it == vars_.end()) {
    auto info = infer(*s.value);
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

void KernelLowering::lower_assign(const Stmt &s) {
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

void KernelLowering::lower_if(const Stmt &s) {
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

void KernelLowering::lower_for(const Stmt &s) {
  Expr zero_lit, one_lit;
  zero_lit.kind = one_lit.kind = Expr::Kind::Literal;
  zero_lit.ptr = one_lit.ptr = s.ptr;
  zero_lit.loc = one_lit.loc = s.loc;
  one_lit.magnitude = 1;
  const Expr &start = s.start ? *s.start : zero_lit;
  const Expr &step = s.step ? *s.step : one_lit;
  // The loop variable has the type of start and stop after the usual conversions.
  bool ok = true;
  Type vt = operand_type(start, *s.stop, ok);
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
  auto step_info = infer(step);
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
void KernelLowering::lower_loop_body(const std::vector<Stmt> &body, unsigned break_label,
                                     unsigned continue_label) {
  loops_.push_back({break_label, continue_label});
  lower_body(body);
  loops_.pop_back();
}

void KernelLowering::lower_while(const Stmt &s) {
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

void KernelLowering::lower_shared(const Stmt &s) {
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

void KernelLowering::lower_library(const Stmt &s) {
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

void KernelLowering::lower(const Stmt &s) {
  // Every instruction a statement emits points back to that statement's JSON node.
  size_t first = b_.size();
  lower_statement(s);
  for (size_t i = first; i < b_.size(); ++i) // nested statements tagged theirs already
    if (b_.inst(i).loc.line == 0) b_.inst(i).loc = s.loc;
  pointers_.emplace(std::pair{s.loc.line, s.loc.col}, s.ptr);
}

void KernelLowering::lower_statement(const Stmt &s) {
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

void KernelLowering::lower_body(const std::vector<Stmt> &body) {
  for (const auto &s : body) lower(s);
}

std::optional<isa::Kernel> KernelLowering::run() {
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

} // namespace
} // namespace json

std::optional<isa::Module> compile_json(std::string_view text, const std::string &file,
                                        DiagnosticEngine &diags) {
  json::JsonLocator locator(text);
  auto kernels = json::read_document(text, file, locator, diags);
  if (!kernels) return std::nullopt;
  isa::Module m;
  m.source_name = file;
  bool ok = true;
  for (const auto &decl : *kernels) {
    json::KernelLowering lowering(decl, file, diags);
    auto k = lowering.run();
    if (!k) {
      ok = false;
      continue;
    }
    k->loc = decl.loc;
    for (auto &inst : k->insts) // parameter reads at entry
      if (inst.loc.line == 0) inst.loc = decl.loc;
    // Rules the ISA verifier checks (a barrier under lane-varying control flow) are reported
    // at the statement that broke them, with its JSON Pointer.
    DiagnosticEngine isa_diags;
    if (!isa::verify_kernel(*k, file, isa_diags)) {
      for (auto d : isa_diags.diagnostics()) {
        auto it = lowering.pointers_.find({d.loc.line, d.loc.col});
        if (it != lowering.pointers_.end()) d.pointer = it->second;
        if (!d.notes.empty() && d.notes.front().starts_with("in '")) d.notes.erase(d.notes.begin());
        diags.report(std::move(d));
      }
      ok = false;
      continue;
    }
    m.kernels.push_back(std::move(*k));
  }
  if (!ok || diags.has_errors()) return std::nullopt;
  return m;
}

} // namespace hologram::frontend
