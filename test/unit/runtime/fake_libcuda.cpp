// A stand-in for NVIDIA's libcuda.so.1, built as test/fake-cuda/libcuda.so.1, so that the CUDA
// backend's own logic (refusals, device selection, payload choice, memory, launch marshalling,
// the JIT error log) is tested on machines without a GPU. The real driver is tested on the GPU
// machine (docs/gpu.md). $HG_FAKE_CUDA picks what it pretends:
//   stub      cuInit fails as the toolkit's stub library does (CUDA_ERROR_STUB_LIBRARY)
//   nodevice  cuInit fails with CUDA_ERROR_NO_DEVICE
//   zero      the driver starts and has no device
//   old       one sm_60 device
//   gpu       one sm_80 device, "Fake GPU": memory is host memory, modules load when their
//             text has an .entry, launches run nothing and record their parameters
//   jitfail   as gpu, but every module fails to JIT-compile with an error log
// Launches are recorded for fake_cuda_last_launch().
#include "fake_libcuda.h"
#include "../../../runtime/cuda/cuda_driver.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace hologram::runtime::cuda;

namespace {

std::string mode() {
  const char *m = std::getenv("HG_FAKE_CUDA");
  return m ? m : "gpu";
}

/// A kernel: its name and how many parameters its .entry declares.
struct FakeFunction {
  std::string name;
  int params = 0;
};

struct FakeModule {
  std::string text;
  std::vector<std::unique_ptr<FakeFunction>> functions;
};

FakeCudaLaunch last;

constexpr Result kInvalidValue = 1, kInvalidPtx = 218, kNotFound = 500;

} // namespace

