// CudaBackend. The driver is opened with dlopen, so applications linking the runtime start on
// machines without it. Every thread makes the device's primary context current before it calls
// the driver; launches run on the calling thread's default stream (CU_STREAM_PER_THREAD) and
// return when they have finished, copies are the driver's synchronous ones, and synchronize()
// waits for the whole context.
#include "cuda_backend.h"

#include "../core/bundle_file.h"
#include "../core/device_memory_backend.h"
#include "../core/jit_hook.h"
#include "../core/launch_args.h"
#include "../core/loaded_modules.h"
#include "../core/recent_cache.h"
#include "../core/small_array.h"
#include "cuda_driver.h"
#include "hologram/artifact/bundle.h"
#include "hologram/codegen/ptx_abi.h"
#include "hologram/codegen/spirv_abi.h"
#include "hologram/isa/text.h"

#include <dlfcn.h>

#include <algorithm>
#include <concepts>
#include <cstring>
#include <map>
#include <mutex>

namespace hologram::runtime {

namespace {

using namespace cuda;

// ---------------------------------------------------------------------------------------------
// The driver

#define HG_CUDA_DECLARE(member, symbol, ret, params) ret(*member) params = nullptr;

/// libcuda.so.1, its functions and cuInit's result, opened once per process.
struct Api {
  void *lib = nullptr;
  std::string error; ///< why the driver cannot be used
  int version = 0;   ///< cuDriverGetVersion: 1000 * major + 10 * minor
  HG_CUDA_DRIVER_FUNCTIONS(HG_CUDA_DECLARE)

