// Buffer views, sub-buffers and host memory (SPEC §10) on every backend: a view is the part of
// a buffer a kernel sees as its whole parameter, a sub-buffer is that part as a buffer of its
// own, and host memory becomes a buffer in place where the device can use it. Each test runs
// on cpu, interp, vulkan (lavapipe in CI) and opencl (PoCL in CI).
#include "hologram/runtime/backend.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>

using namespace hologram;

namespace {

using test::code_of;

class BufferViews : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    setenv("XDG_RUNTIME_DIR", "/tmp", 0);
    b = create_backend(Preference::parse(GetParam()));
    align = b->device_info().view_alignment;
    // The first offset that every parameter type and the device allow.
    step = std::lcm<uint64_t>(align, 8);
  }
  std::unique_ptr<Backend> b;
  uint64_t align = 1, step = 8;
};

std::vector<float> iota(size_t n, float first) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

} // namespace

TEST_P(BufferViews, AKernelSeesAViewAsItsWholeParameter) {
  auto m = test::parse_ok(test::kSaxpy);
  const uint64_t n = 64, off = 2 * step; // the view starts `off` bytes into both buffers
  const uint64_t total = off / 4 + n + 16;
  auto bx = b->allocate_buffer(total * 4), by = b->allocate_buffer(total * 4);
  b->write<float>(bx, iota(total, 0.0f));
  b->write<float>(by, std::vector<float>(total, 1.0f));
  KernelArg args[] = {KernelArg::buffer(bx, off), KernelArg::buffer(by, off, n * 4),
                      KernelArg::f32(2.0f), KernelArg::u64(n)};
  b->execute_program(m.kernels[0], LaunchConfig::linear(n, 32), args);
  auto y = b->read<float>(by);
  for (uint64_t i = 0; i < total; ++i) {
    bool in = i >= off / 4 && i < off / 4 + n;
    ASSERT_EQ(y[i], in ? 2.0f * static_cast<float>(i) + 1.0f : 1.0f) << "element " << i;
  }
}

TEST_P(BufferViews, SubBuffersShareTheirParentsMemoryAndOutliveIt) {
  auto m = test::parse_ok(test::kSaxpy);
  const uint64_t n = 32, total = 4 * step / 4 + 2 * n;
  auto parent = b->allocate_buffer(total * 4);
  auto sub = b->create_sub_buffer(parent, 2 * step, n * 4 * 2);
  EXPECT_EQ(b->buffer_size(sub), n * 8);
  // A sub-buffer of a sub-buffer: offsets add up.
  auto inner = b->create_sub_buffer(sub, step, n * 4);
  EXPECT_EQ(b->buffer_size(inner), n * 4);
  b->write<float>(inner, std::vector<float>(n, 5.0f));
  auto whole = b->read<float>(parent);
  const uint64_t first = (3 * step) / 4;
  for (uint64_t i = 0; i < total; ++i)
    ASSERT_EQ(whole[i], i >= first && i < first + n ? 5.0f : 0.0f) << "element " << i;
  // The parent's handle goes; its memory stays while a sub-buffer uses it.
  b->free_buffer(parent);
  auto bx = b->allocate_buffer(n * 4);
  b->write<float>(bx, iota(n, 1.0f));
  KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(inner), KernelArg::f32(1.0f),
                      KernelArg::u64(n)};
  b->execute_program(m.kernels[0], LaunchConfig::linear(n, 8), args);
  auto out = b->read<float>(inner);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 6.0f + static_cast<float>(i));
  auto outer = b->read<float>(sub);
  EXPECT_EQ(outer[step / 4], 6.0f);
  EXPECT_EQ(outer[0], 0.0f);
  b->free_buffer(inner);
  b->free_buffer(sub);
}

