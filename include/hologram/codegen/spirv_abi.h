// What a SPIR-V module compiled by hologram-cc tells the runtime that loads it (SPEC §9, §10):
// the targets, how each kernel binds and launches (its reflection, stored as JSON beside the
// words in bundles and linked modules), the words of the status buffer, and the names of the
// device library kernels. The runtime reads these without linking the compiler or SPIRV-Tools.
#pragma once

#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::codegen {

enum class SpirvEnv { Vulkan1_1, Vulkan1_2, Vulkan1_3, OpenCL1_2, OpenCL2_0, OpenCL3_0 };

struct SpirvTarget {
  std::string name; ///< "vulkan1.2", "opencl1.2", ...
  SpirvEnv env = SpirvEnv::Vulkan1_1;
  [[nodiscard]] bool is_vulkan() const {
    return env == SpirvEnv::Vulkan1_1 || env == SpirvEnv::Vulkan1_2 || env == SpirvEnv::Vulkan1_3;
  }
};

/// Whether `name` names a SPIR-V target (vulkan1.1..1.3, opencl1.2/2.0/3.0).
bool is_spirv_target_name(std::string_view name);
std::optional<SpirvTarget> parse_spirv_target(std::string_view name);

/// A descriptor binding of a Vulkan kernel (set 0).
struct SpirvBinding {
  enum class Kind { Buffer, Pool, Status, Boundary, Atlas, Scratch };
  Kind kind = Kind::Buffer;
  uint32_t binding = 0;
  uint32_t param = 0; ///< parameter index (Buffer, Pool)
};

/// A scalar parameter's place in the push-constant block (Vulkan) or its kernel argument
/// (OpenCL: `offset` is the argument index). 8- and 16-bit scalars travel as 32 bits, zero-
/// or sign-extended by the runtime.
struct SpirvScalar {
  uint32_t param = 0;
  uint32_t offset = 0;
  uint32_t size = 4;
};

/// One argument of an OpenCL kernel, in argument order (SPEC §9.2).
struct SpirvKernelArg {
  enum class Kind {
    Buffer,      ///< a __global pointer: the buffer of parameter `param`
    Pool,        ///< a __global uint*: the pool of parameter `param`
    Scalar,      ///< parameter `param` by value (8/16-bit scalars as 32 bits)
    Status,      ///< a __global uint[spirv_status::kWords], zeroed before the launch
    Boundary,    ///< a __global uint*: the Atlas boundary pool (SPEC §4)
    Atlas,       ///< a __global ulong[spirv_status::kAtlasWords]: resonance, phase advance
    Scratch,     ///< a __global uint*: launch scratch, scratch_bytes_per_lane for every lane
    Phase,       ///< uint: the Atlas phase at launch start
    Shared,      ///< a __local pointer: the shared memory, static + dynamic bytes
    SharedWords, ///< uint: that shared memory in 32-bit words (-fbounds-check)
    BufferBytes, ///< ulong: the size of parameter `param`'s buffer (-fbounds-check)
  };
  Kind kind = Kind::Buffer;
  uint32_t param = 0;
};

/// How a runtime binds and launches one kernel of a SPIR-V module.
struct SpirvKernelInfo {
  std::string name; ///< the entry point
  /// A whole-launch kernel: no entry point of its own; the runtime runs its scalar code on
  /// the host and its whole-launch instructions as the library entry points of the module
  /// (spirv_library.h).
  bool host = false;
  std::vector<SpirvBinding> bindings;
  std::vector<SpirvScalar> scalars;
  /// Vulkan push-constant block: u32 grid[3] at 0 (the whole launch), u32 block_base[3] at 12
  /// (the first block of this dispatch), then the scalars.
  uint32_t push_constant_bytes = 0;
  uint32_t local_size_spec_ids[3] = {0, 1, 2}; ///< specialisation constants of the block size
  uint32_t shared_words_spec_id = 3;           ///< u32 words of shared memory (static + dynamic)
  /// Vulkan: a bool, true when the launch has fewer than 2^32 lanes, so lane ids are computed
  /// in 32-bit arithmetic (64-bit multiplies are several instructions on most devices).
  uint32_t narrow_lanes_spec_id = 4;
  /// Vulkan: a bool, true when the launch's grid is one row of blocks (y and z 1), so the
  /// linear block index in %gid is block x alone.
  uint32_t flat_grid_spec_id = 5;
  /// Vulkan: bools, true when the device's GLSL.std.450 Fma rounds once for f32 (first) and
  /// f64 (second), which the runtime finds out by a probe of the device: the kernel's exact
  /// `fma` then uses it, and emulates it otherwise. Set when the kernel has an exact fma.
  uint32_t fma_spec_ids[2] = {6, 7};
  bool exact_fma = false;
  uint32_t static_shared_bytes = 0;
  bool has_status = false; ///< binding of the status buffer (checks and launch errors)
  uint32_t status_binding = 0;
  /// Vulkan: the push-constant offset of the Atlas phase at launch start (phase.get); 0 when
  /// the kernel does not read it.
  uint32_t phase_offset = 0;
  /// Launch scratch (pool.alloc): bytes each lane needs in the Scratch buffer, which holds
  /// them for every lane of the launch (lane %gid at %gid * scratch_bytes_per_lane).
  uint64_t scratch_bytes_per_lane = 0;
  /// OpenCL: the kernel's arguments (bindings and scalars then give argument indices).
  std::vector<SpirvKernelArg> kernel_args;
  /// --block: the only block size the kernel runs ({0, 0, 0}: any).
  std::array<uint32_t, 3> block = {0, 0, 0};
  /// The kernel's parameters (names, kinds, types): what a runtime checks a launch's
  /// arguments against for the device library kernels, which have no ISA in the module.
  std::vector<isa::Param> params;
  /// Device capabilities beyond the baseline: "int8", "int16", "float64", "int64_atomics",
  /// "storage_buffer_8bit", "storage_buffer_16bit", and on Vulkan "signed_zero_inf_nan_32" and
  /// "signed_zero_inf_nan_64" (the SignedZeroInfNanPreserve execution mode of a kernel that
  /// has f32 or f64 values).
  std::vector<std::string> requires_features;
};

