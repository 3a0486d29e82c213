// OpenClBackend. The ICD loader is opened with dlopen, so applications linking the runtime
// start on machines without OpenCL. Launches and copies return when they have finished, each
// on a command queue of its thread's own, so synchronize() only drains what another thread may
// still have queued.
#include "opencl_backend.h"

#include "../core/dynamic_library.h"
#include "../core/handle_table.h"
#include "../core/host_atlas.h"
#include "../core/idle_list.h"
#include "../core/launch_args.h"
#include "../core/spirv_backend.h"
#include "hologram/codegen/spirv_abi.h"
#include "hologram/isa/text.h"
#include "hologram/support/file_io.h"
#include "hologram/support/process.h"

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

namespace hologram::runtime {

namespace {

// ---------------------------------------------------------------------------------------------
// The ICD loader

#define HG_CL_FUNCTIONS(X)                                                                         \
  X(clGetPlatformIDs)                                                                              \
  X(clGetPlatformInfo)                                                                             \
  X(clGetDeviceIDs)                                                                                \
  X(clGetDeviceInfo)                                                                               \
  X(clCreateContext)                                                                               \
  X(clReleaseContext)                                                                              \
  X(clCreateCommandQueue)                                                                          \
  X(clReleaseCommandQueue)                                                                         \
  X(clCreateBuffer)                                                                                \
  X(clCreateSubBuffer)                                                                             \
  X(clEnqueueMapBuffer)                                                                            \
  X(clEnqueueUnmapMemObject)                                                                       \
  X(clReleaseMemObject)                                                                            \
  X(clEnqueueWriteBuffer)                                                                          \
  X(clEnqueueReadBuffer)                                                                           \
  X(clEnqueueFillBuffer)                                                                           \
  X(clEnqueueCopyBuffer)                                                                           \
  X(clCreateProgramWithBinary)                                                                     \
  X(clBuildProgram)                                                                                \
  X(clGetProgramBuildInfo)                                                                         \
  X(clReleaseProgram)                                                                              \
  X(clCreateKernel)                                                                                \
  X(clReleaseKernel)                                                                               \
  X(clSetKernelArg)                                                                                \
  X(clGetKernelWorkGroupInfo)                                                                      \
  X(clEnqueueNDRangeKernel)                                                                        \
  X(clWaitForEvents)                                                                               \
  X(clGetEventInfo)                                                                                \
  X(clReleaseEvent)                                                                                \
  X(clFinish)

#define HG_CL_DECLARE(name) decltype(&::name) name = nullptr;

/// libOpenCL (the ICD loader) and its functions, opened once per process.
struct Api {
  void *lib = nullptr;
  std::string error;
  HG_CL_FUNCTIONS(HG_CL_DECLARE)
  decltype(&::clCreateProgramWithIL) clCreateProgramWithIL = nullptr; ///< OpenCL 2.1+

