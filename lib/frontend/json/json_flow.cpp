// Definite assignment and reachability over a JSON kernel's syntax tree (json_flow.h): a
// forward walk that carries the set of variables assigned on every path and whether the
// current point is reachable at all.
#include "json_flow.h"

#include <string>
#include <utility>

namespace hologram::frontend::json {

namespace {

class FlowAnalysis {
public:
  FlowFacts run(const KernelDecl &kernel) {
    for (const auto &p : kernel.params)
      if (!p.array) state_.assigned.insert(p.name);
    body(kernel.body);
    return std::move(facts_);
  }

private:
  /// The variables assigned on every path to here; `unreachable` when no path comes here.
  struct State {
    std::set<std::string> assigned;
    bool unreachable = false;
  };

  /// Where two paths join.
  static State merge(const State &a, const State &b) {
    if (a.unreachable) return b;
    if (b.unreachable) return a;
    State joined;
    for (const auto &name : a.assigned)
      if (b.assigned.count(name)) joined.assigned.insert(name);
    return joined;
  }

  void reads(const Expr &e) {
    if (e.kind == Expr::Kind::Var && !state_.assigned.count(e.name))
      facts_.maybe_unassigned.insert(&e);
    for (size_t i = 0; i < e.args.size(); ++i) {
      if (e.kind == Expr::Kind::Index && i == 0) continue; // the array, not a read of a scalar
      reads(e.args[i]);
    }
  }

  void body(const std::vector<Stmt> &stmts) {
    for (const auto &s : stmts) statement(s);
  }

  void statement(const Stmt &s) {
    if (!state_.unreachable) return reachable(s);
    // Analysed as if it ran, so its own reads are checked; nothing after it changes.
    facts_.unreachable.insert(&s);
    const State saved = state_;
    state_.unreachable = false;
    reachable(s);
    state_ = saved;
  }

  /// A loop body: it may run no iteration, so what it assigns is not assigned after it.
  void loop_body(const std::vector<Stmt> &stmts) {
    const State before = state_;
    ++loop_depth_;
    body(stmts);
    --loop_depth_;
    state_ = before;
  }

  void reachable(const Stmt &s) {
    switch (s.kind) {
    case Stmt::Kind::Let:
      reads(*s.value);
      state_.assigned.insert(s.name);
      return;
    case Stmt::Kind::Assign:
      reads(*s.value);
      if (s.target->kind == Expr::Kind::Var) {
        state_.assigned.insert(s.target->name);
      } else {
        reads(*s.target);
      }
      return;
    case Stmt::Kind::If: {
      reads(*s.value);
      const State before = state_;
      body(s.body);
      const State after_then = state_;
      state_ = before;
      body(s.else_body);
      state_ = merge(after_then, state_);
      return;
    }
    case Stmt::Kind::For:
      for (const auto *e : {&s.start, &s.stop, &s.step})
        if (*e) reads(**e);
      state_.assigned.insert(s.name);
      loop_body(s.body);
      return;
    case Stmt::Kind::While:
      reads(*s.value);
      loop_body(s.body);
      return;
    case Stmt::Kind::Break:
    case Stmt::Kind::Continue:
      if (loop_depth_ > 0) state_.unreachable = true; // else an error the emitter reports
      return;
    case Stmt::Kind::Return: state_.unreachable = true; return;
    case Stmt::Kind::ExprStmt: reads(*s.value); return;
    case Stmt::Kind::Library:
      for (const auto &[name, e] : s.lib_args) reads(e);
      if (s.result) state_.assigned.insert(*s.result);
      return;
    case Stmt::Kind::Barrier:
    case Stmt::Kind::Shared: return;
    }
  }

  FlowFacts facts_;
  State state_;
  unsigned loop_depth_ = 0;
};

} // namespace

FlowFacts analyse_flow(const KernelDecl &kernel) {
  return FlowAnalysis().run(kernel);
}

} // namespace hologram::frontend::json
