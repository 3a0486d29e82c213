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

/// The registers an instruction reads (with the type it expects); clears `uses` first.
void instruction_uses(const Instruction &inst, std::vector<RegAccess> &uses);
/// The registers an instruction writes; clears `defs` first.
void instruction_defs(const Instruction &inst, std::vector<RegAccess> &defs);

} // namespace hologram::isa
