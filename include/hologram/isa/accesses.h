// The registers and predicates an instruction reads and writes, with the types it expects:
// the one definition that the verifier's analyses and the code generators share.
#pragma once

#include "hologram/isa/program.h"

#include <vector>

namespace hologram::isa {

/// One register or predicate read or written by an instruction, with its type.
struct RegAccess {
  bool pred = false;
  Reg reg = 0;
  Type type = Type::None;
};

/// Registers and predicates as one index space for per-register dataflow: r0..r251, then
/// p0..p15 (special registers are read-only and have no slot).
inline constexpr unsigned kNumSlots = kFirstSpecialReg + kNumPreds;
/// The slot of a general register or predicate access.
constexpr unsigned slot_of(const RegAccess &a) {
  return a.pred ? kFirstSpecialReg + a.reg : a.reg;
}

/// The type of the one register or predicate that an operand of `role` reads in `inst`
/// (Type::Pred for a predicate; a loop counter is read as u32); Type::None for roles that read
/// no single register: destinations, literals, labels, parameters, addresses and windows.
Type read_type(const Instruction &inst, OperandRole role);
/// The type of the register or predicate that an operand of `role` writes (a loop counter is
/// written as u32); Type::None for roles that write none.
Type write_type(const Instruction &inst, OperandRole role);

/// The registers an instruction reads (with the type it expects); clears `uses` first.
void instruction_uses(const Instruction &inst, std::vector<RegAccess> &uses);
/// The registers an instruction writes; clears `defs` first.
void instruction_defs(const Instruction &inst, std::vector<RegAccess> &defs);

} // namespace hologram::isa
