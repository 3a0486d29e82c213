// The runtime side of the generated header's C entry points (SPEC §8): kernels linked into
// the application run on a process-wide CPU context. Each module's variant is chosen once,
// on its first call; errors become hg_status codes with the message in hg_cpu_last_error().
#include "../core/c_abi.h"
#include "cpu_module.h"
#include "hologram/hologram.h"
#include "hologram/runtime/error.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <vector>

namespace hologram::runtime {
namespace {

thread_local std::string g_last_error;
/// Whether g_last_error holds a message: a call that succeeds tests this (a thread_local with
/// no constructor) and not the string (whose first use on a thread constructs it).
thread_local bool g_has_error = false;

/// Forgets the thread's last error, after a call that succeeded.
inline void succeeded() {
  if (g_has_error) {
    g_last_error.clear();
    g_has_error = false;
  }
}

/// A module linked into the application, with what its entry points need of each kernel.
struct LinkedModule {
  struct Kernel {
    /// The parameter whose value sizes a launch without an hg_launch (the first integer
    /// scalar), or -1.
    int count_param = -1;
    /// hg_cpu_launch.sizes: a raw pointer carries no size (2^62 stands for unknown), and a
    /// scalar has none.
    std::vector<uint64_t> sizes;
  };
  std::shared_ptr<CpuModule> module;
  std::vector<Kernel> kernels;
};

struct LinkedModules {
  std::mutex mutex;
  std::map<const hg_cpu_module_desc *, LinkedModule> modules;
  std::mutex atlas_mutex;
  interp::AtlasState atlas;
};

LinkedModules &linked() {
  static LinkedModules l;
  return l;
}

LinkedModule load_linked(const hg_cpu_module_desc *desc) {
  LinkedModule lm;
  lm.module = CpuModule::from_descriptor(
      desc, desc->source_name && *desc->source_name ? desc->source_name : "linked module");
  const uint64_t unknown = uint64_t{1} << 62;
  for (const isa::Kernel &k : lm.module->isa().kernels) {
    LinkedModule::Kernel &lk = lm.kernels.emplace_back();
    for (size_t i = 0; i < k.params.size(); ++i) {
      const bool scalar = k.params[i].kind == isa::ParamKind::Scalar;
      lk.sizes.push_back(scalar ? 0 : unknown);
      if (scalar && lk.count_param < 0 && isa::is_int(k.params[i].type))
        lk.count_param = static_cast<int>(i);
    }
  }
  return lm;
}

/// The module of `desc`, loaded on its first call. Modules stay loaded for the life of the
/// process, so each thread keeps the last one it used without taking the lock again.
const LinkedModule &module_of(const hg_cpu_module_desc *desc) {
  thread_local const hg_cpu_module_desc *last_desc = nullptr;
  thread_local const LinkedModule *last_module = nullptr;
  if (desc == last_desc) return *last_module;
  auto &l = linked();
  std::lock_guard lock(l.mutex);
  auto it = l.modules.find(desc);
  if (it == l.modules.end()) it = l.modules.emplace(desc, load_linked(desc)).first;
  last_desc = desc;
  last_module = &it->second;
  return it->second;
}

/// The last launch this thread made through an entry point, checked and worked out: a loop
/// of calls of one kernel (kept.kernel) with one configuration (an hg_launch's bytes, or the
/// count of a launch without one) goes straight to its kept launch.
struct LastLaunch {
  const hg_cpu_module_desc *desc = nullptr;
  bool has_launch = false;
  hg_launch launch{};
  uint64_t count = 0;
  /// What running it again takes, so that hologram_cpu_call does not look the module up: the
  /// launch (its module is loaded for the life of the process, and its record points at the
  /// kernel's sizes), the kernel's count parameter, and whether it touches the Atlas state
  /// (whose lock run_kept takes; such a launch is run by run_cpu_launch each time).
  KeptCpuLaunch kept{};
  int count_param = -1;
  bool atlas = false;
};
thread_local LastLaunch g_last_launch;

/// A failed call's status, with its message kept for hg_cpu_last_error().
int32_t failed(const std::exception_ptr &e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error &err) {
    g_last_error = err.what();
    g_has_error = true;
    return status_code_of(err.code());
  } catch (const std::exception &err) {
    g_last_error = err.what();
    g_has_error = true;
    return HG_ERROR_INTERNAL;
  }
}

/// Runs the launch `last` keeps, under the Atlas state's lock where the kernel touches it.
[[gnu::always_inline]] inline void run_kept(LastLaunch &last, void *const *args) {
  if (last.atlas) {
    auto &l = linked();
    std::lock_guard lock(l.atlas_mutex);
    run_cpu_launch(*last.kept.module, last.kept.kernel, last.kept.prepared,
                   CpuArgPointers{args, last.kept.record.sizes}, &l.atlas);
  } else {
    run_kept_cpu_launch(last.kept, args);
  }
}

/// hologram_cpu_call for a call that does not repeat the thread's last launch: looks the
/// module up, checks the launch and keeps it as this thread's last.
[[gnu::noinline]] int32_t checked_call(const hg_cpu_module_desc *desc, uint32_t kernel,
                                       void *const *args, const void *launch_ptr) {
  try {
    const LinkedModule &lm = module_of(desc);
    const CpuModule &m = *lm.module;
    if (kernel >= lm.kernels.size())
      throw Error(ErrorCode::InvalidArgument,
                  "module '" + m.origin() + "' has no kernel " + std::to_string(kernel));
    const hg_cpu_kernel_desc &kd = m.desc().kernels[kernel];
    const LinkedModule::Kernel &lk = lm.kernels[kernel];
    // The generated header's hg_launch is hologram.h's (one definition, HG_LAUNCH_DEFINED).
    const auto *launch = static_cast<const hg_launch *>(launch_ptr);
    uint64_t count = 0;
    if (!launch) {
      if (lk.count_param >= 0)
        std::memcpy(&count, args[lk.count_param], sizeof(count));
      else if (!(kd.flags & HG_CPU_KERNEL_LAUNCH_LEVEL))
        throw Error(ErrorCode::InvalidArgument,
                    "kernel '" + m.isa().kernels[kernel].name +
                        "' has no integer scalar to size a default launch; pass an hg_launch");
    }
    // A repeat of the last launch went the short way (hologram_cpu_call), so this one is new:
    // checked before it is kept, so that a launch that throws leaves the last one as it was.
    PreparedCpuLaunch p = launch ? prepare_cpu_launch(m, kernel, launch_config_of(*launch))
                                 : prepare_cpu_launch_over(m, kernel, count);
    LastLaunch &last = g_last_launch;
    last.desc = desc;
    last.has_launch = launch != nullptr;
    last.launch = launch ? *launch : hg_launch{};
    last.count = count;
    last.kept = keep_cpu_launch(m, kernel, p, lk.sizes.data());
    last.count_param = lk.count_param;
    last.atlas = (kd.flags & HG_CPU_KERNEL_ATLAS) != 0;
    run_kept(last, args);
    succeeded();
    return HG_OK;
  } catch (...) {
    return failed(std::current_exception());
  }
}

} // namespace
} // namespace hologram::runtime

using namespace hologram;
using namespace hologram::runtime;

extern "C" {

const char *hg_cpu_last_error(void) {
  return g_last_error.c_str();
}

int32_t hologram_cpu_call(const hg_cpu_module_desc *desc, uint32_t kernel, void *const *args,
                          const void *launch_ptr) {
  // The usual call in a loop: the kernel this thread launched last, again with the same
  // hg_launch bytes or over the same count, runs with what that launch worked out (a few
  // loads and compares where the checked path takes a lookup).
  LastLaunch &last = g_last_launch;
  if (desc && last.desc == desc && last.kept.kernel == kernel &&
      last.has_launch == (launch_ptr != nullptr)) {
    bool same = false;
    if (launch_ptr) {
      same = std::memcmp(launch_ptr, &last.launch, sizeof(hg_launch)) == 0;
    } else {
      uint64_t count = 0;
      if (last.count_param >= 0) std::memcpy(&count, args[last.count_param], sizeof(count));
      same = count == last.count;
    }
    if (same) {
      try {
        run_kept(last, args);
      } catch (...) {
        return failed(std::current_exception());
      }
      succeeded();
      return HG_OK;
    }
  }
  return checked_call(desc, kernel, args, launch_ptr);
}

} // extern "C"
