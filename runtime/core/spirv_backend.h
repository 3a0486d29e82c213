// What the SPIR-V backends (Vulkan, OpenCL) share: programs compiled from ISA kernels in
// execute_program (cached by canonical text), and modules loaded from bundles, whose SPIR-V
// payload for the backend's kind is chosen by the device and used as compiled (SPEC §10).
// A backend supplies how a SPIR-V module becomes a runnable Program and how it runs.
#pragma once

#include "handle_table.h"
#include "host_atlas.h"
#include "launch_args.h"

#include "hologram/artifact/bundle.h"
#include "hologram/codegen/spirv.h"
#include "hologram/isa/text.h"
#include "hologram/support/file_io.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hologram::runtime {

template <typename Program> class SpirvBackend : public HostAtlasBackend {
public:
  ModuleHandle load_module(const std::string &path) override {
    std::string err;
    auto bytes = read_file(path, &err);
    if (!bytes) throw Error(ErrorCode::InvalidModule, "cannot read '" + path + "': " + err);
    artifact::Bundle bundle;
    if (auto st = artifact::read_bundle(std::move(*bytes), bundle); !st)
      throw Error(ErrorCode::InvalidModule,
                  "'" + path + "' is not a valid bundle: " + st.message());
    // The payload of this backend's kind the device takes best.
    const artifact::BundlePayload *best = nullptr;
    int best_rank = -1;
    std::string refused;
    for (const auto &p : bundle.payloads) {
      if (p.kind != payload_kind()) continue;
      std::string why;
      int rank = payload_rank(p, why);
      if (rank < 0) refused += "; " + p.name + ": " + why;
      if (rank > best_rank) {
        best = &p;
        best_rank = rank;
      }
    }
    if (!best) {
      std::string targets;
      for (const auto &t : bundle.options.targets) targets += (targets.empty() ? "" : ", ") + t;
      throw Error(ErrorCode::InvalidModule,
                  "bundle '" + path + "' holds no code the " + backend_name() + " backend runs" +
                      (refused.empty() ? " (its targets: " + targets + ")" : refused) +
                      "; add a target for it to --target (such as " + compile_target().name + ")");
    }
    auto m = std::make_shared<LoadedModule>();
    m->origin = path;
    m->variant = best->name;
    m->module = bundle.module;
    std::vector<codegen::SpirvKernelInfo> infos;
    if (auto st = codegen::parse_spirv_reflection(best->reflection, infos); !st)
      throw Error(ErrorCode::InvalidModule,
                  "bundle '" + path + "', payload '" + best->name + "': " + st.message());
    if (best->bytes.size() % 4 != 0)
      throw Error(ErrorCode::InvalidModule, "bundle '" + path + "', payload '" + best->name +
                                                "' is not a whole number of SPIR-V words");
    std::vector<uint32_t> words(best->bytes.size() / 4);
    std::memcpy(words.data(), best->bytes.data(), best->bytes.size());
    for (const auto &k : m->module.kernels) {
      const codegen::SpirvKernelInfo *info = nullptr;
      for (const auto &i : infos)
        if (i.name == k.name) info = &i;
      if (!info)
        throw Error(ErrorCode::InvalidModule, "bundle '" + path + "', payload '" + best->name +
                                                  "' has no entry point for kernel '" + k.name +
                                                  "'");
      check_features(k, *info);
      m->programs.emplace(k.name, make_program(k, *info, words));
    }
    return {modules_.insert(std::move(m))};
  }

  ModuleHandle load_linked_module(const void *) override {
    throw Error(ErrorCode::InvalidArgument,
                "linked modules hold x86 code; only the CPU backend runs them");
  }
  void unload_module(ModuleHandle m) override { modules_.remove(m.id); }
  ModuleInfo module_info(ModuleHandle m) override {
    auto mod = modules_.get(m.id);
    ModuleInfo info;
    info.origin = mod->origin;
    info.variant = mod->variant;
    for (const auto &k : mod->module.kernels) info.kernels.push_back(k.name);
    return info;
  }
  void launch(ModuleHandle m, std::string_view kernel, const LaunchConfig &launch,
              std::span<const KernelArg> args) override {
    auto mod = modules_.get(m.id);
    auto it = mod->programs.find(std::string(kernel));
    if (it == mod->programs.end())
      throw Error(ErrorCode::InvalidArgument, "module #" + std::to_string(m.id) + " ('" +
                                                  mod->origin + "') has no kernel '" +
                                                  std::string(kernel) + "'");
    const isa::Kernel &k = it->second->kernel;
    check_launch_geometry(k, launch);
    check_launch_args(k, args, [&](uint64_t h) { return buffer_bytes(h); });
    run(*it->second, launch, args);
  }

  void execute_program(const isa::Kernel &kernel, const LaunchConfig &launch,
                       std::span<const KernelArg> args) override {
    check_launch_geometry(kernel, launch);
    check_launch_args(kernel, args, [&](uint64_t h) { return buffer_bytes(h); });
    run(*program(kernel), launch, args);
  }

protected:
  /// "vulkan", "opencl"
  [[nodiscard]] virtual std::string backend_name() const = 0;
  /// artifact::kPayloadSpirvVulkan or kPayloadSpirvOpenCl.
  [[nodiscard]] virtual std::string_view payload_kind() const = 0;
  /// How well the device takes a payload (higher is better), or -1 with `why` it cannot.
  virtual int payload_rank(const artifact::BundlePayload &p, std::string &why) const = 0;
  /// The SPIR-V target execute_program compiles for.
  [[nodiscard]] virtual codegen::SpirvTarget compile_target() const = 0;
  /// Whether the device offers a feature of SpirvKernelInfo::requires_features.
  [[nodiscard]] virtual bool has_feature(const std::string &feature) const = 0;
  [[nodiscard]] virtual std::string device_name() const = 0;
  virtual std::shared_ptr<Program> make_program(const isa::Kernel &kernel,
                                                const codegen::SpirvKernelInfo &info,
                                                const std::vector<uint32_t> &words) = 0;
  virtual void run(Program &p, const LaunchConfig &launch, std::span<const KernelArg> args) = 0;
  virtual uint64_t buffer_bytes(uint64_t handle) = 0;

private:
  struct LoadedModule {
    std::string origin, variant;
    isa::Module module;
    std::map<std::string, std::shared_ptr<Program>> programs;
  };

  void check_features(const isa::Kernel &kernel, const codegen::SpirvKernelInfo &info) const {
    for (const auto &f : info.requires_features)
      if (!has_feature(f))
        throw Error(ErrorCode::InvalidProgram, "kernel '" + kernel.name + "' needs the " +
                                                   backend_name() + " feature '" + f + "', which " +
                                                   device_name() + " does not offer");
  }

  /// The compiled form of an ISA kernel, cached by its canonical text.
  std::shared_ptr<Program> program(const isa::Kernel &kernel) {
    isa::Module m;
    m.kernels.push_back(kernel);
    std::string key = isa::print_module(m);
    std::lock_guard lock(programs_mutex_);
    auto it = programs_.find(key);
    if (it != programs_.end()) return it->second;
    codegen::SpirvOptions so;
    so.target = compile_target();
    codegen::SpirvModule spirv;
    if (auto st = codegen::compile_spirv(m, so, spirv); !st)
      throw Error(st.code() == ErrorCode::Internal ? ErrorCode::Internal
                                                   : ErrorCode::InvalidProgram,
                  st.message());
    check_features(kernel, spirv.kernels.at(0));
    auto p = make_program(kernel, spirv.kernels.at(0), spirv.words);
    programs_.emplace(key, p);
    return p;
  }

  HandleTable<LoadedModule> modules_{"module"};
  std::mutex programs_mutex_;
  std::map<std::string, std::shared_ptr<Program>> programs_;
};

} // namespace hologram::runtime