  static const Api &get() {
    static const Api api = [] {
      Api a;
      a.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
      if (!a.lib) {
        const char *e = dlerror();
        a.error = std::string("no libcuda.so.1 (is the NVIDIA driver installed?): ") +
                  (e ? e : "dlopen failed");
        return a;
      }
#define HG_CUDA_LOAD(member, symbol, ret, params)                                                  \
  a.member = reinterpret_cast<ret(*) params>(dlsym(a.lib, #symbol));                               \
  if (!a.member && a.error.empty()) a.error = "libcuda.so.1 has no " #symbol;
      HG_CUDA_DRIVER_FUNCTIONS(HG_CUDA_LOAD)
#undef HG_CUDA_LOAD
      if (!a.error.empty()) return a;
      if (Result r = a.init(0); r != kSuccess) {
        a.error = "cuInit failed: " + a.describe(r);
        if (r == kErrorStubLibrary)
          a.error += " (this libcuda.so.1 is the CUDA toolkit's stub, not an NVIDIA driver)";
        return a;
      }
      a.driver_get_version(&a.version);
      return a;
    }();
    return api;
  }

  /// "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"
  [[nodiscard]] std::string describe(Result r) const {
    const char *name = nullptr, *text = nullptr;
    if (get_error_name(r, &name) != kSuccess || !name) name = nullptr;
    if (get_error_string(r, &text) != kSuccess || !text) text = nullptr;
    std::string s = name ? name : "CUresult " + std::to_string(r);
    if (text) s += std::string(" (") + text + ")";
    return s;
  }
  /// "driver 13.0"
  [[nodiscard]] std::string version_text() const {
    return "driver " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
  }
};

/// Throws unless `r` is success: OutOfMemory for CUDA_ERROR_OUT_OF_MEMORY, else `code`.
void check(const Api &api, Result r, const std::string &what,
           ErrorCode code = ErrorCode::LaunchFailed) {
  if (r == kSuccess) return;
  throw Error(r == kErrorOutOfMemory ? ErrorCode::OutOfMemory : code,
              "cuda: " + what + " failed: " + api.describe(r));
}
/// check() on a launch's path: `what()` spells the message only when `r` is a failure.
template <std::invocable F> void check(const Api &api, Result r, F &&what) {
  if (r != kSuccess) check(api, r, std::string(what()));
}

// ---------------------------------------------------------------------------------------------
// Devices

/// The oldest architecture hologram-cc emits PTX for.
constexpr unsigned kOldestSm = 70;

struct Candidate {
  Device device = 0;
  std::string name;
  unsigned sm = 0; ///< compute capability as 10 * major + minor
  uint32_t sms = 0;
  uint64_t memory = 0;
  uint32_t max_threads = 0, max_block[3] = {0, 0, 0}, max_grid[3] = {0, 0, 0};
  uint32_t shared_default = 0, shared_optin = 0; ///< bytes of shared memory a block may use
  bool maps_host = false;
  std::string reason;

  [[nodiscard]] std::string details(const Api &api) const {
    return "sm_" + std::to_string(sm) + ", " + std::to_string(sms) + " SMs, " + api.version_text();
  }
};

Candidate inspect(const Api &api, int ordinal) {
  Candidate c;
  if (Result r = api.device_get(&c.device, ordinal); r != kSuccess) {
    c.name = "device " + std::to_string(ordinal);
    c.reason = "cuDeviceGet failed: " + api.describe(r);
    return c;
  }
  char name[256] = {};
  if (api.device_get_name(name, sizeof(name) - 1, c.device) == kSuccess) c.name = name;
  if (c.name.empty()) c.name = "CUDA device " + std::to_string(ordinal);
  auto attr = [&](DeviceAttribute a) {
    int v = 0;
    return api.device_get_attribute(&v, a, c.device) == kSuccess && v > 0 ? uint32_t(v) : 0u;
  };
  c.sm = 10 * attr(kComputeCapabilityMajor) + attr(kComputeCapabilityMinor);
  c.sms = attr(kMultiprocessorCount);
  size_t bytes = 0;
  if (api.device_total_mem(&bytes, c.device) == kSuccess) c.memory = bytes;
  c.max_threads = attr(kMaxThreadsPerBlock);
  c.max_block[0] = attr(kMaxBlockDimX);
  c.max_block[1] = attr(kMaxBlockDimY);
  c.max_block[2] = attr(kMaxBlockDimZ);
  c.max_grid[0] = attr(kMaxGridDimX);
  c.max_grid[1] = attr(kMaxGridDimY);
  c.max_grid[2] = attr(kMaxGridDimZ);
  c.shared_default = attr(kMaxSharedMemoryPerBlock);
  c.shared_optin = std::max(c.shared_default, attr(kMaxSharedMemoryPerBlockOptin));
  c.maps_host = attr(kCanMapHostMemory) != 0;
  if (c.sm < kOldestSm)
    c.reason = "is sm_" + std::to_string(c.sm) + "; hologram's PTX needs sm_" +
               std::to_string(kOldestSm) + " or newer";
  else if (attr(kUnifiedAddressing) == 0)
    c.reason = "has no unified addressing, which hologram's PTX (generic addresses) needs";
  return c;
}

/// Every device, or none with `error` saying why.
std::vector<Candidate> candidates(const Api &api, std::string &error) {
  std::vector<Candidate> out;
  if (!api.error.empty()) {
    error = api.error;
    return out;
  }
  int n = 0;
  if (Result r = api.device_get_count(&n); r != kSuccess) {
    error = "cuDeviceGetCount failed: " + api.describe(r);
    return out;
  }
  if (n == 0) error = "the CUDA driver (" + api.version_text() + ") finds no device";
  for (int i = 0; i < n; ++i) out.push_back(inspect(api, i));
  return out;
}

/// One device and its primary context, made current on each thread that calls the driver.
struct Gpu {
  const Api &api;
  Candidate cand;
  Context context = nullptr;

  Gpu(const Api &a, Candidate c) : api(a), cand(std::move(c)) {
    check(api, api.primary_ctx_retain(&context, cand.device),
          "cuDevicePrimaryCtxRetain on " + cand.name, ErrorCode::BackendUnavailable);
  }
  Gpu(const Gpu &) = delete;
  Gpu &operator=(const Gpu &) = delete;
  ~Gpu() { api.primary_ctx_release(cand.device); }

  /// Makes the context current on the calling thread (cheap: the driver keeps it per thread).
  void enter() const { check(api, api.ctx_set_current(context), "cuCtxSetCurrent"); }
};

// ---------------------------------------------------------------------------------------------
// Memory

/// A buffer or pool: device memory of its own, a view of another (`root` set), or host memory
/// the application owns, registered with the driver and used in place (`host` set).
struct Memory {
  std::shared_ptr<Gpu> gpu;
  DevicePtr ptr = 0;
  uint64_t size = 0;
  std::shared_ptr<Memory> root;
  void *host = nullptr;

  Memory(std::shared_ptr<Gpu> g, uint64_t bytes, const char *what)
      : gpu(std::move(g)), size(bytes) {
    gpu->enter();
    const Api &api = gpu->api;
    check(api, api.mem_alloc(&ptr, bytes),
          std::string("cuMemAlloc for a ") + what + " of " + std::to_string(bytes) + " bytes");
    // Fresh memory reads as zeros on every backend.
    if (Result r = api.memset_d8(ptr, 0, bytes); r != kSuccess) {
      api.mem_free(ptr);
      check(api, r, std::string("zero-filling a new ") + what);
    }
  }
  /// Host memory registered and mapped: the device reads and writes it in place.
  Memory(std::shared_ptr<Gpu> g, std::span<std::byte> memory, DevicePtr device_ptr)
      : gpu(std::move(g)), ptr(device_ptr), size(memory.size()), host(memory.data()) {}
  /// The bytes [offset, offset + bytes) of `of`.
  Memory(const std::shared_ptr<Memory> &of, uint64_t offset, uint64_t bytes)
      : gpu(of->gpu), ptr(of->ptr + offset), size(bytes), root(of->root ? of->root : of) {}
  Memory(const Memory &) = delete;
  Memory &operator=(const Memory &) = delete;
  ~Memory() {
    if (root) return;
    gpu->enter();
    if (host)
      gpu->api.mem_host_unregister(host);
    else
      gpu->api.mem_free(ptr);
  }

  void write(uint64_t offset, std::span<const std::byte> data) {
    if (data.empty()) return;
    gpu->enter();
    check(gpu->api, gpu->api.memcpy_htod(ptr + offset, data.data(), data.size()), "cuMemcpyHtoD");
  }
  void read(uint64_t offset, std::span<std::byte> out) {
    if (out.empty()) return;
    gpu->enter();
    check(gpu->api, gpu->api.memcpy_dtoh(out.data(), ptr + offset, out.size()), "cuMemcpyDtoH");
  }
};

// ---------------------------------------------------------------------------------------------
// Programs

/// A module JIT-compiled by the driver; its kernels keep it loaded.
struct Loaded {
  std::shared_ptr<Gpu> gpu;
  Module module = nullptr;
  Loaded() = default;
  Loaded(const Loaded &) = delete;
  Loaded &operator=(const Loaded &) = delete;
  ~Loaded() {
    if (!module) return;
    gpu->enter();
    gpu->api.module_unload(module);
  }
};

/// One kernel ready to launch.
struct Program {
  std::shared_ptr<Loaded> loaded;
  Function function = nullptr;
  isa::Kernel kernel;
  std::string source; ///< the file of the kernel's lines, for failed launches ("": not known)
  codegen::PtxKernelInfo info;
  uint32_t max_threads = 0;   ///< CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  uint32_t static_shared = 0; ///< CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (the driver's own)
  std::mutex shared_mutex;
  uint32_t dynamic_shared_limit =
      0; ///< what CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES allows
};

class CudaBackend final : public DeviceMemoryBackend<Memory> {
  using Library = DeviceMemoryBackend::Library<Program>;
  using HostProgram = DeviceMemoryBackend::HostProgram<Program>;
  /// A kernel ready to run: one device program, or a whole-launch kernel's host program.
  struct Compiled {
    isa::Kernel kernel;
    std::shared_ptr<Program> device;
    std::shared_ptr<HostProgram> host;
  };
  using Programs = std::map<std::string, Compiled, std::less<>>;

public:
  explicit CudaBackend(std::shared_ptr<Gpu> gpu) : gpu_(std::move(gpu)) {}

  DeviceInfo device_info() const override {
    const Candidate &c = gpu_->cand;
    DeviceInfo d;
    d.backend = "cuda";
    d.name = c.name;
    d.kind = DeviceKind::Gpu;
    d.compute_units = c.sms;
    d.memory_bytes = c.memory;
    d.details = c.details(gpu_->api) + ", PTX JIT-compiled by the driver";
    d.view_alignment = kViewAlignment;
    return d;
  }

  ModuleHandle load_module(const std::string &path) override {
    artifact::Bundle bundle = read_bundle_file(path);
    const std::string what = "bundle '" + path + "'";
    const artifact::BundlePayload *best = nullptr;
    unsigned best_sm = 0;
    std::string refused;
    for (const auto &p : bundle.payloads) {
      if (p.kind != artifact::kPayloadPtx) continue;
      auto t = codegen::parse_ptx_target(p.name);
      if (!t) {
        refused += "; " + p.name + ": not a CUDA target this runtime knows";
        continue;
      }
      if (t->sm > gpu_->cand.sm) {
        refused += "; " + p.name + ": PTX needs sm_" + std::to_string(t->sm) + ", device " +
                   gpu_->cand.name + " is sm_" + std::to_string(gpu_->cand.sm);
        continue;
      }
      if (t->sm >= best_sm) {
        best = &p;
        best_sm = t->sm;
      }
    }
    if (!best)
      throw no_code_for(what, "cuda", refused, bundle.options.targets, device_target().name);
    const std::string where = what + ", payload '" + best->name + "'";
    auto infos = codegen::parse_ptx_reflection(best->reflection);
    if (!infos) throw Error(ErrorCode::InvalidModule, where + ": " + infos.message());
    auto m = std::make_shared<LoadedModules<Compiled>::Module>();
    m->origin = path;
    m->variant = best->name;
    m->module = std::move(bundle.module);
    m->programs = programs(m->module.kernels, *infos, best->bytes, where);
    for (auto &[name, c] : m->programs)
      if (c.device) c.device->source = bundle_source(bundle);
    return modules_.insert(std::move(m));
  }

  /// add_hologram_kernel links x86 code and SPIR-V; CUDA targets go to bundles only.
  ModuleHandle load_linked_module(const void *descriptor) override {
    if (!descriptor) throw Error(ErrorCode::InvalidArgument, "a null module descriptor");
    throw Error(ErrorCode::InvalidModule,
                "a linked module holds no code the cuda backend runs: add_hologram_kernel puts "
                "CUDA targets in its BUNDLE only; load that bundle with load_module");
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

  void synchronize() override {
    gpu_->enter();
    check(gpu_->api, gpu_->api.ctx_synchronize(), "cuCtxSynchronize");
  }

private:
  /// Views start at multiples of 16 bytes: the PTX proves 16-byte alignment of buffer bases.
  static constexpr uint64_t kViewAlignment = 16;

  std::shared_ptr<Memory> allocate(uint64_t bytes, const char *what) override {
    if (bytes == 0)
      throw Error(ErrorCode::InvalidArgument,
                  std::string("cannot allocate a ") + what + " of 0 bytes");
    return std::make_shared<Memory>(gpu_, bytes, what);
  }
  std::shared_ptr<Memory> view(const std::shared_ptr<Memory> &parent, uint64_t offset,
                               uint64_t bytes) override {
    return std::make_shared<Memory>(parent, offset, bytes);
  }
  /// In place where the device maps host memory and the memory is aligned as the PTX assumes;
  /// otherwise a copy.
  std::shared_ptr<Memory> wrap(std::span<std::byte> memory, bool &shared) override {
    const Api &api = gpu_->api;
    shared = false;
    if (gpu_->cand.maps_host && reinterpret_cast<uintptr_t>(memory.data()) % kViewAlignment == 0) {
      gpu_->enter();
      if (api.mem_host_register(memory.data(), memory.size(), kMemHostRegisterDeviceMap) ==
          kSuccess) {
        DevicePtr p = 0;
        if (api.mem_host_get_device_pointer(&p, memory.data(), 0) == kSuccess) {
          shared = true;
          return std::make_shared<Memory>(gpu_, memory, p);
        }
        api.mem_host_unregister(memory.data());
      }
    }
    auto m = allocate(memory.size(), "buffer");
    m->write(0, memory);
    return m;
  }
  uint64_t view_alignment() const override { return kViewAlignment; }
  /// On the legacy stream, without waiting: after the launches issued before on every thread's
  /// stream (a plan gives its scratch back before its own launches end), before those after.
  void zero_scratch(Memory &m) override {
    gpu_->enter();
    check(gpu_->api, gpu_->api.memset_d8_async(m.ptr, 0, m.size, legacy_stream()),
          "cuMemsetD8Async for library scratch");
  }

  /// On the thread's stream, where the launches before and after it go.
  void copy_on_device(Memory &from, uint64_t from_offset, Memory &to, uint64_t to_offset,
                      uint64_t bytes) override {
    gpu_->enter();
    check(gpu_->api,
          gpu_->api.memcpy_dtod_async(to.ptr + to_offset, from.ptr + from_offset, bytes,
                                      per_thread_stream()),
          "cuMemcpyDtoDAsync");
  }

  /// The CUDA target execute_program compiles for: the newest this device runs.
  [[nodiscard]] codegen::PtxTarget device_target() const {
    std::optional<codegen::PtxTarget> best;
    for (unsigned sm : {70u, 75u, 80u, 86u, 89u, 90u})
      if (sm <= gpu_->cand.sm) best = codegen::parse_ptx_target("cuda-sm_" + std::to_string(sm));
    return *best; // the device is at least sm_70 (inspect)
  }

  /// The module JIT-compiled for the device, once per PTX text (its kernels share it).
  std::shared_ptr<Loaded> jit(const std::string &ptx, const std::string &where) {
    std::lock_guard lock(loaded_mutex_);
    if (auto it = loaded_.find(ptx); it != loaded_.end())
      if (auto l = it->second.lock()) return l;
    const Api &api = gpu_->api;
    gpu_->enter();
    auto l = std::make_shared<Loaded>();
    l->gpu = gpu_;
    std::string error_log(16384, '\0'), info_log(16384, '\0');
    int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes, kJitInfoLogBuffer,
                     kJitInfoLogBufferSizeBytes};
    void *values[] = {error_log.data(), reinterpret_cast<void *>(error_log.size()), info_log.data(),
                      reinterpret_cast<void *>(info_log.size())};
    if (Result r = api.module_load_data_ex(&l->module, ptx.c_str(), 4, options, values);
        r != kSuccess) {
      l->module = nullptr;
      error_log.resize(std::strlen(error_log.c_str()));
      throw Error(ErrorCode::InvalidModule,
                  "cuda: the driver cannot JIT-compile " + where + " for " + gpu_->cand.name +
                      " (sm_" + std::to_string(gpu_->cand.sm) + "): " + api.describe(r) +
                      (error_log.empty() ? "" : "\n" + error_log));
    }
    loaded_[ptx] = l;
    return l;
  }

  /// The programs of a module's kernels. A whole-launch kernel has no entry point: its
  /// instructions launch the module's device library kernels, whose parameters come from the
  /// reflection (they have no ISA in the module).
  Programs programs(const std::vector<isa::Kernel> &kernels,
                    const std::vector<codegen::PtxKernelInfo> &infos, const std::string &ptx,
                    const std::string &where) {
    auto loaded = jit(ptx, where);
    auto library = std::make_shared<Library>();
    for (const auto &info : infos) {
      if (!codegen::is_spirv_library_kernel(info.name)) continue;
      if (info.host || info.params.empty())
        throw Error(ErrorCode::InvalidModule, where + ": the reflection of library kernel '" +
                                                  info.name + "' has no parameters");
      isa::Kernel signature;
      signature.name = info.name;
      signature.params = info.params;
      library->emplace(info.name, make_program(loaded, signature, info, where));
    }
    Programs out;
    for (const auto &k : kernels) {
      auto info =
          std::find_if(infos.begin(), infos.end(), [&](const auto &i) { return i.name == k.name; });
      if (info == infos.end() || info->host != k.is_launch_level())
        throw Error(ErrorCode::InvalidModule,
                    where + " has no entry point for kernel '" + k.name + "'");
      Compiled c;
      c.kernel = k;
      if (info->host)
        c.host = std::make_shared<HostProgram>(HostProgram{k, library, where});
      else
        c.device = make_program(loaded, k, *info, where);
      out.emplace(k.name, std::move(c));
    }
    return out;
  }

  std::shared_ptr<Program> make_program(const std::shared_ptr<Loaded> &loaded, const isa::Kernel &k,
                                        const codegen::PtxKernelInfo &info,
                                        const std::string &where) {
    const Api &api = gpu_->api;
    auto p = std::make_shared<Program>();
    p->loaded = loaded;
    p->kernel = k;
    p->info = info;
    check(api, api.module_get_function(&p->function, loaded->module, k.name.c_str()),
          "cuModuleGetFunction for kernel '" + k.name + "' of " + where, ErrorCode::InvalidModule);
    int v = 0;
    if (api.func_get_attribute(&v, kFuncMaxThreadsPerBlock, p->function) == kSuccess && v > 0)
      p->max_threads = uint32_t(v);
    if (api.func_get_attribute(&v, kFuncSharedSizeBytes, p->function) == kSuccess && v > 0)
      p->static_shared = uint32_t(v);
    p->dynamic_shared_limit =
        gpu_->cand.shared_default - std::min(gpu_->cand.shared_default, p->static_shared);
    return p;
  }

  /// The program of an ISA kernel, compiled by Hologram::jit once per kernel text.
  Compiled program(const isa::Kernel &kernel) {
    isa::Module m;
    m.kernels.push_back(kernel);
    std::string key = isa::print_module(m);
    std::lock_guard lock(programs_mutex_);
    if (auto *p = programs_.find(key)) return *p;
    const JitCompiler *jit_compiler = linked_jit();
    if (!jit_compiler)
      throw Error(ErrorCode::InvalidProgram,
                  "kernel '" + kernel.name +
                      "': the cuda backend compiles ISA programs with the compiler library, "
                      "which this application does not link (link Hologram::jit, or load a "
                      "bundle compiled by hologram-cc with a cuda target)");
    const codegen::PtxTarget target = device_target();
    auto compiled = jit_compiler->compile_ptx(m, target);
    if (!compiled) {
      const Status st = compiled.status();
      throw Error(st.code() == ErrorCode::Internal ? ErrorCode::Internal
                                                   : ErrorCode::InvalidProgram,
                  st.describe());
    }
    const std::string where = "the PTX of kernel '" + kernel.name + "' (" + target.name + ")";
    auto p = programs(m.kernels, compiled->kernels, compiled->text, where).at(kernel.name);
    programs_.put(key, p);
    return p;
  }

  void execute(const Compiled &c, const LaunchConfig &launch, std::span<const KernelArg> args) {
    const isa::Kernel &k = c.kernel;
    check_launch_geometry(k, launch);
    check_launch_args(k, args, [&](const KernelArg &a) { return arg_bytes(a); });
    if (c.device) return run(*c.device, launch, args);
    // The device library's launches follow each other on the thread's stream without a wait
    // between them (copies through the legacy stream wait for them); one wait at the end.
    // The plans' scratch goes back to the cache after it, when no launch uses it any more:
    // scratch that is not zeroed again is not ordered after them.
    PlanRuns<Program> ran;
    try {
      run_host(
          *c.host, launch, args,
          [&](Program &p, const LaunchConfig &l, std::span<const KernelArg> a) {
            run(p, l, a, /*wait=*/false);
          },
          ran);
    } catch (const Error &) {
      gpu_->enter();
      (void)gpu_->api.stream_synchronize(per_thread_stream()); // the first failure is reported
      throw;
    }
    gpu_->enter();
    check(gpu_->api, gpu_->api.stream_synchronize(per_thread_stream()),
          [&] { return "whole-launch kernel '" + k.name + "'"; });
  }

  /// One launch of a device kernel whose arguments were checked; it has finished on return
  /// unless `wait` is false and nothing of it is read back here (no status, no Atlas state).
  void run(Program &p, const LaunchConfig &launch, std::span<const KernelArg> args,
           bool wait = true) {
    const isa::Kernel &k = p.kernel;
    const Candidate &c = gpu_->cand;
    const uint32_t max_threads = p.max_threads ? p.max_threads : c.max_threads;
    if (launch.block.x > c.max_block[0] || launch.block.y > c.max_block[1] ||
        launch.block.z > c.max_block[2] || launch.block.count() > max_threads)
      throw Error(ErrorCode::InvalidArgument,
                  "kernel '" + k.name + "': a block of " + std::to_string(launch.block.x) + "x" +
                      std::to_string(launch.block.y) + "x" + std::to_string(launch.block.z) +
                      " lanes is larger than " + c.name + " runs for it (" +
                      std::to_string(max_threads) + " lanes, " + std::to_string(c.max_block[0]) +
                      "x" + std::to_string(c.max_block[1]) + "x" + std::to_string(c.max_block[2]) +
                      ")");
    if (launch.grid.x > c.max_grid[0] || launch.grid.y > c.max_grid[1] ||
        launch.grid.z > c.max_grid[2])
      throw Error(ErrorCode::InvalidArgument,
                  "kernel '" + k.name + "': a grid of " + std::to_string(launch.grid.x) + "x" +
                      std::to_string(launch.grid.y) + "x" + std::to_string(launch.grid.z) +
                      " blocks is larger than " + c.name + " launches (" +
                      std::to_string(c.max_grid[0]) + "x" + std::to_string(c.max_grid[1]) + "x" +
                      std::to_string(c.max_grid[2]) + ")");
    const uint64_t shared = uint64_t{p.info.static_shared_bytes} + launch.shared_memory;
    reserve_shared(p, shared);

    // The parameters (ptx_abi.h): each value in a u64 of its own, read by the driver as the
    // parameter's size from its first bytes (little-endian). `keep` holds the memory alive even
    // if another thread frees a handle during the launch.
    // (The values and their pointers live on the stack for a launch of up to 18 arguments;
    // `keep` is reserved at its largest: a launch allocates once.)
    SmallArray<uint64_t, 40> value_array(2 * args.size() + 4);
    size_t count = 0;
    auto push = [&](uint64_t v) { value_array[count++] = v; };
    std::vector<std::shared_ptr<Memory>> keep;
    keep.reserve(args.size() + 1);
    for (size_t i = 0; i < args.size(); ++i) {
      const KernelArg &a = args[i];
      switch (k.params[i].kind) {
      case isa::ParamKind::Buffer:
        keep.push_back(buffer_arg(a));
        push(keep.back()->ptr);
        push(keep.back()->size);
        break;
      case isa::ParamKind::Pool:
        keep.push_back(pools_.get(a.handle));
        push(keep.back()->ptr);
        push(keep.back()->size);
        break;
      case isa::ParamKind::Scalar: push(a.bits); break;
      }
    }
    std::shared_ptr<Memory> status, state;
    if (p.info.has_status) {
      status = idle_status_.take(
          [&] { return allocate(codegen::spirv_status::kWords * 4, "status buffer"); });
      push(status->ptr);
    }
    if (p.info.has_boundary) {
      keep.push_back(boundary());
      push(keep.back()->ptr);
    }
    auto atlas = begin_atlas(p.info.has_atlas, p.info.has_phase);
    if (p.info.has_atlas) {
      state = allocate(codegen::spirv_status::kAtlasWords * 8, "Atlas state");
      state->write(0, std::as_bytes(std::span(atlas.words)));
      push(state->ptr);
    }
    if (p.info.has_phase) push(atlas.phase);
    SmallArray<void *, 40> params(count);
    for (size_t i = 0; i < count; ++i) params[i] = &value_array[i];

    const Api &api = gpu_->api;
    gpu_->enter();
    auto what = [&] { return "kernel '" + k.name + "'"; };
    check(api,
          api.launch_kernel(p.function, launch.grid.x, launch.grid.y, launch.grid.z, launch.block.x,
                            launch.block.y, launch.block.z, static_cast<unsigned>(shared),
                            per_thread_stream(), params.data(), nullptr),
          [&] { return "cuLaunchKernel for " + what(); });
    if (wait || status || state) check(api, api.stream_synchronize(per_thread_stream()), what);
    if (status) {
      uint32_t w[codegen::spirv_status::kWords];
      status->read(0, std::as_writable_bytes(std::span(w)));
      report_status(k, p.source, launch, args, shared, w, "the CUDA backend");
      idle_status_.give(std::move(status)); // still zero: nothing went wrong
    }
    if (state) state->read(0, std::as_writable_bytes(std::span(atlas.words)));
    end_atlas(atlas);
  }

  /// Lets the kernel take `bytes` of dynamic shared memory: beyond the default per-block limit
  /// (48 KiB) a kernel must opt in, up to the device's opt-in limit.
  void reserve_shared(Program &p, uint64_t bytes) {
    const Candidate &c = gpu_->cand;
    if (bytes + p.static_shared > c.shared_optin)
      throw Error(ErrorCode::InvalidArgument,
                  "kernel '" + p.kernel.name + "' needs " + std::to_string(bytes) +
                      " bytes of shared memory; " + c.name + " has " +
                      std::to_string(c.shared_optin - std::min(c.shared_optin, p.static_shared)) +
                      " for it");
    std::lock_guard lock(p.shared_mutex);
    if (bytes <= p.dynamic_shared_limit) return;
    gpu_->enter();
    check(gpu_->api,
          gpu_->api.func_set_attribute(p.function, kFuncMaxDynamicSharedSizeBytes,
                                       static_cast<int>(bytes)),
          "raising the shared memory of kernel '" + p.kernel.name + "' to " +
              std::to_string(bytes) + " bytes");
    p.dynamic_shared_limit = static_cast<uint32_t>(bytes);
  }

  std::shared_ptr<Gpu> gpu_;
  LoadedModules<Compiled> modules_;
  std::mutex loaded_mutex_;
  std::map<std::string, std::weak_ptr<Loaded>> loaded_; ///< by PTX text
  std::mutex programs_mutex_;
  /// By canonical text: the programs execute_program ran last (kRecentPrograms of them).
  RecentCache<std::string, Compiled> programs_{kRecentPrograms};
};

} // namespace

std::vector<CudaDeviceReport> cuda_devices(std::string &error) {
  std::vector<CudaDeviceReport> out;
  const Api &api = Api::get();
  for (const auto &c : candidates(api, error))
    out.push_back({c.name, c.reason.empty(), c.reason, c.details(api)});
  return out;
}

std::unique_ptr<Backend> make_cuda_backend() {
  const Api &api = Api::get();
  std::string error;
  auto all = candidates(api, error);
  if (all.empty()) throw Error(ErrorCode::BackendUnavailable, error);
  std::string rejected;
  for (auto &c : all) {
    std::string name = c.name;
    if (!c.reason.empty()) {
      rejected += "; " + name + " " + c.reason;
      continue;
    }
    try {
      return std::make_unique<CudaBackend>(std::make_shared<Gpu>(api, std::move(c)));
    } catch (const Error &e) {
      rejected += "; " + name + ": " + e.what();
    }
  }
  throw Error(ErrorCode::BackendUnavailable, "no usable device:" + rejected.substr(1));
}

} // namespace hologram::runtime
