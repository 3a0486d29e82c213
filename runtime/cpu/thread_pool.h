// The CPU backend's worker threads: one process-wide pool that runs the blocks of launches.
// The calling thread takes part, so launches from many threads at once never deadlock.
#pragma once

#include "hologram/runtime/cpu.h"

#include <cstddef>
#include <functional>

namespace hologram::runtime {

/// Runs task(i) for i in [0, n) on the pool and the calling thread; returns when all are done.
void parallel_for(size_t n, const std::function<void(size_t)> &task);

} // namespace hologram::runtime
