// The runtime side of the generated header's C entry points (SPEC §8): kernels linked into
// the application run on a process-wide CPU context. Each module's variant is chosen once,
// on its first call; errors become hg_status codes with the message in hg_cpu_last_error().
#include "../core/c_abi.h"
#include "../core/small_array.h"
#include "cpu_module.h"
#include "hologram/hologram.h"
#include "hologram/runtime/error.h"

#include <cstring>
#include <map>
#include <mutex>
#include <optional>

namespace hologram::runtime {
namespace {

thread_local std::string g_last_error;

struct LinkedModules {
  std::mutex mutex;
  std::map<const hg_cpu_module_desc *, std::shared_ptr<CpuModule>> modules;
  std::mutex atlas_mutex;
  interp::AtlasState atlas;
};

LinkedModules &linked() {
  static LinkedModules l;
  return l;
}

/// The module of `desc`, loaded on its first call. Modules stay loaded for the life of the
/// process, so each thread keeps the last one it used without taking the lock again.
const CpuModule &module_of(const hg_cpu_module_desc *desc) {
  thread_local const hg_cpu_module_desc *last_desc = nullptr;
  thread_local const CpuModule *last_module = nullptr;
  if (desc == last_desc) return *last_module;
  auto &l = linked();
  std::lock_guard lock(l.mutex);
  auto &m = l.modules[desc];
  if (!m)
    m = CpuModule::from_descriptor(desc, desc->source_name && *desc->source_name ? desc->source_name
                                                                                 : "linked module");
  last_desc = desc;
  last_module = m.get();
  return *m;
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
  try {
    const CpuModule &m = module_of(desc);
    const isa::Kernel &k = m.isa().kernels.at(kernel);
    SmallArray<CpuArg, 16> cargs(k.params.size());
    const uint64_t unknown = uint64_t{1} << 62; // raw pointers carry no size
    std::optional<uint64_t> count;
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (k.params[i].kind == isa::ParamKind::Scalar) {
        std::memcpy(&cargs[i].bits, args[i], sizeof(uint64_t));
        if (!count && isa::is_int(k.params[i].type)) count = cargs[i].bits;
      } else {
        cargs[i].data = args[i];
        cargs[i].size = unknown;
      }
    }
    LaunchConfig config;
    if (launch_ptr) {
      // The generated header's hg_launch is hologram.h's (one definition, HG_LAUNCH_DEFINED).
      config = launch_config_of(*static_cast<const hg_launch *>(launch_ptr));
    } else if (count) {
      // Blocks of 256 lanes, or of the --block the kernel was compiled for.
      const uint32_t *block = m.desc().kernels[kernel].block;
      config = LaunchConfig::linear(*count == 0 ? 1 : *count, block[0] ? block[0] : 256);
      if (block[0]) config.block = {block[0], block[1], block[2]};
    } else if (!(m.desc().kernels[kernel].flags & HG_CPU_KERNEL_LAUNCH_LEVEL)) {
      throw Error(ErrorCode::InvalidArgument,
                  "kernel '" + k.name +
                      "' has no integer scalar to size a default launch; pass "
                      "an hg_launch");
    }
    auto &l = linked();
    if (m.desc().kernels[kernel].flags & HG_CPU_KERNEL_ATLAS) {
      std::lock_guard lock(l.atlas_mutex);
      launch_cpu_kernel(m, kernel, config, cargs.span(), l.atlas);
    } else {
      thread_local interp::AtlasState unused; // such kernels never touch it
      launch_cpu_kernel(m, kernel, config, cargs.span(), unused);
    }
    if (!g_last_error.empty()) g_last_error.clear();
    return HG_OK;
  } catch (const Error &e) {
    g_last_error = e.what();
    return status_code_of(e.code());
  } catch (const std::exception &e) {
    g_last_error = e.what();
    return HG_ERROR_INTERNAL;
  }
}

} // extern "C"
