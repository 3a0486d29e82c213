// Compiled CPU modules: loading (a shared object with dlopen, or a descriptor linked into the
// application), choosing the x86 variant to run (the dispatcher), and launching kernels over
// the thread pool with errors reported like the interpreter's.
#pragma once

#include "../core/library_paths.h"
#include "hologram/codegen/cpu_abi.h"
#include "hologram/interp/interpreter.h"
#include "hologram/isa/launch.h"
#include "hologram/isa/program.h"
#include "hologram/runtime/cpu.h"

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::runtime {

class CpuModule {
public:
  /// Loads a shared object made by `hologram-cc --emit=shared`, or the CPU payload of a
  /// bundle (`--emit=bundle`) after checking the bundle; throws Error.
  static std::shared_ptr<CpuModule> load_file(const std::string &path);
  /// Wraps a descriptor linked into the application, or compiled in memory (`owner` holds
  /// its code); throws Error.
  static std::shared_ptr<CpuModule> from_descriptor(const hg_cpu_module_desc *desc,
                                                    std::string origin,
                                                    std::shared_ptr<const void> owner = nullptr);
  ~CpuModule();
  CpuModule(const CpuModule &) = delete;
  CpuModule &operator=(const CpuModule &) = delete;

  [[nodiscard]] const isa::Module &isa() const { return isa_; }
  [[nodiscard]] const hg_cpu_module_desc &desc() const { return *desc_; }
  [[nodiscard]] uint32_t variant() const { return variant_; }
  [[nodiscard]] std::string variant_name() const { return desc_->variant_names[variant_]; }
  [[nodiscard]] const std::string &origin() const { return origin_; }
  /// The x86 level (2, 3 or 4) of the vectorised library kernels that whole-launch operations
  /// run with: the highest the chosen variant's required features allow.
  [[nodiscard]] int library_level() const { return library_level_; }
  /// The index of a kernel by name; throws Error naming the kernels there are.
  [[nodiscard]] uint32_t kernel_index(std::string_view name) const;

  /// What one lane of a kernel has cost, in picoseconds of one thread, as measured on recent
  /// launches (0 until one is measured). Launches too small to repay waking the workers run
  /// on the calling thread.
  struct LaneCost {
    std::atomic<uint64_t> picoseconds{0};
    std::atomic<uint32_t> launches{0};
    /// kLastParallel: the last launch ran in tasks; kProbeNext: the next launch is timed.
    static constexpr uint8_t kLastParallel = 1, kProbeNext = 2;
    std::atomic<uint8_t> state{0};
  };
  [[nodiscard]] LaneCost &lane_cost(uint32_t kernel) const { return lane_costs_[kernel]; }

private:
  CpuModule() = default;
  static std::shared_ptr<CpuModule> load_bundle(const std::string &path);
  /// dlopens `dl_path`; `fd`, when not -1, is closed with the module.
  static std::shared_ptr<CpuModule> open_shared_object(const std::string &dl_path,
                                                       const std::string &origin, int fd);
  void init(const hg_cpu_module_desc *desc);

  void *dl_ = nullptr;
  int fd_ = -1;
  const hg_cpu_module_desc *desc_ = nullptr;
  isa::Module isa_;
  uint32_t variant_ = 0;
  int library_level_ = 2;
  std::string origin_;
  std::unique_ptr<LaneCost[]> lane_costs_;
  std::shared_ptr<const void> owner_; ///< what holds the code of a module compiled in memory
};

/// One launch argument resolved to memory: data/size for buffers and pools, bits for scalars.
struct CpuArg {
  void *data = nullptr;
  uint64_t size = 0;
  uint64_t bits = 0;
};

/// A launch's arguments as the generated code reads them (hg_cpu_launch.args and .sizes): per
/// parameter, the data of a buffer or pool and its size, or a pointer to the 8 bytes of a
/// scalar's bits (size 0). The generated header's entry points pack them so.
struct CpuArgPointers {
  void *const *pointers;
  const uint64_t *sizes;
};

/// A checked launch of one kernel, with what running it needs worked out: the same for every
/// launch of that kernel with the same configuration (the generated header's entry points
/// keep the last one each thread made).
struct PreparedCpuLaunch {
  LaunchConfig launch;      ///< what runs: one lane, once, for a launch-level kernel
  hg_cpu_blocks_fn fn;      ///< the kernel's code in the module's variant
  uint64_t blocks, lanes;   ///< lanes per block
  uint64_t shared, scratch; ///< a worker's shared memory and chunk-state scratch, in bytes
  bool workspace;           ///< whether the code reads either (else it runs without them)
};
/// Checks a launch of kernel `k` as launch_cpu_kernel does (throws Error).
PreparedCpuLaunch prepare_cpu_launch(const CpuModule &module, uint32_t k,
                                     const LaunchConfig &launch);
/// The launch of launch_cpu_kernel_over (throws as it does).
PreparedCpuLaunch prepare_cpu_launch_over(const CpuModule &module, uint32_t k, uint64_t count);
/// Runs a prepared launch of kernel `k`, as launch_cpu_kernel does.
void run_cpu_launch(const CpuModule &module, uint32_t k, const PreparedCpuLaunch &launch,
                    CpuArgPointers args, interp::AtlasState *atlas,
                    LibraryPathCounter *paths = nullptr);

/// A prepared launch kept to run again on the thread that kept it: its launch record filled
/// once, all but the arguments (the generated header's entry points keep the last one each
/// thread made, and a call that repeats it runs this). A thread keeps one at a time.
struct KeptCpuLaunch {
  const CpuModule *module;
  uint32_t kernel;
  PreparedCpuLaunch prepared;
  hg_cpu_launch record;
};
/// Keeps launch `p` of kernel `k`, whose buffer sizes are `sizes` (they outlive it). The
/// arguments are as the generated header's entry points pack them: buffer pointers and
/// pointers to each scalar's 8 bytes of bits.
KeptCpuLaunch keep_cpu_launch(const CpuModule &module, uint32_t k, const PreparedCpuLaunch &p,
                              const uint64_t *sizes);
/// Runs a kept launch with arguments `args`, as run_cpu_launch does without the Atlas state
/// (throws as it does): for a kernel that touches the state, run_cpu_launch runs it.
void run_kept_cpu_launch(KeptCpuLaunch &kept, void *const *args);

/// Runs kernel `k` of `module` over `launch`. `atlas` is the backend's Atlas state (locked by
/// the caller), and is null exactly when the kernel never touches it (no
/// HG_CPU_KERNEL_ATLAS). Whole-launch operations count the schedule they took in `paths` when
/// it is not null. Throws Error with the failing lane on a fault.
void launch_cpu_kernel(const CpuModule &module, uint32_t k, const LaunchConfig &launch,
                       CpuArgPointers args, interp::AtlasState *atlas,
                       LibraryPathCounter *paths = nullptr);
/// The same with arguments resolved to memory.
void launch_cpu_kernel(const CpuModule &module, uint32_t k, const LaunchConfig &launch,
                       std::span<const CpuArg> args, interp::AtlasState *atlas,
                       LibraryPathCounter *paths = nullptr);
/// Runs kernel `k` with one lane per element of `count`, in blocks of 256 lanes or of the
/// --block it was compiled for (a launch-level kernel: once); what the generated header's
/// calls without an hg_launch run. Throws as launch_cpu_kernel does, and when the count takes
/// more than 2^32 - 1 blocks.
void launch_cpu_kernel_over(const CpuModule &module, uint32_t k, uint64_t count,
                            CpuArgPointers args, interp::AtlasState *atlas);

} // namespace hologram::runtime
