// The compiled CPU backend as a conformance runner: each kernel is compiled once into a
// shared object holding the x86-64-v2, v3 and v4 variants, and each runner forces one
// variant through the dispatcher (set_cpu_isa), so every level this machine runs is tested;
// cpu_checked runs the best level compiled with -fbounds-check.
#include "cpu_runner.h"

#include "hologram/driver/cpu_output.h"
#include "hologram/runtime/backend.h"
#include "hologram/runtime/cpu.h"
#include "hologram/support/file_io.h"

#include <filesystem>
#include <map>
#include <unistd.h>

namespace hologram::conformance {

namespace {

/// The shared object of a kernel (compiled on first use, kept for the whole test run): every
/// level, or with -fbounds-check `level` alone.
std::string shared_object(const isa::Kernel &kernel, bool checked, const std::string &level) {
  static std::map<std::pair<const isa::Kernel *, bool>, std::string> cache;
  static const std::string dir = [] {
    std::string d = (std::filesystem::temp_directory_path() / "hologram-conf-XXXXXX").string();
    if (!mkdtemp(d.data())) throw std::runtime_error("cannot create a temporary directory");
    return d;
  }();
  auto it = cache.find({&kernel, checked});
  if (it != cache.end()) return it->second;
  isa::Module m;
  m.kernels.push_back(kernel);
  driver::CpuOutputOptions o;
  o.targets = checked ? std::vector<std::string>{level}
                      : std::vector<std::string>{"x86-64-v2", "x86-64-v3", "x86-64-v4"};
  o.module_name = kernel.name;
  o.bounds_check = checked;
  auto bytes = driver::emit_cpu_output(m, o, "shared");
  if (!bytes) throw std::runtime_error("compiling " + kernel.name + ": " + bytes.message());
  std::string path = dir + "/" + kernel.name + "_" + std::to_string(cache.size()) + ".so";
  if (auto st = write_file_atomic(path, *bytes); !st) throw std::runtime_error(st.message());
  return cache.emplace(std::pair{&kernel, checked}, path).first->second;
}

} // namespace

Status CpuRunner::run(const isa::Kernel &kernel, const LaunchConfig &launch, CaseData &data) {
  paths_.clear();
  try {
    std::string path = shared_object(kernel, checked_, level_);
    runtime::set_cpu_isa(level_);
    auto backend = create_backend(Preference::parse("cpu"));
    auto module = backend->load_module(path);
    runtime::set_cpu_isa("");
    auto info = backend->module_info(module);
    if (info.variant != level_)
      return {ErrorCode::Internal, "the dispatcher chose " + info.variant + ", not " + level_};
    if (auto st = run_with_backend(*backend, kernel.params, data,
                                   [&](std::span<const KernelArg> args) {
                                     backend->launch(module, kernel.name, launch, args);
                                   });
        !st)
      return st;
    paths_ = backend->library_path_counts();
  } catch (const Error &e) {
    runtime::set_cpu_isa("");
    return {e.code(), e.what()};
  } catch (const std::exception &e) {
    runtime::set_cpu_isa("");
    return {ErrorCode::Internal, e.what()};
  }
  return {};
}

} // namespace hologram::conformance
