// The exported conformance case (test/conformance/case_file.h): a case survives encoding, a
// damaged file is an error naming it, and the comparison the runner makes finds a result
// outside its tolerance.
#include "conformance/case_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace hologram::conformance {
namespace {

ExportedCase sample() {
  ExportedCase c;
  c.name = "saxpy";
  c.kernel = "saxpy";
  c.launch = LaunchConfig::linear(100, 64);
  c.launch.shared_memory = 16;
  c.params = {{"x", isa::ParamKind::Buffer, Type::F32, isa::Access::Read, {}},
              {"p", isa::ParamKind::Pool, Type::None, isa::Access::ReadWrite, {}},
              {"n", isa::ParamKind::Scalar, Type::U32, isa::Access::ReadWrite, {}}};
  c.inputs.arrays["x"] = Array::of<float>(Type::F32, {1.0f, -2.5f, 3.0f});
  c.inputs.arrays["p"] = Array::of<uint8_t>(Type::U8, {7, 8});
  c.inputs.scalars["n"] = 3;
  c.inputs.klass(5)[10] = 1.5f;
  c.expected.arrays["x"] = Array::of<float>(Type::F32, {2.0f, -5.0f, 6.0f});
  c.expected.klass(95)[0] = -4.0f;
  c.checks = {{"x", {2, 1e-6}, 3, false}, {"c95", {}, std::numeric_limits<size_t>::max(), true}};
  c.cpu_paths = {"gemm:packed"};
  c.device_paths = {"gemm:tiled", "softmax:rows"};
  c.levels = {{0, "bundles/a.O0.hgb", {}},
              {2, "bundles/a.O2.hgb", {{"vulkan1.1", "no f64 on this target"}}}};
  return c;
}

TEST(ExportedCase, SurvivesEncoding) {
  const ExportedCase c = sample();
  auto back = decode_case(encode_case(c), "sample.cbor");
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->name, c.name);
  EXPECT_EQ(back->kernel, c.kernel);
  EXPECT_EQ(back->launch.grid, c.launch.grid);
  EXPECT_EQ(back->launch.block, c.launch.block);
  EXPECT_EQ(back->launch.shared_memory, 16u);
  EXPECT_EQ(back->params, c.params);
  ASSERT_EQ(back->inputs.arrays.size(), 2u);
  EXPECT_EQ(back->inputs.arrays.at("x").type, Type::F32);
  EXPECT_EQ(back->inputs.arrays.at("x").bytes, c.inputs.arrays.at("x").bytes);
  EXPECT_EQ(back->inputs.arrays.at("p").bytes, c.inputs.arrays.at("p").bytes);
  EXPECT_EQ(back->inputs.scalars, c.inputs.scalars);
  EXPECT_EQ(back->inputs.boundary, c.inputs.boundary);
  EXPECT_EQ(back->expected.boundary, c.expected.boundary);
  ASSERT_EQ(back->checks.size(), 2u);
  EXPECT_EQ(back->checks[0].tol.ulps, 2u);
  EXPECT_EQ(back->checks[0].tol.abs, 1e-6);
  EXPECT_EQ(back->checks[0].count, 3u);
  EXPECT_EQ(back->checks[1].count, std::numeric_limits<size_t>::max());
  EXPECT_TRUE(back->checks[1].unordered);
  EXPECT_EQ(back->cpu_paths, c.cpu_paths);
  EXPECT_EQ(back->device_paths, c.device_paths);
  ASSERT_EQ(back->levels.size(), 2u);
  EXPECT_EQ(back->levels[1].opt_level, 2u);
  EXPECT_EQ(back->levels[1].bundle, "bundles/a.O2.hgb");
  EXPECT_EQ(back->levels[1].unsupported, c.levels[1].unsupported);
}

TEST(ExportedCase, DamagedFilesAreErrorsNamingThem) {
  const std::string bytes = encode_case(sample());
  for (const std::string &damaged :
       {bytes.substr(0, bytes.size() / 2), std::string("not cbor"), std::string()}) {
    auto c = decode_case(damaged, "cases/x.cbor");
    ASSERT_FALSE(c);
    EXPECT_EQ(c.status().code(), ErrorCode::InvalidModule);
    EXPECT_NE(c.message().find("cases/x.cbor is not a conformance case file"), std::string::npos)
        << c.message();
  }
  // Well-formed CBOR that breaks the format: a parameter kind that does not exist (the text
  // string "scalar", CBOR header 0x66, rewritten in place).
  std::string enc = encode_case(sample());
  const std::string from = "\x66scalar", to = "\x66vector";
  ASSERT_NE(enc.find(from), std::string::npos);
  enc.replace(enc.find(from), from.size(), to);
  auto wrong = decode_case(enc, "k.cbor");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.message().find("unknown parameter kind 'vector'"), std::string::npos)
      << wrong.message();
}

TEST(ExportedCase, ComparisonFindsResultsOutsideTheirTolerance) {
  CaseData want, got;
  want.arrays["y"] = Array::of<float>(Type::F32, {1.0f, 2.0f});
  got.arrays["y"] = want.arrays["y"];
  const Check exact{"y", {}, std::numeric_limits<size_t>::max(), false};
  EXPECT_EQ(compare_check(exact, got, want), "");
  got.array<float>("y")[1] = std::nextafter(2.0f, 3.0f);
  EXPECT_NE(compare_check(exact, got, want).find("y[1] = 2.00000024, expected 2"),
            std::string::npos);
  EXPECT_EQ(compare_check({"y", {1, 0}, std::numeric_limits<size_t>::max(), false}, got, want), "");
  EXPECT_EQ(compare_check({"y", {}, 1, false}, got, want), "") << "only the first element";
  // A class of the boundary pool.
  got.klass(3)[7] = 1.0f;
  EXPECT_NE(compare_check({"c3", {}, std::numeric_limits<size_t>::max(), false}, got, want), "");
  EXPECT_NE(compare_check({"z", {}, 1, false}, got, want).find("no array z"), std::string::npos);
}

TEST(ExportedCase, ReadOnlyParametersThatChangedAreNamed) {
  const std::vector<isa::Param> params = {
      {"a", isa::ParamKind::Buffer, Type::F32, isa::Access::Read, {}},
      {"b", isa::ParamKind::Buffer, Type::F32, isa::Access::ReadWrite, {}}};
  CaseData given, got;
  given.arrays["a"] = given.arrays["b"] = Array::of<float>(Type::F32, {1.0f});
  got = given;
  got.array<float>("b")[0] = 2.0f;
  EXPECT_TRUE(changed_read_only(params, given, got).empty());
  got.array<float>("a")[0] = 2.0f;
  EXPECT_EQ(changed_read_only(params, given, got), std::vector<std::string>{"a"});
}

} // namespace
} // namespace hologram::conformance
