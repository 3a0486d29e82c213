// Edits of a kernel's instruction list that keep its labels right: the one place passes
// delete instructions or build replacements. Internal to lib/opt.
#pragma once

#include "hologram/isa/cfg.h"
#include "hologram/isa/program.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace hologram::opt::detail {

/// Removes the instructions marked in `dead` (one flag per instruction); a label that named a
/// removed instruction names the next one kept.
void erase_instructions(isa::Kernel &k, const std::vector<bool> &dead);

/// Moves the instructions `moved` (indices, in the order given) to just before instruction
/// `before`; labels that named `before` name it still, after the moved ones (so a branch to
/// it skips them), and a label that named a moved instruction names the next one left.
void move_before(isa::Kernel &k, const std::vector<uint32_t> &moved, uint32_t before);

/// Inserts each instruction before its position (an index into the current list; several may
/// share one, kept in the order given). A label that named a position names it still, after
/// the inserted instructions.
void insert_before(isa::Kernel &k, std::vector<std::pair<uint32_t, isa::Instruction>> inserts);

/// A general register that no instruction of the kernel reads or writes, taken from the top
/// (nullopt when none is left); each call marks the one it returns as used in `used`.
std::optional<isa::Reg> free_register(std::vector<bool> &used);
/// The general registers a kernel reads or writes (windows included), one flag each.
std::vector<bool> used_registers(const isa::Kernel &k);

/// Whether the header of `loop` is entered from outside the loop only by falling through from
/// the instruction before it, so code inserted in front of the header runs once per entry.
bool enters_by_falling_through(const isa::Kernel &k, const isa::Cfg &cfg,
                               const isa::NaturalLoop &loop);

/// `mov.imm.T rD, bits` in place of `at` (keeps its source location).
isa::Instruction mov_imm(const isa::Instruction &at, isa::Reg dst, isa::Type t, uint64_t bits);
/// `mov.T rD, rS` in place of `at`.
isa::Instruction mov(const isa::Instruction &at, isa::Reg dst, isa::Reg src, isa::Type t);

} // namespace hologram::opt::detail
