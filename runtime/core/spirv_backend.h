// What the SPIR-V backends (Vulkan, OpenCL) share: programs compiled from ISA kernels in
// execute_program (compiled by Hologram::jit when it is linked, cached by canonical text), and
// modules loaded from bundles, whose SPIR-V payload for the backend's kind is chosen by the device
// and used as compiled (SPEC §10). A backend supplies how a SPIR-V module becomes a runnable
// Program and how it runs.
#pragma once

#include "device_memory_backend.h"
#include "handle_table.h"
#include "jit_hook.h"
#include "launch_args.h"
#include "library_paths.h"
#include "library_plan.h"
#include "loaded_modules.h"
#include "recent_cache.h"

#include "bundle_file.h"
#include "descriptor_module.h"
#include "hologram/artifact/bundle.h"
#include "hologram/codegen/cpu_abi.h"
#include "hologram/codegen/spirv_abi.h"
#include "hologram/interp/interpreter.h"
#include "hologram/isa/text.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hologram::runtime {

/// A backend of SPIR-V programs (see the file comment).
template <typename Program, typename Memory>
class SpirvBackend : public DeviceMemoryBackend<Memory> {
public:
  using Base = DeviceMemoryBackend<Memory>;

  ModuleHandle load_module(const std::string &path) override {
    artifact::Bundle bundle = read_bundle_file(path);
    return load_payloads("bundle '" + path + "'", path, bundle_source(bundle),
                         std::move(bundle.module), bundle.payloads, bundle.options.targets);
  }

  /// A module linked into the application (add_hologram_kernel): its descriptor carries the
  /// SPIR-V compiled for the library's vulkan and opencl TARGETS next to the x86 code.
  ModuleHandle load_linked_module(const void *descriptor) override {
    auto *desc = static_cast<const hg_cpu_module_desc *>(descriptor);
    if (!desc) throw Error(ErrorCode::InvalidArgument, "a null module descriptor");
    std::string origin =
        desc->source_name && *desc->source_name ? desc->source_name : "linked module";
    std::string what = "linked module '" + origin + "'";
    if (desc->abi_version != HG_CPU_ABI_VERSION)
      throw Error(ErrorCode::InvalidModule,
                  what + " was compiled for ABI version " + std::to_string(desc->abi_version) +
                      "; this runtime implements version " + std::to_string(HG_CPU_ABI_VERSION) +
                      " (recompile it with this hologram-cc)");
    isa::Module parsed = decode_descriptor_module(*desc, what);
    std::vector<artifact::BundlePayload> payloads;
    std::vector<std::string> targets;
    for (uint32_t i = 0; i < desc->num_spirv; ++i) {
      const hg_spirv_module_desc &s = desc->spirv[i];
      artifact::BundlePayload p;
      p.name = s.target ? s.target : "";
      auto t = codegen::parse_spirv_target(p.name);
      if (!t || !s.words || !s.reflection)
        throw Error(ErrorCode::InvalidModule, what + " carries a damaged SPIR-V module");
      p.kind = std::string(t->is_vulkan() ? artifact::kPayloadSpirvVulkan
                                          : artifact::kPayloadSpirvOpenCl);
      p.reflection = s.reflection;
      p.bytes.assign(reinterpret_cast<const char *>(s.words), s.num_words * 4);
      targets.push_back(p.name);
      payloads.push_back(std::move(p));
    }
    for (uint32_t v = 0; v < desc->num_variants; ++v) targets.push_back(desc->variant_names[v]);
    return load_payloads(what, origin, desc->source_name ? desc->source_name : "",
                         std::move(parsed), payloads, targets);
  }
  void unload_module(ModuleHandle m) override { modules_.remove(m); }
  ModuleInfo module_info(ModuleHandle m) override { return modules_.info(m); }
  void launch(ModuleHandle m, std::string_view kernel, const LaunchConfig &launch,
              std::span<const KernelArg> args) override {
    execute(*modules_.find(m, kernel), launch, args);
  }

