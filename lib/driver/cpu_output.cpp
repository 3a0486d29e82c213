// x86 outputs: the code generator gives IR, assembly or an object; archives are written here
// (ar format, deterministic: zero dates, uid, gid); shared objects are linked by `cc`.
#include "hologram/driver/cpu_output.h"

#include "hologram/artifact/bundle.h"
#include "hologram/artifact/header.h"
#include "hologram/codegen/cpu.h"
#include "hologram/codegen/cpu_abi.h"
#include "hologram/codegen/ptx.h"
#include "hologram/codegen/spirv.h"
#include "hologram/driver/ptx_output.h"
#include "hologram/driver/spirv_output.h"

#include "hologram/support/file_io.h"
#include "hologram/support/process.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace hologram::driver {

namespace {

/// A System V / GNU archive holding one member, with a symbol table naming `symbols`.
std::string write_archive(const std::string &member, const std::string &object,
                          const std::vector<std::string> &symbols) {
  auto header = [](const std::string &name, size_t size) {
    char buf[61];
    std::snprintf(buf, sizeof buf, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", name.c_str(), "0", "0", "0",
                  "644", size);
    return std::string(buf, 60);
  };
  auto be32 = [](uint32_t v) {
    std::string s(4, '\0');
    for (int i = 0; i < 4; ++i) s[i] = static_cast<char>(v >> (24 - 8 * i));
    return s;
  };
  std::string names;
  for (const auto &s : symbols) names += s + '\0';
  size_t symtab_size = 4 + 4 * symbols.size() + names.size();
  size_t symtab_padded = symtab_size + (symtab_size & 1);
  uint32_t member_offset = static_cast<uint32_t>(8 + 60 + symtab_padded);
  std::string out = "!<arch>\n";
  out += header("/", symtab_size);
  out += be32(static_cast<uint32_t>(symbols.size()));
  for (size_t i = 0; i < symbols.size(); ++i) out += be32(member_offset);
  out += names;
  if (symtab_size & 1) out += '\n';
  out += header(member + "/", object.size());
  out += object;
  if (object.size() & 1) out += '\n';
  return out;
}

/// The shared object linked from `object` by the system's C compiler driver.
Expected<std::string> link_shared(const std::string &object) {
  auto dir = ScratchDir::create("hologram-cc");
  if (!dir) return Status{ErrorCode::Internal, "cannot create a temporary directory"};
  std::string obj = dir->path() + "/module.o", so = dir->path() + "/module.so";
  if (auto st = write_file_atomic(obj, object); !st)
    return Status{ErrorCode::Internal, st.message()};
  const char *env = std::getenv("HOLOGRAM_LINKER");
  std::string linker = env && *env ? env : "cc";
  std::string errors;
  int rc = run_program({linker, "-shared", "-o", so, obj, "-lsleef", "-lm"}, errors);
  if (rc != 0)
    return Status{ErrorCode::Internal,
                  "linking the shared object with '" + linker + "' failed" +
                      (rc == 127 ? " (no such program; set HOLOGRAM_LINKER)" : "") +
                      (errors.empty() ? "" : ":\n" + errors)};
  auto text = read_file(so);
  if (!text) return Status{ErrorCode::Internal, text.message()};
  return text;
}

/// A SPIR-V module for one Vulkan or OpenCL target, with its reflection (SPEC §10).
/// The SPIR-V module for `target`, its reflection, and the device features its kernels need.
Status compile_spirv_for(const isa::Module &module, const CpuOutputOptions &o,
                         const codegen::SpirvTarget &target, codegen::EmbeddedSpirv &out,
                         std::vector<std::string> &features) {
  auto m = codegen::compile_spirv(module, spirv_options(target, o));
  if (!m) return m.status();
  std::set<std::string> needed;
  for (const auto &k : m->kernels)
    needed.insert(k.requires_features.begin(), k.requires_features.end());
  features.assign(needed.begin(), needed.end());
  out.target = target.name;
  out.reflection = codegen::spirv_reflection_json(*m);
  out.words = std::move(m->words);
  return Status::ok();
}

Status add_spirv_payload(const isa::Module &module, const CpuOutputOptions &o,
                         const codegen::SpirvTarget &target, artifact::Bundle &b) {
  codegen::EmbeddedSpirv m;
  std::vector<std::string> features;
  if (auto st = compile_spirv_for(module, o, target, m, features); !st) return st;
  artifact::BundlePayload p;
  p.name = target.name;
  p.kind = std::string(target.is_vulkan() ? artifact::kPayloadSpirvVulkan
                                          : artifact::kPayloadSpirvOpenCl);
  p.targets.push_back({target.name, std::move(features)});
  p.reflection = std::move(m.reflection);
  p.bytes.assign(reinterpret_cast<const char *>(m.words.data()), m.words.size() * 4);
  b.payloads.push_back(std::move(p));
  return Status::ok();
}

/// The PTX of one CUDA target, with its reflection (docs/cuda.md).
Status add_ptx_payload(const isa::Module &module, const CpuOutputOptions &o,
                       const codegen::PtxTarget &target, artifact::Bundle &b) {
  auto m = compile_ptx_for(module, target, o);
  if (!m) return m.status();
  artifact::BundlePayload p;
  p.name = target.name;
  p.kind = std::string(artifact::kPayloadPtx);
  p.targets.push_back({target.name, {"sm_" + std::to_string(target.sm)}});
  p.reflection = codegen::ptx_reflection_json(m->kernels);
  p.bytes = std::move(m->text);
  b.payloads.push_back(std::move(p));
  return Status::ok();
}

} // namespace

