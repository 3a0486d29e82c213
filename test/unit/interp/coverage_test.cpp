// Instructions not covered by the families' sweeps, each with hand-computed results.
#include "test_util.h"

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace hologram;
using namespace hologram::test;
using interp::ArgValue;

TEST(Coverage, BitwiseAtomics) {
  auto out = run_out<uint32_t>(
      "  mov.imm.u64 r9, 0\n  mov.imm.u32 r1, 0xf0\n  st.u32 [%out], r1\n"
      "  mov.imm.u32 r2, 0x3c\n  atom.and.u32 r3, [%out + r9], r2\n"
      "  atom.or.u32 r4, [%out + r9], r2\n  atom.xor.u32 r5, [%out + r9], r1\n"
      "  st.u32 [%out + 4], r3\n  st.u32 [%out + 8], r4\n  st.u32 [%out + 12], r5\n",
      4);
  // 0xf0 & 0x3c = 0x30; | 0x3c = 0x3c; ^ 0xf0 = 0xcc. The returned values are the old ones.
  EXPECT_EQ(out, (std::vector<uint32_t>{0xcc, 0xf0, 0x30, 0x3c}));
}

TEST(Coverage, UnityTestAndNeighbourLoadsAndStores) {
  interp::AtlasState atlas;
  // Class 0's neighbours are 1, 7, 24, 72; nbr.st writes class 72's element 2, nbr.ld reads it
  // back.
  std::vector<uint32_t> out(3);
  auto st = run_text(R"(.kernel k
.param %o : buffer<u32> write
  mov.imm.u32    r1, 0
  mov.imm.u32    r2, 48
  unity.test     p0, r1
  mov.imm.u32    r3, 1
  unity.test     p1, r3
  mov.imm.u32    r4, 1
  mov.imm.u32    r5, 0
  sel.u32        r6, p0, r4, r5
  sel.u32        r7, p1, r4, r5
  st.u32         [%o], r6
  st.u32         [%o + 4], r7
  mov.imm.u64    r8, 8
  mov.imm.u32    r9, 99
  nbr.st.u32     r1, 3, r8, r9
  nbr.ld.u32     r10, r1, 3, r8
  st.u32         [%o + 8], r10
)",
                     {}, {ArgValue::buffer_of(out)}, &atlas);
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(out, (std::vector<uint32_t>{1, 0, 99}));
  uint32_t v;
  std::memcpy(&v, atlas.boundary.data() + 72 * atlas::kClassBytes + 8, 4);
  EXPECT_EQ(v, 99u);
}

TEST(Coverage, Map2AndMapOnIntegers) {
  std::vector<float> a = {1, 9, -4}, b = {3, 2, 5}, c(3);
  auto st = run_text(R"(.kernel m
.param %c : buffer<f32> readwrite
.param %a : buffer<f32> read
.param %b : buffer<f32> read
  mov.imm.u64    r1, 3
  map2.max.f32   %c, %a, %b, r1
  map2.sub.f32   %c, %c, %b, r1
  map.abs.f32    %c, %c, r1
)",
                     {}, {ArgValue::buffer_of(c), ArgValue::buffer_of(a), ArgValue::buffer_of(b)});
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(c, (std::vector<float>{0, 7, 0}));
  std::vector<int32_t> x = {-5, 3}, y(2);
  st = run_text(".kernel r\n.param %y : buffer<i32> readwrite\n.param %x : buffer<i32> read\n"
                "  mov.imm.u64 r1, 2\n  map.relu.i32 %y, %x, r1\n  map2.mul.i32 %y, %y, %x, r1\n",
                {}, {ArgValue::buffer_of(y), ArgValue::buffer_of(x)});
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(y, (std::vector<int32_t>{0, 9}));
}

namespace {
Status lib(const std::string &params, const std::string &body, std::vector<ArgValue> args) {
  return run_text(".kernel k\n" + params + body, {}, std::move(args));
}
} // namespace