  void execute_program(const isa::Kernel &kernel, const LaunchConfig &launch,
                       std::span<const KernelArg> args) override {
    execute(program(kernel), launch, args);
  }

protected:
  using Base::allocate;
  using Base::allocate_buffer;
  using Base::arg_bytes;
  using Base::atlas_mutex_;
  using Base::atlas_state;
  using Base::boundary;
  using Base::buffer_arg;
  using Base::buffers_;
  using Base::copy_from_buffer;
  using Base::end_atlas;
  using Base::free_buffer;
  using Base::idle_status_;
  using Base::paths_;
  using Base::pools_;
  using Base::view_alignment;
  using typename Base::AtlasLaunch;
  AtlasLaunch begin_atlas(const codegen::SpirvKernelInfo &info) {
    bool state = false, phase = info.phase_offset != 0;
    for (const auto &b : info.bindings) state |= b.kind == codegen::SpirvBinding::Kind::Atlas;
    for (const auto &k : info.kernel_args) {
      state |= k.kind == codegen::SpirvKernelArg::Kind::Atlas;
      phase |= k.kind == codegen::SpirvKernelArg::Kind::Phase;
    }
    return Base::begin_atlas(state, phase);
  }

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
  /// The launch scratch of one launch of a kernel with pool.alloc: every lane's regions.
  std::shared_ptr<Memory> scratch(const codegen::SpirvKernelInfo &info, const LaunchConfig &l) {
    uint64_t lanes = l.total_lanes(), per = info.scratch_bytes_per_lane;
    if (per != 0 && lanes > (uint64_t{1} << 62) / per)
      throw Error(ErrorCode::OutOfMemory, "kernel '" + info.name + "': " + std::to_string(lanes) +
                                              " lanes of " + std::to_string(per) +
                                              " bytes of launch scratch each is too much");
    return allocate(std::max<uint64_t>(4, lanes * per), "launch scratch");
  }

  /// A bundle the runtime holds in memory, loaded as load_module loads a file; `what` names
  /// it in messages.
  ModuleHandle load_bundle(const std::string &what, artifact::Bundle bundle) {
    return load_payloads(what, what, "", std::move(bundle.module), bundle.payloads,
                         bundle.options.targets);
  }

private:
  using Library = typename Base::template Library<Program>;
  using HostProgram = typename Base::template HostProgram<Program>;
  /// A kernel ready to run: one device program, or a host program.
  struct Compiled {
    isa::Kernel kernel;
    std::shared_ptr<Program> device;
    std::shared_ptr<HostProgram> host;
  };
  /// Loads the payload of this backend's kind that the device takes best; `what` names the
  /// container in messages, `source` the file its kernels' lines are in (for the messages of
  /// failed launches; "" when not known), `targets` are all it was compiled for.
  ModuleHandle load_payloads(const std::string &what, const std::string &origin,
                             const std::string &source, isa::Module module,
                             const std::vector<artifact::BundlePayload> &all,
                             const std::vector<std::string> &targets) {
    const artifact::BundlePayload *best = nullptr;
    int best_rank = -1;
    std::string refused;
    for (const auto &p : all) {
      if (p.kind != payload_kind()) continue;
      std::string why;
      int rank = payload_rank(p, why);
      if (rank < 0) refused += "; " + p.name + ": " + why;
      if (rank > best_rank) {
        best = &p;
        best_rank = rank;
      }
    }
    if (!best) throw no_code_for(what, backend_name(), refused, targets, compile_target().name);
    auto m = std::make_shared<typename LoadedModules<Compiled>::Module>();
    m->origin = origin;
    m->variant = best->name;
    m->module = std::move(module);
    const std::string where = what + ", payload '" + best->name + "'";
    auto infos = codegen::parse_spirv_reflection(best->reflection);
    if (!infos) throw Error(ErrorCode::InvalidModule, where + ": " + infos.message());
    if (best->bytes.size() % 4 != 0)
      throw Error(ErrorCode::InvalidModule, where + " is not a whole number of SPIR-V words");
    std::vector<uint32_t> words(best->bytes.size() / 4);
    std::memcpy(words.data(), best->bytes.data(), best->bytes.size());
    m->programs = programs(m->module.kernels, *infos, words, where);
    for (auto &[name, c] : m->programs)
      if (c.device) c.device->source = source;
    return modules_.insert(std::move(m));
  }