std::vector<std::string> split_target_list(std::string_view list) {
  std::vector<std::string> out;
  for (size_t start = 0; start <= list.size();) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    if (comma > start) out.emplace_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::string host_cpu_target() {
  return codegen::host_cpu_level();
}

Status check_target_names(const std::vector<std::string> &names, bool x86_only) {
  for (auto it = names.begin(); it != names.end(); ++it) {
    const std::string &name = *it;
    // Twice the same name would be two payloads of the same code and another content hash.
    if (std::find(names.begin(), it, name) != it)
      return {ErrorCode::InvalidArgument, "--target: '" + name + "' is named twice"};
    if (x86_only) {
      if (auto t = codegen::parse_cpu_target(name); !t)
        return {ErrorCode::InvalidArgument, "--target: " + t.message()};
      continue;
    }
    if (codegen::parse_spirv_target(name) || codegen::parse_ptx_target(name)) continue;
    if (codegen::is_cpu_target_name(name) && codegen::parse_cpu_target(name)) continue;
    return {ErrorCode::InvalidArgument,
            "--target: unknown target '" + name +
                "' (x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM CPU name such as skylake; "
                "vulkan1.1, vulkan1.2, vulkan1.3; opencl1.2, opencl2.0, opencl3.0; " +
                codegen::ptx_target_names() + ")"};
  }
  return Status::ok();
}

namespace {

constexpr std::pair<std::string_view, std::string_view> kOutputExtensions[] = {
    {".o", "obj"},      {".a", "static"},
    {".so", "shared"},  {".h", "header"},
    {".hgb", "bundle"}, {".s", "asm"},
    {".ll", "llvm"},    {".bc", "bc"},
    {".spv", "spirv"},  {".spvasm", "spirv-asm"},
    {".ptx", "ptx"},    {".hasm", "isa"},
};

} // namespace

Expected<std::string> emit_from_extension(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  if (path == "-" || dot == std::string_view::npos || dot == 0) return std::string("isa");
  const std::string_view ext = name.substr(dot);
  for (const auto &[e, kind] : kOutputExtensions)
    if (e == ext) return std::string(kind);
  std::string known;
  for (const auto &[e, kind] : kOutputExtensions)
    known += (known.empty() ? "" : ", ") + std::string(e) + " " + std::string(kind);
  return Status{ErrorCode::InvalidArgument, "cannot tell what to write to '" + std::string(path) +
                                                "' from its extension '" + std::string(ext) +
                                                "' (" + known + "); use --emit=KIND"};
}

bool is_cpu_emit(std::string_view emit) {
  return emit == "llvm" || emit == "bc" || emit == "asm" || emit == "obj" || emit == "static" ||
         emit == "shared" || emit == "header" || emit == "bundle" || emit == "manifest";
}

isa::CompileOptions compile_options_of(const CpuOutputOptions &o) {
  isa::CompileOptions c;
  c.opt_level = o.opt_level;
  c.fast_math = o.fast_math;
  c.bounds_check = o.bounds_check;
  c.check_div = o.check_div;
  c.debug_info = o.debug_info;
  c.block = o.block;
  c.targets = o.targets;
  return c;
}

Expected<std::array<uint32_t, 3>> parse_block(std::string_view text) {
  std::array<uint32_t, 3> out = {1, 1, 1};
  auto bad = [&](const std::string &why) {
    return Status{ErrorCode::InvalidArgument, "--block=" + std::string(text) + ": " + why};
  };
  size_t d = 0;
  uint64_t lanes = 1;
  for (size_t at = 0; at <= text.size(); ++d) {
    size_t comma = std::min(text.find(',', at), text.size());
    std::string_view part = text.substr(at, comma - at);
    if (d == 3) return bad("at most three sizes (X,Y,Z)");
    uint32_t v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v == 0)
      return bad("'" + std::string(part) + "' is not a positive integer");
    out[d] = v;
    lanes *= v;
    if (lanes > 1024) return bad("more than 1024 lanes per block");
    at = comma + 1;
  }
  return out;
}

