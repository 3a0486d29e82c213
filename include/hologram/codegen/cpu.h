// Lowering of Atlas ISA modules to x86-64 through LLVM 19 (SPEC §7): CPU targets, options and
// the emitters of LLVM IR, bitcode, assembly and object files. The object holds every
// requested variant of every kernel and the module descriptor of cpu_abi.h.
#pragma once

#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::codegen {

/// One x86 code variant: an LLVM CPU name and what it implies.
struct CpuTarget {
  std::string name;                  ///< as the user wrote it ("x86-64-v3", "skylake")
  unsigned width = 4;                ///< SIMD lanes per chunk (4 SSE, 8 AVX2, 16 AVX-512)
  std::string llvm_features;         ///< "+sse4.2,+avx2,..." for the function attributes
  std::vector<std::string> features; ///< what the dispatcher checks before running it
};

/// Whether `name` names a CPU target (rather than a Vulkan, OpenCL or CUDA one).
bool is_cpu_target_name(std::string_view name);
/// Parses an x86 target name; InvalidArgument when LLVM does not know it or it lacks SSE4.1.
Expected<CpuTarget> parse_cpu_target(std::string_view name);
/// The host's best level among x86-64-v2/v3/v4 (for a default --target).
std::string host_cpu_level();
/// The best of x86-64-v2/v3/v4 at or below level `cap` (0: no cap) all of whose features
/// `has` reports, as the runtime's dispatcher would choose among variants of every level;
/// nullopt when none runs. With runtime::cpu_has_feature, $HOLOGRAM_CPU_DISABLE counts.
std::optional<CpuTarget> best_cpu_target(int cap, const std::function<bool(std::string_view)> &has);

/// A SPIR-V module to embed next to the x86 code (hg_spirv_module_desc).
struct EmbeddedSpirv {
  std::string target; ///< "vulkan1.1", "opencl1.2", ...
  std::vector<uint32_t> words;
  std::string reflection; ///< codegen::spirv_reflection_json
};

struct CpuOptions {
  std::vector<CpuTarget> targets; ///< at least one; the first is preferred when several run
  unsigned opt_level = 2;
  bool debug_info = false;   ///< -g: DWARF line tables pointing at the source file
  bool fast_math = false;    ///< -ffast-math
  bool bounds_check = false; ///< -fbounds-check
  bool check_div = false;    ///< -fcheck-div
  /// --block: the block size every launch of every kernel uses, known to the code; a launch
  /// with another is refused. {0, 0, 0}: any.
  std::array<uint32_t, 3> block = {0, 0, 0};
  std::string module_name; ///< C identifier; names the exported descriptor
  std::string source_name; ///< the input file (debug info, descriptor)
  /// Also export the descriptor as `hologram_module`, the name the runtime looks for in a
  /// shared object it loads.
  bool export_default_symbol = false;
  /// Define the typed C entry points of the generated header (SPEC §8), which call the
  /// runtime's hologram_cpu_call; only for objects and archives linked into applications.
  bool c_entry_points = false;
  /// SPIR-V modules the descriptor carries for the Vulkan and OpenCL backends.
  std::vector<EmbeddedSpirv> spirv;
};

enum class CpuEmit { LlvmIr, Bitcode, Assembly, Object };

/// Lowers a verified module to the requested form. The same input and options give
/// byte-identical output. A failure of the back end is Internal, with a diagnostic at the
/// instruction it was lowering.
Expected<std::string> emit_cpu(const isa::Module &module, const CpuOptions &options, CpuEmit emit);

/// A module name as the C identifier used in symbols and the header's C++ namespace.
std::string c_module_name(std::string_view module_name);
/// The symbol of a module's descriptor: "hologram_module_<name>".
std::string module_descriptor_symbol(std::string_view module_name);

} // namespace hologram::codegen
