// A fixed pool of worker threads fed with jobs; each job is a counter of task indices that
// the workers and the submitting thread claim until none is left.
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace hologram::runtime {

namespace {

struct Job {
  const std::function<void(size_t)> *task;
  size_t n;
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::mutex m;
  std::condition_variable finished;

  /// Claims and runs tasks until none is left.
  void work() {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      (*task)(i);
      if (done.fetch_add(1) + 1 == n) {
        std::lock_guard lock(m);
        finished.notify_all();
      }
    }
  }
};

class Pool {
public:
  Pool() {
    unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 1; i < hw; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    {
      std::lock_guard lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto &t : threads_) t.join();
  }
  size_t size() const { return threads_.size() + 1; }

  void run(size_t n, const std::function<void(size_t)> &task, unsigned helpers) {
    auto job = std::make_shared<Job>();
    job->task = &task;
    job->n = n;
    {
      std::lock_guard lock(m_);
      for (unsigned i = 0; i < helpers; ++i) queue_.push_back(job);
    }
    cv_.notify_all();
    job->work();
    std::unique_lock lock(job->m);
    job->finished.wait(lock, [&] { return job->done.load() == n; });
  }

private:
  void loop() {
    while (true) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock lock(m_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job->work();
    }
  }

  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

Pool &pool() {
  static Pool p;
  return p;
}

std::atomic<unsigned> g_threads{0};

} // namespace

unsigned cpu_threads() {
  if (unsigned t = g_threads.load()) return t;
  if (const char *env = std::getenv("HOLOGRAM_NUM_THREADS")) {
    long v = std::strtol(env, nullptr, 10);
    if (v > 0) return static_cast<unsigned>(v);
  }
  return static_cast<unsigned>(pool().size());
}

void set_cpu_threads(unsigned n) {
  g_threads = n;
}

void parallel_for(size_t n, const std::function<void(size_t)> &task) {
  if (n == 0) return;
  unsigned threads = std::min<size_t>(cpu_threads(), pool().size());
  if (n == 1 || threads <= 1) {
    for (size_t i = 0; i < n; ++i) task(i);
    return;
  }
  pool().run(n, task, static_cast<unsigned>(std::min<size_t>(threads - 1, n - 1)));
}

} // namespace hologram::runtime
