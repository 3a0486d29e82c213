// The Backend API (SPEC §10): one object per device, owning buffers, pools and the Atlas
// state, running ISA programs. Every misuse throws hologram::Error; every method may be called
// from any number of threads at once.
#pragma once

#include "hologram/isa/atlas.h"
#include "hologram/isa/launch.h"
#include "hologram/isa/program.h"
#include "hologram/runtime/error.h"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hologram {

/// Opaque handles; 0 is never a valid handle.
struct BufferHandle {
  uint64_t id = 0;
  friend bool operator==(const BufferHandle &, const BufferHandle &) = default;
};
struct PoolHandle {
  uint64_t id = 0;
  friend bool operator==(const PoolHandle &, const PoolHandle &) = default;
};

/// A compiled module loaded into a backend.
struct ModuleHandle {
  uint64_t id = 0;
  friend bool operator==(const ModuleHandle &, const ModuleHandle &) = default;
};

/// What a loaded module holds and how it runs here.
struct ModuleInfo {
  std::string origin;               ///< the file it was loaded from
  std::vector<std::string> kernels; ///< kernel names in module order
  std::string variant;              ///< the code variant chosen for this device ("x86-64-v3")
};

/// One launch argument, in parameter order: a buffer, a pool, or a typed scalar. A buffer
/// argument may be a view: the bytes [offset, offset + bytes) of the buffer, which the kernel
/// sees as the whole of its parameter (its element 0 is the byte at `offset`, its size is
/// `bytes`). The offset is a multiple of the parameter's element size and of the device's
/// DeviceInfo::view_alignment.
struct KernelArg {
  enum class Kind { Buffer, Pool, Scalar };
  /// A view's length that reaches the end of the buffer.
  static constexpr uint64_t kToEnd = UINT64_MAX;
  Kind kind = Kind::Scalar;
  uint64_t handle = 0;
  isa::Type type = isa::Type::None; ///< scalar type
  uint64_t bits = 0;                ///< scalar value bits
  uint64_t offset = 0;              ///< a buffer view's first byte
  uint64_t bytes = kToEnd;          ///< a buffer view's length

  static KernelArg buffer(BufferHandle b) { return {Kind::Buffer, b.id, isa::Type::None, 0}; }
  static KernelArg buffer(BufferHandle b, uint64_t offset, uint64_t bytes = kToEnd) {
    return {Kind::Buffer, b.id, isa::Type::None, 0, offset, bytes};
  }
  /// Whether this is a buffer argument that names less than its whole buffer.
  [[nodiscard]] bool is_view() const { return offset != 0 || bytes != kToEnd; }
  static KernelArg pool(PoolHandle p) { return {Kind::Pool, p.id, isa::Type::None, 0}; }
  static KernelArg scalar(isa::Type t, uint64_t bits) { return {Kind::Scalar, 0, t, bits}; }
  static KernelArg f32(float v) { return scalar(isa::Type::F32, std::bit_cast<uint32_t>(v)); }
  static KernelArg f64(double v) { return scalar(isa::Type::F64, std::bit_cast<uint64_t>(v)); }
  static KernelArg u32(uint32_t v) { return scalar(isa::Type::U32, v); }
  static KernelArg i32(int32_t v) { return scalar(isa::Type::I32, static_cast<uint32_t>(v)); }
  static KernelArg u64(uint64_t v) { return scalar(isa::Type::U64, v); }
  static KernelArg i64(int64_t v) { return scalar(isa::Type::I64, static_cast<uint64_t>(v)); }
};

/// How often each schedule of the whole-launch operations (map, map2, reduce_all and the library
/// ops of SPEC §3.8) has run on a backend, keyed "mnemonic:schedule": "gemm:packed",
/// "gemm:reference", "softmax:rows", ... A debug query: the tests use it to prove which path ran.
using LibraryPathCounts = std::map<std::string, uint64_t>;

enum class DeviceKind { Cpu, Gpu, Other };

struct DeviceInfo {
  std::string backend; ///< "cpu", "vulkan", "opencl", "cuda"
  std::string name;    ///< the device's own name
  DeviceKind kind = DeviceKind::Cpu;
  uint32_t compute_units = 0;
  uint64_t memory_bytes = 0;
  std::string details; ///< driver, ISA level, ...
  /// Sub-buffers and buffer views start at a multiple of this many bytes of their buffer
  /// (Vulkan: minStorageBufferOffsetAlignment; OpenCL: CL_DEVICE_MEM_BASE_ADDR_ALIGN; CPU: 1).
  uint64_t view_alignment = 1;
};

/// A buffer made over host memory by Backend::wrap_host_memory.
struct HostBuffer {
  BufferHandle buffer;
  /// true: the host memory is the buffer's storage, no copy was made: what launches and copies
  /// write is in it once they return, and what the host writes there is what later launches
  /// read. false: the backend cannot use host memory on this device, so the buffer holds a copy
  /// made at wrapping, and the host memory is not touched again.
  bool shared = false;
};

class Backend {
public:
  virtual ~Backend() = default;

  [[nodiscard]] virtual DeviceInfo device_info() const = 0;

