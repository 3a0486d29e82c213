// How a lane's failure reads, on every backend: the kernel, the lane (its %gid, its block and
// its place in the block), the source line with the instruction, then what went wrong. The
// interpreter, the CPU backend and the runtimes of the status buffers of SPIR-V and PTX all
// word a failure through these, so that one fault reads the same wherever it happens.
#pragma once

#include "hologram/isa/launch.h"
#include "hologram/isa/program.h"

#include <string>
#include <string_view>
#include <utility>

namespace hologram::isa {

/// "L (block (x,y,z), lane (x,y,z))": the lane whose %gid is `lane` in a launch of `launch`'s
/// geometry, with its block and its place in the block.
std::string lane_coordinates(const LaunchConfig &launch, uint64_t lane);

/// "kernel 'K': lane L (block (x,y,z), lane (x,y,z)), SOURCE:line N 'INSTRUCTION'" for the lane
/// whose %gid is `lane` in a launch of `launch`'s geometry, failing at instruction `inst` of
/// `k`; without ", ..." when `inst` is not one of its instructions, and without "SOURCE:" when
/// `source` is empty.
std::string fault_site(const Kernel &k, std::string_view source, const LaunchConfig &launch,
                       uint64_t lane, uint64_t inst);

/// "out-of-bounds access to REGION: offset O, size S, but it holds N bytes", `offset` being
/// the words after the region ("offset 8", "a negative offset").
std::string out_of_bounds_access(std::string_view region, std::string_view offset, uint64_t size,
                                 uint64_t holds);

/// "offset O", or "a negative offset" for an offset that is negative as a signed 64-bit
/// number (the compiled back ends compute offsets modulo 2^64; a sum below a region's start
/// wraps there).
std::string access_offset(uint64_t offset);

/// "register R holds no valid address (0xBITS)" ("pool handle" for pool.ld and pool.st): an
/// access at instruction `inst` of `k` through a register whose tag names no region
/// (hologram/isa/handles.h).
std::string invalid_handle(const Kernel &k, uint64_t inst, uint64_t bits);

/// "the scratch allocation of line N" and its bytes: the region of a fault in an allocation
/// that the pool.alloc at instruction `inst` of `k` made ("launch scratch" and 0 when `inst` is
/// not a pool.alloc of `k`).
std::pair<std::string, uint64_t> scratch_region(const Kernel &k, uint64_t inst);

/// "parameter %NAME", the region of a fault in the memory of parameter `index` of `k`.
std::string parameter_region(const Kernel &k, size_t index);

/// "class C of the boundary pool", the region of a fault in class window C.
std::string class_region(uint64_t c);

/// "the boundary pool", the region of a fault in the whole pool (a `[phi c,p,b]` address).
std::string boundary_pool_region();

} // namespace hologram::isa
