// The shared uniformity analysis: its two precisions, sync dependence, loops with a
// lane-varying trip count, and branches that only let some lanes exit.
#include "hologram/isa/text.h"
#include "hologram/isa/uniformity.h"

#include "test_util.h"

#include <gtest/gtest.h>

using namespace hologram;
using isa::Type;
using isa::UniformityPrecision;

namespace {

isa::Kernel parse(const char *text) {
  return test::parse_ok(text).kernels.at(0);
}

bool varying(const isa::Uniformity &u, isa::Reg r, Type t) {
  return u.varying.count({false, r, t}) != 0;
}

TEST(Uniformity, PerPointSeesAReusedRegisterBecomeUniformAgain) {
  // r1 holds a lane id, then a parameter: the branch on the parameter is uniform at that point,
  // so the barrier it controls is fine for the verifier's per-point question. The code
  // generators ask per (register, type) and must keep r1 as a vector.
  auto k = parse(R"(
.kernel k
.param %n : u32
.param %x : buffer<u32> readwrite
  mov.u32       r1, %lane.x
  st.u32        [%x + %gid*4], r1
  param.u32     r1, %n
  mov.imm.u32   r2, 4
  setlt.u32     p0, r1, r2
  bra p0        @skip
  bar.sync      0
@skip:
  exit
)");
  const auto cfg = isa::build_cfg(k);
  const auto point = isa::analyse_uniformity(k, cfg, UniformityPrecision::PerPoint);
  const auto reg = isa::analyse_uniformity(k, cfg, UniformityPrecision::PerRegister);
  for (auto c : point.controlled_by) EXPECT_EQ(c, isa::kNoBlock);
  EXPECT_TRUE(varying(point, 1, Type::U32)); // some definition of r1 varies
  EXPECT_FALSE(varying(point, 2, Type::U32));
  EXPECT_TRUE(varying(reg, 1, Type::U32));
  EXPECT_TRUE(reg.varying.count({true, 0, Type::Pred})); // r1 read as a whole: varying
  EXPECT_FALSE(point.varying.count({true, 0, Type::Pred}));
  EXPECT_NE(reg.controlled_by[cfg.block_of[6]], isa::kNoBlock);
}

TEST(Uniformity, ValuesDefinedUnderALaneVaryingBranchVary) {
  auto k = parse(R"(
.kernel k
.param %x : buffer<u32> readwrite
  mov.imm.u32   r1, 1
  mov.imm.u32   r2, 8
  setlt.u32     p0, %lane.x, r2
  bra p0        @join
  mov.imm.u32   r1, 2
@join:
  st.u32        [%x + %gid*4], r1
)");
  const auto cfg = isa::build_cfg(k);
  for (auto p : {UniformityPrecision::PerPoint, UniformityPrecision::PerRegister}) {
    const auto u = isa::analyse_uniformity(k, cfg, p);
    EXPECT_TRUE(varying(u, 1, Type::U32)); // the constant 2 reaches only some lanes
    EXPECT_FALSE(varying(u, 2, Type::U32));
    EXPECT_TRUE(u.divergent[cfg.block_of[4]]);
    EXPECT_FALSE(u.divergent[cfg.block_of[5]]); // reconverged
  }
}

TEST(Uniformity, ALoopWithALaneVaryingTripCountMakesItsValuesVary) {
  auto k = parse(R"(
.kernel k
.param %x : buffer<u32> readwrite
  mov.u32       r0, %lane.x
  mov.imm.u32   r1, 0
  mov.imm.u32   r2, 3
@loop:
  add.u32       r2, r2, r2
  loop          r0, @loop
  st.u32        [%x + %gid*4], r2
)");
  const auto cfg = isa::build_cfg(k);
  const auto u = isa::analyse_uniformity(k, cfg, UniformityPrecision::PerPoint);
  EXPECT_TRUE(varying(u, 2, Type::U32)); // lanes leave the loop after different trip counts
  EXPECT_FALSE(varying(u, 1, Type::U32));
  EXPECT_TRUE(u.divergent[cfg.block_of[3]]);
}

TEST(Uniformity, LanesThatExitSplitNothingButDoNotReachABarrier) {
  auto k = parse(R"(
.kernel k
.param %n : u32
  param.u32     r1, %n
  cvt.u32.u64   r2, %gid.x
  setge.u32     p0, r2, r1
  bra p0        @out
  mov.imm.u32   r3, 5
  bar.sync      0
@out:
  exit
)");
  const auto cfg = isa::build_cfg(k);
  const auto u = isa::analyse_uniformity(k, cfg, UniformityPrecision::PerPoint);
  const uint32_t body = cfg.block_of[4];
  EXPECT_FALSE(u.divergent[body]); // the lanes still running all run it
  EXPECT_FALSE(varying(u, 3, Type::U32));
  EXPECT_EQ(u.controlled_by[body], cfg.block_of[3]); // but the exited lanes never reach it
}

} // namespace
