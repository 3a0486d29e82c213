// The part of NVIDIA's CUDA driver API (libcuda.so.1) the CUDA backend calls, declared here so
// that the runtime builds without the CUDA toolkit: the driver is opened with dlopen at run
// time. Types, values and symbol names are those of the driver API's cuda.h (a stable C ABI);
// the functions cuda.h renames to a versioned symbol (cuMemAlloc -> cuMemAlloc_v2) are looked
// up by that symbol.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hologram::runtime::cuda {

using Result = int;                   ///< CUresult
using Device = int;                   ///< CUdevice
using DevicePtr = unsigned long long; ///< CUdeviceptr
struct ContextImpl;
using Context = ContextImpl *; ///< CUcontext
struct ModuleImpl;
using Module = ModuleImpl *; ///< CUmodule
struct FunctionImpl;
using Function = FunctionImpl *; ///< CUfunction
struct StreamImpl;
using Stream = StreamImpl *; ///< CUstream

inline constexpr Result kSuccess = 0;
inline constexpr Result kErrorOutOfMemory = 2;
inline constexpr Result kErrorStubLibrary = 34;
inline constexpr Result kErrorNoDevice = 100;

/// CU_STREAM_PER_THREAD: the calling thread's default stream.
inline Stream per_thread_stream() {
  return reinterpret_cast<Stream>(uintptr_t{2});
}
/// CU_STREAM_LEGACY: the context's legacy default stream. Its work starts after the work
/// issued before it to every blocking stream (each thread's default stream among them), and
/// work issued after it to those streams waits for it.
inline Stream legacy_stream() {
  return reinterpret_cast<Stream>(uintptr_t{1});
}

/// CUdevice_attribute values.
enum DeviceAttribute : int {
  kMaxThreadsPerBlock = 1,
  kMaxBlockDimX = 2,
  kMaxBlockDimY = 3,
  kMaxBlockDimZ = 4,
  kMaxGridDimX = 5,
  kMaxGridDimY = 6,
  kMaxGridDimZ = 7,
  kMaxSharedMemoryPerBlock = 8,
  kMultiprocessorCount = 16,
  kCanMapHostMemory = 19,
  kUnifiedAddressing = 41,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  kMaxSharedMemoryPerBlockOptin = 97,
};

/// CUfunction_attribute values.
enum FunctionAttribute : int {
  kFuncMaxThreadsPerBlock = 0,
  kFuncSharedSizeBytes = 1,
  kFuncNumRegs = 4,
  kFuncMaxDynamicSharedSizeBytes = 8,
};

/// CUjit_option values.
enum JitOption : int {
  kJitInfoLogBuffer = 3,
  kJitInfoLogBufferSizeBytes = 4,
  kJitErrorLogBuffer = 5,
  kJitErrorLogBufferSizeBytes = 6,
};

/// CU_MEMHOSTREGISTER_DEVICEMAP
inline constexpr unsigned kMemHostRegisterDeviceMap = 0x02;

/// Every function the backend calls: X(member, symbol, return type, parameter list).
#define HG_CUDA_DRIVER_FUNCTIONS(X)                                                                \
  X(init, cuInit, Result, (unsigned flags))                                                        \
  X(driver_get_version, cuDriverGetVersion, Result, (int *version))                                \
  X(get_error_name, cuGetErrorName, Result, (Result error, const char **name))                     \
  X(get_error_string, cuGetErrorString, Result, (Result error, const char **text))                 \
  X(device_get_count, cuDeviceGetCount, Result, (int *count))                                      \
  X(device_get, cuDeviceGet, Result, (Device * device, int ordinal))                               \
  X(device_get_name, cuDeviceGetName, Result, (char *name, int length, Device device))             \
  X(device_get_attribute, cuDeviceGetAttribute, Result,                                            \
    (int *value, int attribute, Device device))                                                    \
  X(device_total_mem, cuDeviceTotalMem_v2, Result, (size_t *bytes, Device device))                 \
  X(primary_ctx_retain, cuDevicePrimaryCtxRetain, Result, (Context * context, Device device))      \
  X(primary_ctx_release, cuDevicePrimaryCtxRelease_v2, Result, (Device device))                    \
  X(ctx_set_current, cuCtxSetCurrent, Result, (Context context))                                   \
  X(ctx_synchronize, cuCtxSynchronize, Result, ())                                                 \
  X(mem_alloc, cuMemAlloc_v2, Result, (DevicePtr * ptr, size_t bytes))                             \
  X(mem_free, cuMemFree_v2, Result, (DevicePtr ptr))                                               \
  X(memset_d8, cuMemsetD8_v2, Result, (DevicePtr ptr, unsigned char value, size_t count))          \
  X(memset_d8_async, cuMemsetD8Async, Result,                                                      \
    (DevicePtr ptr, unsigned char value, size_t count, Stream stream))                             \
  X(memcpy_htod, cuMemcpyHtoD_v2, Result, (DevicePtr dst, const void *src, size_t bytes))          \
  X(memcpy_dtoh, cuMemcpyDtoH_v2, Result, (void *dst, DevicePtr src, size_t bytes))                \
  X(memcpy_dtod_async, cuMemcpyDtoDAsync_v2, Result,                                               \
    (DevicePtr dst, DevicePtr src, size_t bytes, Stream stream))                                   \
  X(mem_host_register, cuMemHostRegister_v2, Result, (void *p, size_t bytes, unsigned flags))      \
  X(mem_host_unregister, cuMemHostUnregister, Result, (void *p))                                   \
  X(mem_host_get_device_pointer, cuMemHostGetDevicePointer_v2, Result,                             \
    (DevicePtr * ptr, void *p, unsigned flags))                                                    \
  X(module_load_data_ex, cuModuleLoadDataEx, Result,                                               \
    (Module * module, const void *image, unsigned count, int *options, void **values))             \
  X(module_unload, cuModuleUnload, Result, (Module module))                                        \
  X(module_get_function, cuModuleGetFunction, Result,                                              \
    (Function * function, Module module, const char *name))                                        \
  X(func_get_attribute, cuFuncGetAttribute, Result, (int *value, int attribute, Function f))       \
  X(func_set_attribute, cuFuncSetAttribute, Result, (Function f, int attribute, int value))        \
  X(launch_kernel, cuLaunchKernel, Result,                                                         \
    (Function f, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,              \
     unsigned block_y, unsigned block_z, unsigned shared_bytes, Stream stream, void **params,      \
     void **extra))                                                                                \
  X(stream_synchronize, cuStreamSynchronize, Result, (Stream stream))

} // namespace hologram::runtime::cuda
