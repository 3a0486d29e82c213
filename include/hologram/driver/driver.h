// The compiler pipeline used by the command-line tools: decide an input's language, run its
// front end, and produce the requested outputs (ISA text, canonical circuits, depfiles).
#pragma once

#include <functional>
#include <string_view>

#include "hologram/frontend/circuit.h"
#include "hologram/isa/program.h"
#include "hologram/support/diagnostics.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::driver {

enum class InputKind { Isa, Json, Circuit };

/// The language of a path by its extension (.hasm, .json, .circuit); nullopt if unknown.
std::optional<InputKind> kind_from_extension(std::string_view path);
/// Parses the argument of -x (isa, json, circuit).
std::optional<InputKind> parse_kind(std::string_view name);

struct FrontendOptions {
  isa::Type circuit_type = isa::Type::F32; ///< --circuit-type
  /// -O0 lowers circuits as written and runs no pass; -O1+ canonicalises circuits and runs the
  /// optimiser's pipeline for the level (hologram/opt/pass_manager.h).
  unsigned opt_level = 2;
  std::vector<std::string> print_after; ///< --print-after: pass names, or "all"
  /// Called with the pass name and the module after each pass named in print_after.
  std::function<void(std::string_view pass, const isa::Module &)> print;
};

/// One compiled input.
struct CompiledInput {
  std::string path;
  InputKind kind = InputKind::Isa;
  isa::Module module;
  std::optional<frontend::Circuit> circuit;         ///< as parsed (circuit inputs)
  std::optional<frontend::Circuit> canonical;       ///< canonical form (circuit inputs)
  std::vector<frontend::RewriteNote> rewrite_notes; ///< rules used by canonicalisation
};

/// Reads `path` ("-" = standard input) and compiles it to a verified module.
std::optional<CompiledInput> compile_input(const std::string &path, InputKind kind,
                                           const FrontendOptions &opts, DiagnosticEngine &diags);

/// A kernel name made from a file's stem ("a/my-circuit.circuit" -> "my_circuit").
std::string kernel_name_from_path(std::string_view path);

/// The text of a Make-style depfile: "target: dep1 dep2 ..." with spaces escaped.
std::string depfile_text(const std::string &target, const std::vector<std::string> &deps);

} // namespace hologram::driver
