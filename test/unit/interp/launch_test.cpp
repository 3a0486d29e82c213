// Launch-level behaviour of the interpreter: geometry and special registers, barriers and
// shared memory, atomics under contention, bounds faults, argument misuse, pools, Atlas state.
#include "test_util.h"

#include <numeric>

using namespace hologram;
using namespace hologram::test;
using interp::ArgValue;

TEST(Launch, SpecialRegistersIn3D) {
  LaunchConfig lc;
  lc.grid = {2, 3, 2};
  lc.block = {4, 2, 3};
  uint64_t n = lc.total_lanes();
  std::vector<uint64_t> out(n * 4);
  auto st = run_text(R"(.kernel k
.param %o : buffer<u64> write
  mov.imm.u64    r1, 4
  mul.u64        r2, %gid, r1
  st.u64         [%o + r2*8], %gid
  cvt.u64.u32    r3, %lane.z
  mov.imm.u64    r4, 1
  add.u64        r5, r2, r4
  st.u64         [%o + r5*8], r3
  add.u64        r5, r5, r4
  st.u64         [%o + r5*8], %gid.y
  add.u64        r5, r5, r4
  st.u64         [%o + r5*8], %gsize
)",
                     lc, {ArgValue::buffer_of(out)});
  ASSERT_TRUE(st.is_ok()) << st.message();
  for (uint64_t g = 0; g < n; ++g) {
    uint64_t block = g / 24, lane = g % 24;
    uint64_t bx = block % 2, by = (block / 2) % 3;
    uint64_t lz = lane / 8, ly = (lane / 4) % 2;
    (void)bx;
    EXPECT_EQ(out[g * 4], g);
    EXPECT_EQ(out[g * 4 + 1], lz);
    EXPECT_EQ(out[g * 4 + 2], by * 2 + ly);
    EXPECT_EQ(out[g * 4 + 3], n);
  }
}

TEST(Launch, BarriersAndSharedMemory) {
  std::string text = *read_file_for_test("examples/isa/block_sum.hasm");
  std::vector<uint32_t> x(256), sums(4);
  std::iota(x.begin(), x.end(), 0u);
  LaunchConfig lc = LaunchConfig::linear(256, 64);
  lc.shared_memory = 256;
  auto st = run_text(text, lc, {ArgValue::buffer_of(x), ArgValue::buffer_of(sums)});
  ASSERT_TRUE(st.is_ok()) << st.message();
  for (uint32_t b = 0; b < 4; ++b) EXPECT_EQ(sums[b], 64 * 64 * b + 63 * 64 / 2) << b;
}

TEST(Launch, BarrierNotReachedByEveryLaneFails) {
  // The verifier rejects this program (the branch depends on %gid); run unverified, the
  // interpreter still reports the divergence instead of hanging.
  std::vector<uint32_t> flags = {1, 0};
  interp::InterpOptions unverified;
  unverified.verify = false;
  auto st = run_text(
      ".kernel k\n.param %f : buffer<u32> read\n  ld.u32 r1, [%f + %gid*4]\n"
      "  mov.imm.u32 r2, 0\n  seteq.u32 p0, r1, r2\n  bra p0 @out\n  bar.sync 0\n@out:\n  exit\n",
      LaunchConfig::linear(2, 2), {ArgValue::buffer_of(flags)}, nullptr, unverified);
  EXPECT_EQ(st.code(), ErrorCode::LaunchFailed);
  EXPECT_NE(st.message().find("not reached by every lane"), std::string::npos) << st.message();
}

TEST(Launch, AtomicsUnderContention) {
  // 4 blocks x 64 lanes, each adding 1 a hundred times to one counter.
  std::string text = R"(.kernel k
.param %c : buffer<u32> readwrite
.param %r : buffer<u32> readwrite
  mov.imm.u32    r1, 99
  mov.imm.u32    r2, 1
  mov.imm.u64    r3, 0
@again:
  atom.add.u32   r4, [%c + r3], r2
  ld.u32         r5, [%r + r3]
  add.u32        r5, r5, r2
  st.u32         [%r + r3], r5
  loop r1, @again
)";
  std::vector<uint32_t> counter(1), racy(1);
  auto st = run_text(text, LaunchConfig::linear(256, 64),
                     {ArgValue::buffer_of(counter), ArgValue::buffer_of(racy)});
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(counter[0], 25600u);
  EXPECT_LT(racy[0], 25600u); // lanes interleave, so the unsynchronised update loses increments
  EXPECT_GT(racy[0], 0u);
}

TEST(Launch, AtomicOpsReturnTheOldValue) {
  auto out = run_out<int32_t>(
      "  mov.imm.u64 r9, 0\n  mov.imm.i32 r1, 5\n  st.i32 [%out], r1\n"
      "  mov.imm.i32 r2, 3\n  atom.min.i32 r3, [%out + r9], r2\n  st.i32 [%out + 4], r3\n"
      "  mov.imm.i32 r4, 3\n  mov.imm.i32 r5, 9\n  atom.cas.i32 r6, [%out + r9], r4, r5\n"
      "  st.i32 [%out + 8], r6\n  mov.imm.i32 r7, 1\n  atom.xchg.i32 r8, [%out + r9], r7\n"
      "  st.i32 [%out + 12], r8\n",
      4);
  EXPECT_EQ(out, (std::vector<int32_t>{1, 5, 3, 9}));
}

