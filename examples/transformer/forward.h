// The forward pass of examples/transformer on any backend, through the runtime API only: the
// weights are one buffer (the application's memory, used in place where the device can), every
// tensor a view of it; the KV cache is one buffer per kind whose rows are views; the kernels
// come from a bundle with x86 and SPIR-V code (transformer.hasm).
#pragma once

#include "model.h"

#include "hologram/runtime/backend.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

class HologramTransformer {
public:
  /// Loads `bundle` and makes `weights` a buffer (laid out by tf_layout_of(c,
  /// align_floats(backend)); the span may be longer, to a whole number of pages), which must
  /// outlive this object.
  HologramTransformer(hologram::Backend &backend, const std::string &bundle, const tf_config &c,
                      std::span<float> weights, const tf_layout &layout);
  ~HologramTransformer();
  HologramTransformer(const HologramTransformer &) = delete;
  HologramTransformer &operator=(const HologramTransformer &) = delete;

  /// Runs `token` at position `pos` (0, 1, ... in order); returns the logits.
  const std::vector<float> &forward(int token, int pos);

  /// Whether the weights are the application's memory (no copy was made).
  [[nodiscard]] bool weights_in_place() const { return weights_shared_; }

  /// The alignment, in floats, that tf_layout_of must use for `backend`'s views.
  static uint64_t align_floats(hologram::Backend &backend);

private:
  void run(const char *kernel, std::initializer_list<hologram::KernelArg> args, uint64_t lanes = 1);
  hologram::KernelArg w(uint64_t first, uint64_t count) const;

  hologram::Backend &b_;
  tf_config c_;
  tf_layout l_;
  hologram::ModuleHandle module_{};
  hologram::BufferHandle weights_{}, x_{}, xb_{}, xb2_{}, hb_{}, hb2_{}, q_{}, logits_{};
  hologram::BufferHandle key_cache_{}, value_cache_{}, cos_{}, sin_{};
  bool weights_shared_ = false;
  uint64_t kv_row_ = 0;   ///< floats between the rows of the KV cache (kv_dim, aligned)
  uint64_t rope_row_ = 0; ///< floats between the positions of the rotary tables
  std::vector<float> logits_host_;
};
