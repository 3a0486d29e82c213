// The CPU backend's worker threads: one process-wide pool that runs the blocks of launches.
// The calling thread takes part, so launches from many threads at once never deadlock.
#pragma once

#include "hologram/runtime/cpu.h"

#include <cstddef>
#include <functional>

namespace hologram::runtime {

/// parallel_for with the task already a std::function (n >= 2).
void parallel_for_tasks(size_t n, const std::function<void(size_t)> &task);

/// Runs task(i) for i in [0, n) on the pool and the calling thread; returns when all are done.
/// One task runs directly, without wrapping `task` in a std::function (an allocation when its
/// captures are many): a small launch is one task.
template <typename Task> void parallel_for(size_t n, Task &&task) {
  if (n == 1)
    task(size_t{0});
  else if (n > 1)
    parallel_for_tasks(n, task);
}

} // namespace hologram::runtime
