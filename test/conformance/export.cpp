// hologram-conformance --export DIR (case_file.h): every case of the corpus at every -O level
// of the suite, as a bundle of its kernel for every target and a case file.
#include "case_file.h"
#include "harness.h"
#include "hologram/artifact/bundle.h"
#include "hologram/codegen/ptx.h"
#include "hologram/codegen/spirv.h"
#include "hologram/driver/cpu_output.h"
#include "hologram/support/file_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

namespace hologram::conformance {

namespace {

/// Every target a bundle of the export carries, unless its back end cannot compile the kernel.
constexpr const char *kTargets[] = {"x86-64-v2", "x86-64-v3", "x86-64-v4",
                                    "vulkan1.1", "opencl1.2", "cuda-sm_80"};

/// "kernels/vector.json", "saxpy", 2 -> "kernels_vector.json.saxpy.O2.hgb"
std::string bundle_name(const std::string &file, const std::string &kernel, unsigned opt_level) {
  std::string s = file;
  for (char &ch : s)
    if (ch == '/') ch = '_';
  return s + "." + kernel + ".O" + std::to_string(opt_level) + ".hgb";
}

/// The bundle of `kernel` alone for every target its back ends compile; the others, with the
/// back end's reason, in `unsupported`.
Expected<std::string> bundle_of(const isa::Kernel &kernel, const std::string &source,
                                std::map<std::string, std::string> &unsupported) {
  isa::Module m;
  m.source_name = source;
  m.kernels.push_back(kernel);
  driver::CpuOutputOptions o;
  o.targets.clear();
  for (const char *t : kTargets) {
    Status st;
    if (auto spirv = codegen::parse_spirv_target(t)) {
      codegen::SpirvOptions so;
      so.target = *spirv;
      so.opt_level = 0;
      st = codegen::compile_spirv(m, so).status();
    } else if (auto ptx = codegen::parse_ptx_target(t)) {
      codegen::PtxOptions po;
      po.target = *ptx;
      st = codegen::compile_ptx(m, po).status();
    }
    if (st.code() == ErrorCode::InvalidProgram) {
      unsupported[t] = st.describe();
      continue;
    }
    o.targets.emplace_back(t);
  }
  o.module_name = kernel.name;
  o.source_name = source;
  o.sources = {source};
  o.compiler_version = HOLOGRAM_VERSION;
  return driver::emit_cpu_output(m, o, "bundle");
}

/// DIR/ptx/NAME.ptx, the cuda-sm_80 payload of the bundle `bundle` (bundles/NAME.hgb, whose
/// bytes are `bytes`), where it has one: for ptxas, which needs no GPU.
void write_ptx(const std::string &dir, const std::string &bundle, const std::string &bytes) {
  auto b = artifact::read_bundle(bytes);
  if (!b) throw std::runtime_error(b.status().describe());
  for (const auto &p : b->payloads) {
    if (p.kind != artifact::kPayloadPtx || p.name != "cuda-sm_80") continue;
    const std::string name = std::filesystem::path(bundle).stem().string() + ".ptx";
    if (Status st =
            write_file_atomic((std::filesystem::path(dir) / "ptx" / name).string(), p.bytes);
        !st)
      throw std::runtime_error(st.describe());
  }
}

} // namespace

int export_corpus(const std::string &dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "bundles", ec);
  if (!ec) fs::create_directories(fs::path(dir) / "cases", ec);
  if (!ec) fs::create_directories(fs::path(dir) / "ptx", ec);
  if (ec) {
    std::fprintf(stderr, "hologram-conformance: cannot create %s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  std::vector<std::string> names;
  std::map<std::string, std::map<std::string, std::string>> bundles; // name -> unsupported
  int failures = 0;
  for (const Case &c : all_cases()) {
    ExportedCase e;
    e.name = c.name;
    try {
      for (const unsigned level : kOptLevels) {
        const isa::Kernel &kernel = case_kernel(c, level);
        const std::string bundle = "bundles/" + bundle_name(c.file, kernel.name, level);
        auto made = bundles.find(bundle);
        if (made == bundles.end()) {
          std::map<std::string, std::string> unsupported;
          auto bytes = bundle_of(kernel, c.file, unsupported);
          Status st =
              bytes ? write_file_atomic((fs::path(dir) / bundle).string(), *bytes) : bytes.status();
          if (!st) throw std::runtime_error(st.describe());
          write_ptx(dir, bundle, *bytes);
          made = bundles.emplace(bundle, std::move(unsupported)).first;
        }
        e.levels.push_back({level, bundle, made->second});
        e.kernel = kernel.name;
        e.params = kernel.params;
      }
      e.launch = c.launch;
      c.inputs(e.inputs);
      CaseData expected = e.inputs;
      e.checks = c.checks;
      c.reference(expected, e.checks);
      // Only what the checks read: the rest of the expected data is the inputs again.
      for (const Check &check : e.checks) {
        if (auto k = checked_class(check, expected)) {
          const auto first = static_cast<std::ptrdiff_t>(uint64_t{*k} * atlas::kClassBytes);
          std::copy(expected.boundary.begin() + first,
                    expected.boundary.begin() + first + atlas::kClassBytes,
                    e.expected.boundary.begin() + first);
        } else if (auto it = expected.arrays.find(check.name); it != expected.arrays.end()) {
          e.expected.arrays[check.name] = it->second;
        }
      }
      e.cpu_paths = c.cpu_paths;
      e.device_paths = c.device_paths;
      const std::string path = (fs::path(dir) / "cases" / (e.name + ".cbor")).string();
      if (Status st = write_file_atomic(path, encode_case(e)); !st)
        throw std::runtime_error(st.describe());
      names.push_back(e.name);
    } catch (const std::exception &ex) {
      std::fprintf(stderr, "hologram-conformance: cannot export %s: %s\n", e.name.c_str(),
                   ex.what());
      ++failures;
    }
  }
  const nlohmann::json index = {
      {"format", kExportFormat}, {"compiler", HOLOGRAM_VERSION}, {"cases", names}};
  if (Status st = write_file_atomic((fs::path(dir) / "index.json").string(), index.dump(1) + "\n");
      !st) {
    std::fprintf(stderr, "hologram-conformance: %s\n", st.describe().c_str());
    return 1;
  }
  std::fprintf(stderr, "hologram-conformance: exported %zu cases (%zu bundles) to %s\n",
               names.size(), bundles.size(), dir.c_str());
  return failures == 0 ? 0 : 1;
}

} // namespace hologram::conformance
