// The SPMD analyses: blocks split at barriers, the reconvergence order (loops contiguous,
// blocks after their forward predecessors) and which slots and blocks diverge.
#include "hologram/isa/text.h"
#include "hologram/opt/lane_analysis.h"

#include <gtest/gtest.h>

using namespace hologram;

namespace {

isa::Kernel parse(const char *text) {
  DiagnosticEngine diags;
  auto m = isa::parse_module(text, "t.hasm", diags);
  EXPECT_TRUE(m) << diags.to_string();
  return m->kernels.at(0);
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

} // namespace
