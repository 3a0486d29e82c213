// The circuit front end (SPEC §6): lexer, parser, compile-time transforms, canonicalisation
// that keeps the data effect, printing in circuit syntax, and lowering to one ISA kernel over
// the boundary pool.
#pragma once

#include "hologram/isa/program.h"
#include "hologram/support/diagnostics.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::frontend {

enum class Generator { Mark, Copy, Swap, Merge, Split, Quote, Evaluate };

/// A class, optionally restricted to one 256-byte page.
struct ClassRef {
  uint32_t cls = 0;
  int page = -1; ///< -1: the whole class
  friend bool operator==(const ClassRef &, const ClassRef &) = default;
};

/// One generator application with its transforms already applied.
///  copy: b = a;  swap: a <-> b;  merge: c = a + b;  split: c = a - b;
///  merge over a range: each class k = k + k;  mark, quote, evaluate: no data effect.
struct CircuitOp {
  Generator gen = Generator::Mark;
  bool range = false;
  std::vector<uint32_t> classes; ///< the classes of a range, in order
  ClassRef a, b, c;
  SourceLoc loc;
  friend bool operator==(const CircuitOp &x, const CircuitOp &y) {
    return x.gen == y.gen && x.range == y.range && x.classes == y.classes && x.a == y.a &&
           x.b == y.b && x.c == y.c;
  }
};

/// A circuit: independent parallel branches (run in source order), each a sequence of ops.
struct Circuit {
  std::vector<std::vector<CircuitOp>> branches;
  [[nodiscard]] size_t op_count() const;
};

/// Parses and resolves a circuit; nullopt with diagnostics on error.
std::optional<Circuit> parse_circuit(std::string_view text, const std::string &file,
                                     DiagnosticEngine &diags);

/// One application of a canonicalisation rule.
struct RewriteNote {
  std::string rule;
  std::string detail;
};

/// Rewrites a circuit to a shorter one with the same data effect; `notes` lists every rule used.
Circuit canonicalize(const Circuit &c, std::vector<RewriteNote> *notes = nullptr);

/// Prints a circuit in circuit syntax (it parses back to the same circuit).
std::string print_circuit(const Circuit &c);

struct CircuitOptions {
  isa::Type element = isa::Type::F32; ///< --circuit-type
  std::string kernel_name = "circuit";
  bool canonicalize = true; ///< lower the canonical form (off at -O0)
};

/// Elements of `t` in one class (12,288 bytes).
uint32_t circuit_elements_per_class(isa::Type t);

/// Lowers a circuit to one kernel over the boundary pool: one lane per element of a class.
/// Launch it with at least circuit_elements_per_class(element) lanes.
std::optional<isa::Module> lower_circuit(const Circuit &c, const CircuitOptions &opts,
                                         const std::string &file, DiagnosticEngine &diags);

/// parse_circuit + (canonicalize) + lower_circuit.
std::optional<isa::Module> compile_circuit(std::string_view text, const std::string &file,
                                           const CircuitOptions &opts, DiagnosticEngine &diags);

} // namespace hologram::frontend
