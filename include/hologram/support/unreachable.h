// The end of a function after a switch that handles every value of an enum (-Wswitch-enum makes
// a missing one a compile error). Only a value outside the enum gets here, which is a bug in
// hologram (a bad cast or corrupted memory), never bad input: it stops with a message.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace hologram {

[[noreturn]] inline void unreachable_enum(const char *what) {
  std::fprintf(stderr, "hologram: internal error: %s holds a value outside its enum\n", what);
  std::abort();
}

} // namespace hologram
