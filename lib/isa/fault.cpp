#include "hologram/isa/fault.h"

#include "hologram/isa/atlas.h"
#include "hologram/isa/text.h"

#include <algorithm>
#include <sstream>

namespace hologram::isa {

std::string lane_coordinates(const LaunchConfig &launch, uint64_t lane) {
  const Dim3 &G = launch.grid, &B = launch.block;
  const uint64_t lanes = std::max<uint64_t>(1, B.count());
  const uint64_t block = lane / lanes, in_block = lane % lanes;
  const uint64_t gx = std::max<uint32_t>(1, G.x), gy = std::max<uint32_t>(1, G.y);
  const uint64_t bx = std::max<uint32_t>(1, B.x), by = std::max<uint32_t>(1, B.y);
  return std::to_string(lane) + " (block (" + std::to_string(block % gx) + ',' +
         std::to_string(block / gx % gy) + ',' + std::to_string(block / (gx * gy)) + "), lane (" +
         std::to_string(in_block % bx) + ',' + std::to_string(in_block / bx % by) + ',' +
         std::to_string(in_block / (bx * by)) + "))";
}

std::string fault_site(const Kernel &k, std::string_view source, const LaunchConfig &launch,
                       uint64_t lane, uint64_t inst) {
  std::string s = "kernel '" + k.name + "': lane " + lane_coordinates(launch, lane);
  if (inst < k.insts.size()) {
    const Instruction &in = k.insts[inst];
    s += ", ";
    if (!source.empty()) s += std::string(source) + ':';
    s += "line " + std::to_string(in.loc.line) + " '" + print_instruction(k, in) + "'";
  }
  return s;
}

std::string out_of_bounds_access(std::string_view region, std::string_view offset, uint64_t size,
                                 uint64_t holds) {
  return "out-of-bounds access to " + std::string(region) + ": " + std::string(offset) + ", size " +
         std::to_string(size) + ", but it holds " + std::to_string(holds) + " bytes";
}

std::string access_offset(uint64_t offset) {
  return static_cast<int64_t>(offset) < 0 ? "a negative offset"
                                          : "offset " + std::to_string(offset);
}

std::string invalid_handle(const Kernel &k, uint64_t inst, uint64_t bits) {
  const Instruction &in = k.insts.at(inst);
  const bool pool = in.info().pool_access();
  std::string reg = "a register";
  for (const Operand &o : in.operands)
    if (o.kind == OperandKind::Addr && o.addr.base == AddrBase::Reg)
      reg = "register " + reg_name(static_cast<Reg>(o.addr.base_id));
  std::ostringstream hex;
  hex << std::hex << bits;
  return reg + " holds no valid " + (pool ? "pool handle" : "address") + " (0x" + hex.str() + ")";
}

std::pair<std::string, uint64_t> scratch_region(const Kernel &k, uint64_t inst) {
  if (inst >= k.insts.size() || k.insts[inst].op != Opcode::PoolAlloc) return {"launch scratch", 0};
  const Instruction &in = k.insts[inst];
  return {"the scratch allocation of line " + std::to_string(in.loc.line), in.operands[1].imm};
}

std::string parameter_region(const Kernel &k, size_t index) {
  return "parameter %" + k.params.at(index).name;
}

std::string class_region(uint64_t c) {
  return "class " + std::to_string(c) + " of " + boundary_pool_region();
}

std::string boundary_pool_region() {
  return "the boundary pool";
}

} // namespace hologram::isa
