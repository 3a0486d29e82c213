// A fixed pool of worker threads fed with jobs; each job is a counter of task indices that
// the workers and the submitting thread claim until none is left. Waking and waiting use
// atomics (spin briefly, then a futex wait), not condition variables.
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace hologram::runtime {

namespace {

/// How long a thread spins on an atomic before it sleeps in the kernel: long enough that the
/// next launch of a loop of launches finds the workers awake, short enough not to burn a core.
constexpr auto kSpin = std::chrono::microseconds(50);

/// Spins (with the CPU's pause hint) until ready() or kSpin has passed; returns ready().
template <typename F> bool spin_until(F &&ready) {
  const auto end = std::chrono::steady_clock::now() + kSpin;
  for (unsigned i = 0;; ++i) {
    if (ready()) return true;
    __builtin_ia32_pause();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= end) return ready();
  }
}

/// Set while this thread runs a task of a job: a parallel_for inside a task (a library op's
/// GEMM in one of attention's tasks) runs its tasks itself, on this thread, as OpenMP runs a
/// nested region; the outer job already gives every thread work.
thread_local bool t_in_task = false;

struct Job {
  const std::function<void(size_t)> *task;
  size_t n;
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::atomic<bool> sleeping{false}; ///< the submitter sleeps on `done`
  std::atomic<bool> failed{false};
  std::exception_ptr error; ///< the first exception a task threw; written once, under `failed`

  /// Claims and runs tasks until none is left; the one that finishes the last wakes the
  /// submitter if it went to sleep (seq_cst on both sides: it either sees the count or is
  /// woken). A task that throws, on a worker as on the submitter, counts as done: the first
  /// exception is kept for the submitter to rethrow, and the tasks not yet started are
  /// skipped (counted, not run), so that the submitter always waits for every task that
  /// runs and no exception leaves a worker thread (which would end the process).
  void work() {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      if (!failed.load(std::memory_order_relaxed)) {
        try {
          t_in_task = true;
          (*task)(i);
          t_in_task = false;
        } catch (...) {
          t_in_task = false;
          if (!failed.exchange(true)) error = std::current_exception();
        }
      }
      if (done.fetch_add(1) + 1 == n && sleeping.load()) done.notify_all();
    }
  }

  /// Returns once every task has finished: spins briefly, then sleeps on `done`.
  void wait() {
    if (spin_until([&] { return done.load() == n; })) return;
    sleeping.store(true);
    for (size_t d; (d = done.load()) != n;) done.wait(d);
  }
};

/// The workers wait for jobs on `pending_`, the number of queued entries, with C++20 atomic
/// waits: a submitter wakes them with one notify (a futex wake, only when some worker sleeps),
/// never a mutex and condition-variable round trip; a worker that just finished spins a while
/// first, so a loop of launches finds it awake. The queue itself is under a mutex held for a
/// push or a pop only.
class Pool {
public:
  Pool() {
    unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 1; i < hw; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    stop_.store(true);
    pending_.fetch_add(1); // wakes every sleeper: the value changed
    pending_.notify_all();
    for (auto &t : threads_) t.join();
  }
  size_t size() const { return threads_.size() + 1; }

  void run(size_t n, const std::function<void(size_t)> &task, unsigned helpers) {
    auto job = std::make_shared<Job>();
    job->task = &task;
    job->n = n;
    {
      // Counted under the lock that pop() takes, so pending_ never runs below the queue.
      std::lock_guard lock(m_);
      for (unsigned i = 0; i < helpers; ++i) queue_.push_back(job);
      pending_.fetch_add(helpers);
    }
    if (sleepers_.load() > 0) pending_.notify_all();
    job->work();
    job->wait();
    // Every task has finished or been skipped, so `task` is no longer in use anywhere. The
    // exception leaves the Job here: a worker may hold the Job last and destroy it, and the
    // exception object must be freed by this thread, which catches it, not by that one.
    if (job->failed.load()) std::rethrow_exception(std::exchange(job->error, nullptr));
  }

private:
  std::shared_ptr<Job> pop() {
    std::lock_guard lock(m_);
    if (queue_.empty()) return nullptr;
    auto job = std::move(queue_.front());
    queue_.pop_front();
    pending_.fetch_sub(1);
    return job;
  }

  void loop() {
    while (!stop_.load()) {
      if (!spin_until([&] { return pending_.load() > 0 || stop_.load(); })) {
        // Announce the sleep before checking once more (seq_cst): a submitter that queued
        // after this either is seen here or sees the sleeper and notifies.
        sleepers_.fetch_add(1);
        pending_.wait(0);
        sleepers_.fetch_sub(1);
        continue;
      }
      if (auto job = pop()) job->work();
    }
  }

  std::mutex m_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::atomic<size_t> pending_{0};
  std::atomic<unsigned> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

Pool &pool() {
  static Pool p;
  return p;
}

} // namespace

std::atomic<unsigned> detail::g_cpu_threads{0};
std::atomic<unsigned> detail::g_default_threads{0};

unsigned cpu_threads() {
  if (unsigned t = detail::g_cpu_threads.load(std::memory_order_relaxed)) return t;
  // Worked out once (HOLOGRAM_NUM_THREADS, else the pool's threads: getenv scans the
  // environment) and published for cpu_threads_now(), which every launch calls.
  static const unsigned by_default = [] {
    unsigned t = 0;
    if (const char *env = std::getenv("HOLOGRAM_NUM_THREADS")) {
      long v = std::strtol(env, nullptr, 10);
      if (v > 0) t = static_cast<unsigned>(v);
    }
    if (t == 0) t = static_cast<unsigned>(pool().size());
    detail::g_default_threads.store(t, std::memory_order_relaxed);
    return t;
  }();
  return by_default;
}

void set_cpu_threads(unsigned n) {
  detail::g_cpu_threads = n;
}

void parallel_for_tasks(size_t n, const std::function<void(size_t)> &task) {
  unsigned threads = std::min<size_t>(cpu_threads(), pool().size());
  if (threads <= 1 || t_in_task) {
    for (size_t i = 0; i < n; ++i) task(i);
    return;
  }
  pool().run(n, task, static_cast<unsigned>(std::min<size_t>(threads - 1, n - 1)));
}

} // namespace hologram::runtime
