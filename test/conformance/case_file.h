// The conformance corpus exported for machines without the compiler (issue 16):
// `hologram-conformance --export DIR` writes each case, at each -O level of the suite, as a
// bundle of its kernel for every target (x86-64-v2/v3/v4, vulkan1.1, opencl1.2, cuda-sm_80) and a
// case file with its launch, inputs, expected outputs, checks and expected schedules;
// `hologram-conformance-run DIR --backend=NAME`, which links only the runtime, runs them.
//
// DIR/index.json   {"format": kExportFormat, "compiler": version, "cases": [name, ...]}
// DIR/bundles/     one bundle (.hgb) per kernel and -O level, shared by the cases that use it
// DIR/ptx/         NAME.ptx, the cuda-sm_80 PTX of each bundle that has it, for ptxas (a
//                  kernel the CUDA back end does not lower has the reason under "cuda-sm_80"
//                  in its level's `unsupported`)
// DIR/cases/       NAME.cbor per case: the ExportedCase below in CBOR (RFC 8949), arrays as
//                  byte strings; of the boundary pool only the classes that are not all zero;
//                  of the expected outputs only what the checks read. The data is the same at
//                  every -O level, so each case has one file that names a bundle per level.
#pragma once

#include "case_data.h"
#include "hologram/support/expected.h"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::conformance {

/// The value of index.json's "format": a runner refuses an export of another format.
inline constexpr const char *kExportFormat = "hologram-conformance-export 1";

/// A case's code at one -O level of the suite.
struct ExportedLevel {
  unsigned opt_level = 0;
  std::string bundle; ///< relative to the export directory
  /// Targets the bundle lacks because the back end cannot compile the kernel, and why.
  std::map<std::string, std::string> unsupported;
};

struct ExportedCase {
  std::string name; ///< the suite's case name; it runs as NAME_O<level> at each level
  std::string kernel;
  LaunchConfig launch;
  std::vector<isa::Param> params; ///< in launch-argument order
  CaseData inputs;
  CaseData expected; ///< the checked arrays and classes only
  std::vector<Check> checks;
  std::set<std::string> cpu_paths;    ///< Case::cpu_paths
  std::set<std::string> device_paths; ///< Case::device_paths
  std::vector<ExportedLevel> levels;
};

/// The case file's bytes.
std::string encode_case(const ExportedCase &c);
/// The case in `bytes`; InvalidModule naming `what` when they are not a case file.
Expected<ExportedCase> decode_case(std::string_view bytes, const std::string &what);

} // namespace hologram::conformance
