// Element-wise chains: runs of consecutive whole-launch operations over the same `n` elements
// (map, map2, silu, gelu, gelu_tanh, axpy; the table's W flag), optionally ended by one that
// reduces them (reduce_all, dot; the R flag). Element i of every output of such a run depends
// only on element i of the arrays, so a back end may run the whole run range by range, each
// range through every operation while it is in cache, instead of one pass per operation: the
// data effect is the same whenever the run's arrays are each other's equals or disjoint, which
// only the launch can tell (the CPU runtime checks it). The x86 back end and the CPU runtime
// share this one definition of a chain.
#pragma once

#include "hologram/isa/program.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace hologram::isa {

/// Instructions [first, first + count) of a kernel, count >= 2.
struct ElementwiseChain {
  uint32_t first = 0;
  uint32_t count = 0;
  friend bool operator==(const ElementwiseChain &, const ElementwiseChain &) = default;
};

/// Whether `next`, the instruction after `prev` in the same basic block, continues a chain that
/// `prev` is in: prev is element-wise, next is element-wise or reduces, both have one type, and
/// both count their elements in the same register.
bool continues_chain(const Instruction &prev, const Instruction &next);

/// The chains of a verified kernel, in instruction order: maximal runs of two or more
/// instructions, each continuing the one before it, that no label enters except at the first.
std::vector<ElementwiseChain> elementwise_chains(const Kernel &k);

/// The register that holds `n`, the element count, of an element-wise or reducing instruction.
Reg element_count_register(const Instruction &inst);

/// The buffer operands of an element-wise or reducing instruction: every one is an array of
/// `n` elements of the instruction's type (the table guarantees it).
std::vector<size_t> chain_buffer_operands(const Instruction &inst);

} // namespace hologram::isa