TEST(Launch, OutOfBoundsAccessNamesEverything) {
  std::vector<float> a(4), b(4), c(4);
  std::string text = *read_file_for_test("examples/isa/vector_add.hasm");
  // n = 8 but the buffers hold 4 elements: lane 4 faults.
  auto st = run_text(text, LaunchConfig::linear(8, 8),
                     {ArgValue::buffer_of(a), ArgValue::buffer_of(b), ArgValue::buffer_of(c),
                      ArgValue::scalar(8)});
  EXPECT_EQ(st.code(), ErrorCode::OutOfBounds);
  EXPECT_NE(st.message().find("kernel 'vector_add': lane 4 (block (0,0,0), lane (4,0,0))"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("ld.f32         r3, [%a + %gid*4]"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("parameter %a: offset 16, size 4, but it holds 16 bytes"),
            std::string::npos)
      << st.message();
}

TEST(Launch, MisuseIsReported) {
  std::string text = *read_file_for_test("examples/isa/vector_add.hasm");
  std::vector<float> a(4);
  auto bad = [&](LaunchConfig lc, std::vector<ArgValue> args, const char *msg) {
    auto st = run_text(text, lc, args);
    EXPECT_EQ(st.code(), ErrorCode::InvalidArgument) << msg;
    EXPECT_NE(st.message().find(msg), std::string::npos) << st.message();
  };
  auto buf = ArgValue::buffer_of(a);
  LaunchConfig zero;
  zero.grid = {0, 1, 1};
  bad(zero, {buf, buf, buf, ArgValue::scalar(4)}, "zero-size");
  bad(LaunchConfig::linear(4), {buf, buf, buf}, "expects 4 argument(s), got 3");
  bad(LaunchConfig::linear(4), {buf, buf, ArgValue::scalar(1), ArgValue::scalar(4)},
      "must be a buffer, got a scalar");
  std::vector<std::byte> odd(6);
  bad(LaunchConfig::linear(4), {buf, buf, ArgValue::buffer(odd), ArgValue::scalar(4)},
      "not a whole number");
}

TEST(Launch, ScratchPoolsAndPoolParameters) {
  std::vector<std::byte> pool(16);
  std::vector<uint32_t> out(2);
  auto st = run_text(R"(.kernel k
.param %p : pool
.param %o : buffer<u32> write
  pool.alloc     r1, 8
  mov.imm.u64    r2, 4
  pool.ld.u32    r3, [r1 + r2]
  mov.imm.u32    r4, 41
  pool.st.u32    [r1 + r2], r4
  pool.ld.u32    r5, [r1 + r2]
  pool.free      r1
  add.u32        r5, r5, r3
  st.u32         [%o], r5
  mov.imm.u32    r6, 7
  pool.st.u32    [%pool:p + r2], r6
  ld.u32         r7, [%pool:p + r2]
  st.u32         [%o + 4], r7
)",
                     {}, {ArgValue::pool(pool), ArgValue::buffer_of(out)});
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(out[0], 41u); // scratch starts zero-filled
  EXPECT_EQ(out[1], 7u);
  EXPECT_EQ(static_cast<int>(pool[4]), 7);
  // Out of range in a scratch pool.
  std::vector<uint32_t> o2(1);
  st =
      run_text(".kernel k\n.param %o : buffer<u32> write\n  pool.alloc r1, 8\n  mov.imm.u64 r2, 6\n"
               "  pool.ld.u32 r3, [r1 + r2]\n  pool.free r1\n  st.u32 [%o], r3\n",
               {}, {ArgValue::buffer_of(o2)});
  EXPECT_EQ(st.code(), ErrorCode::OutOfBounds);
  EXPECT_NE(st.message().find("the scratch allocation of line 3: offset 6, size 4, but it holds "
                              "8 bytes"),
            std::string::npos)
      << st.message();
}

TEST(Launch, AtlasStatePersistsAcrossLaunches) {
  interp::AtlasState atlas;
  std::vector<uint32_t> out(1);
  std::string text = R"(.kernel k
.param %o : buffer<u32> write
  mov.imm.u32    r1, 5
  mov.imm.f64    r2, 0.5
  res.accum      r1, r2
  phase.get      r3
  phase.adv      10
  mov.imm.u32    r4, 0
  seteq.u32      p0, %lane.x, r4
  bra !p0        @done
  st.u32         [%o], r3
  mov.imm.u64    r5, 0
  mov.imm.u32    r6, 77
  st.u32         [class 5 + r5], r6
  ld.u32         r7, [phi 5,0,0]
@done:
  exit
)";
  for (int launch = 0; launch < 2; ++launch) {
    auto st = run_text(text, LaunchConfig::linear(4, 4), {ArgValue::buffer_of(out)}, &atlas);
    ASSERT_TRUE(st.is_ok()) << st.message();
  }
  EXPECT_EQ(atlas.resonance[5], 4.0); // 2 launches x 4 lanes x 0.5
  EXPECT_EQ(out[0], 40u);             // the second launch saw the first launch's 4 x 10
  EXPECT_EQ(atlas.phase, 80u);
  uint32_t v;
  std::memcpy(&v, atlas.boundary.data() + 5 * 12288, 4);
  EXPECT_EQ(v, 77u);
}

