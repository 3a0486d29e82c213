// The device library's plans (runtime/core/library_plan.cpp): which shape of the tiled gemm
// kernel a device gets, and how many blocks a reduction's first stage takes. f32 takes the
// wide tiles (8x8 a lane, 128x128 a block) on devices that keep registers across barriers
// once C has a tile for each compute unit, the narrow ones (4x4, 64x64) otherwise; f64 only
// the narrow. The grids cover C exactly once either way; conformance runs both kernels for
// their values (lavapipe the wide, PoCL the narrow).
#include "core/library_plan.h"
#include "hologram/codegen/spirv_abi.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <tuple>

using namespace hologram;
using namespace hologram::runtime;

namespace {

/// The plan of `gemm.T` (or batched_gemm.T over `batch` matrices) for an M x N x K product on
/// a device of `units` compute units that allows the wide tiles or not.
LibraryPlan plan_gemm(const char *type, uint64_t m, uint64_t n, uint64_t k, uint64_t batch,
                      uint64_t units, bool wide_gemm = true) {
  const std::string t(type);
  const bool batched = batch > 1;
  // Registers by role: r10 batch, r11 M, r12 N, r13 K, r14..r19 the leading dimensions and
  // strides (wide enough for any transposition), r1 alpha = 1, r2 beta = 0.
  std::string text = ".kernel mm\n.param %c : buffer<" + t + "> readwrite\n.param %a : buffer<" +
                     t + "> read\n.param %b : buffer<" + t + "> read\n";
  text += "  mov.imm." + t + " r1, 1.0\n  mov.imm." + t + " r2, 0.0\n";
  for (int r = 10; r < 20; ++r) text += "  mov.imm.u64 r" + std::to_string(r) + ", 0\n";
  if (batched)
    text += "  batched_gemm." + t +
            " %c, %a, %b, r10, r11, r12, r13, r1, r2, r14, r15, r16, r17, r18, r19, 0, 0\n";
  else
    text += "  gemm." + t + " %c, %a, %b, r11, r12, r13, r1, r2, r14, r15, r16, 0, 0\n";
  isa::Module module = test::parse_ok(text);
  const isa::Kernel &kernel = module.kernels.at(0);
  const isa::Instruction &inst = kernel.insts.back();
  LibraryDevice device;
  device.reduce_blocks = 256;
  device.compute_units = units;
  device.wide_gemm = wide_gemm;
  LibraryPlan plan;
  const uint64_t ld = std::max({m, n, k});
  auto reg = [&](isa::Reg r) -> uint64_t {
    switch (r) {
    case 1: return t == "f32" ? std::bit_cast<uint32_t>(1.0f) : std::bit_cast<uint64_t>(1.0);
    case 10: return batch;
    case 11: return m;
    case 12: return n;
    case 13: return k;
    case 14:
    case 15:
    case 16: return ld;
    case 17:
    case 18:
    case 19: return ld * ld;
    }
    return 0;
  };
  Status st = plan_library_op(kernel, inst, reg, device, plan);
  EXPECT_TRUE(st) << st.message();
  return plan;
}

TEST(LibraryPlan, F32GemmTakesWideTilesWhenTheyFillTheDevice) {
  // 1024 x 1024: 64 wide tiles. 132 units (an H200) get 256 narrow blocks instead; 64 units
  // get the 64 wide ones.
  LibraryPlan many = plan_gemm("f32", 1024, 1024, 1024, 1, 132);
  ASSERT_EQ(many.launches.size(), 1u);
  EXPECT_EQ(many.launches[0].kernel, "__hg_gemm_f32");
  EXPECT_EQ(many.launches[0].launch.grid.x, 16u);
  EXPECT_EQ(many.launches[0].launch.grid.y, 16u);
  LibraryPlan few = plan_gemm("f32", 1024, 1024, 1024, 1, 64);
  ASSERT_EQ(few.launches.size(), 1u);
  EXPECT_EQ(few.launches[0].kernel, "__hg_gemm_wide_f32");
  EXPECT_EQ(few.launches[0].launch.grid.x, 8u);
  EXPECT_EQ(few.launches[0].launch.grid.y, 8u);
  EXPECT_EQ(few.launches[0].launch.block.x, 16u);
  EXPECT_EQ(few.launches[0].launch.block.y, 16u);
  EXPECT_EQ(few.schedule, "tiled");
  // Partial tiles: 150 x 140 is 2 x 2 wide tiles (columns in x), 3 x 3 narrow ones.
  LibraryPlan edge = plan_gemm("f32", 150, 140, 37, 1, 4);
  EXPECT_EQ(edge.launches[0].kernel, "__hg_gemm_wide_f32");
  EXPECT_EQ(edge.launches[0].launch.grid.x, 2u);
  EXPECT_EQ(edge.launches[0].launch.grid.y, 2u);
  LibraryPlan edge_narrow = plan_gemm("f32", 150, 140, 37, 1, 5);
  EXPECT_EQ(edge_narrow.launches[0].kernel, "__hg_gemm_f32");
  EXPECT_EQ(edge_narrow.launches[0].launch.grid.x, 3u);
  EXPECT_EQ(edge_narrow.launches[0].launch.grid.y, 3u);
}

TEST(LibraryPlan, DevicesThatSpillAcrossBarriersKeepTheNarrowTiles) {
  // PoCL's CPU devices: a lane's accumulators go to memory at each barrier.
  LibraryPlan plan = plan_gemm("f32", 4096, 4096, 64, 1, 2, /*wide_gemm=*/false);
  EXPECT_EQ(plan.launches[0].kernel, "__hg_gemm_f32");
  EXPECT_EQ(plan.launches[0].launch.grid.x, 64u);
}

TEST(LibraryPlan, BatchesCountTowardFillingTheDevice) {
  // 3 batches of 2 x 2 wide tiles: 12 tiles for 12 units, not for 13.
  LibraryPlan fits = plan_gemm("f32", 150, 140, 37, 3, 12);
  EXPECT_EQ(fits.launches[0].kernel, "__hg_gemm_wide_f32");
  EXPECT_EQ(fits.launches[0].launch.grid.z, 3u);
  EXPECT_EQ(plan_gemm("f32", 150, 140, 37, 3, 13).launches[0].kernel, "__hg_gemm_f32");
}

TEST(LibraryPlan, F64GemmHasOnlyTheNarrowTiles) {
  LibraryPlan plan = plan_gemm("f64", 4096, 4096, 64, 1, 1);
  EXPECT_EQ(plan.launches[0].kernel, "__hg_gemm_f64");
  EXPECT_EQ(plan.launches[0].launch.grid.x, 64u);
}

TEST(LibraryPlan, ReductionsTakeTheBlocksTheDeviceAsksFor) {
  // reduce_all's first stage: as many blocks as the backend asks for (16 per compute unit, at
  // least 256) while the elements give each lane 16, fewer for a short input.
  isa::Module module = test::parse_ok(".kernel s\n.param %x : buffer<f32> read\n"
                                      "  mov.imm.u64 r1, 0\n  reduce_all.add.f32 r2, %x, r1\n");
  const isa::Kernel &kernel = module.kernels.at(0);
  for (auto [n, asked, blocks] : {std::tuple<uint64_t, uint32_t, uint32_t>{1u << 24, 2112, 2112},
                                  {1u << 24, 0, 256},
                                  {1u << 20, 2112, 256},
                                  {(1u << 20) + 1, 2112, 257},
                                  {1000, 2112, 1}}) {
    LibraryDevice device;
    device.reduce_blocks = asked;
    LibraryPlan plan;
    ASSERT_TRUE(plan_library_op(
        kernel, kernel.insts.back(), [&](isa::Reg r) -> uint64_t { return r == 1 ? n : 0; }, device,
        plan));
    ASSERT_EQ(plan.launches.size(), 2u);
    EXPECT_EQ(plan.launches[0].launch.grid.x, blocks) << n << " elements, " << asked;
    EXPECT_EQ(plan.launches[1].launch.grid.x, 1u);
  }
}

/// results_stored_on_device of the one kernel in `body` (with buffers %x, %y: f32 read, %out:
/// f32 write, %d: f64 write), as "reduction index -> store index" pairs.
std::map<uint32_t, uint32_t> stored(const std::string &body) {
  isa::Module module =
      test::parse_ok(".kernel s\n.param %x : buffer<f32> read\n.param %y : buffer<f32> read\n"
                     ".param %out : buffer<f32> write\n.param %d : buffer<f64> write\n"
                     "  mov.imm.u64 r1, 64\n" +
                     body);
  return results_stored_on_device(module.kernels.at(0));
}

TEST(LibraryPlan, ResultsGoStraightToTheirOneStore) {
  using Pairs = std::map<uint32_t, uint32_t>;
  // The benchmark's sum: the store's index is set between them.
  EXPECT_EQ(stored("  reduce_all.add.f32 r2, %x, r1\n  mov.imm.u64 r3, 0\n"
                   "  st.f32 [%out + r3*4], r2\n"),
            (Pairs{{1, 3}}));
  // Two of them, stores in the other order, other instructions between; and dot.
  EXPECT_EQ(stored("  reduce_all.add.f32 r2, %x, r1\n  reduce_all.max.f32 r4, %y, r1\n"
                   "  dot.f32 r5, %x, %y, r1\n  add.u64 r6, r1, r1\n  st.f32 [%out + 8], r5\n"
                   "  st.f32 [%out + 4], r4\n  st.f32 [%out], r2\n"),
            (Pairs{{1, 7}, {2, 6}, {3, 5}}));
}

TEST(LibraryPlan, ResultsThatTheHostReadsComeBackToIt) {
  // Read by another instruction too, or only by it.
  EXPECT_TRUE(stored("  reduce_all.add.f32 r2, %x, r1\n  st.f32 [%out], r2\n"
                     "  add.f32 r3, r2, r2\n")
                  .empty());
  EXPECT_TRUE(stored("  reduce_all.add.f32 r2, %x, r1\n  add.f32 r3, r2, r2\n"
                     "  st.f32 [%out], r3\n")
                  .empty());
  // Converted before it is stored.
  EXPECT_TRUE(
      stored("  dot.f32 r2, %x, %y, r1\n  cvt.f64.f32 r3, r2\n  st.f64 [%d], r3\n").empty());
  // A label at the store or between (a branch may reach it without the reduction), a
  // control transfer between, or the register written again between.
  EXPECT_TRUE(stored("  reduce_all.add.f32 r2, %x, r1\n@again:\n  st.f32 [%out], r2\n"
                     "  bra @again\n")
                  .empty());
  EXPECT_TRUE(stored("  reduce_all.add.f32 r2, %x, r1\n  setlt.u64 p0, r1, r1\n"
                     "  bra p0 @skip\n  st.f32 [%out], r2\n@skip:\n  exit\n")
                  .empty());
  EXPECT_TRUE(stored("  reduce_all.add.f32 r2, %x, r1\n  mov.imm.f32 r2, 1.0\n"
                     "  st.f32 [%out], r2\n")
                  .empty());
}

} // namespace
