// How a lane's failure reads on every backend (hologram/isa/fault.h).
#include "hologram/isa/fault.h"
#include "hologram/isa/handles.h"

#include "hologram/isa/atlas.h"
#include "hologram/isa/text.h"
#include "hologram/support/diagnostics.h"

#include <gtest/gtest.h>

using namespace hologram;

namespace {

isa::Kernel parse_one(const std::string &text) {
  DiagnosticEngine diags;
  auto m = isa::parse_module(text, "k.hasm", diags);
  EXPECT_TRUE(m) << diags.to_string();
  return m->kernels.at(0);
}

} // namespace

TEST(Fault, SiteNamesTheLaneItsBlockItsPlaceAndTheInstruction) {
  isa::Kernel k = parse_one(".kernel k\n.param %x : buffer<f32> read\n"
                            "  ld.f32 r1, [%x + %gid*4]\n  exit\n");
  LaunchConfig launch;
  launch.grid = {3, 2, 2};
  launch.block = {4, 2, 1};
  // %gid 45: block 45 / 8 = 5 of the 3 x 2 x 2 grid (x 2, y 1, z 0), lane 5 of the block
  // (x 1, y 1, z 0).
  EXPECT_EQ(isa::fault_site(k, "k.hasm", launch, 45, 0),
            "kernel 'k': lane 45 (block (2,1,0), lane (1,1,0)), k.hasm:line 3 "
            "'ld.f32         r1, [%x + %gid*4]'");
  // The last lane of the launch: block (2,1,1), lane (3,1,0).
  EXPECT_EQ(isa::fault_site(k, "", launch, 95, 99),
            "kernel 'k': lane 95 (block (2,1,1), lane (3,1,0))");
  EXPECT_EQ(isa::fault_site(k, "", launch, 0, 0),
            "kernel 'k': lane 0 (block (0,0,0), lane (0,0,0)), line 3 "
            "'ld.f32         r1, [%x + %gid*4]'");
}

TEST(Fault, OutOfBoundsAndRegions) {
  EXPECT_EQ(isa::out_of_bounds_access("parameter %x", "offset 8", 4, 8),
            "out-of-bounds access to parameter %x: offset 8, size 4, but it holds 8 bytes");
  isa::Kernel k = parse_one(".kernel k\n.param %x : buffer<u32> write\n  exit\n");
  EXPECT_EQ(isa::parameter_region(k, 0), "parameter %x");
  EXPECT_EQ(isa::class_region(6), "class 6 of the boundary pool");
  EXPECT_EQ(isa::access_offset(12), "offset 12");
  EXPECT_EQ(isa::access_offset(~uint64_t{0} - 3), "a negative offset");
}

TEST(Fault, HandlesNameTheirRegion) {
  isa::Kernel k = parse_one(".kernel k\n.param %x : buffer<u32> read\n"
                            ".param %p : pool\n"
                            ".param %o : buffer<u32> write\n"
                            "  pool.alloc r1, 12\n"
                            "  pool.alloc r2, 40\n"
                            "  addr r3, %p\n"
                            "  pool.ld.u32 r4, [r3 + 4]\n"
                            "  ld.u32 r5, [r1 + 4]\n"
                            "  pool.free r2\n"
                            "  pool.free r1\n"
                            "  st.u32 [%o], r4\n"
                            "  exit\n");
  EXPECT_EQ(isa::handle::param(1), uint64_t{2} << 48);
  EXPECT_EQ(isa::handle::scratch(1), uint64_t{0x8001} << 48);
  EXPECT_EQ(isa::handle::addressed_params(k), std::vector<uint32_t>{1});
  EXPECT_EQ(isa::handle::allocation_site(k, 1), 0u);
  EXPECT_EQ(isa::handle::allocation_site(k, 2), 1u);
  EXPECT_EQ(isa::handle::allocation_site(k, 3), k.insts.size());
  using Region = std::pair<std::string, uint64_t>;
  EXPECT_EQ(isa::scratch_region(k, 1), Region("the scratch allocation of line 6", 40));
  EXPECT_EQ(isa::scratch_region(k, 2), Region("launch scratch", 0));
  EXPECT_EQ(isa::invalid_handle(k, 3, 0x3039), "register r3 holds no valid pool handle (0x3039)");
  EXPECT_EQ(isa::invalid_handle(k, 4, 0x10), "register r1 holds no valid address (0x10)");
}
