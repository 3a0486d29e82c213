// Running test::random_typed_kernel on a backend and comparing what two backends left, for the
// differential tests of the CPU and SPIR-V back ends against the interpreter.
#pragma once

#include "hologram/isa/numeric.h"
#include "hologram/runtime/backend.h"
#include "test_util.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace hologram::test {

/// The contents of random_typed_kernel's buffers, one byte vector per parameter.
using RandomKernelBuffers = std::vector<std::vector<std::byte>>;

/// Inputs for `lanes` lanes: each lane's elements of each buffer random (edges often).
inline RandomKernelBuffers random_kernel_inputs(std::mt19937 &rng, uint32_t lanes) {
  RandomKernelBuffers buffers;
  for (Type t : random_kernel_types()) {
    const size_t size = isa::type_size(t);
    std::vector<std::byte> b(size_t{lanes} * kRandomKernelSlots * size);
    for (uint32_t lane = 0; lane < lanes; ++lane)
      for (uint32_t k = 0; k < kRandomKernelSlots; ++k) {
        const uint64_t v = random_value_bits(rng, t);
        std::memcpy(b.data() + (size_t{lane} * kRandomKernelSlots + k) * size, &v, size);
      }
    buffers.push_back(std::move(b));
  }
  return buffers;
}

/// Runs `go` (a launch of the kernel with these arguments) on `b` over copies of `inputs` and
/// returns what the buffers hold after it.
inline RandomKernelBuffers
run_random_typed_kernel(Backend &b, const RandomKernelBuffers &inputs,
                        const std::function<void(std::span<const KernelArg>)> &go) {
  std::vector<BufferHandle> handles;
  std::vector<KernelArg> args;
  for (const auto &in : inputs) {
    handles.push_back(b.allocate_buffer(in.size()));
    b.copy_to_buffer(handles.back(), 0, in);
    args.push_back(KernelArg::buffer(handles.back()));
  }
  go(args);
  RandomKernelBuffers out;
  for (size_t j = 0; j < inputs.size(); ++j) {
    out.emplace_back(inputs[j].size());
    b.copy_from_buffer(handles[j], 0, out.back());
    b.free_buffer(handles[j]);
  }
  return out;
}

/// "" when `got` equals `want` element for element, bit for bit except that any NaN equals
/// any NaN (SPEC §3.4 fixes no NaN's payload); else the first element that differs.
inline std::string random_kernel_mismatch(const RandomKernelBuffers &got,
                                          const RandomKernelBuffers &want) {
  const std::vector<Type> &types = random_kernel_types();
  for (size_t j = 0; j < types.size(); ++j) {
    const size_t size = isa::type_size(types[j]);
    for (size_t e = 0; e * size < want[j].size(); ++e) {
      uint64_t g = 0, w = 0;
      std::memcpy(&g, got[j].data() + e * size, size);
      std::memcpy(&w, want[j].data() + e * size, size);
      if (g == w) continue;
      auto value = [&](uint64_t bits) {
        const Type t = types[j];
        if (t == Type::F32) return double{std::bit_cast<float>(static_cast<uint32_t>(bits))};
        if (t == Type::F64) return std::bit_cast<double>(bits);
        if (t == Type::F16) return double{isa::f16_to_float(static_cast<uint16_t>(bits))};
        if (t == Type::BF16) return double{isa::bf16_to_float(static_cast<uint16_t>(bits))};
        return 0.0;
      };
      if (isa::is_float(types[j]) && std::isnan(value(g)) && std::isnan(value(w))) continue;
      std::ostringstream os;
      os << "buffer %b" << j << " (" << isa::type_name(types[j]) << "), lane "
         << e / kRandomKernelSlots << ", element " << e % kRandomKernelSlots << ": 0x" << std::hex
         << g << " where the interpreter left 0x" << w;
      if (isa::is_float(types[j])) os << " (" << value(g) << " against " << value(w) << ")";
      return os.str();
    }
  }
  return "";
}

} // namespace hologram::test
