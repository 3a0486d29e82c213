// The pass manager: the registry of passes, the pipeline each -O level runs, and the loop
// that runs it to a fixpoint with --print-after hooks and a final verification.
#include "hologram/opt/pass_manager.h"

#include "hologram/isa/verifier.h"

#include <algorithm>
#include <array>

namespace hologram::opt {

namespace {

constexpr std::array<Pass, 8> kPasses = {{
    {"constant-fold", "constant folding and propagation within blocks", 1, fold_constants},
    {"copy-propagation", "reads of a copy read its source", 1, propagate_copies},
    {"cse", "common pure computations computed once", 2, eliminate_common_subexpressions},
    {"licm", "pure computations whose sources a loop never writes moved in front of it", 2,
     hoist_loop_invariants},
    {"strength-reduce", "products of an induction variable in a loop become running sums", 2,
     reduce_strength},
    {"memory-forwarding", "loads of bytes this lane just stored or loaded read the register", 2,
     forward_memory},
    {"fuse-elementwise",
     "pure instructions between element-wise whole-launch operations moved in front of them, "
     "so the operations form one chain that runs fused",
     2, gather_elementwise_chains},
    {"dce", "pure instructions whose results nothing reads removed", 1, eliminate_dead_code},
}};

/// Rounds of the pipeline at most: each round can expose work for the next (a fold makes a
/// copy dead, a copy makes two computations equal), and real kernels settle in two or three.
constexpr int kMaxRounds = 4;

bool wants_print(const PassOptions &o, std::string_view pass) {
  return o.print && std::any_of(o.print_after.begin(), o.print_after.end(),
                                [&](const std::string &p) { return p == pass || p == "all"; });
}

} // namespace

std::span<const Pass> all_passes() {
  return kPasses;
}

const Pass *find_pass(std::string_view name) {
  for (const Pass &p : kPasses)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<const Pass *> pipeline(unsigned level) {
  std::vector<const Pass *> out;
  if (level == 0) return out;
  for (const Pass &p : kPasses)
    if (level >= p.level) out.push_back(&p);
  return out;
}

bool optimize(isa::Module &m, const PassOptions &opts, DiagnosticEngine &diags) {
  const auto passes = pipeline(opts.level);
  if (passes.empty()) return true;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    for (const Pass *p : passes) {
      for (isa::Kernel &k : m.kernels) changed |= p->run(k);
      if (wants_print(opts, p->name)) opts.print(p->name, m);
    }
    if (!changed) break;
  }
  DiagnosticEngine check;
  if (isa::verify_module(m, check)) return true;
  std::vector<std::string> notes;
  if (!check.diagnostics().empty()) notes.push_back(check.diagnostics().front().message);
  diags.error(m.source_name, {},
              "internal error: the optimiser (-O" + std::to_string(opts.level) +
                  ") produced a module the verifier rejects; compile with -O0 and report it",
              std::move(notes));
  return false;
}

} // namespace hologram::opt
