// What the CPU library's files share (library.cpp runs one whole-launch instruction,
// fused_chain.cpp an element-wise chain of them): operands read by their names in the
// instruction table, the thread pool's ranges, and the element-range kernels of the
// element-wise operations. Internal to runtime/cpu.
#pragma once

#include "cpu_module.h"
#include "hologram/interp/interpreter.h"
#include "hologram/isa/numeric.h"
#include "hologram/isa/opcode.h"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace hologram::runtime::library {

using RegFn = std::function<uint64_t(isa::Reg)>;
__extension__ typedef unsigned __int128 Wide;

/// Position of operand `name` of Op in the instruction table; a name the table does not give
/// Op does not compile.
template <isa::Opcode Op> consteval size_t at(std::string_view name) {
  return isa::operand_index(Op, name);
}

template <typename T> T scalar_of(uint64_t bits) {
  if constexpr (std::is_same_v<T, float>)
    return isa::bits_to_f32(bits);
  else
    return isa::bits_to_f64(bits);
}

/// The operands of one whole-launch instruction, by position from at<Op>(name).
struct Operands {
  const isa::Instruction &in;
  std::span<const CpuArg> args;
  const RegFn &reg;
  int level; ///< the x86 level of the vectorised kernels (2, 3 or 4)

  /// The value of a register operand.
  [[nodiscard]] uint64_t u(size_t pos) const { return reg(in.operands[pos].index); }
  template <typename T> [[nodiscard]] T scalar(size_t pos) const { return scalar_of<T>(u(pos)); }
  /// A literal flag (transA, causal).
  [[nodiscard]] bool flag(size_t pos) const { return in.operands[pos].imm != 0; }
  /// Whether buffer operand `pos` (or an absent `none`) holds `elems` elements of T.
  template <typename T> [[nodiscard]] bool holds(size_t pos, Wide elems) const {
    const auto &o = in.operands[pos];
    return o.kind != isa::OperandKind::Param || Wide{args[o.index].size} >= elems * sizeof(T);
  }
  /// The memory of buffer operand `pos`; null for `none`.
  template <typename T> [[nodiscard]] T *data(size_t pos) const {
    const auto &o = in.operands[pos];
    return o.kind == isa::OperandKind::Param ? static_cast<T *>(args[o.index].data) : nullptr;
  }
};

/// The arguments of a launch as the reference interpreter takes them.
std::vector<interp::ArgValue> values_of(const isa::Kernel &k, std::span<const CpuArg> args);

/// Combines two partial results of reduction `in` (a reduce_all's operation on its type).
uint64_t combine(const isa::Instruction &in, uint64_t a, uint64_t b);

/// Ranges of [0, n) for the thread pool: at least `grain` units each, at most 4 per thread,
/// and a multiple of the threads where there are more ranges than threads (equal shares).
uint64_t parts_of(uint64_t n, uint64_t grain);

/// Runs body(lo, hi) over ranges of [0, n) on the thread pool.
void ranges(uint64_t n, uint64_t grain, const std::function<void(uint64_t, uint64_t)> &body);

/// Elements [lo, hi) of an operation over n elements.
using RangeFn = std::function<void(uint64_t lo, uint64_t hi)>;

/// Elements [lo, hi) of an element-wise operation of f32 or f64 (map, map2, silu, gelu,
/// gelu_tanh, axpy: the table's W rows) through the vectorised kernels of o.level; empty when
/// one of its arrays holds fewer than `n` elements (the reference then reports it).
template <typename T> RangeFn elementwise_range(const Operands &o);
extern template RangeFn elementwise_range<float>(const Operands &o);
extern template RangeFn elementwise_range<double>(const Operands &o);

/// Elements [lo, hi) of two f32 instructions in one pass: `first` a map or silu with a vector
/// function (exp, sigmoid, silu), `second` a map2 add, sub, mul or div that reads its output,
/// with the bits of the two one after the other (level kernel map_then_map2); empty for any
/// other pair, or when an array holds fewer than `n` elements. Only for arrays that are each
/// other's equals or disjoint (a fusible chain).
RangeFn map_then_map2_range(const Operands &first, const Operands &second);

} // namespace hologram::runtime::library
