// Edits of a kernel's instruction list that keep its labels right: the one place passes
// delete instructions or build replacements. Internal to lib/opt.
#pragma once

#include "hologram/isa/program.h"

#include <cstdint>
#include <vector>

namespace hologram::opt::detail {

/// Removes the instructions marked in `dead` (one flag per instruction); a label that named a
/// removed instruction names the next one kept.
void erase_instructions(isa::Kernel &k, const std::vector<bool> &dead);

/// `mov.imm.T rD, bits` in place of `at` (keeps its source location).
isa::Instruction mov_imm(const isa::Instruction &at, isa::Reg dst, isa::Type t, uint64_t bits);
/// `mov.T rD, rS` in place of `at`.
isa::Instruction mov(const isa::Instruction &at, isa::Reg dst, isa::Reg src, isa::Type t);

/// Register and predicate slots as one index space: registers first, then predicates.
inline constexpr unsigned kSlots = isa::kFirstSpecialReg + isa::kNumPreds;
inline unsigned slot_of(bool pred, isa::Reg r) {
  return pred ? isa::kFirstSpecialReg + r : r;
}

/// The type an operand of role `role` has in `inst`, for the source roles of one register
/// (SrcT, SrcU32, SrcU64, SrcF64, CvtSrc); Type::None for every other role.
isa::Type source_type(const isa::Instruction &inst, isa::OperandRole role);

} // namespace hologram::opt::detail
