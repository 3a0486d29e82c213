// Definite assignment and reachability of a JSON kernel (SPEC §5.3), a pass over the syntax
// tree before emission: which reads of a variable may come before every assignment to it,
// and which statements never run (after a break, continue or return). The emitter reports
// what it finds at the node it emits (json_lowering.cpp).
#pragma once

#include "json_ast.h"

#include <set>

namespace hologram::frontend::json {

struct FlowFacts {
  /// Reads of a variable that some path reaches before any assignment to it.
  std::set<const Expr *> maybe_unassigned;
  /// Statements no path reaches.
  std::set<const Stmt *> unreachable;
};

/// The facts of `kernel`. Parameters are assigned at entry; `let`, an assignment, a `for`
/// loop's variable and a library op's result assign theirs; a loop's body may run no
/// iteration, so what it assigns is not assigned after it; statements that never run are
/// analysed as if they did, and change nothing after them.
FlowFacts analyse_flow(const KernelDecl &kernel);

} // namespace hologram::frontend::json