TEST_P(BufferViews, WholeLaunchInstructionsTakeViews) {
  auto m = test::parse_ok(test::kTotal);
  const uint64_t n = 1000, skip = step / 4;
  auto bx = b->allocate_buffer((skip + n + 7) * 4), out = b->allocate_buffer(3 * step);
  b->write<float>(bx, std::vector<float>(skip + n + 7, 1.0f));
  b->write<float>(bx, std::vector<float>(n, 0.5f), skip * 4);
  KernelArg args[] = {KernelArg::buffer(bx, skip * 4, n * 4), KernelArg::buffer(out, step, 4),
                      KernelArg::u64(n)};
  b->execute_program(m.kernels[0], LaunchConfig::linear(1), args);
  auto got = b->read<float>(out);
  EXPECT_EQ(got[step / 4], 500.0f);
  EXPECT_EQ(got[0], 0.0f);
  // The view bounds the reduction: n + 1 elements do not fit in it.
  KernelArg past[] = {KernelArg::buffer(bx, skip * 4, n * 4), KernelArg::buffer(out),
                      KernelArg::u64(n + 1)};
  std::string msg;
  EXPECT_EQ(code_of([&] { b->execute_program(m.kernels[0], LaunchConfig::linear(1), past); }, &msg),
            ErrorCode::OutOfBounds);
  EXPECT_NE(msg.find("%x needs"), std::string::npos) << msg;
  EXPECT_NE(msg.find("but the buffer holds 4000"), std::string::npos) << msg;
}