extern "C" {

/// What the last cuLaunchKernel was given.
__attribute__((visibility("default"))) const FakeCudaLaunch *fake_cuda_last_launch() {
  return &last;
}

__attribute__((visibility("default"))) Result cuInit(unsigned) {
  const std::string m = mode();
  if (m == "stub") return kErrorStubLibrary;
  if (m == "nodevice") return kErrorNoDevice;
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuDriverGetVersion(int *v) {
  *v = 12040;
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuGetErrorName(Result e, const char **name) {
  switch (e) {
  case kErrorStubLibrary: *name = "CUDA_ERROR_STUB_LIBRARY"; return kSuccess;
  case kErrorNoDevice: *name = "CUDA_ERROR_NO_DEVICE"; return kSuccess;
  case kInvalidPtx: *name = "CUDA_ERROR_INVALID_PTX"; return kSuccess;
  case kErrorOutOfMemory: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return kSuccess;
  default: return kInvalidValue;
  }
}
__attribute__((visibility("default"))) Result cuGetErrorString(Result e, const char **text) {
  switch (e) {
  case kErrorStubLibrary: *text = "CUDA driver is a stub library"; return kSuccess;
  case kErrorNoDevice: *text = "no CUDA-capable device is detected"; return kSuccess;
  case kInvalidPtx: *text = "a PTX JIT compilation failed"; return kSuccess;
  default: return kInvalidValue;
  }
}
__attribute__((visibility("default"))) Result cuDeviceGetCount(int *n) {
  *n = mode() == "zero" ? 0 : 1;
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuDeviceGet(Device *d, int ordinal) {
  *d = ordinal;
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuDeviceGetName(char *name, int length, Device) {
  std::strncpy(name, mode() == "old" ? "Fake Old GPU" : "Fake GPU", size_t(length));
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuDeviceGetAttribute(int *v, int attribute, Device) {
  switch (attribute) {
  case kComputeCapabilityMajor: *v = mode() == "old" ? 6 : 8; break;
  case kComputeCapabilityMinor: *v = 0; break;
  case kMultiprocessorCount: *v = 4; break;
  case kMaxThreadsPerBlock: *v = 1024; break;
  case kMaxBlockDimX:
  case kMaxBlockDimY: *v = 1024; break;
  case kMaxBlockDimZ: *v = 64; break;
  case kMaxGridDimX: *v = 0x7fffffff; break;
  case kMaxGridDimY:
  case kMaxGridDimZ: *v = 65535; break;
  case kMaxSharedMemoryPerBlock: *v = 48 * 1024; break;
  case kMaxSharedMemoryPerBlockOptin: *v = 160 * 1024; break;
  case kCanMapHostMemory:
  case kUnifiedAddressing: *v = 1; break;
  default: *v = 0;
  }
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuDeviceTotalMem_v2(size_t *bytes, Device) {
  *bytes = size_t{1} << 30;
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuDevicePrimaryCtxRetain(Context *c, Device) {
  static int context;
  *c = reinterpret_cast<Context>(&context);
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuDevicePrimaryCtxRelease_v2(Device) {
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuCtxSetCurrent(Context) {
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuCtxSynchronize() {
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuMemAlloc_v2(DevicePtr *p, size_t bytes) {
  if (bytes > (size_t{1} << 30)) return kErrorOutOfMemory;
  void *m = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!m) return kErrorOutOfMemory;
  *p = reinterpret_cast<uintptr_t>(m);
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuMemFree_v2(DevicePtr p) {
  std::free(reinterpret_cast<void *>(p));
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuMemsetD8_v2(DevicePtr p, unsigned char v,
                                                            size_t n) {
  std::memset(reinterpret_cast<void *>(p), v, n);
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuMemsetD8Async(DevicePtr p, unsigned char v,
                                                              size_t n, Stream) {
  std::memset(reinterpret_cast<void *>(p), v, n);
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuMemcpyHtoD_v2(DevicePtr dst, const void *src,
                                                              size_t n) {
  std::memcpy(reinterpret_cast<void *>(dst), src, n);
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuMemcpyDtoH_v2(void *dst, DevicePtr src, size_t n) {
  std::memcpy(dst, reinterpret_cast<const void *>(src), n);
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuMemcpyDtoDAsync_v2(DevicePtr dst, DevicePtr src,
                                                                   size_t n, Stream) {
  std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<const void *>(src), n);
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuMemHostRegister_v2(void *, size_t, unsigned) {
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuMemHostUnregister(void *) {
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuMemHostGetDevicePointer_v2(DevicePtr *p, void *h,
                                                                           unsigned) {
  *p = reinterpret_cast<uintptr_t>(h);
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuModuleLoadDataEx(Module *m, const void *image,
                                                                 unsigned count, int *options,
                                                                 void **values) {
  std::string text = static_cast<const char *>(image);
  if (mode() == "jitfail" || text.find(".entry") == std::string::npos) {
    for (unsigned i = 0; i < count; ++i)
      if (options[i] == kJitErrorLogBuffer)
        std::strcpy(static_cast<char *>(values[i]),
                    "ptxas application ptx input, line 1; fatal   : the fake driver refuses it");
    return kInvalidPtx;
  }
  *m = reinterpret_cast<Module>(new FakeModule{text, {}});
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuModuleUnload(Module m) {
  delete reinterpret_cast<FakeModule *>(m);
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuModuleGetFunction(Function *f, Module m,
                                                                  const char *name) {
  auto *fm = reinterpret_cast<FakeModule *>(m);
  size_t at = fm->text.find(std::string(".entry ") + name + "(");
  if (at == std::string::npos) return kNotFound;
  auto *fn = fm->functions.emplace_back(new FakeFunction{name, 0}).get();
  const size_t end = fm->text.find(')', at);
  for (size_t p = fm->text.find(".param", at); p < end; p = fm->text.find(".param", p + 1))
    ++fn->params;
  *f = reinterpret_cast<Function>(fn);
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuFuncGetAttribute(int *v, int attribute, Function) {
  *v = attribute == kFuncMaxThreadsPerBlock ? 1024 : 0;
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuFuncSetAttribute(Function, int, int) {
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuLaunchKernel(Function f, unsigned gx, unsigned gy,
                                                             unsigned gz, unsigned bx, unsigned by,
                                                             unsigned bz, unsigned shared, Stream,
                                                             void **params, void **) {
  last = {};
  const auto *fn = reinterpret_cast<const FakeFunction *>(f);
  last.function = fn->name;
  unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  std::memcpy(last.grid, g, sizeof g);
  std::memcpy(last.block, b, sizeof b);
  last.shared = shared;
  for (int i = 0; i < fn->params; ++i) {
    uint64_t v = 0;
    std::memcpy(&v, params[i], sizeof v);
    last.params.push_back(v);
  }
  return kSuccess;
}
__attribute__((visibility("default"))) Result cuStreamSynchronize(Stream) {
  return kSuccess;
}

} // extern "C"
