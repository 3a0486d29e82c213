// CpuBackend: buffers and pools in host memory; modules run their compiled x86 code, and ISA
// programs (execute_program) are compiled by Hologram::jit, or run on the reference
// interpreter in the "interp" backend. Objects are held by shared_ptr (see HandleTable), so
// launches and copies never hold a table lock while they work, and any number of threads may
// allocate, copy and launch at once.
#include "cpu_backend.h"

#include "../core/handle_table.h"
#include "../core/host_atlas.h"
#include "../core/jit_hook.h"
#include "../core/launch_args.h"
#include "../core/recent_cache.h"
#include "cpu_module.h"
#include "hologram/interp/interpreter.h"
#include "hologram/isa/text.h"

#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace hologram::runtime {

namespace {

/// 64-byte aligned, zero-filled host memory.
struct Block {
  explicit Block(uint64_t n) : size(n) {
    data.reset(static_cast<std::byte *>(::operator new[](n ? n : 1, std::align_val_t{64})));
    std::memset(data.get(), 0, n);
  }
  struct Free {
    void operator()(std::byte *p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<std::byte[], Free> data;
  uint64_t size;
};

/// A buffer or pool: `size` bytes at `data`, kept alive by `owner` (the Block it lies in; null
/// for host memory that the application owns).
struct Memory {
  std::shared_ptr<const void> owner;
  std::byte *data = nullptr;
  uint64_t size = 0;
};

/// The state handed to kernels that never touch the Atlas state, so that they run without the
/// backend's lock: one per thread, with no boundary pool.
interp::AtlasState &untouched_atlas_state() {
  thread_local interp::AtlasState state{.boundary = {}};
  return state;
}

class CpuBackend final : public HostAtlasBackend {
public:
  explicit CpuBackend(bool interpret) : interpret_(interpret) {}

  DeviceInfo device_info() const override {
    return interpret_ ? interpreter_device_info() : cpu_device_info();
  }

  BufferHandle allocate_buffer(uint64_t bytes) override {
    return {buffers_.insert(allocate(bytes, "buffer"))};
  }
  void free_buffer(BufferHandle b) override { buffers_.remove(b.id); }
  void copy_to_buffer(BufferHandle b, uint64_t offset, std::span<const std::byte> data) override {
    copy_in(buffers_.get(b.id), "buffer", b.id, offset, data);
  }
  void copy_from_buffer(BufferHandle b, uint64_t offset, std::span<std::byte> out) override {
    copy_out(buffers_.get(b.id), "buffer", b.id, offset, out);
  }
  uint64_t buffer_size(BufferHandle b) override { return buffers_.get(b.id)->size; }
  BufferHandle create_sub_buffer(BufferHandle parent, uint64_t offset, uint64_t bytes) override {
    auto p = buffers_.get(parent.id);
    bytes = view_bytes(parent.id, p->size, offset, bytes, 1);
    return {buffers_.insert(std::make_shared<Memory>(Memory{p->owner, p->data + offset, bytes}))};
  }
  HostBuffer wrap_host_memory(std::span<std::byte> memory) override {
    if (memory.empty() || !memory.data())
      throw Error(ErrorCode::InvalidArgument, "cannot wrap host memory of 0 bytes");
    return {
        {buffers_.insert(std::make_shared<Memory>(Memory{nullptr, memory.data(), memory.size()}))},
        true};
  }

  PoolHandle allocate_pool(uint64_t bytes) override {
    return {pools_.insert(allocate(bytes, "pool"))};
  }
  void free_pool(PoolHandle p) override { pools_.remove(p.id); }
  void copy_to_pool(PoolHandle p, uint64_t offset, std::span<const std::byte> data) override {
    copy_in(pools_.get(p.id), "pool", p.id, offset, data);
  }
  void copy_from_pool(PoolHandle p, uint64_t offset, std::span<std::byte> out) override {
    copy_out(pools_.get(p.id), "pool", p.id, offset, out);
  }
  uint64_t pool_size(PoolHandle p) override { return pools_.get(p.id)->size; }