  /// The programs of a module's kernels. A whole-launch kernel has no entry point: its
  /// instructions launch the module's device library kernels, whose parameters come from the
  /// reflection (they have no ISA in the module).
  std::map<std::string, Compiled, std::less<>>
  programs(const std::vector<isa::Kernel> &kernels,
           const std::vector<codegen::SpirvKernelInfo> &infos, const std::vector<uint32_t> &words,
           const std::string &where) {
    auto library = std::make_shared<Library>();
    for (const auto &info : infos) {
      if (!codegen::is_spirv_library_kernel(info.name)) continue;
      if (info.params.empty())
        throw Error(ErrorCode::InvalidModule,
                    where + ": the reflection of library kernel '" + info.name +
                        "' has no parameters (recompile it with this hologram-cc)");
      isa::Kernel signature;
      signature.name = info.name;
      signature.params = info.params;
      check_features(signature, info);
      library->emplace(info.name, make_program(signature, info, words));
    }
    std::map<std::string, Compiled, std::less<>> out;
    for (const auto &k : kernels) {
      Compiled c;
      c.kernel = k;
      if (k.is_launch_level()) {
        c.host = std::make_shared<HostProgram>(HostProgram{k, library, where});
      } else {
        auto info = std::find_if(infos.begin(), infos.end(),
                                 [&](const auto &i) { return i.name == k.name; });
        if (info == infos.end() || info->host)
          throw Error(ErrorCode::InvalidModule,
                      where + " has no entry point for kernel '" + k.name + "'");
        check_features(k, *info);
        c.device = make_program(k, *info, words);
      }
      out.emplace(k.name, std::move(c));
    }
    return out;
  }

  void execute(const Compiled &c, const LaunchConfig &launch, std::span<const KernelArg> args) {
    check_launch_geometry(c.kernel, launch);
    check_launch_args(c.kernel, args, [&](const KernelArg &a) { return arg_bytes(a); });
    if (c.device) {
      check_compiled_block(c.kernel, c.device->info.block, launch);
      return run(*c.device, launch, args);
    }
    // Launches here have finished on return: the plans' scratch can go back at once.
    typename Base::template PlanRuns<Program> ran;
    this->run_host(
        *c.host, launch, args,
        [&](Program &p, const LaunchConfig &l, std::span<const KernelArg> a) { run(p, l, a); },
        ran);
  }

  void check_features(const isa::Kernel &kernel, const codegen::SpirvKernelInfo &info) const {
    for (const auto &f : info.requires_features)
      if (!has_feature(f))
        throw Error(ErrorCode::InvalidProgram, "kernel '" + kernel.name + "' needs the " +
                                                   backend_name() + " feature '" + f + "', which " +
                                                   device_name() + " does not offer");
  }

  /// The compiled form of an ISA kernel, cached by its canonical text.
  Compiled program(const isa::Kernel &kernel) {
    isa::Module m;
    m.kernels.push_back(kernel);
    std::string key = isa::print_module(m);
    std::lock_guard lock(programs_mutex_);
    if (Compiled *c = programs_.find(key)) return *c;
    const JitCompiler *jit = linked_jit();
    if (!jit)
      throw Error(ErrorCode::InvalidProgram,
                  "kernel '" + kernel.name + "': the " + backend_name() +
                      " backend compiles ISA programs with the compiler library, which this "
                      "application does not link (link Hologram::jit, or load a bundle "
                      "compiled by hologram-cc)");
    auto compiled = jit->compile_spirv(m, compile_target());
    if (!compiled) {
      const Status st = compiled.status();
      throw Error(st.code() == ErrorCode::Internal ? ErrorCode::Internal
                                                   : ErrorCode::InvalidProgram,
                  st.describe());
    }
    const codegen::SpirvModule &spirv = *compiled;
    const std::string where = "the module of kernel '" + kernel.name + "'";
    auto c = programs(m.kernels, spirv.kernels, spirv.words, where).at(kernel.name);
    programs_.put(key, c);
    return c;
  }

  LoadedModules<Compiled> modules_;
  std::mutex programs_mutex_;
  /// By canonical text: the pipelines of the programs used last (kRecentPrograms of them).
  RecentCache<std::string, Compiled> programs_{kRecentPrograms};
};

} // namespace hologram::runtime