  // Buffers: device memory of a fixed size, zero-filled at allocation.
  virtual BufferHandle allocate_buffer(uint64_t bytes) = 0;
  virtual void free_buffer(BufferHandle buffer) = 0;
  virtual void copy_to_buffer(BufferHandle buffer, uint64_t offset,
                              std::span<const std::byte> data) = 0;
  virtual void copy_from_buffer(BufferHandle buffer, uint64_t offset, std::span<std::byte> out) = 0;
  virtual uint64_t buffer_size(BufferHandle buffer) = 0;
  /// A buffer that is the bytes [offset, offset + bytes) of `parent`: the same memory, not a
  /// copy. It is a buffer like any other (copies, launch arguments, sub-buffers of its own,
  /// free_buffer) and keeps the memory alive when `parent` is freed first. `offset` is a multiple
  /// of DeviceInfo::view_alignment; the range lies inside `parent` and is not empty.
  virtual BufferHandle create_sub_buffer(BufferHandle parent, uint64_t offset, uint64_t bytes) = 0;
  /// A buffer over `memory`, which the application owns and keeps alive (and does not touch
  /// while a launch or copy that uses the buffer runs) until the buffer is freed. Whether it is
  /// used in place or copied once: see HostBuffer. The CPU backend always uses it in place;
  /// OpenCL does on devices that share host memory (CL_MEM_USE_HOST_PTR); Vulkan does where the
  /// device has VK_EXT_external_memory_host and `memory` is aligned as it asks.
  virtual HostBuffer wrap_host_memory(std::span<std::byte> memory) = 0;

  // Pools: fixed-size byte arrays addressed by offset (SPEC §3.7).
  virtual PoolHandle allocate_pool(uint64_t bytes) = 0;
  virtual void free_pool(PoolHandle pool) = 0;
  virtual void copy_to_pool(PoolHandle pool, uint64_t offset, std::span<const std::byte> data) = 0;
  virtual void copy_from_pool(PoolHandle pool, uint64_t offset, std::span<std::byte> out) = 0;
  virtual uint64_t pool_size(PoolHandle pool) = 0;

  /// Loads a compiled module: a bundle (`hologram-cc --emit=bundle`, checked before use; a
  /// damaged one throws Error(InvalidModule) naming the failed check) or, on the CPU backend,
  /// a shared object from `--emit=shared`.
  virtual ModuleHandle load_module(const std::string &path) = 0;
  /// Loads a module linked into the application: `descriptor` is the
  /// `hologram_module_<name>` object the generated header declares. The CPU backend runs its
  /// x86 code; Vulkan and OpenCL run the SPIR-V compiled for their targets next to it.
  virtual ModuleHandle load_linked_module(const void *descriptor) = 0;
  virtual void unload_module(ModuleHandle module) = 0;
  virtual ModuleInfo module_info(ModuleHandle module) = 0;
  /// Runs kernel `kernel` of a loaded module over `launch`; returns when it has finished.
  virtual void launch(ModuleHandle module, std::string_view kernel, const LaunchConfig &launch,
                      std::span<const KernelArg> args) = 0;

  /// Runs a verified ISA kernel over `launch`. The CPU, Vulkan and OpenCL backends compile it
  /// (once per kernel text; Hologram::jit must be linked, else InvalidProgram says so); the
  /// "interp" backend runs it on the reference interpreter, with every check on.
  virtual void execute_program(const isa::Kernel &kernel, const LaunchConfig &launch,
                               std::span<const KernelArg> args) = 0;
  /// Waits until every launch and copy issued so far has finished.
  virtual void synchronize() = 0;
  /// The schedules that whole-launch operations have taken on this backend since it was created
  /// (see LibraryPathCounts); a schedule that never ran is absent.
  [[nodiscard]] virtual LibraryPathCounts library_path_counts() const = 0;

  // Atlas state (SPEC §4), kept across launches.
  virtual std::array<double, atlas::kNumClasses> resonance() = 0;
  virtual void set_resonance(const std::array<double, atlas::kNumClasses> &values) = 0;
  virtual uint32_t phase() = 0;
  virtual void set_phase(uint32_t phase) = 0; ///< taken modulo 768
  virtual void copy_to_boundary(uint64_t offset, std::span<const std::byte> data) = 0;
  virtual void copy_from_boundary(uint64_t offset, std::span<std::byte> out) = 0;

  // Conveniences over the byte-level copies.
  template <typename T> void write(BufferHandle b, std::span<const T> v, uint64_t offset = 0) {
    copy_to_buffer(b, offset, std::as_bytes(v));
  }
  template <typename T> std::vector<T> read(BufferHandle b) {
    std::vector<T> v(buffer_size(b) / sizeof(T));
    copy_from_buffer(b, 0, std::as_writable_bytes(std::span<T>(v)));
    return v;
  }
};

/// What create_backend may choose: "auto" (Vulkan GPU > OpenCL GPU > CUDA > CPU), or an ordered
/// list of backend names ("vulkan,cpu"); the first that starts wins. "interp" is the CPU backend
/// with ISA programs on the reference interpreter; it is chosen only by name.
struct Preference {
  std::vector<std::string> names; ///< empty: auto
  static Preference automatic() { return {}; }
  /// Parses "auto", "cpu", "interp", "vulkan,opencl,cpu"; throws Error on an unknown name.
  static Preference parse(const std::string &text);
};

/// One backend/device seen by discover(), with why it cannot be used when it cannot.
struct BackendReport {
  std::string backend;
  std::string device;
  bool usable = false;
  std::string reason;
};

/// Every backend this build knows and every device it finds.
std::vector<BackendReport> discover();

/// The first backend of the preference that starts; throws Error(BackendUnavailable) naming
/// every candidate and why it was rejected. Never falls back silently: the result's
/// device_info() says what was chosen.
std::unique_ptr<Backend> create_backend(const Preference &preference = Preference::automatic());

} // namespace hologram
