// The interpreter's semantics for one pure instruction on known source values: what constant
// folding uses, so a folded value is exactly what the reference would compute at run time.
#pragma once

#include "hologram/isa/program.h"

#include <cstdint>
#include <optional>
#include <span>

namespace hologram::interp {

/// The bits the instruction writes to its destination register when operand i holds
/// `operand_bits[i]` (entries of non-register operands are ignored). Defined for mov, cvt and
/// the Arith, integer Logic and Math instructions; nullopt for every other instruction, and
/// for an integer div or rem by zero, whose run-time report (--fcheck-div) folding must keep.
std::optional<uint64_t> evaluate_pure(const isa::Instruction &inst,
                                      std::span<const uint64_t> operand_bits);

} // namespace hologram::interp
