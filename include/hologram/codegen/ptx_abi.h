// What hologram-cc's PTX tells a runtime, without LLVM (SPEC §9.4): the CUDA targets, and how
// to launch each kernel of a module (its parameters after the kernel's own), stored as JSON in
// bundles next to the PTX.
//
// Kernel parameters, in the kernel's order: a buffer or pool is a global pointer followed by
// its size in bytes (u64); a scalar is its value (f16/bf16 as their 16 bits). Then, each only
// where PtxKernelInfo says the kernel has it, in this order: the status buffer (u32 words of
// spirv_status, zeroed before the launch and read after it: the first failure of the launch),
// the Atlas boundary pool, the Atlas state (spirv_status::kAtlasWords u64: resonance as f64
// bits, then the phase advance) and the phase at launch start (u32). Shared memory is one
// dynamic array in address space 3: the launch gives the kernel's static bytes plus its own.
// The code reads the launch geometry from PTX's special registers (%tid, %ntid, %ctaid,
// %nctaid).
#pragma once

#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::codegen {

/// A CUDA target: `cuda-sm_70` ... `cuda-sm_90`.
struct PtxTarget {
  std::string name; ///< "cuda-sm_80"
  unsigned sm = 0;  ///< 80
  /// The PTX ISA version the module declares (the oldest that has every feature used and
  /// that LLVM 19 accepts for this architecture).
  unsigned ptx_version = 0;
};

/// Whether `name` looks like a CUDA target ("cuda-..."), known or not.
bool is_ptx_target_name(std::string_view name);
/// Parses cuda-sm_70, sm_75, sm_80, sm_86, sm_89 or sm_90; nullopt otherwise.
std::optional<PtxTarget> parse_ptx_target(std::string_view name);
/// Every CUDA target name, for messages: "cuda-sm_70, cuda-sm_75, ..., cuda-sm_90".
std::string ptx_target_names();

/// How a runtime launches one kernel of a PTX module. A whole-launch kernel (`host`) has no
/// .entry: the runtime runs its scalar code and launches the module's device library kernels
/// (named codegen::kSpirvLibraryPrefix...; their parameters are here, they have no ISA in the
/// module) for its whole-launch instructions, as on the SPIR-V backends.
struct PtxKernelInfo {
  std::string name;  ///< the .entry
  bool host = false; ///< a whole-launch kernel: nothing below applies
  std::vector<isa::Param> params;
  uint32_t static_shared_bytes = 0; ///< `.shared N`: the launch adds its own bytes
  // The parameters after the kernel's own (header comment), in this order:
  bool has_status = false;   ///< u32* status words; the launch fails when word 0 is not 0
  bool has_boundary = false; ///< u8* the boundary pool (atlas::kBoundaryPoolBytes)
  bool has_atlas = false;    ///< u64* the Atlas state
  bool has_phase = false;    ///< u32 the phase at launch start
};

/// The reflection of a module's kernels as the JSON array stored in bundle manifests.
std::string ptx_reflection_json(const std::vector<PtxKernelInfo> &kernels);
/// Reads what ptx_reflection_json wrote; InvalidModule naming what is wrong otherwise.
Expected<std::vector<PtxKernelInfo>> parse_ptx_reflection(std::string_view json);

} // namespace hologram::codegen
