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

/// Moves the instructions `moved` (indices, in the order given) to just before instruction
/// `before`; labels that named `before` name it still, after the moved ones (so a branch to
/// it skips them), and a label that named a moved instruction names the next one left.
void move_before(isa::Kernel &k, const std::vector<uint32_t> &moved, uint32_t before);

/// `mov.imm.T rD, bits` in place of `at` (keeps its source location).
isa::Instruction mov_imm(const isa::Instruction &at, isa::Reg dst, isa::Type t, uint64_t bits);
/// `mov.T rD, rS` in place of `at`.
isa::Instruction mov(const isa::Instruction &at, isa::Reg dst, isa::Reg src, isa::Type t);

} // namespace hologram::opt::detail
