// The CPU backend's thread pool (runtime/cpu/thread_pool.cpp): every task of a parallel loop
// runs exactly once, on the calling thread and the workers; an exception that a task throws,
// on a worker as on the calling thread, reaches the caller of parallel_for once no task is
// running any more (a worker thread must never let one escape: that ends the process), the
// tasks not yet started are skipped, and the pool works as before afterwards.
#include "cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace hologram::runtime;

namespace {

/// Two threads for the test's parallel loops; the default again afterwards.
struct TwoThreads {
  TwoThreads() { set_cpu_threads(2); }
  ~TwoThreads() { set_cpu_threads(0); }
};

/// Long enough that the worker claims tasks too while the calling thread runs one.
void pause_a_little() {
  std::this_thread::sleep_for(std::chrono::microseconds(200));
}

TEST(ThreadPool, RunsEveryTaskOnceOnTheCallerAndTheWorkers) {
  ASSERT_GE(std::thread::hardware_concurrency(), 2u) << "the pool needs a second thread here";
  TwoThreads threads;
  constexpr size_t kTasks = 64;
  std::vector<std::atomic<int>> runs(kTasks);
  std::atomic<int> elsewhere{0};
  const auto caller = std::this_thread::get_id();
  parallel_for(kTasks, [&](size_t i) {
    pause_a_little();
    runs[i].fetch_add(1);
    if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
  });
  for (size_t i = 0; i < kTasks; ++i) EXPECT_EQ(runs[i].load(), 1) << "task " << i;
  EXPECT_GT(elsewhere.load(), 0) << "no task ran on a worker";
}

TEST(ThreadPool, AnExceptionOnAWorkerReachesTheCaller) {
  ASSERT_GE(std::thread::hardware_concurrency(), 2u) << "the pool needs a second thread here";
  TwoThreads threads;
  constexpr size_t kTasks = 64;
  const auto caller = std::this_thread::get_id();
  std::atomic<int> running{0}, ran{0};
  std::atomic<bool> overlap_after_return{false};
  try {
    parallel_for(kTasks, [&](size_t i) {
      running.fetch_add(1);
      pause_a_little();
      ran.fetch_add(1);
      running.fetch_sub(1);
      if (std::this_thread::get_id() != caller)
        throw std::runtime_error("task " + std::to_string(i) + " failed on a worker");
    });
    FAIL() << "the worker's exception did not reach the caller";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("on a worker"), std::string::npos) << e.what();
    // Nothing of the loop runs once the exception has arrived.
    overlap_after_return = running.load() != 0;
  }
  EXPECT_FALSE(overlap_after_return.load());
  // The first failure skips the tasks that had not started: fewer than all of them ran.
  EXPECT_LT(ran.load(), static_cast<int>(kTasks));

  // The pool is unharmed: the next loop runs every task.
  std::atomic<int> count{0};
  parallel_for(kTasks, [&](size_t) {
    pause_a_little();
    count.fetch_add(1);
  });
  EXPECT_EQ(count.load(), static_cast<int>(kTasks));
}

TEST(ThreadPool, AnExceptionOnTheCallerWaitsForTheWorkersTasks) {
  ASSERT_GE(std::thread::hardware_concurrency(), 2u) << "the pool needs a second thread here";
  TwoThreads threads;
  constexpr size_t kTasks = 16;
  std::atomic<int> running{0};
  bool still_running = false;
  try {
    parallel_for(kTasks, [&](size_t i) {
      running.fetch_add(1);
      pause_a_little();
      running.fetch_sub(1);
      if (i == 0) throw std::logic_error("the first task failed");
    });
    FAIL() << "the exception did not reach the caller";
  } catch (const std::logic_error &e) {
    EXPECT_STREQ(e.what(), "the first task failed");
    // The captures of the loop's lambda live in this frame: no worker may still run it.
    still_running = running.load() != 0;
  }
  EXPECT_FALSE(still_running);
}

TEST(ThreadPool, EveryTaskThrowingGivesOneException) {
  TwoThreads threads;
  int caught = 0;
  try {
    parallel_for(size_t{32}, [](size_t i) { throw std::out_of_range(std::to_string(i)); });
  } catch (const std::out_of_range &) {
    ++caught;
  }
  EXPECT_EQ(caught, 1);
}

TEST(ThreadPool, ALoopInsideATaskRunsOnThatTasksThread) {
  // attention's tasks each run GEMMs whose own parallel_for must not queue a second job: the
  // outer loop already gives every thread work (runtime/cpu/library.cpp, fast_attention).
  ASSERT_GE(std::thread::hardware_concurrency(), 2u) << "the pool needs a second thread here";
  TwoThreads threads;
  // Two outer tasks, one with a loop of its own and one that ends at once: the thread that
  // took the short one is idle, and would take part in the inner loop were it a job.
  constexpr size_t kRounds = 10, kInner = 16;
  std::atomic<int> moved{0}, inner_runs{0};
  for (size_t round = 0; round < kRounds; ++round)
    parallel_for(size_t{2}, [&](size_t outer) {
      if (outer == 1) return;
      const auto mine = std::this_thread::get_id();
      parallel_for(kInner, [&](size_t) {
        pause_a_little();
        inner_runs.fetch_add(1);
        if (std::this_thread::get_id() != mine) moved.fetch_add(1);
      });
    });
  EXPECT_EQ(inner_runs.load(), static_cast<int>(kRounds * kInner));
  EXPECT_EQ(moved.load(), 0);
  // After the loop, a loop of the calling thread uses the workers again.
  std::atomic<int> elsewhere{0};
  const auto caller = std::this_thread::get_id();
  parallel_for(size_t{64}, [&](size_t) {
    pause_a_little();
    if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
  });
  EXPECT_GT(elsewhere.load(), 0);
}

} // namespace
