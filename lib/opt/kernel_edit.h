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

} // namespace hologram::opt::detail
