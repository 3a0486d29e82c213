// The status buffer of a SPIR-V launch (codegen::spirv_status) turned into the Error a
// backend throws: the kernel, the lane, the source line and what went wrong.
#pragma once

#include "hologram/codegen/spirv_abi.h"
#include "hologram/isa/program.h"
#include "hologram/isa/text.h"
#include "hologram/runtime/backend.h"

#include <sstream>
#include <string>

namespace hologram::runtime {

/// Throws unless w[0] is spirv_status::Ok; `backend` names the backend in the alignment
/// message ("the Vulkan backend").
inline void report_spirv_status(const isa::Kernel &k,
                                const uint32_t (&w)[codegen::spirv_status::kWords],
                                const std::string &backend) {
  if (w[0] == codegen::spirv_status::Ok) return;
  uint64_t lane = w[1] | (uint64_t{w[2]} << 32);
  uint64_t offset = w[4] | (uint64_t{w[5]} << 32);
  std::string where = "kernel '" + k.name + "', lane " + std::to_string(lane);
  if (w[7] < k.insts.size()) where += " (line " + std::to_string(k.insts[w[7]].loc.line) + ")";
  std::string object = w[3] < k.params.size()                          ? "%" + k.params[w[3]].name
                       : w[3] == codegen::spirv_status::kBoundaryPool  ? "the boundary pool"
                       : w[3] == codegen::spirv_status::kLaunchScratch ? "its launch scratch"
                                                                       : "shared memory";
  switch (w[0]) {
  case codegen::spirv_status::AtlasRange: {
    const char *what = w[3] == 0 ? "class" : w[3] == 1 ? "page" : "byte";
    const char *range = w[3] == 0 ? "0..95" : w[3] == 1 ? "0..47" : "0..255";
    throw Error(ErrorCode::LaunchFailed, where + ": " + what + " " + std::to_string(offset) +
                                             " is out of range (" + range + ")");
  }
  case codegen::spirv_status::InvalidAddress: {
    std::ostringstream value;
    value << std::hex << offset;
    bool pool = w[3] & codegen::spirv_status::kPoolHandle;
    throw Error(
        ErrorCode::OutOfBounds,
        where + ": register " +
            isa::reg_name(static_cast<isa::Reg>(w[3] & ~codegen::spirv_status::kPoolHandle)) +
            " holds no valid " + (pool ? "pool handle" : "address") + " (0x" + value.str() + ")");
  }
  case codegen::spirv_status::DivisionByZero:
    throw Error(ErrorCode::DivisionByZero, where + ": integer division by zero");
  case codegen::spirv_status::OutOfBounds:
    throw Error(ErrorCode::OutOfBounds, where + ": access of " + std::to_string(w[6]) +
                                            " bytes at offset " + std::to_string(offset) +
                                            " is outside " + object);
  default:
    throw Error(ErrorCode::LaunchFailed, where + ": access of " + std::to_string(w[6]) +
                                             " bytes at offset " + std::to_string(offset) + " of " +
                                             object + " is not aligned to its size, which " +
                                             backend + " requires");
  }
}

} // namespace hologram::runtime