struct SpirvModule {
  std::vector<uint32_t> words;
  std::vector<SpirvKernelInfo> kernels;
};

/// Words of the status buffer a launch reads back when SpirvKernelInfo::has_status.
namespace spirv_status {
inline constexpr uint32_t kWords = 8;
/// Word 0: 0 when the launch finished cleanly, otherwise one of these.
enum Code : uint32_t {
  Ok = 0,
  OutOfBounds = 1,
  DivisionByZero = 2,
  Misaligned = 3,
  AtlasRange = 4,
  InvalidAddress = 5
};
/// AtlasRange: word 3 says what was out of range (0 class, 1 page, 2 byte), words 4-5 the value.
/// InvalidAddress: word 3 is the register (| kPoolHandle for pool.ld/pool.st), words 4-5 what
/// it holds.
inline constexpr uint32_t kPoolHandle = 0x10000;
/// Words 1-2: global lane (lo, hi); 3: parameter (or one of the regions below); 4-5: byte
/// offset (lo, hi); 6: access size; 7: instruction index.
inline constexpr uint32_t kSharedMemory = 0xffffffffu;
/// The whole boundary pool: a `[phi c,p,b]` address.
inline constexpr uint32_t kBoundaryPool = 0xfffffffeu;
/// kScratchSites + site: an allocation of pool.alloc site `site` (1: the kernel's first
/// pool.alloc, hologram/isa/handles.h).
inline constexpr uint32_t kScratchSites = 0xf0000000u;
/// kClassWindows + C: class window C of the boundary pool (`[class C + r]`, and nbr.ld's and
/// nbr.st's neighbour class).
inline constexpr uint32_t kClassWindows = 0xe0000000u;
/// The Atlas state buffer (u64 words): resonance[96] as f64 bits, then the phase advance of
/// the launch (mod 768), which the runtime applies when the launch ends.
inline constexpr uint32_t kAtlasWords = 97;
} // namespace spirv_status

/// The reflection of a module as the JSON array stored in manifests (one object per kernel).
std::string spirv_reflection_json(const SpirvModule &module);
/// Reads what spirv_reflection_json wrote; InvalidModule naming what is wrong otherwise.
Expected<std::vector<SpirvKernelInfo>> parse_spirv_reflection(std::string_view json);

/// Device library kernels (spirv_library.h) are named with this prefix, which user kernels
/// may not use.
inline constexpr std::string_view kSpirvLibraryPrefix = "__hg_";
/// Whether `name` is one of the device library kernels' names.
[[nodiscard]] inline bool is_spirv_library_kernel(std::string_view name) {
  return name.starts_with(kSpirvLibraryPrefix);
}

/// The device library kernel that whole-launch instruction `inst` launches (its first stage
/// for a reduction): "__hg_<family>[_<op>]_<type>". The code generator emits kernels of these
/// names and the runtime's plans launch them, from this one definition.
std::string spirv_library_kernel(const isa::Instruction &inst);
/// The reduction kernel of `op` over elements of `type` (a reduction's stages; dot's second).
std::string spirv_library_reduce_kernel(isa::ReduceOp op, isa::Type type);

/// The block sizes the device library kernels are written for; the runtime's plans launch
/// them so.
namespace spirv_library {
inline constexpr uint32_t kRowBlock = 256; ///< lanes per row (softmax, norms), per reduction block
inline constexpr uint32_t kTile = 16;      ///< gemm: lanes along each edge of a block
/// A shape of the device library's gemm: each lane's rows and columns of C, and the depth
/// along K of the panels of A and B staged in shared memory.
struct GemmShape {
  uint32_t per_lane = 0;
  uint32_t depth = 0;
  /// The edge of the tile of C a block (kTile x kTile lanes) computes.
  [[nodiscard]] constexpr uint32_t tile() const { return kTile * per_lane; }
};
/// 4x4 a lane over 64x64 tiles: many blocks for a small C; f64 has only this one, whose
/// panels (64 x 16 elements each) fit the 16 KiB of shared memory every Vulkan device has.
inline constexpr GemmShape kGemmNarrow{4, 16};
/// f32's 8x8 a lane over 128x128 tiles: a step over K loads 16 values from shared memory for
/// 64 multiply-adds (8 for 16 in the narrow shape). The plans pick it when C has at least a
/// tile for each compute unit of the device.
inline constexpr GemmShape kGemmWide{8, 8};
/// The most blocks of a reduction's first stage, per compute unit of the device and at least.
inline constexpr uint32_t kReduceBlocksPerUnit = 16;
inline constexpr uint32_t kMinReduceBlocks = 256;
/// Elements a lane of a reduction's first stage takes at least: fewer blocks for a short input,
/// so that a block's loads, not its tree over the lanes, are most of its work.
inline constexpr uint32_t kReduceLaneElements = 16;
} // namespace spirv_library

/// The device library's gemm kernel of `shape` for elements of `type`: kGemmNarrow's is the
/// one spirv_library_kernel names ("__hg_gemm_f32"), kGemmWide's "__hg_gemm_wide_f32".
std::string spirv_library_gemm_kernel(isa::Type type, const spirv_library::GemmShape &shape);

} // namespace hologram::codegen
