// The `.hasm` text format of SPEC §3.5: parser (with file:line:col diagnostics) and the
// canonical printer. print(parse(t)) is the canonical form of t, and parsing it back gives
// the same module.
#pragma once

#include "hologram/isa/program.h"
#include "hologram/support/diagnostics.h"
#include "hologram/support/expected.h"

#include <optional>
#include <string>
#include <string_view>

namespace hologram::isa {

/// Parses a module; on error reports through `diags` and returns nullopt.
std::optional<Module> parse_module(std::string_view text, const std::string &file,
                                   DiagnosticEngine &diags);

std::string print_module(const Module &m);
std::string print_kernel(const Kernel &k);
/// One instruction in canonical form without indentation (`add.f32 r0, r1, r2`).
std::string print_instruction(const Kernel &k, const Instruction &inst);
/// The full mnemonic of an instruction (`setlt.f32`, `atom.add.u32`, `cvt.f32.i32`).
std::string print_mnemonic(const Instruction &inst);
/// The name of a register as written in text (`r5`, `%gid`).
std::string reg_name(Reg r);

/// Formats a literal of `type` given as bits: integers in decimal, finite floats in the
/// shortest decimal that reads back exactly, other floats (and f16/bf16) as hex bits.
std::string format_literal(Type type, uint64_t bits);
/// Parses a literal of `type` (decimal, hex bits, `inf`, `nan`); InvalidArgument saying why
/// it is not one.
Expected<uint64_t> parse_literal(Type type, std::string_view text);

} // namespace hologram::isa
