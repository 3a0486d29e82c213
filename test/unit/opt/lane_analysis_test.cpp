// The SPMD analyses: blocks split at barriers, the reconvergence order (loops contiguous,
// blocks after their forward predecessors) and which slots and blocks diverge.
#include "hologram/isa/text.h"
#include "hologram/opt/lane_affinity.h"
#include "hologram/opt/lane_analysis.h"

#include "test_util.h"

#include <gtest/gtest.h>

using namespace hologram;

namespace {

isa::Kernel parse(const char *text) {
  return test::parse_ok(text).kernels.at(0);
}

bool uniform(const opt::LaneAnalysis &a, isa::Reg r, isa::Type t) {
  return !a.is_varying({false, r, t});
}

TEST(LaneAnalysis, UniformValuesAndBranchesStayUniform) {
  auto k = parse(R"(
.kernel k
.param %x : buffer<f32> readwrite
.param %n : u32
  param.u32     r0, %n
  mov.imm.u32   r1, 0
@loop:
  add.u32       r1, r1, r0
  setlt.u32     p0, r1, r0
  bra p0        @loop
  ld.f32        r2, [%x + %gid*4]
  st.f32        [%x + %gid*4], r2
)");
  auto a = opt::analyse_lanes(k);
  EXPECT_TRUE(uniform(a, 0, isa::Type::U32));
  EXPECT_TRUE(uniform(a, 1, isa::Type::U32));
  EXPECT_FALSE(uniform(a, 2, isa::Type::F32)); // loaded from a lane-varying address
  for (bool d : a.divergent) EXPECT_FALSE(d);
}

TEST(LaneAnalysis, ALaneVaryingLoopMakesItsBodyDivergentAndItsValuesVarying) {
  auto k = parse(R"(
.kernel k
.param %x : buffer<u32> readwrite
  mov.u32       r0, %lane.x
  mov.imm.u32   r1, 0
@loop:
  add.u32       r1, r1, r0
  setlt.u32     p0, r1, r0
  bra p0        @loop
  cvt.u64.u32   r2, r1
  st.u32        [%x + %gid*4], r1
)");
  auto a = opt::analyse_lanes(k);
  EXPECT_FALSE(uniform(a, 1, isa::Type::U32));
  uint32_t loop = a.block_of[2];
  EXPECT_TRUE(a.divergent[loop]);
  // The block after the loop runs with every live lane again.
  EXPECT_FALSE(a.divergent[a.block_of[5]]);
}

TEST(LaneAnalysis, OrderKeepsLoopsContiguousAndExitsAfterThem) {
  // The loop exit is reached from the header, but must come after the whole loop body.
  auto k = parse(R"(
.kernel k
.param %x : buffer<u32> readwrite
  mov.u32       r0, %lane.x
@head:
  setgt.u32     p0, r0, r0
  bra p0        @exit
  add.u32       r0, r0, r0
  bra           @head
@exit:
  st.u32        [%x + %gid*4], r0
)");
  auto a = opt::analyse_lanes(k);
  uint32_t head = a.block_of[1], body = a.block_of[3], exit = a.block_of[5];
  EXPECT_LT(a.rank[head], a.rank[body]);
  EXPECT_LT(a.rank[body], a.rank[exit]);
}

TEST(LaneAnalysis, BarriersEndBlocks) {
  auto k = parse(R"(
.kernel k
.param %x : buffer<u32> readwrite
  mov.u32       r0, %lane.x
  bar.sync      0
  st.u32        [%x + %gid*4], r0
)");
  auto a = opt::analyse_lanes(k);
  EXPECT_TRUE(a.has_barriers);
  ASSERT_EQ(a.blocks.size(), 2u);
  EXPECT_EQ(a.blocks[0].end, 2u);
}

std::optional<opt::LaneStep> step(const isa::Kernel &k, isa::Reg r) {
  auto a = opt::analyse_lanes(k);
  return opt::LaneAffinity(k, a.cfg, a.uniformity).step_of(r, isa::Type::U64);
}

TEST(LaneAffinity, IndexArithmeticKeepsAFixedStepPerLane) {
  auto k = parse(R"(
.kernel k
.param %x : buffer<f32> readwrite
.param %off : u64
  param.u64     r1, %off
  mov.imm.u64   r2, 4
  mul.u64       r3, %gid, r2
  add.u64       r3, r3, r1
  mov.u64       r4, %gid.x
  mov.imm.u32   r5, 3
  shl.u64       r6, r4, r5
  cvt.u64.u32   r7, %lane.x
  mad.u64       r8, r7, r2, r1
  sub.u64       r9, r3, r3
  ld.f32        r10, [%x + r4*4]
)");
  using opt::LaneId;
  EXPECT_EQ(step(k, 3), (opt::LaneStep{LaneId::Gid, 4}));
  EXPECT_EQ(step(k, 6), (opt::LaneStep{LaneId::GidX, 8}));
  EXPECT_EQ(step(k, 8), (opt::LaneStep{LaneId::LaneX, 4}));
  EXPECT_EQ(step(k, 1), opt::LaneStep{});
  EXPECT_EQ(step(k, 9), opt::LaneStep{}); // the lane term cancels: uniform
  auto a = opt::analyse_lanes(k);
  opt::LaneAffinity aff(k, a.cfg, a.uniformity);
  EXPECT_EQ(aff.offset_step(k.insts.back().operands[1].addr), (opt::LaneStep{LaneId::GidX, 4}));
}

TEST(LaneAffinity, MixedDefinitionsHaveNoStep) {
  // r3 steps by 4 on one path and 8 on the other; r4 is defined under a lane-varying branch;
  // r5 grows by a lane-varying amount each trip; a u32 lane id plus one may wrap.
  auto k = parse(R"(
.kernel k
.param %n : u64
.param %x : buffer<f32> readwrite
  param.u64     r1, %n
  mov.imm.u64   r2, 4
  mul.u64       r3, %gid, r2
  mov.u64       r4, %gid
  mov.u64       r5, %gid
  setlt.u64     p0, r1, r2
  bra p0        @skip
  shl.u64       r3, %gid, r2
@skip:
  setlt.u64     p1, %gid, r1
  bra p1        @join
  add.u64       r4, r4, r1
@join:
  add.u64       r5, r5, %gid
  setlt.u64     p2, r5, r1
  bra p2        @join
  mov.u32       r6, %lane.x
  mov.imm.u32   r7, 1
  add.u32       r6, r6, r7
  cvt.u64.u32   r8, r6
)");
  EXPECT_EQ(step(k, 3), std::nullopt);
  EXPECT_EQ(step(k, 4), std::nullopt);
  EXPECT_EQ(step(k, 5), std::nullopt);
  EXPECT_EQ(step(k, 8), std::nullopt);
}

} // namespace