TEST(Launch, WholeLaunchKernelRunsOnce) {
  std::vector<float> x = {1, 4, 9, 16}, y(4), sum(1);
  auto st = run_text(R"(.kernel k
.param %x : buffer<f32> read
.param %y : buffer<f32> readwrite
.param %s : buffer<f32> write
  mov.imm.u64    r1, 4
  map.sqrt.f32   %y, %x, r1
  reduce_all.add.f32 r2, %y, r1
  mov.imm.u64    r3, 0
  st.f32         [%s + r3], r2
)",
                     LaunchConfig::linear(1024),
                     {ArgValue::buffer_of(x), ArgValue::buffer_of(y), ArgValue::buffer_of(sum)});
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(y, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(sum[0], 10.0f);
}

TEST(Launch, AddressArithmeticNeverWrapsBackIntoABuffer) {
  std::vector<uint32_t> a(2);
  auto fault = [&](const std::string &body, const char *what) {
    auto st = run_text(".kernel k\n.param %a : buffer<u32> readwrite\n  mov.imm.u32 r2, 7\n" + body,
                       {}, {ArgValue::buffer_of(a)});
    EXPECT_EQ(st.code(), ErrorCode::OutOfBounds) << body;
    EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  };
  // 2^62 * 4 wraps to 0 in 64 bits: it must fault, not store to a[0].
  fault("  mov.imm.u64 r1, 0x4000000000000000\n  st.u32 [%a + r1*4], r2\n",
        "an offset beyond 2^64");
  fault("  mov.imm.u64 r1, 0\n  st.u32 [%a + r1*4 - 4], r2\n", "a negative offset");
  fault("  mov.imm.u64 r1, 0xffffffffffffffff\n  st.u32 [%a + r1 + 1], r2\n",
        "an offset beyond 2^64");
  EXPECT_EQ(a, (std::vector<uint32_t>{0, 0}));
}

TEST(Launch, LibraryExtentsFromHugeSizesAreOutOfBounds) {
  std::vector<float> c(2), x(1), y(1);
  // gemm with lda = 2^63 + 1: the extent (M-1)*lda + K would wrap in 64 bits.
  auto st = run_text(R"(.kernel g
.param %c : buffer<f32> readwrite
.param %a : buffer<f32> read
.param %b : buffer<f32> read
  mov.imm.u64    r1, 2
  mov.imm.u64    r2, 1
  mov.imm.u64    r4, 0x8000000000000001
  mov.imm.f32    r3, 1.0
  gemm.f32       %c, %a, %b, r1, r2, r2, r3, r3, r4, r2, r2, 0, 0
)",
                     {}, {ArgValue::buffer_of(c), ArgValue::buffer_of(x), ArgValue::buffer_of(y)});
  EXPECT_EQ(st.code(), ErrorCode::OutOfBounds) << st.message();
  EXPECT_NE(st.message().find("A %a needs more than 2^64 bytes"), std::string::npos)
      << st.message();
  // softmax with rows * cols = 2^64 (wraps to 0 in 64 bits).
  st = run_text(R"(.kernel s
.param %y : buffer<f32> readwrite
.param %x : buffer<f32> read
  mov.imm.u64    r1, 0x100000000
  softmax.f32    %y, %x, r1, r1
)",
                {}, {ArgValue::buffer_of(c), ArgValue::buffer_of(x)});
  EXPECT_EQ(st.code(), ErrorCode::OutOfBounds) << st.message();
}

TEST(Launch, OversizedBlocksAndSharedMemoryAreRefused) {
  std::vector<uint32_t> a(1);
  LaunchConfig big;
  big.block = {1024, 1024, 1};
  auto st = run_text(".kernel k\n.param %a : buffer<u32> readwrite\n  exit\n", big,
                     {ArgValue::buffer_of(a)});
  EXPECT_EQ(st.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(st.message().find("at most 65536 lanes per block"), std::string::npos) << st.message();
  LaunchConfig shared;
  shared.shared_memory = 0xffffffffu;
  st = run_text(".kernel k\n.param %a : buffer<u32> readwrite\n  exit\n", shared,
                {ArgValue::buffer_of(a)});
  EXPECT_EQ(st.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(st.message().find("shared memory of 4294967295 bytes"), std::string::npos)
      << st.message();
}
