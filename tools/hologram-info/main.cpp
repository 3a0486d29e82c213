// hologram-info: what a bundle or kernel file holds (kernels, parameters, targets, required
// capabilities, content hash), which backends and devices this machine has, the persistent
// compile cache (and emptying it), and the instruction tables of the ISA reference. Exit
// status: 0 success, 1 input errors, 2 usage.
#include "hologram/artifact/bundle.h"
#include "hologram/artifact/compile_cache.h"
#include "hologram/driver/driver.h"
#include "hologram/isa/encoding.h"
#include "hologram/isa/opcode.h"
#include "hologram/runtime/backend.h"
#include "hologram/runtime/cpu.h"
#include "hologram/support/file_io.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

namespace {

using namespace hologram;

enum Exit { kOk = 0, kInputError = 1, kUsageError = 2 };

std::string join(const std::vector<std::string> &items, const char *sep = ", ") {
  std::string s;
  for (const auto &i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

void print_kernels(const isa::Module &m) {
  std::cout << "kernels:\n";
  for (const auto &k : m.kernels) {
    std::cout << "  " << k.name << "(";
    for (size_t i = 0; i < k.params.size(); ++i) {
      const auto &p = k.params[i];
      std::cout << (i ? ", " : "") << p.name << ": ";
      if (p.kind == isa::ParamKind::Scalar)
        std::cout << isa::type_name(p.type);
      else if (p.kind == isa::ParamKind::Pool)
        std::cout << "pool " << isa::access_name(p.access);
      else
        std::cout << "buffer<" << isa::type_name(p.type) << "> " << isa::access_name(p.access);
    }
    std::cout << ")";
    if (k.shared_bytes) std::cout << " shared " << k.shared_bytes << " bytes";
    if (k.uses_atlas_state()) std::cout << " [uses the Atlas state]";
    std::cout << '\n';
  }
}

std::string options_text(const isa::CompileOptions &o) {
  std::string s = "-O" + std::to_string(o.opt_level);
  if (o.debug_info) s += " -g";
  if (o.fast_math) s += " -ffast-math";
  if (o.bounds_check) s += " -fbounds-check";
  if (o.check_div) s += " -fcheck-div";
  if (o.block[0] != 0)
    s += " --block=" + std::to_string(o.block[0]) + "," + std::to_string(o.block[1]) + "," +
         std::to_string(o.block[2]);
  return s;
}

int describe_bundle(const std::string &path, std::string bytes, bool json) {
  auto read = artifact::read_bundle(std::move(bytes));
  if (!read) {
    std::cerr << "hologram-info: error: '" << path << "' is not a valid bundle: " << read.message()
              << '\n';
    return kInputError;
  }
  const artifact::Bundle &b = *read;
  if (json) {
    std::cout << b.manifest;
    return kOk;
  }
  std::cout << "bundle: " << path << "\n  format version: " << b.format_version
            << "\n  compiler: hologram-cc " << b.compiler_version << "\n  module: " << b.module_name
            << " (from " << join(b.sources) << ")\n  content hash: " << b.content_hash.hex()
            << "\n  options: " << options_text(b.options)
            << "\n  targets: " << join(b.options.targets) << '\n';
  print_kernels(b.module);
  std::cout << "payloads:\n";
  for (const auto &p : b.payloads) {
    std::cout << "  " << p.name << ": " << p.kind << ", " << p.bytes.size() << " bytes";
    if (p.abi_version) std::cout << ", CPU ABI " << p.abi_version;
    std::cout << '\n';
    if (p.kind == artifact::kPayloadPtx) {
      for (const auto &t : p.targets)
        std::cout << "    " << t.name << " PTX, for " << join(t.features, " ")
                  << " and newer; the CUDA driver compiles it\n";
      continue;
    }
    if (p.kind == artifact::kPayloadSpirvVulkan || p.kind == artifact::kPayloadSpirvOpenCl) {
      // Device code: what it needs beyond the baseline; `--devices` lists the devices.
      for (const auto &t : p.targets)
        std::cout << "    " << t.name << " SPIR-V, needs "
                  << (t.features.empty() ? "no optional device feature" : join(t.features, " "))
                  << '\n';
      continue;
    }
    for (const auto &t : p.targets) {
      std::vector<std::string> missing;
      for (const auto &f : t.features)
        if (!runtime::cpu_has_feature(f)) missing.push_back(f);
      std::cout << "    " << t.name << " requires " << join(t.features, " ") << "\n      "
                << (missing.empty() ? "runs on this machine"
                                    : "does not run here (missing " + join(missing, " ") + ")")
                << '\n';
    }
  }
  return kOk;
}

int describe_source(const std::string &path, driver::InputKind kind) {
  DiagnosticEngine diags;
  auto in = driver::compile_input(path, kind, {}, diags);
  diags.print(std::cerr);
  if (!in) return kInputError;
  std::cout << "source: " << path
            << "\n  content hash (-O2, no targets): " << isa::content_hash(in->module).hex()
            << '\n';
  print_kernels(in->module);
  return kOk;
}

int describe_devices() {
  for (const auto &r : discover()) {
    std::cout << r.backend << ": " << (r.device.empty() ? "(no device)" : r.device) << "\n  "
              << (r.usable ? "usable" : "rejected: " + r.reason) << '\n';
  }
  return kOk;
}

/// The compile cache the environment names: where it is, its entries and their size; with
/// `clear`, empties it first.
int describe_cache(bool clear) {
  auto from_environment = artifact::CacheSettings::from_environment();
  if (!from_environment) {
    std::cerr << "hologram-info: error: " << from_environment.message() << '\n';
    return kUsageError;
  }
  const artifact::CacheSettings &settings = *from_environment;
  artifact::CompileCache cache(settings);
  if (!settings.enabled) {
    std::cout << "compile cache: off"
              << (settings.dir.empty() ? " (no HOLOGRAM_CACHE_DIR, XDG_CACHE_HOME or HOME)"
                                       : " (HOLOGRAM_CACHE=off)")
              << '\n';
    return kOk;
  }
  if (clear) std::cout << "removed " << cache.clear() << " entries\n";
  auto entries = cache.entries();
  uint64_t total = 0;
  for (const auto &e : entries) total += e.bytes;
  std::cout << "compile cache: " << settings.dir << "\n  " << entries.size() << " entries, "
            << total << " bytes (limit " << settings.max_bytes << ")\n";
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) // most recently used first
    std::cout << "  " << std::filesystem::path(it->path).filename().string() << "  " << it->bytes
              << " bytes\n";
  return kOk;
}

int run(int argc, char **argv) {
  CLI::App app{"hologram-info: describe bundles, kernel files, backends and devices"};
  app.set_version_flag("--version", std::string("hologram-info ") + HOLOGRAM_VERSION);
  std::string file;
  bool devices = false, json = false, isa_reference = false, cache = false, cache_clear = false;
  app.add_option("file", file, "a bundle (.hgb) or a kernel file (.json, .circuit, .hasm)");
  app.add_flag("--devices", devices, "list every backend and device, and why any was rejected");
  app.add_flag("--json", json, "print a bundle's manifest as stored");
  app.add_flag("--isa-reference", isa_reference,
               "print the instruction tables of the ISA reference (Markdown)");
  app.add_flag("--cache", cache,
               "show the compile cache ($HOLOGRAM_CACHE_DIR, else $XDG_CACHE_HOME/hologram): "
               "its entries and their size");
  app.add_flag("--cache-clear", cache_clear, "empty the compile cache, then show it");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? kOk : kUsageError;
  }
  if (static_cast<int>(devices) + static_cast<int>(isa_reference) +
          static_cast<int>(cache || cache_clear) + static_cast<int>(!file.empty()) !=
      1) {
    std::cerr << "hologram-info: error: give exactly one of FILE, --devices, --cache, "
                 "--cache-clear, --isa-reference\n";
    return kUsageError;
  }
  if (devices) return describe_devices();
  if (cache || cache_clear) return describe_cache(cache_clear);
  if (isa_reference) {
    std::cout << isa::instruction_reference_markdown();
    return kOk;
  }
  auto bytes = read_file(file);
  if (!bytes) {
    std::cerr << "hologram-info: error: " << bytes.message() << '\n';
    return kInputError;
  }
  if (artifact::is_bundle(*bytes)) return describe_bundle(file, std::move(*bytes), json);
  if (json) {
    std::cerr << "hologram-info: error: --json needs a bundle; '" << file << "' is not one\n";
    return kUsageError;
  }
  auto kind = driver::kind_from_extension(file);
  if (!kind) {
    std::cerr << "hologram-info: error: '" << file
              << "' is neither a bundle nor a .json, .circuit or .hasm kernel file\n";
    return kInputError;
  }
  return describe_source(file, *kind);
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    std::cerr << "hologram-info: error: out of memory\n";
    return kInputError;
  } catch (const std::exception &e) {
    std::cerr << "hologram-info: internal error: " << e.what() << '\n';
    return kInputError;
  }
}
