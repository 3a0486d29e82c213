// The value-range analysis: intervals from the launch limits and the defining instructions,
// widening for loop counters, and the questions the code generators ask of it.
#include "hologram/opt/value_ranges.h"

#include "test_util.h"

#include <gtest/gtest.h>

using namespace hologram;

namespace {

isa::Kernel parse(const char *text) {
  return test::parse_ok(text).kernels.at(0);
}

opt::ValueRange range(const opt::ValueRanges &v, isa::Reg r, isa::Type t = isa::Type::U64) {
  return v.of(r, t);
}

constexpr uint64_t kGidMax = (uint64_t{1} << 62) - 2; // launches have fewer than 2^62 lanes

TEST(ValueRanges, FollowIndexArithmeticFromTheLaunchLimits) {
  auto k = parse(R"(
.kernel k
.param %x : buffer<f32> readwrite
.param %n : u64
  mov.imm.u64   r1, 16
  add.u64       r2, %gid, r1
  cvt.u64.u32   r3, %lane.x
  mov.imm.u64   r4, 4
  mul.u64       r5, r3, r4
  mov.imm.u32   r6, 2
  shr.u64       r7, %gid, r6
  and.u64       r8, %gid, r4
  param.u64     r9, %n
  rem.u64       r10, r9, r1
  min.u64       r11, r9, r1
  mul.u64       r12, %gid, r4
)");
  const opt::ValueRanges v(k);
  using R = opt::ValueRange;
  EXPECT_EQ(range(v, 1), (R{16, 16, 4}));
  EXPECT_EQ(range(v, 2), (R{16, kGidMax + 16}));
  EXPECT_EQ(range(v, 3), (R{0, (uint64_t{1} << 30) - 1})); // a lane of a block
  EXPECT_EQ(range(v, 5), (R{0, ((uint64_t{1} << 30) - 1) * 4, 2}));
  EXPECT_EQ(range(v, 7), (R{0, kGidMax >> 2}));
  EXPECT_EQ(range(v, 8), (R{0, 4, 2}));
  EXPECT_EQ(range(v, 9), (R{0, ~uint64_t{0}})); // a parameter: anything
  EXPECT_EQ(range(v, 10), (R{0, 15}));
  EXPECT_EQ(range(v, 11), (R{0, 16}));
  EXPECT_EQ(range(v, 12), (R{0, kGidMax * 4, 2})); // 4 %gid stays below 2^64
  EXPECT_TRUE(v.fits_u32(3, isa::Type::U64));
  EXPECT_FALSE(v.fits_u32(2, isa::Type::U64));
  // The chunk question: %gid and %gid + 16 plus 15 lanes' worth stay below 2^63; 4 %gid
  // does not.
  EXPECT_TRUE(v.adds_without_wrap(isa::special_reg(isa::Special::Gid), isa::Type::U64, 15));
  EXPECT_TRUE(v.adds_without_wrap(isa::special_reg(isa::Special::Gid), isa::Type::I64, 15));
  EXPECT_TRUE(v.adds_without_wrap(2, isa::Type::U64, 15));
  EXPECT_FALSE(v.adds_without_wrap(12, isa::Type::U64, 60));
}

TEST(ValueRanges, JoinDefinitionsAndWidenWhatLoopsGrow) {
  // r1 is 3 or 40 (two definitions); r2 counts up in a loop; the u32 sum of two lane ids
  // does not wrap, a block id plus a lane id may, and so may a u64 value cut to u32.
  auto k = parse(R"(
.kernel k
.param %n : u64
  param.u64     r0, %n
  mov.imm.u64   r1, 3
  setlt.u64     p0, r0, r1
  bra p0        @skip
  mov.imm.u64   r1, 40
@skip:
  mov.imm.u64   r2, 0
  mov.imm.u64   r3, 1
@loop:
  add.u64       r2, r2, r3
  setlt.u64     p1, r2, r0
  bra p1        @loop
  add.u32       r4, %lane.x, %lane.y
  cvt.u32.u64   r5, %gid
  sub.u64       r6, r1, r3
  sub.u64       r7, r3, r1
  add.u32       r8, %block.x, %lane.x
)");
  const opt::ValueRanges v(k);
  using R = opt::ValueRange;
  EXPECT_EQ(range(v, 1), (R{3, 40}));
  EXPECT_EQ(range(v, 2), (R{0, ~uint64_t{0}}));
  EXPECT_EQ(range(v, 4, isa::Type::U32), (R{0, 2 * ((uint64_t{1} << 30) - 1)}));
  EXPECT_EQ(range(v, 5, isa::Type::U32), (R{0, 0xffffffffu}));
  EXPECT_EQ(range(v, 6), (R{2, 39}));
  EXPECT_EQ(range(v, 7), (R{0, ~uint64_t{0}}));                // 1 - 40 wraps
  EXPECT_EQ(range(v, 8, isa::Type::U32), (R{0, 0xffffffffu})); // past 2^32 - 1: wraps in u32
  EXPECT_FALSE(v.adds_without_wrap(2, isa::Type::U64, 1));
}

TEST(ValueRanges, KnowTheLowZeroBitsThatMakeAnOffsetAligned) {
  // Byte offsets as the device library's trees and panels once formed them: lane * 4, a
  // counter stepped by 8 in a loop (widened, its zero bits kept), a sum of multiples, and
  // the same cut to u32. An odd step, a parameter or %gid itself proves nothing.
  auto k = parse(R"(
.kernel k
.param %n : u64
  param.u64     r0, %n
  cvt.u64.u32   r1, %lane.x
  mov.imm.u64   r2, 4
  mul.u64       r3, r1, r2
  mov.imm.u64   r4, 0
  mov.imm.u64   r5, 8
@loop:
  add.u64       r4, r4, r5
  setlt.u64     p0, r4, r0
  bra p0        @loop
  add.u64       r6, r3, r4
  mov.imm.u32   r7, 3
  shl.u64       r8, r1, r7
  sub.u64       r9, r8, r3
  cvt.u32.u64   r10, r8
  mov.imm.u64   r11, 1
  add.u64       r12, r3, r11
  and.u64       r13, r0, r5
  shr.u64       r14, r8, r7
  sel.u64       r15, p0, r3, r8
)");
  const opt::ValueRanges v(k);
  auto zeros = [&](isa::Reg r, isa::Type t = isa::Type::U64) { return v.of(r, t).zeros; };
  EXPECT_EQ(zeros(3), 2u);
  EXPECT_EQ(v.of(4, isa::Type::U64).hi, ~uint64_t{0}); // widened...
  EXPECT_EQ(zeros(4), 3u);                             // ...but still a multiple of 8
  EXPECT_EQ(zeros(6), 2u);
  EXPECT_EQ(zeros(8), 3u);
  EXPECT_EQ(zeros(9), 2u);
  EXPECT_EQ(zeros(10, isa::Type::U32), 3u);
  EXPECT_EQ(zeros(12), 0u);
  EXPECT_EQ(zeros(13), 3u); // n & 8 is 0 or 8
  EXPECT_EQ(zeros(14), 0u);
  EXPECT_EQ(zeros(15), 2u);
  EXPECT_EQ(zeros(0), 0u);
  EXPECT_EQ(v.of(2, isa::Type::U64).zeros, 2u);
  // [shared + r3] holds an f32 (4 bytes) but not an f64 (8); [x + r1*4] an f32 whatever r1.
  EXPECT_TRUE(v.scaled_multiple_of(3, isa::Type::U64, 1, 4));
  EXPECT_FALSE(v.scaled_multiple_of(3, isa::Type::U64, 1, 8));
  EXPECT_TRUE(v.scaled_multiple_of(3, isa::Type::U64, 2, 8));
  EXPECT_TRUE(v.scaled_multiple_of(1, isa::Type::U64, 4, 4));
  EXPECT_FALSE(v.scaled_multiple_of(12, isa::Type::U64, 1, 2));
  EXPECT_FALSE(v.scaled_multiple_of(isa::special_reg(isa::Special::Gid), isa::Type::U64, 1, 4));
  EXPECT_TRUE(v.scaled_multiple_of(12, isa::Type::U64, 1, 1));
}

TEST(ValueRanges, TighterLimitsGiveTighterRanges) {
  auto k = parse(R"(
.kernel k
.param %x : buffer<f32> readwrite
  mov.u64       r1, %gid
)");
  opt::LaunchLimits narrow;
  narrow.block_lanes = 1024;
  narrow.launch_lanes = 0xffffffffu; // a launch that chose 32-bit lane ids
  const opt::ValueRanges v(k, narrow);
  EXPECT_TRUE(v.fits_u32(1, isa::Type::U64));
  EXPECT_EQ(v.of(isa::special_reg(isa::Special::LaneX), isa::Type::U32).hi, 1023u);
}

} // namespace
