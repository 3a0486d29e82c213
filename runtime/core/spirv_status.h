// The status buffer of a SPIR-V or PTX launch (codegen::spirv_status) turned into the Error a
// backend throws: the kernel, the lane, the source line and what went wrong, worded as the
// interpreter and the CPU backend word it (hologram/isa/fault.h).
#pragma once

#include "hologram/codegen/spirv_abi.h"
#include "hologram/isa/atlas.h"
#include "hologram/isa/fault.h"
#include "hologram/isa/handles.h"
#include "hologram/isa/program.h"
#include "hologram/runtime/backend.h"

#include <functional>
#include <string>
#include <string_view>
#include <tuple>

namespace hologram::runtime {

/// What a failed launch's status is read against: the kernel, the file it came from ("" when
/// not known), the launch, and the bytes of each parameter's argument and of shared memory.
struct SpirvFaultContext {
  const isa::Kernel &kernel;
  std::string_view source;
  const LaunchConfig &launch;
  std::function<uint64_t(size_t)> param_bytes;
  uint64_t shared_bytes = 0;
};

/// Throws unless w[0] is spirv_status::Ok, in the words of every backend
/// (hologram/isa/fault.h); `backend` names the backend in the alignment message ("the Vulkan
/// backend").
inline void report_spirv_status(const SpirvFaultContext &cx,
                                const uint32_t (&w)[codegen::spirv_status::kWords],
                                const std::string &backend) {
  if (w[0] == codegen::spirv_status::Ok) return;
  const isa::Kernel &k = cx.kernel;
  uint64_t lane = w[1] | (uint64_t{w[2]} << 32);
  uint64_t offset = w[4] | (uint64_t{w[5]} << 32);
  const std::string where = isa::fault_site(k, cx.source, cx.launch, lane, w[7]) + ": ";
  // The region of an access (OutOfBounds, Misaligned) and its bytes.
  std::string object;
  uint64_t holds = 0;
  auto region = [&] {
    if (w[3] < k.params.size()) {
      object = isa::parameter_region(k, w[3]);
      holds = cx.param_bytes(w[3]);
    } else if (w[3] == codegen::spirv_status::kBoundaryPool) {
      object = isa::boundary_pool_region();
      holds = atlas::kBoundaryPoolBytes;
    } else if (w[3] >= codegen::spirv_status::kClassWindows &&
               w[3] < codegen::spirv_status::kClassWindows + atlas::kNumClasses) {
      object = isa::class_region(w[3] - codegen::spirv_status::kClassWindows);
      holds = atlas::kClassBytes;
    } else if (w[3] >= codegen::spirv_status::kScratchSites &&
               w[3] < codegen::spirv_status::kBoundaryPool) {
      std::tie(object, holds) = isa::scratch_region(
          k, isa::handle::allocation_site(k, w[3] - codegen::spirv_status::kScratchSites));
    } else {
      object = "shared memory";
      holds = cx.shared_bytes;
    }
  };
  switch (w[0]) {
  case codegen::spirv_status::AtlasRange: {
    const char *what = w[3] == 0 ? "class" : w[3] == 1 ? "page" : "byte";
    const char *range = w[3] == 0 ? "0..95" : w[3] == 1 ? "0..47" : "0..255";
    throw Error(ErrorCode::LaunchFailed,
                where + what + " " + std::to_string(offset) + " is out of range (" + range + ")");
  }
  case codegen::spirv_status::InvalidAddress:
    throw Error(ErrorCode::OutOfBounds, where + isa::invalid_handle(k, w[7], offset));
  case codegen::spirv_status::DivisionByZero:
    throw Error(ErrorCode::DivisionByZero, where + "integer division by zero");
  case codegen::spirv_status::OutOfBounds:
    region();
    throw Error(ErrorCode::OutOfBounds,
                where + isa::out_of_bounds_access(object, isa::access_offset(offset), w[6], holds));
  default:
    region();
    throw Error(ErrorCode::LaunchFailed, where + "access of " + std::to_string(w[6]) +
                                             " bytes at offset " + std::to_string(offset) + " of " +
                                             object + " is not aligned to its size, which " +
                                             backend + " requires");
  }
}

} // namespace hologram::runtime
