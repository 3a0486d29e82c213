// What a runtime reads of hologram-cc's PTX (codegen/ptx_abi.h): the CUDA targets and the
// reflection of each kernel's launch ABI, which survives the bundle manifest's JSON.
#include "hologram/codegen/ptx_abi.h"

#include <gtest/gtest.h>

namespace hologram::codegen {
namespace {

TEST(PtxAbi, TargetsNameTheirArchitectureAndPtxVersion) {
  auto t = parse_ptx_target("cuda-sm_86");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->sm, 86u);
  EXPECT_EQ(t->ptx_version, 71u);
  EXPECT_EQ(parse_ptx_target("cuda-sm_70")->ptx_version, 60u);
  EXPECT_EQ(parse_ptx_target("cuda-sm_90")->ptx_version, 78u);
  for (const char *bad : {"cuda-sm_60", "cuda-sm_80a", "sm_80", "cuda", "vulkan1.1"})
    EXPECT_FALSE(parse_ptx_target(bad)) << bad;
  EXPECT_TRUE(is_ptx_target_name("cuda-sm_60"));
  EXPECT_FALSE(is_ptx_target_name("x86-64-v3"));
}

TEST(PtxAbi, ReflectionSurvivesItsJson) {
  std::vector<PtxKernelInfo> in(2);
  in[0].name = "a";
  in[0].static_shared_bytes = 256;
  in[0].has_status = true;
  in[0].has_phase = true;
  in[1].name = "b";
  in[1].has_boundary = true;
  in[1].has_atlas = true;
  auto out = parse_ptx_reflection(ptx_reflection_json(in));
  ASSERT_TRUE(out) << out.message();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].name, "a");
  EXPECT_EQ((*out)[0].static_shared_bytes, 256u);
  EXPECT_TRUE((*out)[0].has_status);
  EXPECT_FALSE((*out)[0].has_boundary);
  EXPECT_FALSE((*out)[0].has_atlas);
  EXPECT_TRUE((*out)[0].has_phase);
  EXPECT_TRUE((*out)[1].has_boundary);
  EXPECT_TRUE((*out)[1].has_atlas);
}

TEST(PtxAbi, DamagedReflectionIsAnError) {
  for (const char *bad : {"", "{}", "[{\"name\":\"a\"}]",
                          "[{\"name\":1,\"static_shared_bytes\":0,"
                          "\"status\":false,\"boundary\":false,"
                          "\"atlas\":false,\"phase\":false}]"}) {
    auto r = parse_ptx_reflection(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::InvalidModule);
    EXPECT_NE(r.message().find("PTX reflection"), std::string::npos) << r.message();
  }
}

} // namespace
} // namespace hologram::codegen
