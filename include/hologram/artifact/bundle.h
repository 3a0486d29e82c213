// Bundles (SPEC §10): one `.hgb` file holding a fixed header, a JSON manifest and payloads
// (the module's ISA text, a shared object with every CPU variant, a SPIR-V module per Vulkan
// or OpenCL target with its reflection, PTX per CUDA target with its reflection).
//
// Layout, little-endian:
//   0  magic "\x89HGB\r\n\x1a\n"        8  u32 format version     12  u32 header size (80)
//   16 compiler version, NUL-padded (16 bytes)
//   32 content hash of the program and its compile options (XXH3-128, SPEC §3.6)
//   48 u64 total size   56 u64 manifest size   64 u64 XXH3-64 of the manifest
//   72 u64 XXH3-64 of bytes 0..71 (the header itself)
//   80 manifest (JSON), then the payloads back to back, each with its XXH3-64 in the manifest.
// Every byte is covered by a checksum, the bytes are a pure function of the inputs, and the
// reader checks each part in order and says which check failed.
#pragma once

#include "hologram/isa/encoding.h"
#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::artifact {

inline constexpr std::string_view kBundleMagic{"\x89HGB\r\n\x1a\n", 8};
inline constexpr uint32_t kBundleFormatVersion = 2;
inline constexpr uint64_t kBundleHeaderSize = 80;

/// Payload kinds.
inline constexpr std::string_view kPayloadIsa = "isa-binary";
inline constexpr std::string_view kPayloadCpu = "cpu-shared-object";
inline constexpr std::string_view kPayloadSpirvVulkan = "spirv-vulkan"; ///< one per Vulkan target
inline constexpr std::string_view kPayloadSpirvOpenCl = "spirv-opencl"; ///< one per OpenCL target
inline constexpr std::string_view kPayloadPtx = "ptx-cuda"; ///< one per CUDA target (PTX text)

/// A code variant a payload holds, with the device features it needs.
struct BundleTarget {
  std::string name;                  ///< "x86-64-v3", "vulkan1.1", "opencl1.2"
  std::vector<std::string> features; ///< "avx2", "fma", ...
};

/// One payload: its description from the manifest and, once read, its bytes.
struct BundlePayload {
  std::string name;                  ///< "isa", "cpu", "vulkan1.2", "opencl1.2"
  std::string kind;                  ///< kPayloadIsa, kPayloadCpu, kPayloadSpirv*
  uint32_t abi_version = 0;          ///< CPU payloads: the hg_cpu_module_desc ABI version
  std::vector<BundleTarget> targets; ///< the variants inside (CPU: one per x86 target)
  /// SPIR-V payloads: codegen::spirv_reflection_json; PTX: codegen::ptx_reflection_json
  std::string reflection;
  std::string bytes;
};

/// What a bundle holds. `manifest` is the JSON text as stored.
struct Bundle {
  uint32_t format_version = kBundleFormatVersion;
  std::string compiler_version;
  isa::ContentHash content_hash;
  std::string module_name;
  std::vector<std::string> sources;
  isa::CompileOptions options;
  isa::Module module; ///< parsed from the ISA payload
  std::vector<BundlePayload> payloads;
  std::string manifest;

  [[nodiscard]] const BundlePayload *find_payload(std::string_view kind) const;
};

/// Whether `bytes` start with the bundle magic.
bool is_bundle(std::string_view bytes);
/// Whether the file at `path` starts with the bundle magic (false if it cannot be read).
bool is_bundle_file(const std::string &path);

/// The manifest (JSON) and the whole file for `bundle`. `module`, `options`, `module_name`,
/// `sources`, `compiler_version` and at least one code payload must be set; the ISA payload and the
/// content hash are derived here. Deterministic: same inputs, same bytes.
std::string bundle_manifest(const Bundle &bundle);
std::string write_bundle(const Bundle &bundle);

/// Reads and checks a bundle: size, magic, format version, header checksum, total size,
/// manifest checksum and schema, payload ranges and checksums, the ISA payload, and the content
/// hash recomputed from it. On failure returns ErrorCode::InvalidModule with a message of the
/// form "<check>: <detail>" naming the failed check.
Expected<Bundle> read_bundle(std::string bytes);

} // namespace hologram::artifact
