// The modules a device backend (Vulkan, OpenCL, CUDA) has loaded, each with its kernels ready
// to run in the backend's own form (`Compiled`), behind handles.
#pragma once

#include "handle_table.h"
#include "hologram/isa/program.h"
#include "hologram/runtime/backend.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::runtime {

/// The error for a module (`what`) with no payload `backend` runs: each refused payload with
/// its reason (`refused`: "; name: why" each), or else the targets it was compiled for, and a
/// target to add (`suggestion`).
inline Error no_code_for(const std::string &what, const std::string &backend,
                         const std::string &refused, const std::vector<std::string> &targets,
                         const std::string &suggestion) {
  std::string list;
  for (const auto &t : targets) list += (list.empty() ? "" : ", ") + t;
  return Error(ErrorCode::InvalidModule,
               what + " holds no code the " + backend + " backend runs" +
                   (refused.empty() ? " (its targets: " + list + ")" : refused) +
                   "; add a target for it to --target (such as " + suggestion + ")");
}

template <typename Compiled> class LoadedModules {
public:
  struct Module {
    std::string origin, variant;
    isa::Module module;
    std::map<std::string, Compiled, std::less<>> programs;
  };

  ModuleHandle insert(std::shared_ptr<Module> m) { return {table_.insert(std::move(m))}; }
  void remove(ModuleHandle m) { table_.remove(m.id); }
  ModuleInfo info(ModuleHandle m) {
    auto mod = table_.get(m.id);
    ModuleInfo info;
    info.origin = mod->origin;
    info.variant = mod->variant;
    for (const auto &k : mod->module.kernels) info.kernels.push_back(k.name);
    return info;
  }
  /// Kernel `kernel` of a module as compiled, with the module kept alive while this lives.
  struct Found {
    std::shared_ptr<Module> module;
    const Compiled *compiled = nullptr;
    const Compiled &operator*() const { return *compiled; }
  };
  /// Kernel `kernel` of module `m`, or InvalidArgument naming both.
  Found find(ModuleHandle m, std::string_view kernel) {
    auto mod = table_.get(m.id);
    auto it = mod->programs.find(kernel);
    if (it == mod->programs.end())
      throw Error(ErrorCode::InvalidArgument, "module #" + std::to_string(m.id) + " ('" +
                                                  mod->origin + "') has no kernel '" +
                                                  std::string(kernel) + "'");
    return {mod, &it->second};
  }

private:
  HandleTable<Module> table_{"module"};
};

} // namespace hologram::runtime
