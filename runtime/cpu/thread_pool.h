// The CPU backend's worker threads: one process-wide pool that runs the blocks of launches.
// The calling thread takes part, so launches from many threads at once never deadlock.
#pragma once

#include "hologram/runtime/cpu.h"

#include <atomic>
#include <cstddef>
#include <functional>

namespace hologram::runtime {

namespace detail {
/// set_cpu_threads's count; 0 for the default.
extern std::atomic<unsigned> g_cpu_threads;
/// The default count (HOLOGRAM_NUM_THREADS, else the pool's threads) once cpu_threads() has
/// worked it out; 0 before.
extern std::atomic<unsigned> g_default_threads;
} // namespace detail

/// cpu_threads(), without a call once the count is known (every launch reads it).
inline unsigned cpu_threads_now() {
  if (unsigned t = detail::g_cpu_threads.load(std::memory_order_relaxed)) return t;
  if (unsigned t = detail::g_default_threads.load(std::memory_order_relaxed)) return t;
  return cpu_threads();
}

/// parallel_for with the task already a std::function (n >= 2).
void parallel_for_tasks(size_t n, const std::function<void(size_t)> &task);

/// Runs task(i) for i in [0, n) on the pool and the calling thread; returns when all are done.
/// Called from within a task of another parallel_for, it runs them on the calling thread.
/// When a task throws, on whichever thread, the tasks not yet started are skipped and the
/// first exception is rethrown here once the running ones have finished.
/// One task runs directly, without wrapping `task` in a std::function (an allocation when its
/// captures are many): a small launch is one task.
template <typename Task> void parallel_for(size_t n, Task &&task) {
  if (n == 1)
    task(size_t{0});
  else if (n > 1)
    parallel_for_tasks(n, task);
}

} // namespace hologram::runtime
