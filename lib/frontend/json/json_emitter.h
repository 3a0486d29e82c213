// The emitter of the JSON front end (SPEC §5): one kernel's syntax tree as Atlas ISA, after
// definite assignment and reachability (json_flow.h) and with the typing of json_types.h.
// Structured statements become reducible control flow; variables live in fixed registers for
// the whole kernel, expression temporaries are allocated per statement from the top of the
// register file. Expressions: json_expressions.cpp; statements: json_statements.cpp.
#pragma once

#include "hologram/isa/builder.h"
#include "hologram/support/diagnostics.h"
#include "json_ast.h"
#include "json_flow.h"
#include "json_types.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hologram::frontend::json {

using isa::Opcode;
using isa::Operand;
using isa::Reg;

/// The result of an expression: a register of a numeric type, or a predicate.
struct Value {
  Type type = Type::None;
  Reg reg = 0;
  unsigned pred = 0;
};

class KernelEmitter {
public:
  KernelEmitter(const KernelDecl &decl, const std::string &file, DiagnosticEngine &diags)
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
    KernelEmitter &l;
    Reg saved_temp;
    unsigned saved_pred;
    explicit TempScope(KernelEmitter &x) : l(x), saved_temp(x.temp_top_), saved_pred(x.pred_top_) {}
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
  ExprTypes types_{vars_};               ///< the types of expressions over vars_
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

} // namespace hologram::frontend::json