TEST_P(BufferViews, BadViewsAndSubBuffersAreErrors) {
  auto m = test::parse_ok(test::kSaxpy);
  auto buf = b->allocate_buffer(4 * step);
  auto pool = b->allocate_pool(64);
  std::string msg;
  EXPECT_EQ(code_of([&] { b->create_sub_buffer(buf, 4 * step, 4); }, &msg), ErrorCode::OutOfBounds);
  EXPECT_NE(msg.find("is outside buffer #1 of " + std::to_string(4 * step) + " bytes"),
            std::string::npos)
      << msg;
  EXPECT_EQ(code_of([&] { b->create_sub_buffer(buf, step, 4 * step); }), ErrorCode::OutOfBounds);
  EXPECT_EQ(code_of([&] { b->create_sub_buffer(buf, 0, 0); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("holds no bytes"), std::string::npos) << msg;
  EXPECT_EQ(code_of([&] { b->create_sub_buffer({999}, 0, 4); }), ErrorCode::InvalidHandle);
  if (align > 4) {
    EXPECT_EQ(code_of([&] { b->create_sub_buffer(buf, 4, 4); }, &msg), ErrorCode::InvalidArgument);
    EXPECT_NE(msg.find("starts at byte 4, which is not a multiple of " + std::to_string(align)),
              std::string::npos)
        << msg;
  }
  auto run = [&](KernelArg x, KernelArg y) {
    KernelArg args[] = {x, y, KernelArg::f32(1.0f), KernelArg::u64(1)};
    b->execute_program(m.kernels[0], LaunchConfig::linear(1), args);
  };
  auto whole = KernelArg::buffer(buf);
  // Past the end, empty, not on an element, a pool as a view.
  EXPECT_EQ(code_of([&] { run(KernelArg::buffer(buf, 5 * step), whole); }), ErrorCode::OutOfBounds);
  EXPECT_EQ(code_of([&] { run(whole, KernelArg::buffer(buf, step, 0)); }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(code_of([&] { run(whole, KernelArg::buffer(buf, 0, 6)); }, &msg),
            ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("argument 2 (%y) of kernel 'saxpy': a view of buffer #1 holds 6 bytes"),
            std::string::npos)
      << msg;
  if (align == 1) {
    EXPECT_EQ(code_of([&] { run(KernelArg::buffer(buf, 2), whole); }, &msg),
              ErrorCode::InvalidArgument);
    EXPECT_NE(msg.find("at byte 2 does not start on a f32 element"), std::string::npos) << msg;
  }
  auto m2 = test::parse_ok(R"(.kernel p
.param %p : pool
  exit
)");
  KernelArg pool_view{KernelArg::Kind::Pool, pool.id, isa::Type::None, 0, 8};
  EXPECT_EQ(
      code_of([&] { b->execute_program(m2.kernels[0], LaunchConfig::linear(1), {&pool_view, 1}); },
              &msg),
      ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("is a pool, which is passed whole"), std::string::npos) << msg;
}

TEST_P(BufferViews, HostMemoryIsUsedInPlaceWhereTheDeviceCan) {
  auto m = test::parse_ok(test::kSaxpy);
  const uint64_t n = 4096; // 16 KiB: a whole number of pages, page-aligned
  auto *raw = static_cast<float *>(std::aligned_alloc(4096, n * 4));
  ASSERT_NE(raw, nullptr);
  std::unique_ptr<float, decltype(&std::free)> y(raw, &std::free);
  std::fill(raw, raw + n, 1.0f);
  auto host = b->wrap_host_memory({reinterpret_cast<std::byte *>(raw), n * 4});
  // The CPU backends always use it in place; PoCL shares host memory; lavapipe imports it.
  EXPECT_TRUE(host.shared) << GetParam();
  EXPECT_EQ(b->buffer_size(host.buffer), n * 4);
  auto bx = b->allocate_buffer(n * 4);
  b->write<float>(bx, iota(n, 0.0f));
  KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(host.buffer), KernelArg::f32(2.0f),
                      KernelArg::u64(n)};
  b->execute_program(m.kernels[0], LaunchConfig::linear(n, 64), args);
  // Read back through the API whatever the mode ...
  auto out = b->read<float>(host.buffer);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * static_cast<float>(i) + 1.0f);
  if (host.shared) {
    // ... and, in place, in the host memory itself, which the next launch reads as it is now.
    for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(raw[i], out[i]) << "element " << i;
    std::fill(raw, raw + n, 0.0f);
    b->execute_program(m.kernels[0], LaunchConfig::linear(n, 64), args);
    EXPECT_EQ(raw[3], 6.0f);
    EXPECT_EQ(b->read<float>(host.buffer)[5], 10.0f);
    // A sub-buffer of host memory is host memory too.
    auto sub = b->create_sub_buffer(host.buffer, 4 * step, 4 * step);
    b->write<float>(sub, std::vector<float>(step, -1.0f));
    EXPECT_EQ(raw[step], -1.0f);
    b->free_buffer(sub);
  }
  b->free_buffer(host.buffer);
  std::string msg;
  EXPECT_EQ(code_of([&] { b->wrap_host_memory({}); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_EQ(msg, "cannot wrap host memory of 0 bytes");
}

TEST_P(BufferViews, UnalignedHostMemoryIsCopiedOrUsedInPlaceAndStillRight) {
  auto m = test::parse_ok(test::kSaxpy);
  const uint64_t n = 100;
  std::vector<float> y(n + 1, 1.0f); // at an odd float: no page alignment
  auto host = b->wrap_host_memory({reinterpret_cast<std::byte *>(y.data() + 1), n * 4});
  if (GetParam() == "cpu" || GetParam() == "interp") {
    EXPECT_TRUE(host.shared);
  }
  auto bx = b->allocate_buffer(n * 4);
  b->write<float>(bx, iota(n, 0.0f));
  KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(host.buffer), KernelArg::f32(1.0f),
                      KernelArg::u64(n)};
  b->execute_program(m.kernels[0], LaunchConfig::linear(n, 4), args);
  auto out = b->read<float>(host.buffer);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<float>(i) + 1.0f);
  EXPECT_EQ(y[0], 1.0f); // the float before it is not touched
  if (host.shared) {
    EXPECT_EQ(y[n], static_cast<float>(n - 1) + 1.0f);
  }
  b->free_buffer(host.buffer);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, BufferViews,
                         ::testing::Values("cpu", "interp", "vulkan", "opencl"),
                         [](const auto &p) { return p.param; });
