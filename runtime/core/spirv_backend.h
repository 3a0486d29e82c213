// What the SPIR-V backends (Vulkan, OpenCL) share: programs compiled from ISA kernels in
// execute_program (compiled by Hologram::jit when it is linked, cached by canonical text), and
// modules loaded from bundles, whose SPIR-V payload for the backend's kind is chosen by the device
// and used as compiled (SPEC §10). A backend supplies how a SPIR-V module becomes a runnable
// Program and how it runs.
#pragma once

#include "handle_table.h"
#include "host_atlas.h"
#include "jit_hook.h"
#include "launch_args.h"
#include "library_paths.h"
#include "library_plan.h"
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

/// `Memory` is the backend's device allocation, or a view of one: `size`, `write(offset, bytes)`,
/// `read(offset, bytes)`.
template <typename Program, typename Memory> class SpirvBackend : public HostAtlasBackend {
public:
  BufferHandle allocate_buffer(uint64_t bytes) override {
    return {buffers_.insert(allocate(bytes, "buffer"))};
  }
  void free_buffer(BufferHandle b) override { buffers_.remove(b.id); }
  void copy_to_buffer(BufferHandle b, uint64_t offset, std::span<const std::byte> data) override {
    copy_in(buffers_, "buffer", b.id, offset, data);
  }
  void copy_from_buffer(BufferHandle b, uint64_t offset, std::span<std::byte> out) override {
    copy_out(buffers_, "buffer", b.id, offset, out);
  }
  uint64_t buffer_size(BufferHandle b) override { return buffers_.get(b.id)->size; }
  BufferHandle create_sub_buffer(BufferHandle parent, uint64_t offset, uint64_t bytes) override {
    auto p = buffers_.get(parent.id);
    bytes = view_bytes(parent.id, p->size, offset, bytes, view_alignment());
    return {buffers_.insert(view(p, offset, bytes))};
  }
  HostBuffer wrap_host_memory(std::span<std::byte> memory) override {
    if (memory.empty() || !memory.data())
      throw Error(ErrorCode::InvalidArgument, "cannot wrap host memory of 0 bytes");
    bool shared = false;
    auto m = wrap(memory, shared);
    return {{buffers_.insert(std::move(m))}, shared};
  }

  PoolHandle allocate_pool(uint64_t bytes) override {
    return {pools_.insert(allocate(bytes, "pool"))};
  }
  void free_pool(PoolHandle p) override { pools_.remove(p.id); }
  void copy_to_pool(PoolHandle p, uint64_t offset, std::span<const std::byte> data) override {
    copy_in(pools_, "pool", p.id, offset, data);
  }
  void copy_from_pool(PoolHandle p, uint64_t offset, std::span<std::byte> out) override {
    copy_out(pools_, "pool", p.id, offset, out);
  }
  uint64_t pool_size(PoolHandle p) override { return pools_.get(p.id)->size; }

  LibraryPathCounts library_path_counts() const override { return paths_.snapshot(); }

  ModuleHandle load_module(const std::string &path) override {
    artifact::Bundle bundle = read_bundle_file(path);
    return load_payloads("bundle '" + path + "'", path, std::move(bundle.module), bundle.payloads,
                         bundle.options.targets);
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
    return load_payloads(what, origin, std::move(parsed), payloads, targets);
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
    execute(it->second, launch, args);
  }

  void execute_program(const isa::Kernel &kernel, const LaunchConfig &launch,
                       std::span<const KernelArg> args) override {
    execute(program(kernel), launch, args);
  }

  // The boundary pool lives in device memory, where kernels with class addresses use it.
  void copy_to_boundary(uint64_t offset, std::span<const std::byte> data) override {
    check_range("the boundary pool", 0, atlas::kBoundaryPoolBytes, offset, data.size(), "a copy");
    boundary()->write(offset, data);
  }
  void copy_from_boundary(uint64_t offset, std::span<std::byte> out) override {
    check_range("the boundary pool", 0, atlas::kBoundaryPoolBytes, offset, out.size(), "a copy");
    boundary()->read(offset, out);
  }

protected:
  /// The Atlas state (SPEC §4) of one launch: kernels that read the phase or touch the state
  /// buffer run one at a time, under the Atlas lock, with resonance and phase copied in and
  /// out around them.
  struct AtlasLaunch {
    std::unique_lock<std::mutex> lock;
    bool state = false; ///< binds the state buffer (spirv_status::kAtlasWords u64 words)
    uint32_t phase = 0; ///< the phase at launch start
    std::vector<uint64_t> words;
  };
  AtlasLaunch begin_atlas(const codegen::SpirvKernelInfo &info) {
    AtlasLaunch a;
    bool phase = info.phase_offset != 0;
    for (const auto &b : info.bindings) a.state |= b.kind == codegen::SpirvBinding::Kind::Atlas;
    for (const auto &k : info.kernel_args) {
      a.state |= k.kind == codegen::SpirvKernelArg::Kind::Atlas;
      phase |= k.kind == codegen::SpirvKernelArg::Kind::Phase;
    }
    if (!a.state && !phase) return a;
    a.lock = std::unique_lock(atlas_mutex_);
    a.phase = atlas_.phase;
    if (a.state) {
      a.words.assign(codegen::spirv_status::kAtlasWords, 0);
      std::memcpy(a.words.data(), atlas_.resonance.data(), sizeof(atlas_.resonance));
    }
    return a;
  }
  /// After a launch that finished: the resonance it accumulated, the phase it advanced.
  void end_atlas(AtlasLaunch &a) {
    if (!a.state) return;
    std::memcpy(atlas_.resonance.data(), a.words.data(), sizeof(atlas_.resonance));
    atlas_.phase =
        static_cast<uint32_t>((atlas_.phase + a.words[atlas::kNumClasses]) % atlas::kPhaseModulus);
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
  /// A zero-filled device allocation of `bytes` (the device's limits checked).
  virtual std::shared_ptr<Memory> allocate(uint64_t bytes, const char *what) = 0;
  /// The bytes [offset, offset + bytes) of `parent` (checked against it and the alignment).
  virtual std::shared_ptr<Memory> view(const std::shared_ptr<Memory> &parent, uint64_t offset,
                                       uint64_t bytes) = 0;
  /// A buffer over host memory: used in place (`shared` set) or a copy of it.
  virtual std::shared_ptr<Memory> wrap(std::span<std::byte> memory, bool &shared) = 0;
  /// DeviceInfo::view_alignment.
  [[nodiscard]] virtual uint64_t view_alignment() const = 0;

  /// The memory of a buffer argument: its buffer, or a view of it.
  std::shared_ptr<Memory> buffer_arg(const KernelArg &a) {
    auto m = buffers_.get(a.handle);
    if (!a.is_view()) return m;
    return view(m, a.offset, arg_view_bytes(a, m->size, view_alignment()));
  }
  /// The size of a buffer argument (a view's size for a view).
  uint64_t arg_bytes(const KernelArg &a) {
    return arg_view_bytes(a, buffers_.get(a.handle)->size, view_alignment());
  }
  /// The launch scratch of one launch of a kernel with pool.alloc: every lane's regions.
  std::shared_ptr<Memory> scratch(const codegen::SpirvKernelInfo &info, const LaunchConfig &l) {
    uint64_t lanes = l.total_lanes(), per = info.scratch_bytes_per_lane;
    if (per != 0 && lanes > (uint64_t{1} << 62) / per)
      throw Error(ErrorCode::OutOfMemory, "kernel '" + info.name + "': " + std::to_string(lanes) +
                                              " lanes of " + std::to_string(per) +
                                              " bytes of launch scratch each is too much");
    return allocate(std::max<uint64_t>(4, lanes * per), "launch scratch");
  }
  /// The boundary pool in device memory, made on first use.
  std::shared_ptr<Memory> boundary() {
    std::lock_guard lock(boundary_mutex_);
    if (!boundary_) boundary_ = allocate(atlas::kBoundaryPoolBytes, "boundary pool");
    return boundary_;
  }

  HandleTable<Memory> buffers_{"buffer"};
  HandleTable<Memory> pools_{"pool"};

private:
  static void copy_in(HandleTable<Memory> &t, const char *what, uint64_t id, uint64_t offset,
                      std::span<const std::byte> data) {
    auto m = t.get(id);
    check_range(what, id, m->size, offset, data.size(), "a copy");
    m->write(offset, data);
  }
  static void copy_out(HandleTable<Memory> &t, const char *what, uint64_t id, uint64_t offset,
                       std::span<std::byte> out) {
    auto m = t.get(id);
    check_range(what, id, m->size, offset, out.size(), "a copy");
    m->read(offset, out);
  }

  std::mutex boundary_mutex_;
  std::shared_ptr<Memory> boundary_;
  LibraryPathCounter paths_;

  /// The device library kernels of a module (entry points named codegen::kSpirvLibraryPrefix),
  /// by name.
  using Library = std::map<std::string, std::shared_ptr<Program>, std::less<>>;
  /// A whole-launch kernel: its scalar code for the host, the device library kernels of its
  /// module that its instructions launch.
  struct HostProgram {
    isa::Kernel kernel;
    std::shared_ptr<const Library> library;
    std::string where; ///< the module, in messages
  };
  /// A kernel ready to run: one device program, or a host program.
  struct Compiled {
    isa::Kernel kernel;
    std::shared_ptr<Program> device;
    std::shared_ptr<HostProgram> host;
  };
  /// Loads the payload of this backend's kind that the device takes best; `what` names the
  /// container in messages, `targets` are all it was compiled for.
  ModuleHandle load_payloads(const std::string &what, const std::string &origin, isa::Module module,
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
    if (!best) {
      std::string list;
      for (const auto &t : targets) list += (list.empty() ? "" : ", ") + t;
      throw Error(ErrorCode::InvalidModule,
                  what + " holds no code the " + backend_name() + " backend runs" +
                      (refused.empty() ? " (its targets: " + list + ")" : refused) +
                      "; add a target for it to --target (such as " + compile_target().name + ")");
    }
    auto m = std::make_shared<LoadedModule>();
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
    return {modules_.insert(std::move(m))};
  }

  struct LoadedModule {
    std::string origin, variant;
    isa::Module module;
    std::map<std::string, Compiled> programs;
  };

  /// The programs of a module's kernels. A whole-launch kernel has no entry point: its
  /// instructions launch the module's device library kernels, whose parameters come from the
  /// reflection (they have no ISA in the module).
  std::map<std::string, Compiled> programs(const std::vector<isa::Kernel> &kernels,
                                           const std::vector<codegen::SpirvKernelInfo> &infos,
                                           const std::vector<uint32_t> &words,
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
    std::map<std::string, Compiled> out;
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
    run_host(*c.host, launch, args);
  }

  /// A whole-launch kernel: its code runs once on the host (the interpreter), each
  /// whole-launch instruction as the device launches of its plan.
  void run_host(const HostProgram &hp, const LaunchConfig &launch,
                std::span<const KernelArg> args) {
    std::vector<interp::ArgValue> iargs;
    for (const auto &a : args)
      iargs.push_back(a.kind == KernelArg::Kind::Scalar ? interp::ArgValue::scalar(a.bits)
                      : a.kind == KernelArg::Kind::Pool ? interp::ArgValue::pool({})
                                                        : interp::ArgValue::buffer({}));
    interp::InterpOptions opts;
    opts.verify = false;
    opts.launch_op = [&](const isa::Instruction &inst, const std::function<uint64_t(isa::Reg)> &reg,
                         uint64_t &result) {
      try {
        result = run_library_op(hp, inst, reg, args);
      } catch (const Error &e) {
        return Status{e.code(), e.what()};
      }
      return Status::ok();
    };
    opts.param_memory = [&](bool store, unsigned p, uint64_t offset, unsigned size,
                            uint64_t &bits) {
      auto span = std::as_writable_bytes(std::span(&bits, 1)).first(size);
      try {
        // A view's element `offset` is its buffer's at view offset + `offset`: no sub-buffer
        // is made for one scalar access.
        const KernelArg &a = args[p];
        auto m = buffers_.get(a.handle);
        const uint64_t bytes = arg_view_bytes(a, m->size, view_alignment());
        if (offset > bytes || size > bytes - offset)
          return Status{ErrorCode::OutOfBounds,
                        "out-of-bounds access to %" + hp.kernel.params[p].name + ": offset " +
                            std::to_string(offset) + ", size " + std::to_string(size) +
                            ", but it holds " + std::to_string(bytes) + " bytes"};
        if (store)
          m->write(a.offset + offset, span);
        else
          m->read(a.offset + offset, span);
      } catch (const Error &e) {
        return Status{e.code(), e.what()};
      }
      return Status::ok();
    };
    std::lock_guard lock(atlas_mutex_);
    if (auto st = interp::run_kernel(hp.kernel, launch, iargs, atlas_, opts); !st)
      throw Error(st.code(), st.message());
  }

  uint64_t run_library_op(const HostProgram &hp, const isa::Instruction &inst,
                          const std::function<uint64_t(isa::Reg)> &reg,
                          std::span<const KernelArg> args) {
    LibraryPlan plan;
    if (auto st = plan_library_op(hp.kernel, inst, reg, plan); !st)
      throw Error(st.code(), st.message());
    for (const auto &e : plan.extents) {
      const auto &p = hp.kernel.params[e.param];
      uint64_t size = isa::type_size(p.type), bytes = arg_bytes(args[e.param]);
      bool huge = e.elements > bytes / size;
      if (huge || e.elements * size > bytes)
        throw Error(ErrorCode::OutOfBounds,
                    e.role + " %" + p.name + " needs " +
                        (e.elements == UINT64_MAX ? std::string("more than 2^64")
                                                  : std::to_string(e.elements) + " elements") +
                        ", but the buffer holds " + std::to_string(bytes) + " bytes");
    }
    struct Scratch {
      Backend &b;
      std::vector<BufferHandle> handles;
      ~Scratch() {
        for (auto h : handles) b.free_buffer(h);
      }
    } scratch{*this, {}};
    for (uint64_t bytes : plan.scratch) scratch.handles.push_back(allocate_buffer(bytes));
    for (const auto &l : plan.launches) {
      std::vector<KernelArg> kargs;
      for (const auto &a : l.args)
        kargs.push_back(a.kind == LibraryArg::Kind::Param ? args[a.index]
                        : a.kind == LibraryArg::Kind::Scratch
                            ? KernelArg::buffer(scratch.handles[a.index])
                            : KernelArg::scalar(a.type, a.bits));
      auto lib = hp.library->find(l.kernel);
      if (lib == hp.library->end())
        throw Error(ErrorCode::InvalidModule,
                    hp.where + " has no device library kernel '" + l.kernel + "' for '" +
                        std::string(inst.info().mnemonic) + "' of kernel '" + hp.kernel.name + "'");
      const auto &prog = lib->second;
      check_launch_args(prog->kernel, kargs, [&](const KernelArg &a) { return arg_bytes(a); });
      run(*prog, l.launch, kargs);
    }
    paths_.count(inst.op, plan.schedule);
    if (!plan.has_result) return 0;
    uint64_t bits = 0;
    copy_from_buffer(
        scratch.handles[plan.result_scratch], 0,
        std::as_writable_bytes(std::span(&bits, 1)).first(isa::type_size(plan.result_type)));
    if (plan.result_type == isa::Type::F64 && inst.type == isa::Type::F32)
      bits = std::bit_cast<uint32_t>(static_cast<float>(std::bit_cast<double>(bits)));
    return bits;
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

  HandleTable<LoadedModule> modules_{"module"};
  std::mutex programs_mutex_;
  /// By canonical text: the pipelines of the programs used last (kRecentPrograms of them).
  RecentCache<std::string, Compiled> programs_{kRecentPrograms};
};

} // namespace hologram::runtime
