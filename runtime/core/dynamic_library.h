// Opening a driver's loader library at run time, so the runtime starts on machines without it.
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>

namespace hologram::runtime {

/// The first of `names` that dlopen opens (RTLD_NOW | RTLD_LOCAL), or nullptr with `error`
/// saying that `what` (its first name) cannot be opened and why.
inline void *open_library(std::initializer_list<const char *> names, const std::string &what,
                          std::string &error) {
  for (const char *name : names)
    if (void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return lib;
  const char *e = dlerror();
  error = what + " (" + *names.begin() + ") cannot be opened: " + (e ? e : "unknown error");
  return nullptr;
}

} // namespace hologram::runtime
