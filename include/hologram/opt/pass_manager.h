// The optimiser's pass pipeline over isa::Module: each pass is one file of lib/opt with one
// function over a kernel; the pass manager runs the passes -O<level> chooses, to a fixpoint,
// and shows the module after a pass on request (hologram-cc --print-after=PASS).
#pragma once

#include "hologram/isa/program.h"
#include "hologram/support/diagnostics.h"

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::opt {

/// A transformation of one verified kernel into an equivalent verified kernel; returns whether
/// it changed anything.
using KernelPass = bool (*)(isa::Kernel &);

struct Pass {
  std::string_view name;        ///< as given to --print-after
  std::string_view description; ///< one line, for --help and docs
  unsigned level;               ///< the lowest -O level that runs it
  KernelPass run;
};

/// Every pass, in pipeline order.
std::span<const Pass> all_passes();
/// The pass called `name`; nullptr when there is none.
const Pass *find_pass(std::string_view name);
/// The passes -O<level> runs, in order (none at -O0).
std::vector<const Pass *> pipeline(unsigned level);

struct PassOptions {
  unsigned level = 2;
  /// Names of passes after which `print` is called ("all": after every pass).
  std::vector<std::string> print_after;
  /// Receives the pass name and the module after that pass ran (every kernel of it).
  std::function<void(std::string_view pass, const isa::Module &)> print;
};

/// Runs the pipeline of `opts.level` over every kernel of a verified module, then verifies
/// the result; a pass that broke the module is reported as an internal error (false).
bool optimize(isa::Module &m, const PassOptions &opts, DiagnosticEngine &diags);

// The passes (lib/opt/<name>.cpp).
bool fold_constants(isa::Kernel &k);                  ///< constant folding and propagation
bool propagate_copies(isa::Kernel &k);                ///< copy propagation
bool eliminate_common_subexpressions(isa::Kernel &k); ///< CSE of pure instructions
bool hoist_loop_invariants(isa::Kernel &k);           ///< LICM
bool reduce_strength(isa::Kernel &k);                 ///< induction-variable products
bool forward_memory(isa::Kernel &k);                  ///< store-to-load forwarding
bool gather_elementwise_chains(isa::Kernel &k);       ///< element-wise operations adjacent
bool eliminate_dead_code(isa::Kernel &k);             ///< DCE

} // namespace hologram::opt