TEST(Coverage, GemvAndBatchedGemm) {
  // y = 2 * A x + 1 * y with A = [[1,2],[3,4]], x = [1,1], y = [10, 20].
  std::vector<float> A = {1, 2, 3, 4}, x = {1, 1}, y = {10, 20};
  ASSERT_TRUE(lib(".param %y : buffer<f32> readwrite\n.param %A : buffer<f32> read\n.param %x : "
                  "buffer<f32> read\n",
                  "  mov.imm.u64 r1, 2\n  mov.imm.f32 r2, 2.0\n  mov.imm.f32 r3, 1.0\n"
                  "  gemv.f32 %y, %A, %x, r1, r1, r2, r3, r1, 0\n",
                  {ArgValue::buffer_of(y), ArgValue::buffer_of(A), ArgValue::buffer_of(x)})
                  .is_ok());
  EXPECT_EQ(y, (std::vector<float>{16, 34}));
  // Transposed: y = A^T x = [4, 6].
  std::vector<float> y2(2);
  ASSERT_TRUE(lib(".param %y : buffer<f32> readwrite\n.param %A : buffer<f32> read\n.param %x : "
                  "buffer<f32> read\n",
                  "  mov.imm.u64 r1, 2\n  mov.imm.f32 r2, 1.0\n  mov.imm.f32 r3, 0.0\n"
                  "  gemv.f32 %y, %A, %x, r1, r1, r2, r3, r1, 1\n",
                  {ArgValue::buffer_of(y2), ArgValue::buffer_of(A), ArgValue::buffer_of(x)})
                  .is_ok());
  EXPECT_EQ(y2, (std::vector<float>{4, 6}));
  // Two 1x1x2 products with strides: [1,2].[3,4] = 11 and [5,6].[7,8] = 83.
  std::vector<float> a = {1, 2, 5, 6}, b = {3, 4, 7, 8}, c(2);
  ASSERT_TRUE(
      lib(".param %c : buffer<f32> readwrite\n.param %a : buffer<f32> read\n.param %b : "
          "buffer<f32> read\n",
          "  mov.imm.u64 r1, 2\n  mov.imm.u64 r2, 1\n  mov.imm.f32 r3, 1.0\n  mov.imm.f32 r4, 0.0\n"
          "  batched_gemm.f32 %c, %a, %b, r1, r2, r2, r1, r3, r4, r1, r2, r2, r1, r1, r2, 0, 0\n",
          {ArgValue::buffer_of(c), ArgValue::buffer_of(a), ArgValue::buffer_of(b)})
          .is_ok());
  EXPECT_EQ(c, (std::vector<float>{11, 83}));
}

TEST(Coverage, PointwiseAndRowLibraryOps) {
  std::vector<float> x = {0, 1, -2, 3}, y(4);
  auto one = [&](const std::string &op) {
    std::fill(y.begin(), y.end(), 0.0f);
    auto st = lib(".param %y : buffer<f32> readwrite\n.param %x : buffer<f32> read\n",
                  "  mov.imm.u64 r1, 4\n  mov.imm.u64 r2, 1\n  mov.imm.f32 r3, 0.5\n  " + op + "\n",
                  {ArgValue::buffer_of(y), ArgValue::buffer_of(x)});
    EXPECT_TRUE(st.is_ok()) << op << ": " << st.message();
  };
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  one("silu.f32 %y, %x, r1");
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(y[i], static_cast<float>(x[i] * sig(x[i])));
  one("gelu_tanh.f32 %y, %x, r1");
  for (int i = 0; i < 4; ++i) {
    double v = x[i];
    EXPECT_FLOAT_EQ(
        y[i], static_cast<float>(0.5 * v *
                                 (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))));
  }
  one("log_softmax.f32 %y, %x, r2, r1");
  double lse = std::log(std::exp(0.0) + std::exp(1.0) + std::exp(-2.0) + std::exp(3.0));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], x[i] - lse, 1e-6);
  y = {1, 1, 1, 1}; // axpy accumulates into y
  ASSERT_TRUE(lib(".param %y : buffer<f32> readwrite\n.param %x : buffer<f32> read\n",
                  "  mov.imm.u64 r1, 4\n  mov.imm.f32 r3, 0.5\n  axpy.f32 %y, %x, r1, r3\n",
                  {ArgValue::buffer_of(y), ArgValue::buffer_of(x)})
                  .is_ok());
  EXPECT_EQ(y, (std::vector<float>{1, 1.5f, 0, 2.5f}));
}

