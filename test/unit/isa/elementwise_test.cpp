// Element-wise chains (hologram/isa/elementwise.h): which runs of whole-launch operations the
// back ends may fuse, read from the instruction table's W and R flags.
#include "hologram/isa/elementwise.h"

#include "test_util.h"

#include <gtest/gtest.h>

using namespace hologram;
using isa::ElementwiseChain;

namespace {

std::vector<ElementwiseChain> chains_of(const std::string &body) {
  const std::string text = R"(.kernel k
.param %a : buffer<f32> readwrite
.param %b : buffer<f32> readwrite
.param %c : buffer<f64> readwrite
.param %m : buffer<f32> readwrite
.param %n : u64
.param %s : f32
  param.u64 r0, %n
  param.u64 r1, %n
  param.f32 r2, %s
)" + body;
  return isa::elementwise_chains(test::parse_ok(text).kernels.at(0));
}

} // namespace

TEST(ElementwiseChains, ConsecutiveOperationsOverOneCountFormOneChain) {
  // Instructions 3.. are the operations (0-2 read the parameters).
  EXPECT_EQ(chains_of(R"(  map.exp.f32 %a, %a, r0
  map2.mul.f32 %a, %a, %b, r0
  silu.f32 %b, %a, r0
  gelu_tanh.f32 %b, %b, r0
  axpy.f32 %b, %a, r0, r2
)"),
            (std::vector<ElementwiseChain>{{3, 5}}));
}

TEST(ElementwiseChains, AReductionEndsAChainAndNeverStartsOne) {
  EXPECT_EQ(chains_of(R"(  map.neg.f32 %a, %a, r0
  reduce_all.add.f32 r3, %a, r0
  dot.f32 r4, %a, %b, r0
  map.abs.f32 %b, %a, r0
  dot.f32 r5, %a, %b, r0
)"),
            (std::vector<ElementwiseChain>{{3, 2}, {6, 2}}));
}

TEST(ElementwiseChains, AnotherCountTypeOrOperationEndsAChain) {
  // r1 holds the same value as r0, but a chain asks for the same register (the optimiser's
  // copy propagation makes equal counts one register); f64 after f32; softmax is not
  // element-wise; a store is not whole-launch.
  EXPECT_EQ(chains_of(R"(  map.exp.f32 %a, %a, r0
  map.exp.f32 %a, %a, r1
  map.exp.f64 %c, %c, r1
  map.exp.f32 %a, %a, r1
  softmax.f32 %b, %a, r0, r1
  map.exp.f32 %a, %a, r1
  mov.imm.u64 r3, 0
  map.exp.f32 %a, %a, r1
)"),
            (std::vector<ElementwiseChain>{}));
}

TEST(ElementwiseChains, NoChainCrossesALabel) {
  // A branch may enter at the second operation, so the two are apart.
  EXPECT_EQ(chains_of(R"(  map.exp.f32 %a, %a, r0
@again:
  map.exp.f32 %a, %a, r0
  map.neg.f32 %a, %a, r0
  bra @again
)"),
            (std::vector<ElementwiseChain>{{4, 2}}));
}
