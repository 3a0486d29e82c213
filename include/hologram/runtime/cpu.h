// Controls of the CPU backend (SPEC §7): which x86 variant of a compiled module runs, how
// many threads launches use, and when compiled stores bypass the caches.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hologram::runtime {

/// Caps or forces the x86 variant of modules loaded afterwards, like $HOLOGRAM_CPU_ISA (which
/// it overrides): "v2", "v3", "v4" cap the level ("x86-64-v3" the same), another name forces
/// that variant; "" returns to automatic choice (the best variant this CPU runs). Loading a
/// module whose requested variant needs missing CPU features fails with an Error naming them.
void set_cpu_isa(std::string_view isa);
/// The current request: set_cpu_isa's value, else $HOLOGRAM_CPU_ISA, else "" (automatic).
std::string requested_cpu_isa();
/// A request as the dispatcher reads it: the variant it names ("v3" and "x86-64-v3" both give
/// "x86-64-v3") and, for x86-64-vN, the level N it caps at (0: another name, which forces that
/// variant).
struct CpuIsaRequest {
  std::string variant;
  int cap = 0;
};
CpuIsaRequest parse_cpu_isa_request(std::string_view request);
/// Whether this CPU (and OS) supports an LLVM feature name such as "avx2" or "avx512f".
/// Features named in $HOLOGRAM_CPU_DISABLE (comma-separated) count as missing.
bool cpu_has_feature(std::string_view feature);

/// Threads a launch uses, the caller included: $HOLOGRAM_NUM_THREADS or every hardware
/// thread by default; set_cpu_threads(0) restores the default.
unsigned cpu_threads();
void set_cpu_threads(unsigned n);

/// Non-temporal stores: a contiguous store of a compiled kernel whose launch writes at least
/// this many bytes (lanes times element size) bypasses the caches, so that an output larger
/// than the cache is not first read in. The value: set_cpu_stream_bytes's, else
/// $HOLOGRAM_CPU_STREAM_BYTES (read once; a value that is not a decimal number makes launches
/// fail with InvalidArgument), else the size of the largest data cache. 0: never.
uint64_t cpu_stream_bytes();
/// Sets the threshold for launches from now on; std::nullopt returns to the default.
void set_cpu_stream_bytes(std::optional<uint64_t> bytes);

} // namespace hologram::runtime