  static const Api &get() {
    static const Api api = [] {
      Api a;
      a.lib = open_library({"libOpenCL.so.1", "libOpenCL.so"}, "the OpenCL ICD loader", a.error);
      if (!a.lib) return a;
#define HG_CL_LOAD(name)                                                                           \
  a.name = reinterpret_cast<decltype(&::name)>(dlsym(a.lib, #name));                               \
  if (!a.name && a.error.empty()) a.error = "libOpenCL.so.1 has no " #name;
      HG_CL_FUNCTIONS(HG_CL_LOAD)
#undef HG_CL_LOAD
      a.clCreateProgramWithIL = reinterpret_cast<decltype(&::clCreateProgramWithIL)>(
          dlsym(a.lib, "clCreateProgramWithIL"));
      return a;
    }();
    return api;
  }
};

std::string cl_error_name(cl_int e) {
  switch (e) {
  case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
  case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
  case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
  case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
  case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
  case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
  case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
  case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
  case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
  case CL_INVALID_PROGRAM: return "CL_INVALID_PROGRAM";
  case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
  case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
  case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
  case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
  case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
  case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
  case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
  case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
    return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
  default: return "cl_int " + std::to_string(e);
  }
}

void check(cl_int e, const std::string &what) {
  if (e == CL_SUCCESS) return;
  ErrorCode code = e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_HOST_MEMORY ||
                           e == CL_OUT_OF_RESOURCES
                       ? ErrorCode::OutOfMemory
                       : ErrorCode::LaunchFailed;
  throw Error(code, "opencl: " + what + " failed: " + cl_error_name(e));
}

std::string device_string(const Api &api, cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (api.clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (api.clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}
std::string platform_string(const Api &api, cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (api.clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (api.clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}
template <typename T> T device_value(const Api &api, cl_device_id d, cl_device_info what) {
  T v{};
  if (api.clGetDeviceInfo(d, what, sizeof(T), &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

bool has_word(const std::string &list, const std::string &word) {
  std::istringstream in(list);
  std::string w;
  while (in >> w)
    if (w == word) return true;
  return false;
}

/// An executable on PATH (or a path with a slash), or "" when there is none.
std::string find_program(const std::string &name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char *path = std::getenv("PATH");
  std::istringstream in(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(in, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

/// The llvm-spirv whose bitcode the device's compiler reads: the platform's LLVM version or
/// older (bitcode is read forwards only), then an unversioned llvm-spirv.
std::string find_llvm_spirv(const std::string &platform_version) {
  if (const char *env = std::getenv("HOLOGRAM_LLVM_SPIRV"); env && *env) return find_program(env);
  std::smatch m;
  int newest = 19;
  if (std::regex_search(platform_version, m, std::regex("LLVM ([0-9]+)")))
    newest = std::stoi(m[1].str());
  for (int v = newest; v >= 13; --v)
    if (auto p = find_program("llvm-spirv-" + std::to_string(v)); !p.empty()) return p;
  return find_program("llvm-spirv");
}

// ---------------------------------------------------------------------------------------------
// Devices

enum class Loading { IL, Spir };

struct Candidate {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  std::string name, platform_name, platform_version, version, extensions, il_version;
  cl_device_type type = 0;
  bool is_gpu = false;
  Loading loading = Loading::IL;
  std::string llvm_spirv; ///< the translator, for Loading::Spir
  std::string reason;
  size_t max_group = 0, max_items[3] = {0, 0, 0};
  uint64_t local_mem = 0, max_alloc = 0, global_mem = 0;
  uint32_t compute_units = 0;
  uint64_t view_alignment = 1; ///< CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bytes
  bool host_unified = false;   ///< CL_DEVICE_HOST_UNIFIED_MEMORY

  [[nodiscard]] std::string label() const { return name + " (" + platform_name + ")"; }
  [[nodiscard]] std::string loader_text() const {
    if (!reason.empty()) return "";
    return loading == Loading::IL ? "SPIR-V IL" : "SPIR 1.2 via " + llvm_spirv;
  }
};

Candidate inspect(const Api &api, cl_platform_id p, cl_device_id d) {
  Candidate c;
  c.platform = p;
  c.device = d;
  c.platform_name = platform_string(api, p, CL_PLATFORM_NAME);
  c.platform_version = platform_string(api, p, CL_PLATFORM_VERSION);
  c.name = device_string(api, d, CL_DEVICE_NAME);
  c.version = device_string(api, d, CL_DEVICE_VERSION);
  c.extensions = device_string(api, d, CL_DEVICE_EXTENSIONS);
  c.il_version = device_string(api, d, CL_DEVICE_IL_VERSION);
  c.type = device_value<cl_device_type>(api, d, CL_DEVICE_TYPE);
  c.is_gpu = (c.type & CL_DEVICE_TYPE_GPU) != 0;
  c.max_group = device_value<size_t>(api, d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  size_t items[3] = {0, 0, 0};
  if (device_value<cl_uint>(api, d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS) >= 3)
    api.clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(items), items, nullptr);
  std::copy(items, items + 3, c.max_items);
  c.local_mem = device_value<cl_ulong>(api, d, CL_DEVICE_LOCAL_MEM_SIZE);
  c.max_alloc = device_value<cl_ulong>(api, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  c.global_mem = device_value<cl_ulong>(api, d, CL_DEVICE_GLOBAL_MEM_SIZE);
  c.compute_units = device_value<cl_uint>(api, d, CL_DEVICE_MAX_COMPUTE_UNITS);
  c.view_alignment =
      std::max<uint64_t>(1, device_value<cl_uint>(api, d, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8);
  c.host_unified = device_value<cl_bool>(api, d, CL_DEVICE_HOST_UNIFIED_MEMORY);

  if (device_value<cl_uint>(api, d, CL_DEVICE_ADDRESS_BITS) != 64) {
    c.reason = "has 32-bit addresses; hologram's OpenCL SPIR-V is Physical64";
    return c;
  }
  if (!device_value<cl_bool>(api, d, CL_DEVICE_AVAILABLE)) {
    c.reason = "is not available";
    return c;
  }
  if (!device_value<cl_bool>(api, d, CL_DEVICE_COMPILER_AVAILABLE)) {
    c.reason = "has no compiler, so it cannot build programs";
    return c;
  }
  if (c.max_items[0] == 0) {
    c.reason = "runs fewer than 3 work-item dimensions";
    return c;
  }
  // SPEC §9.3: SPIR-V where the device takes it, else SPIR 1.2 through llvm-spirv.
  const char *forced = std::getenv("HOLOGRAM_OPENCL_PROGRAMS");
  std::string force = forced ? forced : "";
  bool takes_il = c.il_version.find("SPIR-V") != std::string::npos && api.clCreateProgramWithIL;
  bool takes_spir = has_word(c.extensions, "cl_khr_spir");
  if (!force.empty() && force != "il" && force != "spir") {
    c.reason = "cannot be used: HOLOGRAM_OPENCL_PROGRAMS is '" + force + "' (expected il or spir)";
    return c;
  }
  if (force != "spir" && takes_il) {
    c.loading = Loading::IL;
    return c;
  }
  if (force == "il") {
    c.reason = "does not take SPIR-V programs (CL_DEVICE_IL_VERSION is '" + c.il_version +
               "'), which HOLOGRAM_OPENCL_PROGRAMS=il asks for";
    return c;
  }
  if (!takes_spir) {
    c.reason = "takes neither SPIR-V programs (CL_DEVICE_IL_VERSION is '" + c.il_version +
               "') nor SPIR 1.2 binaries (no cl_khr_spir)";
    return c;
  }
  c.loading = Loading::Spir;
  c.llvm_spirv = find_llvm_spirv(c.platform_version);
  if (c.llvm_spirv.empty())
    c.reason = "takes SPIR 1.2 binaries only, and no llvm-spirv translator is on PATH (install "
               "llvm-spirv-15 or set HOLOGRAM_LLVM_SPIRV)";
  return c;
}

/// Every device, GPUs first.
std::vector<Candidate> candidates(const Api &api, std::string &error) {
  std::vector<Candidate> out;
  cl_uint n = 0;
  cl_int e = api.clGetPlatformIDs(0, nullptr, &n);
  if (e != CL_SUCCESS || n == 0) {
    constexpr cl_int kPlatformNotFound = -1001; // CL_PLATFORM_NOT_FOUND_KHR (cl_khr_icd)
    error = e == CL_SUCCESS || e == kPlatformNotFound
                ? "the OpenCL ICD loader finds no platform (no ICD is installed)"
                : "clGetPlatformIDs failed: " + cl_error_name(e);
    return out;
  }
  std::vector<cl_platform_id> platforms(n);
  api.clGetPlatformIDs(n, platforms.data(), nullptr);
  for (cl_platform_id p : platforms) {
    cl_uint nd = 0;
    if (api.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0)
      continue;
    std::vector<cl_device_id> devices(nd);
    api.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr);
    for (cl_device_id d : devices) out.push_back(inspect(api, p, d));
  }
  if (out.empty()) error = "the OpenCL platforms have no device";
  std::vector<Candidate> ranked;
  for (bool gpu : {true, false})
    for (auto &c : out)
      if (c.is_gpu == gpu) ranked.push_back(std::move(c));
  return ranked;
}

struct Device {
  const Api &api;
  Candidate cand;
  cl_context context = nullptr;
  std::mutex queues_mutex;
  std::vector<cl_command_queue> queues; ///< every command queue made, for synchronize()
  /// In-order command queues no thread is using: each thread (the application's, or Queues')
  /// enqueues and waits on one of its own, so the device runs their commands at the same time.
  IdleList<cl_command_queue> idle;

  /// A command queue of the calling thread's own while it lives.
  struct Lease : IdleList<cl_command_queue>::Lease {
    explicit Lease(Device &d)
        : IdleList<cl_command_queue>::Lease(d.idle, [&] { return d.make_queue(); }) {}
    operator cl_command_queue() const { return **this; }
  };

  Device(const Api &a, Candidate c) : api(a), cand(std::move(c)) {
    cl_int e = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(cand.platform), 0};
    context = api.clCreateContext(props, 1, &cand.device, nullptr, nullptr, &e);
    check(e, "clCreateContext");
    try {
      idle.give(make_queue());
    } catch (...) {
      api.clReleaseContext(context);
      throw;
    }
  }
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  ~Device() {
    for (cl_command_queue q : queues) api.clReleaseCommandQueue(q);
    api.clReleaseContext(context);
  }

  /// Waits for every command of every queue.
  void finish_all() {
    std::lock_guard lock(queues_mutex);
    for (cl_command_queue q : queues) check(api.clFinish(q), "clFinish");
  }

  cl_command_queue make_queue() {
    cl_int e = CL_SUCCESS;
    cl_command_queue q = api.clCreateCommandQueue(context, cand.device, 0, &e);
    check(e, "clCreateCommandQueue");
    std::lock_guard lock(queues_mutex);
    queues.push_back(q);
    return q;
  }

  bool has_feature(const std::string &f) const {
    if (f == "float64") return has_word(cand.extensions, "cl_khr_fp64");
    if (f == "int64_atomics")
      return has_word(cand.extensions, "cl_khr_int64_base_atomics") &&
             has_word(cand.extensions, "cl_khr_int64_extended_atomics");
    return false;
  }

  /// Waits for `ev` and releases it; throws when the command failed.
  void wait(cl_event ev, const std::string &what) const {
    cl_int e = api.clWaitForEvents(1, &ev);
    cl_int status = CL_COMPLETE;
    api.clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr);
    api.clReleaseEvent(ev);
    check(e != CL_SUCCESS ? e : std::min<cl_int>(status, CL_SUCCESS), what);
  }
};

/// A buffer or pool: a cl_mem of its own, a sub-buffer of one (`root` set), or host memory the
/// application owns used in place (`host` set; CL_MEM_USE_HOST_PTR).
struct Memory {
  std::shared_ptr<Device> dev;
  cl_mem mem = nullptr;
  uint64_t size = 0;
  std::shared_ptr<Memory> root; ///< a sub-buffer's buffer
  uint64_t base = 0;            ///< a sub-buffer's offset in `root`
  bool host = false;            ///< host memory used in place (or a sub-buffer of it)

  Memory(std::shared_ptr<Device> d, uint64_t bytes, const char *what)
      : dev(std::move(d)), size(bytes) {
    cl_int e = CL_SUCCESS;
    mem = dev->api.clCreateBuffer(dev->context, CL_MEM_READ_WRITE, bytes, nullptr, &e);
    check(e,
          std::string("clCreateBuffer for a ") + what + " of " + std::to_string(bytes) + " bytes");
    // Fresh memory reads as zeros on every backend.
    const cl_uchar zero = 0;
    cl_event ev = nullptr;
    e = dev->api.clEnqueueFillBuffer(Device::Lease(*dev), mem, &zero, 1, 0, bytes, 0, nullptr, &ev);
    if (e != CL_SUCCESS) {
      dev->api.clReleaseMemObject(mem);
      check(e, "clEnqueueFillBuffer");
    }
    dev->wait(ev, "zero-filling a new " + std::string(what));
  }
  /// Host memory: used in place (`in_place`), or copied into a buffer of the device's own.
  Memory(std::shared_ptr<Device> d, std::span<std::byte> memory, bool in_place)
      : dev(std::move(d)), size(memory.size()), host(in_place) {
    cl_int e = CL_SUCCESS;
    mem = dev->api.clCreateBuffer(
        dev->context, CL_MEM_READ_WRITE | (in_place ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR),
        memory.size(), memory.data(), &e);
    check(e, "clCreateBuffer over " + std::to_string(memory.size()) + " bytes of host memory");
  }
  /// The bytes [offset, offset + bytes) of `of`: a sub-buffer of its root buffer.
  Memory(const std::shared_ptr<Memory> &of, uint64_t offset, uint64_t bytes)
      : dev(of->dev), size(bytes), root(of->root ? of->root : of), base(of->base + offset),
        host(of->host) {
    cl_buffer_region region{base, bytes};
    cl_int e = CL_SUCCESS;
    mem = dev->api.clCreateSubBuffer(root->mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                     &region, &e);
    check(e, "clCreateSubBuffer of " + std::to_string(bytes) + " bytes at offset " +
                 std::to_string(base));
  }
  Memory(const Memory &) = delete;
  Memory &operator=(const Memory &) = delete;
  ~Memory() { dev->api.clReleaseMemObject(mem); }

  void write(uint64_t offset, std::span<const std::byte> data) {
    if (data.empty()) return;
    to_device();
    check(dev->api.clEnqueueWriteBuffer(Device::Lease(*dev), mem, CL_TRUE, offset, data.size(),
                                        data.data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
    to_host();
  }
  void read(uint64_t offset, std::span<std::byte> out) {
    if (out.empty()) return;
    to_device();
    check(dev->api.clEnqueueReadBuffer(Device::Lease(*dev), mem, CL_TRUE, offset, out.size(),
                                       out.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
  }

  /// Host memory used in place is the device's only after the host hands it over (a map for
  /// writing, then the unmap), and the host's again after a map for reading: OpenCL may cache it
  /// on the device in between. Both are no-ops where memory is shared, as on CPU devices.
  void to_device() { sync(CL_MAP_WRITE); }
  void to_host() { sync(CL_MAP_READ); }

private:
  void sync(cl_map_flags flags) {
    if (!host) return;
    cl_int e = CL_SUCCESS;
    Device::Lease queue(*dev);
    void *p =
        dev->api.clEnqueueMapBuffer(queue, mem, CL_TRUE, flags, 0, size, 0, nullptr, nullptr, &e);
    check(e, "clEnqueueMapBuffer of host memory");
    cl_event ev = nullptr;
    check(dev->api.clEnqueueUnmapMemObject(queue, mem, p, 0, nullptr, &ev),
          "clEnqueueUnmapMemObject of host memory");
    dev->wait(ev, "handing host memory over");
  }
};

/// A kernel built for the device. Its cl_kernel's arguments are set and launched under
/// `launch_mutex` (clSetKernelArg is not thread-safe on one kernel object).
/// A built cl_program, shared by the kernels of one SPIR-V module.
struct Built {
  std::shared_ptr<Device> dev;
  cl_program program = nullptr;
  Built() = default;
  Built(const Built &) = delete;
  Built &operator=(const Built &) = delete;
  ~Built() {
    if (program) dev->api.clReleaseProgram(program);
  }
};

struct Program {
  std::shared_ptr<Device> dev;
  isa::Kernel kernel;
  std::string source; ///< the file of the kernel's lines, for failed launches ("": not known)
  codegen::SpirvKernelInfo info;
  std::shared_ptr<Built> built;
  cl_kernel handle = nullptr;
  size_t max_group = 0; ///< CL_KERNEL_WORK_GROUP_SIZE
  std::mutex launch_mutex;

  Program() = default;
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;
  ~Program() {
    if (handle) dev->api.clReleaseKernel(handle);
  }
};

/// The Atlas state lives on the host: no kernel this back end compiles touches it yet.
class OpenClBackend final : public SpirvBackend<Program, Memory> {
public:
  explicit OpenClBackend(std::shared_ptr<Device> dev) : dev_(std::move(dev)) {}

  DeviceInfo device_info() const override {
    const Candidate &c = dev_->cand;
    DeviceInfo d;
    d.backend = "opencl";
    d.name = c.name;
    d.kind = c.is_gpu                             ? DeviceKind::Gpu
             : (c.type & CL_DEVICE_TYPE_CPU) != 0 ? DeviceKind::Cpu
                                                  : DeviceKind::Other;
    d.compute_units = c.compute_units;
    d.memory_bytes = c.global_mem;
    d.details = c.version + " on " + c.platform_name + ", programs as " + c.loader_text();
    d.view_alignment = c.view_alignment;
    return d;
  }

  void synchronize() override { dev_->finish_all(); }

private:
  std::shared_ptr<Memory> allocate(uint64_t bytes, const char *what) override {
    if (bytes == 0)
      throw Error(ErrorCode::InvalidArgument,
                  std::string("cannot allocate a ") + what + " of 0 bytes");
    if (bytes > dev_->cand.max_alloc)
      throw Error(ErrorCode::OutOfMemory,
                  std::string("cannot allocate a ") + what + " of " + std::to_string(bytes) +
                      " bytes: the largest allocation " + dev_->cand.name + " makes is " +
                      std::to_string(dev_->cand.max_alloc) + " bytes");
    return std::make_shared<Memory>(dev_, bytes, what);
  }
  std::shared_ptr<Memory> view(const std::shared_ptr<Memory> &parent, uint64_t offset,
                               uint64_t bytes) override {
    return std::make_shared<Memory>(parent, offset, bytes);
  }
  std::shared_ptr<Memory> wrap(std::span<std::byte> memory, bool &shared) override {
    if (memory.size() > dev_->cand.max_alloc)
      throw Error(ErrorCode::OutOfMemory, "cannot wrap " + std::to_string(memory.size()) +
                                              " bytes of host memory: the largest buffer " +
                                              dev_->cand.name + " makes is " +
                                              std::to_string(dev_->cand.max_alloc) + " bytes");
    shared = dev_->cand.host_unified;
    return std::make_shared<Memory>(dev_, memory, shared);
  }
  uint64_t view_alignment() const override { return dev_->cand.view_alignment; }
  void copy_on_device(Memory &from, uint64_t from_offset, Memory &to, uint64_t to_offset,
                      uint64_t bytes) override {
    from.to_device();
    to.to_device();
    cl_event ev = nullptr;
    check(dev_->api.clEnqueueCopyBuffer(Device::Lease(*dev_), from.mem, to.mem, from_offset,
                                        to_offset, bytes, 0, nullptr, &ev),
          "clEnqueueCopyBuffer");
    dev_->wait(ev, "a copy on the device");
    to.to_host();
  }
  /// A CPU device's work-groups are loops over their work-items (PoCL), split at barriers.
  bool keeps_registers_across_barriers() const override {
    return (dev_->cand.type & CL_DEVICE_TYPE_CPU) == 0;
  }

  std::string backend_name() const override { return "opencl"; }
  std::string_view payload_kind() const override { return artifact::kPayloadSpirvOpenCl; }
  int payload_rank(const artifact::BundlePayload &p, std::string &why) const override {
    // SPIR-V 1.0 (opencl1.2, opencl2.0) goes both ways; 1.2 (opencl3.0) only as IL where the
    // device names it.
    if (p.name == "opencl1.2" || p.name == "opencl2.0") return p.name == "opencl2.0" ? 1 : 0;
    const Candidate &c = dev_->cand;
    if (p.name == "opencl3.0" && c.loading == Loading::IL &&
        c.il_version.find("SPIR-V_1.2") != std::string::npos)
      return 2;
    why = c.name + " takes " +
          (c.loading == Loading::IL ? "SPIR-V " + c.il_version : std::string("SPIR 1.2 only"));
    return -1;
  }
  codegen::SpirvTarget compile_target() const override {
    return *codegen::parse_spirv_target("opencl1.2"); // SPIR-V 1.0: every consumer's
  }
  bool has_feature(const std::string &f) const override { return dev_->has_feature(f); }
  std::string device_name() const override { return dev_->cand.name; }

  std::shared_ptr<Program> make_program(const isa::Kernel &kernel,
                                        const codegen::SpirvKernelInfo &info,
                                        const std::vector<uint32_t> &words) override {
    auto p = std::make_shared<Program>();
    p->dev = dev_;
    p->kernel = kernel;
    p->info = info;
    build(*p, words);
    return p;
  }

  /// The module built for the device, once per module (its kernels share it).
  std::shared_ptr<Built> built(const std::vector<uint32_t> &words, const std::string &what) {
    std::string key(reinterpret_cast<const char *>(words.data()), words.size() * 4);
    std::lock_guard lock(built_mutex_);
    if (auto it = built_.find(key); it != built_.end()) return it->second;
    const Api &api = dev_->api;
    const Candidate &c = dev_->cand;
    auto b = std::make_shared<Built>();
    b->dev = dev_;
    cl_int e = CL_SUCCESS;
    const char *options = "";
    if (c.loading == Loading::IL) {
      b->program = api.clCreateProgramWithIL(dev_->context, words.data(), words.size() * 4, &e);
      check(e, "clCreateProgramWithIL for " + what);
    } else {
      std::string bitcode = translate_to_spir(words, what);
      const auto *bytes = reinterpret_cast<const unsigned char *>(bitcode.data());
      size_t size = bitcode.size();
      cl_int binary_status = CL_SUCCESS;
      b->program = api.clCreateProgramWithBinary(dev_->context, 1, &c.device, &size, &bytes,
                                                 &binary_status, &e);
      check(e != CL_SUCCESS ? e : binary_status, "clCreateProgramWithBinary (SPIR) for " + what);
      options = "-x spir -spir-std=1.2";
    }
    e = api.clBuildProgram(b->program, 1, &c.device, options, nullptr, nullptr);
    if (e != CL_SUCCESS) {
      std::string log(16384, '\0');
      size_t n = 0;
      api.clGetProgramBuildInfo(b->program, c.device, CL_PROGRAM_BUILD_LOG, log.size(), log.data(),
                                &n);
      log.resize(n > 0 ? n - 1 : 0);
      throw Error(ErrorCode::Internal, "opencl: building " + what + " failed: " + cl_error_name(e) +
                                           (log.empty() ? "" : "\n" + log));
    }
    built_.emplace(std::move(key), b);
    return b;
  }

  void build(Program &p, const std::vector<uint32_t> &words) {
    const Api &api = dev_->api;
    const Candidate &c = dev_->cand;
    const std::string what = "kernel '" + p.kernel.name + "' on " + c.name;
    cl_int e = CL_SUCCESS;
    p.built = built(words, what);
    p.handle = api.clCreateKernel(p.built->program, p.kernel.name.c_str(), &e);
    check(e, "clCreateKernel for " + what);
    p.max_group = c.max_group;
    size_t wg = 0;
    if (api.clGetKernelWorkGroupInfo(p.handle, c.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(wg), &wg,
                                     nullptr) == CL_SUCCESS &&
        wg > 0)
      p.max_group = std::min(p.max_group, wg);
  }

  /// SPEC §9.3: llvm-spirv -r turns the module into SPIR 1.2 bitcode.
  std::string translate_to_spir(const std::vector<uint32_t> &words, const std::string &what) {
    auto dir = ScratchDir::create("hologram-opencl");
    if (!dir) throw Error(ErrorCode::Internal, "cannot create a temporary directory");
    std::string spv = dir->path() + "/kernel.spv", bc = dir->path() + "/kernel.bc";
    if (auto st = write_file_atomic(
            spv, std::string_view(reinterpret_cast<const char *>(words.data()), words.size() * 4));
        !st)
      throw Error(ErrorCode::Internal, st.message());
    const std::string &tool = dev_->cand.llvm_spirv;
    std::string output;
    int rc = run_program({tool, "-r", "--spirv-target-env=CL1.2", spv, "-o", bc}, output);
    if (rc != 0)
      throw Error(ErrorCode::Internal, "opencl: translating " + what + " to SPIR with '" + tool +
                                           "' failed (exit " + std::to_string(rc) + ")" +
                                           (output.empty() ? "" : ":\n" + output));
    auto bitcode = read_file(bc);
    if (!bitcode) throw Error(ErrorCode::Internal, bitcode.message());
    return std::move(*bitcode);
  }

  /// The buffer or pool of parameter `param`.
  std::shared_ptr<Memory> memory_of(const isa::Kernel &k, std::span<const KernelArg> args,
                                    uint32_t param) {
    return k.params[param].kind == isa::ParamKind::Pool ? pools_.get(args[param].handle)
                                                        : buffer_arg(args[param]);
  }

  void run(Program &p, const LaunchConfig &launch, std::span<const KernelArg> args) override {
    const Candidate &c = dev_->cand;
    const isa::Kernel &k = p.kernel;
    const Api &api = dev_->api;
    if (launch.block.x > c.max_items[0] || launch.block.y > c.max_items[1] ||
        launch.block.z > c.max_items[2] || launch.block.count() > p.max_group)
      throw Error(ErrorCode::InvalidArgument,
                  "kernel '" + k.name + "': a block of " + std::to_string(launch.block.x) + "x" +
                      std::to_string(launch.block.y) + "x" + std::to_string(launch.block.z) +
                      " lanes is larger than " + c.name + " runs for it (" +
                      std::to_string(p.max_group) + " lanes, " + std::to_string(c.max_items[0]) +
                      "x" + std::to_string(c.max_items[1]) + "x" + std::to_string(c.max_items[2]) +
                      ")");
    uint64_t shared_bytes = uint64_t{p.info.static_shared_bytes} + launch.shared_memory;
    if (shared_bytes > c.local_mem)
      throw Error(ErrorCode::InvalidArgument,
                  "kernel '" + k.name + "' needs " + std::to_string(shared_bytes) +
                      " bytes of shared memory; " + c.name + " has " + std::to_string(c.local_mem));
    auto shared_words = static_cast<uint32_t>(std::max<uint64_t>(1, (shared_bytes + 3) / 4));

    // Resolve the arguments; `keep` holds them alive even if another thread frees a handle.
    std::vector<std::shared_ptr<Memory>> keep;
    std::shared_ptr<Memory> status;
    if (p.info.has_status)
      status = idle_status_.take([&] {
        return std::make_shared<Memory>(dev_, codegen::spirv_status::kWords * 4, "status buffer");
      });

    std::shared_ptr<Memory> state;
    auto atlas = begin_atlas(p.info);
    std::unique_lock launch_lock(p.launch_mutex);
    for (uint32_t i = 0; i < p.info.kernel_args.size(); ++i) {
      const auto &a = p.info.kernel_args[i];
      const std::string what =
          "clSetKernelArg " + std::to_string(i) + " of kernel '" + k.name + "'";
      switch (a.kind) {
      case codegen::SpirvKernelArg::Kind::Pool:
      case codegen::SpirvKernelArg::Kind::Buffer: {
        keep.push_back(memory_of(k, args, a.param));
        keep.back()->to_device();
        check(api.clSetKernelArg(p.handle, i, sizeof(cl_mem), &keep.back()->mem), what);
        break;
      }
      case codegen::SpirvKernelArg::Kind::Scalar: {
        uint64_t bits = args[a.param].bits;
        isa::Type t = k.params[a.param].type;
        // 8- and 16-bit scalars travel as 32 bits, sign- or zero-extended.
        if (t == isa::Type::I8) bits = static_cast<uint32_t>(static_cast<int8_t>(bits));
        if (t == isa::Type::I16) bits = static_cast<uint32_t>(static_cast<int16_t>(bits));
        size_t size = isa::type_size(t) == 8 ? 8 : 4;
        auto v32 = static_cast<uint32_t>(bits);
        check(api.clSetKernelArg(p.handle, i, size,
                                 size == 8 ? static_cast<const void *>(&bits)
                                           : static_cast<const void *>(&v32)),
              what);
        break;
      }
      case codegen::SpirvKernelArg::Kind::Boundary:
        keep.push_back(boundary());
        check(api.clSetKernelArg(p.handle, i, sizeof(cl_mem), &keep.back()->mem), what);
        break;
      case codegen::SpirvKernelArg::Kind::Scratch:
        keep.push_back(scratch(p.info, launch));
        check(api.clSetKernelArg(p.handle, i, sizeof(cl_mem), &keep.back()->mem), what);
        break;
      case codegen::SpirvKernelArg::Kind::Atlas:
        state =
            std::make_shared<Memory>(dev_, codegen::spirv_status::kAtlasWords * 8, "Atlas state");
        state->write(0, std::as_bytes(std::span(atlas.words)));
        check(api.clSetKernelArg(p.handle, i, sizeof(cl_mem), &state->mem), what);
        break;
      case codegen::SpirvKernelArg::Kind::Phase:
        check(api.clSetKernelArg(p.handle, i, sizeof(cl_uint), &atlas.phase), what);
        break;
      case codegen::SpirvKernelArg::Kind::Status:
        check(api.clSetKernelArg(p.handle, i, sizeof(cl_mem), &status->mem), what);
        break;
      case codegen::SpirvKernelArg::Kind::Shared:
        check(api.clSetKernelArg(p.handle, i, size_t{shared_words} * 4, nullptr), what);
        break;
      case codegen::SpirvKernelArg::Kind::SharedWords:
        check(api.clSetKernelArg(p.handle, i, sizeof(cl_uint), &shared_words), what);
        break;
      case codegen::SpirvKernelArg::Kind::BufferBytes: {
        cl_ulong bytes = param_bytes(k, args, a.param);
        check(api.clSetKernelArg(p.handle, i, sizeof(cl_ulong), &bytes), what);
        break;
      }
      }
    }
    size_t local[3] = {launch.block.x, launch.block.y, launch.block.z};
    size_t global[3] = {size_t{launch.grid.x} * local[0], size_t{launch.grid.y} * local[1],
                        size_t{launch.grid.z} * local[2]};
    cl_event ev = nullptr;
    Device::Lease queue(*dev_);
    check(api.clEnqueueNDRangeKernel(queue, p.handle, 3, nullptr, global, local, 0, nullptr, &ev),
          "clEnqueueNDRangeKernel for kernel '" + k.name + "'");
    // The enqueued kernel holds its arguments: another thread may set them again now.
    launch_lock.unlock();
    // The status comes back by a read queued behind the kernel (the queue is in order), so
    // the launch waits once, not for the kernel and then for a read.
    uint32_t w[codegen::spirv_status::kWords] = {};
    cl_int read = CL_SUCCESS;
    if (status) {
      cl_event rev = nullptr;
      read =
          api.clEnqueueReadBuffer(queue, status->mem, CL_FALSE, 0, sizeof(w), w, 0, nullptr, &rev);
      if (read == CL_SUCCESS) {
        cl_event both[] = {ev, rev};
        if (api.clWaitForEvents(2, both) != CL_SUCCESS) api.clFinish(queue); // w is written
        api.clGetEventInfo(rev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(read), &read, nullptr);
        read = std::min<cl_int>(read, CL_SUCCESS);
        api.clReleaseEvent(rev);
      }
    }
    dev_->wait(ev, "kernel '" + k.name + "'");
    check(read, "clEnqueueReadBuffer of the status of kernel '" + k.name + "'");
    for (const auto &m : keep) m->to_host();
    if (status) {
      report_status(k, p.source, launch, args, shared_bytes, w, "the OpenCL backend");
      idle_status_.give(std::move(status)); // still zero: nothing went wrong
    }
    if (state) state->read(0, std::as_writable_bytes(std::span(atlas.words)));
    end_atlas(atlas);
  }

  std::shared_ptr<Device> dev_;
  std::mutex built_mutex_;
  std::map<std::string, std::shared_ptr<Built>> built_; ///< by module words
};

} // namespace

std::vector<OpenClDeviceReport> opencl_devices(std::string &error) {
  std::vector<OpenClDeviceReport> out;
  const Api &api = Api::get();
  if (!api.error.empty()) {
    error = api.error;
    return out;
  }
  for (const auto &c : candidates(api, error))
    out.push_back({c.label(), c.is_gpu, c.reason.empty(), c.reason, c.loader_text()});
  return out;
}

std::unique_ptr<Backend> make_opencl_backend(bool allow_cpu_devices) {
  const Api &api = Api::get();
  if (!api.error.empty()) throw Error(ErrorCode::BackendUnavailable, api.error);
  std::string error;
  auto all = candidates(api, error);
  if (all.empty()) throw Error(ErrorCode::BackendUnavailable, error);
  std::string rejected;
  for (auto &c : all) {
    std::string name = c.label();
    if (!c.reason.empty()) {
      rejected += "; " + name + " " + c.reason;
      continue;
    }
    if (!c.is_gpu && !allow_cpu_devices) {
      rejected += "; " + name + " is not a GPU (name the opencl backend to use it)";
      continue;
    }
    try {
      return std::make_unique<OpenClBackend>(std::make_shared<Device>(api, std::move(c)));
    } catch (const Error &e) {
      rejected += "; " + name + ": " + e.what();
    }
  }
  throw Error(ErrorCode::BackendUnavailable, "no usable device:" + rejected.substr(1));
}

} // namespace hologram::runtime