Expected<std::string> emit_cpu_output(const isa::Module &module, const CpuOutputOptions &o,
                                      std::string_view emit) {
  codegen::CpuOptions co;
  const bool is_bundle = emit == "bundle" || emit == "manifest";
  std::vector<codegen::SpirvTarget> spirv_targets;
  std::vector<codegen::PtxTarget> ptx_targets;
  for (const auto &name : o.targets) {
    // CUDA targets go into bundles only (a PTX payload each).
    if (auto pt = codegen::parse_ptx_target(name); pt && is_bundle) {
      ptx_targets.push_back(*pt);
      continue;
    }
    // SPIR-V targets go into bundles and, next to the x86 code, into objects and libraries
    // (the descriptor carries them for the Vulkan and OpenCL backends).
    if (auto st = codegen::parse_spirv_target(name)) {
      spirv_targets.push_back(*st);
      continue;
    }
    if (codegen::is_ptx_target_name(name))
      return Status{ErrorCode::InvalidArgument,
                    "target '" + name + "': --emit=" + std::string(emit) +
                        " does not carry PTX; --emit=bundle does, and --emit=ptx writes it for "
                        "one CUDA target"};
    if (!codegen::is_cpu_target_name(name))
      return Status{ErrorCode::InvalidArgument,
                    "target '" + name + "': --emit=" + std::string(emit) +
                        (codegen::is_spirv_target_name(name)
                             ? " takes vulkan1.1-1.3 and opencl1.2/2.0/3.0 as SPIR-V targets"
                             : " needs x86 targets: x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM "
                               "CPU name")};
    auto t = codegen::parse_cpu_target(name);
    if (!t) return t.status();
    co.targets.push_back(std::move(*t));
  }
  co.opt_level = o.opt_level;
  co.debug_info = o.debug_info;
  co.fast_math = o.fast_math;
  co.bounds_check = o.bounds_check;
  co.check_div = o.check_div;
  co.block = o.block;
  co.module_name = o.module_name;
  co.source_name = o.source_name;
  const bool loadable = emit == "shared" || emit == "bundle" || emit == "manifest";
  co.export_default_symbol = loadable;
  co.c_entry_points = !loadable; // a shared object is loaded by the runtime instead
  auto kind = emit == "llvm"  ? codegen::CpuEmit::LlvmIr
              : emit == "bc"  ? codegen::CpuEmit::Bitcode
              : emit == "asm" ? codegen::CpuEmit::Assembly
                              : codegen::CpuEmit::Object;
  if (co.targets.empty() && !is_bundle)
    return Status{ErrorCode::InvalidArgument,
                  "--emit=" + std::string(emit) +
                      " needs an x86 target next to SPIR-V ones (x86-64-v2, x86-64-v3, x86-64-v4 "
                      "or an LLVM CPU name): the code that runs on the CPU"};
  if (emit == "header") {
    // The least demanding variant decides what the header records as required.
    const codegen::CpuTarget *least = &co.targets[0];
    for (const auto &t : co.targets)
      if (t.features.size() < least->features.size()) least = &t;
    std::string features;
    for (const auto &f : least->features) features += (features.empty() ? "" : ",") + f;
    return artifact::generate_header(module, codegen::c_module_name(o.module_name), o.source_name,
                                     features);
  }
  if (!is_bundle)
    for (const auto &t : spirv_targets) {
      codegen::EmbeddedSpirv m;
      std::vector<std::string> features;
      if (auto st = compile_spirv_for(module, o, t, m, features); !st) return st;
      co.spirv.push_back(std::move(m));
    }
  std::string out;
  if (!co.targets.empty() || !is_bundle) {
    auto code = codegen::emit_cpu(module, co, kind);
    if (!code) return code.status();
    out = std::move(*code);
  }
  if (is_bundle) {
    artifact::Bundle b;
    b.compiler_version = o.compiler_version;
    b.module_name = o.module_name;
    b.sources = o.sources;
    b.module = module;
    b.options = compile_options_of(o);
    if (!co.targets.empty()) {
      artifact::BundlePayload cpu;
      cpu.name = "cpu";
      cpu.kind = std::string(artifact::kPayloadCpu);
      cpu.abi_version = HG_CPU_ABI_VERSION;
      for (const auto &t : co.targets) cpu.targets.push_back({t.name, t.features});
      auto linked = link_shared(out);
      if (!linked) return linked.status();
      cpu.bytes = std::move(*linked);
      b.payloads.push_back(std::move(cpu));
    }
    for (const auto &t : spirv_targets)
      if (auto st = add_spirv_payload(module, o, t, b); !st) return st;
    for (const auto &t : ptx_targets)
      if (auto st = add_ptx_payload(module, o, t, b); !st) return st;
    return emit == "bundle" ? artifact::write_bundle(b) : artifact::bundle_manifest(b);
  }
  if (emit == "static") {
    std::vector<std::string> symbols{codegen::module_descriptor_symbol(o.module_name)};
    for (const auto &k : module.kernels) symbols.push_back(artifact::c_entry_point_name(k.name));
    std::sort(symbols.begin() + 1, symbols.end());
    return write_archive(codegen::c_module_name(o.module_name) + ".o", out, symbols);
  }
  if (emit == "shared") return link_shared(out);
  return out;
}

} // namespace hologram::driver
