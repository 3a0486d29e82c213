// The operands of attention (SPEC §3.8) read once, by their names in the instruction table,
// with the shape rules every implementation applies: the reference interpreter, the SPIR-V
// planner and the CPU fast path all take them from here.
#pragma once

#include "hologram/isa/program.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace hologram::isa {

/// out[h, i, :] = softmax_j(Q[h, i, :] · K[g, j, :] · scale + mask[i, j]) · V[g, :, :] for
/// query head h < heads and its key/value head g = h / (heads / kv_heads) (grouped-query
/// attention; kv_heads = heads is plain multi-head attention). Element (h, i, c) of Q and out
/// is at h·q_head_stride + i·q_row_stride + c, element (g, j, c) of K and V at
/// g·kv_head_stride + j·kv_row_stride + c: [heads, seq, head_dim] is (seq·head_dim, head_dim),
/// rows of all heads side by side ([seq, heads·head_dim], llama2.c's layout and a KV cache) is
/// (head_dim, heads·head_dim). The mask is dense [seq_q, seq_k], shared by every head.
struct AttentionOperands {
  size_t out = 0, q = 0, k = 0, v = 0, mask = 0; ///< operand positions of the buffers
  bool has_mask = false;
  uint64_t heads = 0, kv_heads = 0, seq_q = 0, seq_k = 0, head_dim = 0;
  uint64_t q_head_stride = 0, q_row_stride = 0, kv_head_stride = 0, kv_row_stride = 0;
  uint64_t scale_bits = 0; ///< a scalar of the instruction's type
  bool causal = false;

  /// Query heads per key/value head (valid once problem() is empty).
  [[nodiscard]] uint64_t group() const { return kv_heads ? heads / kv_heads : 0; }
  /// Where query head h's key/value head starts in K and V (valid once problem() is empty).
  [[nodiscard]] uint64_t kv_offset(uint64_t h) const { return h / group() * kv_head_stride; }
  /// How many elements Q and out must hold: the last one's index + 1 (UINT64_MAX when that
  /// overflows; 0 when there is nothing to compute).
  [[nodiscard]] uint64_t q_extent() const;
  /// How many elements K and V must hold (as q_extent()).
  [[nodiscard]] uint64_t kv_extent() const;
  /// Empty when the shape is valid; otherwise what is wrong with it: kv_heads that do not
  /// divide heads, or strides that make two elements of out the same.
  [[nodiscard]] std::string problem() const;
  /// Whether there is nothing to compute (no query, head or column).
  [[nodiscard]] bool empty() const { return heads == 0 || seq_q == 0 || head_dim == 0; }
};

/// Reads the operands of `inst` (an attention); `reg` gives a register's bits.
AttentionOperands attention_operands(const Instruction &inst,
                                     const std::function<uint64_t(Reg)> &reg);

} // namespace hologram::isa
