// The JSON kernel front end (SPEC §5): documents of the prototype's Python-to-JSON compiler
// (version "1.0") and the "1.1" extensions, statically typed and lowered to verified ISA.
#pragma once

#include "hologram/isa/program.h"
#include "hologram/support/diagnostics.h"

#include <optional>
#include <string>
#include <string_view>

namespace hologram::frontend {

/// Compiles a JSON kernel document into a verified module (one kernel per schema). Errors and
/// warnings carry file:line:col and the JSON Pointer of the node; on error returns nullopt.
std::optional<isa::Module> compile_json(std::string_view text, const std::string &file,
                                        DiagnosticEngine &diags);

} // namespace hologram::frontend
