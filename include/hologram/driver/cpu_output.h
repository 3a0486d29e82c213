// The x86 outputs of the driver (SPEC §7, §11): LLVM IR, bitcode, assembly, an object, a
// static library (an archive of that object) or a shared object linked by the system C
// compiler driver (`cc`, or $HOLOGRAM_LINKER), which adds SLEEF (vector math) and libm, a
// bundle holding that shared object (SPEC §10) or the bundle's manifest.
#pragma once

#include "hologram/isa/encoding.h"
#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::driver {

struct CpuOutputOptions {
  std::vector<std::string> targets = {"x86-64-v2", "x86-64-v3"}; ///< x86 target names
  unsigned opt_level = 2;
  bool debug_info = false;
  bool fast_math = false;
  bool bounds_check = false;
  bool check_div = false;
  std::array<uint32_t, 3> block = {0, 0, 0}; ///< --block: the block every launch uses; 0 = any
  std::string module_name;                   ///< names the exported descriptor symbol
  std::string source_name;
  std::vector<std::string> sources; ///< bundles and manifests: the input files
  std::string compiler_version;     ///< bundles and manifests: recorded in the header
};

/// The options that are part of the program's identity (bundles record them; the compile
/// cache keys by them).
isa::CompileOptions compile_options_of(const CpuOutputOptions &o);

/// Parses --block=X[,Y,Z] (Y and Z default to 1): each a positive integer, at most 1024 lanes
/// in all. InvalidArgument saying what is wrong otherwise.
Expected<std::array<uint32_t, 3>> parse_block(std::string_view text);

/// The names of a --target list ("x86-64-v2,x86-64-v3"), empty items skipped.
std::vector<std::string> split_target_list(std::string_view list);

/// This machine's x86-64 level as a target name (x86-64-v2, v3 or v4).
std::string host_cpu_target();

/// Checks that every name of a --target list names a target: an x86 level or LLVM CPU name,
/// or (unless `x86_only`) vulkan1.1..1.3 or opencl1.2/2.0/3.0, and none twice.
/// InvalidArgument names the first that does not, or the first repeated.
Status check_target_names(const std::vector<std::string> &names, bool x86_only = false);

/// The --emit kind an output path's extension asks for: .o obj, .a static, .so shared,
/// .h header, .hgb bundle, .s asm, .ll llvm, .bc bc, .spv spirv, .spvasm spirv-asm, .hasm isa;
/// a path without an extension (or "-") gets ISA text. InvalidArgument for any other
/// extension, with a message that lists these.
Expected<std::string> emit_from_extension(std::string_view path);

/// Whether `emit` is one of llvm, bc, asm, obj, static, shared, header, bundle, manifest.
bool is_cpu_emit(std::string_view emit);

/// The bytes of the `emit` output for `module`.
Expected<std::string> emit_cpu_output(const isa::Module &module, const CpuOutputOptions &options,
                                      std::string_view emit);

} // namespace hologram::driver