  void execute_program(const isa::Kernel &kernel, const LaunchConfig &launch,
                       std::span<const KernelArg> args) override {
    if (!interpret_) {
      auto mod = compiled(kernel);
      run(*mod, 0, launch, args);
      return;
    }
    std::vector<std::shared_ptr<Memory>> keep;
    auto resolved = resolve_args(kernel, args, keep);
    std::vector<interp::ArgValue> values;
    for (size_t i = 0; i < resolved.size(); ++i) {
      const auto &r = resolved[i];
      std::span<std::byte> mem(static_cast<std::byte *>(r.data), r.size);
      switch (kernel.params[i].kind) {
      case isa::ParamKind::Buffer: values.push_back(interp::ArgValue::buffer(mem)); break;
      case isa::ParamKind::Pool: values.push_back(interp::ArgValue::pool(mem)); break;
      case isa::ParamKind::Scalar: values.push_back(interp::ArgValue::scalar(r.bits)); break;
      }
    }
    interp::InterpOptions opts;
    if (kernel.uses_atlas_state()) {
      std::lock_guard lock(atlas_mutex_);
      throw_if_failed(interp::run_kernel(kernel, launch, values, atlas_state(), opts));
    } else {
      throw_if_failed(interp::run_kernel(kernel, launch, values, untouched_atlas_state(), opts));
    }
  }

  ModuleHandle load_module(const std::string &path) override {
    return {modules_.insert(CpuModule::load_file(path))};
  }
  ModuleHandle load_linked_module(const void *descriptor) override {
    auto *desc = static_cast<const hg_cpu_module_desc *>(descriptor);
    if (!desc) throw Error(ErrorCode::InvalidArgument, "a null module descriptor");
    return {modules_.insert(CpuModule::from_descriptor(
        desc, desc->source_name && *desc->source_name ? desc->source_name : "linked module"))};
  }
  void unload_module(ModuleHandle m) override { modules_.remove(m.id); }
  ModuleInfo module_info(ModuleHandle m) override {
    auto mod = modules_.get(m.id);
    ModuleInfo info;
    info.origin = mod->origin();
    for (const auto &k : mod->isa().kernels) info.kernels.push_back(k.name);
    info.variant = mod->variant_name();
    return info;
  }
  void launch(ModuleHandle m, std::string_view name, const LaunchConfig &config,
              std::span<const KernelArg> args) override {
    auto mod = modules_.get(m.id);
    run(*mod, mod->kernel_index(name), config, args);
  }

  void synchronize() override {} // launches and copies complete before they return
  LibraryPathCounts library_path_counts() const override { return paths_.snapshot(); }

private:
  void run(const CpuModule &mod, uint32_t k, const LaunchConfig &config,
           std::span<const KernelArg> args) {
    const isa::Kernel &kernel = mod.isa().kernels[k];
    std::vector<std::shared_ptr<Memory>> keep;
    auto resolved = resolve_args(kernel, args, keep);
    if (mod.desc().kernels[k].flags & HG_CPU_KERNEL_ATLAS) {
      std::lock_guard lock(atlas_mutex_);
      launch_cpu_kernel(mod, k, config, resolved, &atlas_state(), &paths_);
    } else {
      launch_cpu_kernel(mod, k, config, resolved, nullptr, &paths_);
    }
  }

  /// An ISA program compiled by Hologram::jit for the variant the current CPU ISA request
  /// allows, cached by its canonical text and that request.
  std::shared_ptr<CpuModule> compiled(const isa::Kernel &kernel) {
    const std::string request = requested_cpu_isa();
    std::lock_guard lock(programs_mutex_);
    // A kernel object launched again: found by its address and compared, without printing it.
    if (Recent *r = recent_.find(&kernel); r && r->request == request && r->kernel.same_as(kernel))
      return r->module;
    isa::Module m;
    m.kernels.push_back(kernel);
    std::string key = request + "\n" + isa::print_module(m);
    auto remember = [&](std::shared_ptr<CpuModule> mod) {
      recent_.put(&kernel, {request, kernel, mod});
      return mod;
    };
    if (auto *mod = programs_.find(key)) return remember(*mod);
    const JitCompiler *jit = linked_jit();
    if (!jit)
      throw Error(ErrorCode::InvalidProgram,
                  "kernel '" + kernel.name +
                      "': the cpu backend compiles ISA programs with the compiler library, "
                      "which this application does not link (link Hologram::jit, run it on "
                      "the interp backend, or load a module compiled by hologram-cc)");
    auto compiled = jit->compile_cpu(m);
    if (!compiled) {
      const Status st = compiled.status();
      throw Error(st.code() == ErrorCode::Internal || st.code() == ErrorCode::BackendUnavailable
                      ? st.code()
                      : ErrorCode::InvalidProgram,
                  st.describe());
    }
    auto mod = CpuModule::from_descriptor(compiled->descriptor,
                                          "the program of kernel '" + kernel.name + "'",
                                          std::move(compiled->owner));
    programs_.put(std::move(key), mod);
    return remember(mod);
  }

