// The verifier (SPEC §3.2-§3.4): operand kinds and types, parameters and labels, static
// register typing with reaching definitions and definite initialisation, reducible control
// flow, calls, pool pairing, barriers under lane-varying control flow, whole-launch rules.
#pragma once

#include "hologram/isa/program.h"
#include "hologram/support/diagnostics.h"

namespace hologram::isa {

struct VerifyOptions {
  unsigned max_call_depth = 64; ///< SPEC: per-lane return stack depth
};

/// Verifies every kernel; diagnostics name the file, line and column. Returns true if valid.
bool verify_module(const Module &m, DiagnosticEngine &diags, const VerifyOptions &opts = {});
bool verify_kernel(const Kernel &k, const std::string &file, DiagnosticEngine &diags,
                   const VerifyOptions &opts = {});

} // namespace hologram::isa