TEST(Coverage, RopeAndConv2d) {
  // One row, dim 4: pairs (1,0) and (0,1) rotated by 90 and 180 degrees.
  std::vector<float> x = {1, 0, 0, 1}, cs = {0, -1}, sn = {1, 0}, y(4);
  ASSERT_TRUE(lib(".param %y : buffer<f32> readwrite\n.param %x : buffer<f32> read\n.param %c : "
                  "buffer<f32> read\n"
                  ".param %s : buffer<f32> read\n",
                  "  mov.imm.u64 r1, 1\n  mov.imm.u64 r2, 4\n  rope.f32 %y, %x, %c, %s, r1, r2\n",
                  {ArgValue::buffer_of(y), ArgValue::buffer_of(x), ArgValue::buffer_of(cs),
                   ArgValue::buffer_of(sn)})
                  .is_ok());
  EXPECT_EQ(y, (std::vector<float>{0, 1, 0, -1}));
  // A 3x3 input, a 2x2 kernel of ones, stride 1, pad 0, bias 10: window sums + 10.
  std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 1, 1, 1}, bias = {10}, out(4);
  ASSERT_TRUE(
      lib(".param %o : buffer<f32> readwrite\n.param %i : buffer<f32> read\n.param %w : "
          "buffer<f32> read\n"
          ".param %b : buffer<f32> read\n",
          "  mov.imm.u64 r1, 1\n  mov.imm.u64 r3, 3\n  mov.imm.u64 r2, 2\n  mov.imm.u64 r0, 0\n"
          "  conv2d.f32 %o, %i, %w, %b, r1, r1, r3, r3, r1, r2, r2, r1, r0\n",
          {ArgValue::buffer_of(out), ArgValue::buffer_of(in), ArgValue::buffer_of(w),
           ArgValue::buffer_of(bias)})
          .is_ok());
  EXPECT_EQ(out, (std::vector<float>{22, 26, 34, 38}));
}

TEST(Coverage, EveryInstructionIsUsedByATestProgram) {
  // Scans the test sources (unit tests and lit files) for each mnemonic of the instruction
  // table written as an instruction ("  add.f32", "  bar.sync", "setlt.") or handed to a
  // program-building helper (binop<T>("rem", ...)), so a new table row fails here until some
  // test runs it.
  namespace fs = std::filesystem;
  std::string all;
  for (const char *dir : {"test/unit", "test/lit"})
    for (const auto &e :
         fs::recursive_directory_iterator(std::string(HOLOGRAM_SOURCE_DIR) + "/" + dir))
      if (e.is_regular_file()) {
        std::ifstream in(e.path());
        all += std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
  for (const auto &row : isa::opcode_table()) {
    std::string m(row.mnemonic);
    bool found = false;
    for (const char *before : {" ", "\"", "\t"}) {
      const char *afters[] = {".", " "};
      for (const char *after : afters) {
        std::string probe = before + m + (row.sub == isa::SubKind::Cmp ? "lt" : "") + after;
        if (all.find(probe) != std::string::npos) found = true;
      }
    }
    // Also as a quoted op name: handed to the helpers that build one-instruction programs, or
    // matched by the reference code of the table-driven sweep.
    found = found || all.find("\"" + m + "\"") != std::string::npos;
    EXPECT_TRUE(found) << "no test program uses '" << m << "'";
  }
}