  /// Checks every argument against its parameter and resolves handles to memory; `keep` holds
  /// the objects alive for the whole launch, even if another thread frees their handles.
  std::vector<CpuArg> resolve_args(const isa::Kernel &kernel, std::span<const KernelArg> args,
                                   std::vector<std::shared_ptr<Memory>> &keep) {
    check_launch_args(kernel, args, [&](const KernelArg &a) {
      return arg_view_bytes(a, buffers_.get(a.handle)->size, 1);
    });
    std::vector<CpuArg> out;
    for (size_t i = 0; i < args.size(); ++i) {
      const auto &a = args[i];
      switch (kernel.params[i].kind) {
      case isa::ParamKind::Buffer: {
        keep.push_back(buffers_.get(a.handle));
        const Memory &m = *keep.back();
        out.push_back({m.data + a.offset, arg_view_bytes(a, m.size, 1), 0});
        continue;
      }
      case isa::ParamKind::Pool: keep.push_back(pools_.get(a.handle)); break;
      case isa::ParamKind::Scalar: out.push_back({nullptr, 0, a.bits}); continue;
      }
      out.push_back({keep.back()->data, keep.back()->size, 0});
    }
    return out;
  }

  static std::shared_ptr<Memory> allocate(uint64_t bytes, const char *what) {
    if (bytes == 0)
      throw Error(ErrorCode::InvalidArgument,
                  std::string("cannot allocate a ") + what + " of 0 bytes");
    static const uint64_t physical = cpu_device_info().memory_bytes;
    if (physical && bytes > physical)
      throw Error(ErrorCode::OutOfMemory, std::string("cannot allocate a ") + what + " of " +
                                              std::to_string(bytes) + " bytes: the machine has " +
                                              std::to_string(physical) + " bytes of memory");
    try {
      auto block = std::make_shared<Block>(bytes);
      std::byte *data = block->data.get();
      return std::make_shared<Memory>(Memory{std::move(block), data, bytes});
    } catch (const std::bad_alloc &) {
      throw Error(ErrorCode::OutOfMemory, std::string("cannot allocate a ") + what + " of " +
                                              std::to_string(bytes) + " bytes");
    }
  }
  static void copy_in(const std::shared_ptr<Memory> &b, const char *what, uint64_t id,
                      uint64_t offset, std::span<const std::byte> data) {
    check_range(what, id, b->size, offset, data.size(), "a copy");
    if (!data.empty()) std::memcpy(b->data + offset, data.data(), data.size());
  }
  static void copy_out(const std::shared_ptr<Memory> &b, const char *what, uint64_t id,
                       uint64_t offset, std::span<std::byte> out) {
    check_range(what, id, b->size, offset, out.size(), "a copy");
    if (!out.empty()) std::memcpy(out.data(), b->data + offset, out.size());
  }

  HandleTable<Memory> buffers_{"buffer"};
  HandleTable<Memory> pools_{"pool"};
  HandleTable<CpuModule> modules_{"module"};
  LibraryPathCounter paths_;
  const bool interpret_;
  std::mutex programs_mutex_;
  /// By request and ISA text: the code of the programs used last (kRecentPrograms of them).
  RecentCache<std::string, std::shared_ptr<CpuModule>> programs_{kRecentPrograms};
  struct Recent {
    std::string request;
    isa::Kernel kernel;
    std::shared_ptr<CpuModule> module;
  };
  RecentCache<const isa::Kernel *, Recent> recent_{kRecentPrograms};
};

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "host CPU";
}

} // namespace

DeviceInfo cpu_device_info() {
  DeviceInfo d;
  d.backend = "cpu";
  d.name = cpu_model_name();
  d.kind = DeviceKind::Cpu;
  d.compute_units = std::max(1u, std::thread::hardware_concurrency());
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  d.memory_bytes =
      pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  d.details = "compiled modules run their best x86 variant on " + std::to_string(d.compute_units) +
              " threads; ISA programs are compiled for it by Hologram::jit";
  return d;
}

DeviceInfo interpreter_device_info() {
  DeviceInfo d = cpu_device_info();
  d.backend = "interp";
  d.details = "ISA programs run on the reference interpreter, one instruction at a time with "
              "every check on; compiled modules run their best x86 variant";
  return d;
}

std::unique_ptr<Backend> make_cpu_backend(bool interpret) {
  return std::make_unique<CpuBackend>(interpret);
}

} // namespace hologram::runtime
