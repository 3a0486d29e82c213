// Reads a JSON kernel document into syntax trees, checking its shape: required and unknown
// fields, the kinds of values, names, and which constructs need version "1.1".
#pragma once

#include "json_ast.h"
#include "json_locator.h"

#include <optional>
#include <string_view>
#include <vector>

namespace hologram::frontend::json {

/// Parses `text`; on any error reports it and returns nullopt.
std::optional<std::vector<KernelDecl>> read_document(std::string_view text, const std::string &file,
                                                     const JsonLocator &locator,
                                                     DiagnosticEngine &diags);

/// Parses a JSON scalar type name ("f32", "bool", "usize", ...).
std::optional<Type> parse_scalar_type(std::string_view name);

} // namespace hologram::frontend::json
