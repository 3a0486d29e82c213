// Register addresses where accesses are checked (SPEC §3.3): what `addr %p` and `pool.alloc`
// give on the interpreter, on Vulkan and OpenCL, and on x86 and CUDA under -fbounds-check. A
// value is a tag in the top 16 bits, naming the region, and a byte offset into it below, so
// that arithmetic on it moves the offset and an access through it is checked against the
// region it came from, not against whatever memory the sum happens to reach.
#pragma once

#include "hologram/isa/program.h"

#include <cstdint>
#include <vector>

namespace hologram::isa::handle {

inline constexpr unsigned kTagShift = 48;
inline constexpr uint64_t kOffsetMask = (uint64_t{1} << kTagShift) - 1;
/// Tags from here on name launch scratch: an allocation site of the kernel in the compiled
/// back ends (1 for its first pool.alloc, in instruction order), an allocation of the lane in
/// the interpreter.
inline constexpr uint64_t kScratchTag = 0x8000;

/// `addr %p`: parameter p's region at offset 0.
constexpr uint64_t param(uint32_t p) {
  return (uint64_t{p} + 1) << kTagShift;
}
/// A scratch allocation's handle at offset 0.
constexpr uint64_t scratch(uint64_t id) {
  return (kScratchTag + id) << kTagShift;
}

/// The instruction of allocation site `site` of `k` (1: its first pool.alloc in instruction
/// order); k.insts.size() when it has no such site.
inline uint64_t allocation_site(const Kernel &k, uint64_t site) {
  for (uint64_t i = 0; i < k.insts.size(); ++i)
    if (k.insts[i].op == Opcode::PoolAlloc && --site == 0) return i;
  return k.insts.size();
}

/// The parameters of `k` that some `addr` names, in order: the only ones a handle reaches.
inline std::vector<uint32_t> addressed_params(const Kernel &k) {
  std::vector<bool> named(k.params.size());
  for (const Instruction &inst : k.insts)
    if (inst.op == Opcode::Addr) named.at(inst.operands[1].index) = true;
  std::vector<uint32_t> out;
  for (uint32_t p = 0; p < named.size(); ++p)
    if (named[p]) out.push_back(p);
  return out;
}

} // namespace hologram::isa::handle
