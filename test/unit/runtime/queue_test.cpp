// Asynchronous queues (issue 19) on every backend: commands return at once and run in order,
// events order queues against each other, a failure is its command's Error and skips the rest
// of its queue until finish(), and stream() overlaps copies with steps and stops at a failure.
#include "hologram/runtime/queue.h"
#include "hologram/runtime/stream.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <future>
#include <numeric>

using namespace hologram;

namespace {

using test::code_of;

class Queues : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    setenv("XDG_RUNTIME_DIR", "/tmp", 0);
    b = create_backend(Preference::parse(GetParam()));
  }
  std::unique_ptr<Backend> b;
};

/// A host command that holds its queue until open() is called.
struct Gate {
  std::promise<void> promise;
  std::shared_future<void> future = promise.get_future().share();
  void open() { promise.set_value(); }
  std::function<void()> hold() {
    return [f = future] { f.wait(); };
  }
};

} // namespace

TEST_P(Queues, CommandsReturnAtOnceAndRunInOrder) {
  auto m = test::parse_ok(test::kSaxpy);
  const uint64_t n = 1000;
  std::vector<float> x(n), y(n, 1.0f), out(n);
  std::iota(x.begin(), x.end(), 0.0f);
  auto bx = b->allocate_buffer(n * 4), by = b->allocate_buffer(n * 4);
  KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::f32(2.0f),
                      KernelArg::u64(n)};
  Queue q(*b);
  Gate gate;
  Event held = q.host(gate.hold());
  Event in_x = q.copy_to_buffer(bx, 0, std::as_bytes(std::span(x)));
  Event in_y = q.copy_to_buffer(by, 0, std::as_bytes(std::span(y)));
  Event run = q.execute_program(m.kernels[0], LaunchConfig::linear(n, 64), args);
  Event back = q.copy_from_buffer(by, 0, std::as_writable_bytes(std::span(out)));
  // Nothing has run: the first command holds the queue.
  EXPECT_FALSE(held.ready());
  EXPECT_FALSE(back.ready());
  EXPECT_EQ(b->read<float>(by)[0], 0.0f);
  gate.open();
  back.wait();
  EXPECT_TRUE(in_x.ready() && in_y.ready() && run.ready());
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * static_cast<float>(i) + 1.0f);
  q.finish();
}

TEST_P(Queues, AnEventOrdersAnotherQueue) {
  const uint64_t n = 256;
  std::vector<uint32_t> data(n), out(n);
  std::iota(data.begin(), data.end(), 7u);
  auto buf = b->allocate_buffer(n * 4);
  Queue writer(*b), reader(*b);
  Gate gate;
  writer.host(gate.hold());
  Event written = writer.copy_to_buffer(buf, 0, std::as_bytes(std::span(data)));
  reader.wait_for(written);
  Event read = reader.copy_from_buffer(buf, 0, std::as_writable_bytes(std::span(out)));
  EXPECT_FALSE(read.ready());
  gate.open();
  read.wait();
  EXPECT_EQ(out, data);
  reader.finish();
  writer.finish();
}

TEST_P(Queues, AFailureIsItsEventsErrorAndSkipsTheQueueUntilFinish) {
  auto buf = b->allocate_buffer(16);
  std::vector<std::byte> bytes(8);
  Queue q(*b);
  Event bad = q.copy_to_buffer(buf, 12, bytes); // outside the buffer
  Event later = q.copy_to_buffer(buf, 0, bytes);
  std::string msg;
  EXPECT_EQ(code_of([&] { bad.wait(); }, &msg), ErrorCode::OutOfBounds);
  EXPECT_NE(msg.find("is outside buffer #1 of 16 bytes"), std::string::npos) << msg;
  EXPECT_EQ(code_of([&] { later.wait(); }, &msg), ErrorCode::OutOfBounds);
  EXPECT_EQ(msg.rfind("skipped: an earlier command of this queue failed: ", 0), 0u) << msg;
  EXPECT_EQ(code_of([&] { q.finish(); }, &msg), ErrorCode::OutOfBounds);
  // finish() reported it: the queue runs commands again.
  Event fine = q.copy_to_buffer(buf, 0, bytes);
  fine.wait();
  q.finish();
  EXPECT_EQ(code_of([&] { q.launch({424242}, "k", LaunchConfig::linear(1), {}).wait(); }),
            ErrorCode::InvalidHandle);
  EXPECT_EQ(code_of([&] { q.finish(); }), ErrorCode::InvalidHandle);
  EXPECT_EQ(code_of([&] { q.host(nullptr); }), ErrorCode::InvalidArgument);
}

TEST_P(Queues, DestroyingAQueueWaitsForItsCommands) {
  std::atomic<int> ran{0};
  {
    Queue q(*b);
    for (int i = 0; i < 5; ++i) q.host([&] { ++ran; });
  }
  EXPECT_EQ(ran.load(), 5);
}

TEST_P(Queues, StreamStopsAtAFailedStepAndRethrowsIt) {
  auto pool = b->allocate_pool(64);
  int chunks_read = 0;
  auto source = [&](std::span<std::byte> out) -> size_t {
    ++chunks_read;
    std::fill(out.begin(), out.end(), std::byte{1});
    return out.size(); // endless
  };
  auto step = [&](PoolHandle, uint64_t, uint64_t, uint64_t index) {
    if (index == 3) throw Error(ErrorCode::LaunchFailed, "step 3 failed");
  };
  std::string msg;
  EXPECT_EQ(code_of([&] { stream(*b, pool, source, step); }, &msg), ErrorCode::LaunchFailed);
  EXPECT_EQ(msg, "step 3 failed");
  EXPECT_LE(chunks_read, 6); // the source is not read on after the failure is seen
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Queues,
                         ::testing::Values("cpu", "interp", "vulkan", "opencl"),
                         [](const auto &p) { return p.param; });
