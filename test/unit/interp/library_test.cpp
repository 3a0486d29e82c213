// Library operations (SPEC §3.8) on the interpreter against small hand-computed results.
#include "test_util.h"

#include <cmath>

using namespace hologram;
using namespace hologram::test;
using interp::ArgValue;

namespace {
Status run_lib(const std::string &params, const std::string &body, std::vector<ArgValue> args) {
  return run_text(".kernel k\n" + params + body, {}, std::move(args));
}
} // namespace

TEST(Library, GemmWithAlphaBetaAndTranspose) {
  // C(2x2) = 2 * A(2x3) * B(3x2) + 1 * C
  std::vector<float> A = {1, 2, 3, 4, 5, 6}, B = {7, 8, 9, 10, 11, 12}, C = {1, 1, 1, 1};
  std::string params = ".param %c : buffer<f32> readwrite\n.param %a : buffer<f32> read\n.param %b "
                       ": buffer<f32> read\n";
  std::string body =
      "  mov.imm.u64 r1, 2\n  mov.imm.u64 r2, 3\n  mov.imm.f32 r3, 2.0\n  mov.imm.f32 r4, 1.0\n"
      "  gemm.f32 %c, %a, %b, r1, r1, r2, r3, r4, r2, r1, r1, 0, 0\n";
  ASSERT_TRUE(run_lib(params, body,
                      {ArgValue::buffer_of(C), ArgValue::buffer_of(A), ArgValue::buffer_of(B)})
                  .is_ok());
  EXPECT_EQ(C, (std::vector<float>{117, 129, 279, 309}));
  // transA: A stored as 3x2 (its transpose), lda = 2.
  std::vector<float> At = {1, 4, 2, 5, 3, 6}, C2 = {0, 0, 0, 0};
  body = "  mov.imm.u64 r1, 2\n  mov.imm.u64 r2, 3\n  mov.imm.f32 r3, 1.0\n  mov.imm.f32 r4, 0.0\n"
         "  gemm.f32 %c, %a, %b, r1, r1, r2, r3, r4, r1, r1, r1, 1, 0\n";
  ASSERT_TRUE(run_lib(params, body,
                      {ArgValue::buffer_of(C2), ArgValue::buffer_of(At), ArgValue::buffer_of(B)})
                  .is_ok());
  EXPECT_EQ(C2, (std::vector<float>{58, 64, 139, 154}));
}

TEST(Library, GemmChecksBufferSizes) {
  std::vector<float> A(5), B(6), C(4);
  std::string params = ".param %c : buffer<f32> readwrite\n.param %a : buffer<f32> read\n.param %b "
                       ": buffer<f32> read\n";
  std::string body = "  mov.imm.u64 r1, 2\n  mov.imm.u64 r2, 3\n  mov.imm.f32 r3, 1.0\n"
                     "  gemm.f32 %c, %a, %b, r1, r1, r2, r3, r3, r2, r1, r1, 0, 0\n";
  auto st = run_lib(params, body,
                    {ArgValue::buffer_of(C), ArgValue::buffer_of(A), ArgValue::buffer_of(B)});
  EXPECT_EQ(st.code(), ErrorCode::OutOfBounds);
  EXPECT_NE(st.message().find("A %a needs 24 bytes, but the buffer holds 20"), std::string::npos)
      << st.message();
}

TEST(Library, SoftmaxRowsSumToOneAndSubtractTheMax) {
  std::vector<float> x = {1, 2, 3, 1000, 1000, 1000}, y(6);
  ASSERT_TRUE(run_lib(".param %y : buffer<f32> write\n.param %x : buffer<f32> read\n",
                      "  mov.imm.u64 r1, 2\n  mov.imm.u64 r2, 3\n  softmax.f32 %y, %x, r1, r2\n",
                      {ArgValue::buffer_of(y), ArgValue::buffer_of(x)})
                  .is_ok());
  EXPECT_NEAR(y[0] + y[1] + y[2], 1.0f, 1e-6);
  EXPECT_NEAR(y[2], std::exp(0.0) / (std::exp(-2.0) + std::exp(-1.0) + 1.0), 1e-6);
  EXPECT_FLOAT_EQ(y[3], 1.0f / 3.0f);
}

TEST(Library, NormsPointwiseAndDot) {
  std::vector<float> x = {1, 2, 3, 4}, y(4), g = {1, 1, 2, 2};
  ASSERT_TRUE(run_lib(".param %y : buffer<f32> write\n.param %x : buffer<f32> read\n.param %g : "
                      "buffer<f32> read\n",
                      "  mov.imm.u64 r1, 1\n  mov.imm.u64 r2, 4\n  mov.imm.f32 r3, 0.0\n  "
                      "rmsnorm.f32 %y, %x, %g, r1, r2, r3\n",
                      {ArgValue::buffer_of(y), ArgValue::buffer_of(x), ArgValue::buffer_of(g)})
                  .is_ok());
  float rms = std::sqrt((1 + 4 + 9 + 16) / 4.0f);
  EXPECT_FLOAT_EQ(y[3], 4 / rms * 2);
  ASSERT_TRUE(run_lib(".param %y : buffer<f32> write\n.param %x : buffer<f32> read\n",
                      "  mov.imm.u64 r1, 1\n  mov.imm.u64 r2, 4\n  mov.imm.f32 r3, 0.0\n  "
                      "layernorm.f32 %y, %x, none, none, r1, r2, r3\n",
                      {ArgValue::buffer_of(y), ArgValue::buffer_of(x)})
                  .is_ok());
  EXPECT_NEAR(y[0] + y[1] + y[2] + y[3], 0.0f, 1e-6);
  ASSERT_TRUE(run_lib(".param %y : buffer<f32> write\n.param %x : buffer<f32> read\n",
                      "  mov.imm.u64 r1, 4\n  gelu.f32 %y, %x, r1\n",
                      {ArgValue::buffer_of(y), ArgValue::buffer_of(x)})
                  .is_ok());
  EXPECT_FLOAT_EQ(y[0], static_cast<float>(0.5 * (1 + std::erf(1 / std::sqrt(2.0)))));
  std::vector<float> out(1);
  ASSERT_TRUE(run_lib(".param %o : buffer<f32> write\n.param %x : buffer<f32> read\n",
                      "  mov.imm.u64 r1, 4\n  dot.f32 r2, %x, %x, r1\n  mov.imm.u64 r3, 0\n  "
                      "st.f32 [%o + r3], r2\n",
                      {ArgValue::buffer_of(out), ArgValue::buffer_of(x)})
                  .is_ok());
  EXPECT_EQ(out[0], 30.0f);
}

TEST(Library, AttentionCausalFirstRowCopiesFirstValue) {
  // One head, 2 queries, 2 keys, d = 1: with the causal flag row 0 sees only key 0.
  std::vector<float> q = {1, 1}, k = {1, 2}, v = {10, 20}, out(2);
  ASSERT_TRUE(run_lib(".param %o : buffer<f32> write\n.param %q : buffer<f32> read\n.param %k : "
                      "buffer<f32> read\n"
                      ".param %v : buffer<f32> read\n",
                      "  mov.imm.u64 r1, 1\n  mov.imm.u64 r2, 2\n  mov.imm.f32 r3, 1.0\n"
                      "  attention.f32 %o, %q, %k, %v, none, r1, r1, r2, r2, r1, r2, r1, r2, r1, "
                      "r3, 1\n",
                      {ArgValue::buffer_of(out), ArgValue::buffer_of(q), ArgValue::buffer_of(k),
                       ArgValue::buffer_of(v)})
                  .is_ok());
  EXPECT_EQ(out[0], 10.0f);
  float w0 = std::exp(1.0f - 2.0f), w1 = 1.0f;
  EXPECT_NEAR(out[1], (10 * w0 + 20 * w1) / (w0 + w1), 1e-5);
}

TEST(Library, AttentionGroupsQueryHeadsOnKeyValueHeadsAtTheirStrides) {
  // Two query heads on one key/value head, rows of both heads side by side ([seq, 2·d], d = 1):
  // Q = [[a0, b0], [a1, b1]] for heads a and b, one key row per position in a cache whose rows
  // are 3 wide. Both heads see key/value head 0, so with equal queries both rows are equal.
  std::vector<float> q = {1, 1, 1, 1}, k = {0, 9, 9, 1, 9, 9}, v = {10, 9, 9, 20, 9, 9}, out(4);
  const std::string params = ".param %o : buffer<f32> write\n.param %q : buffer<f32> read\n"
                             ".param %k : buffer<f32> read\n.param %v : buffer<f32> read\n";
  const std::string consts = "  mov.imm.u64 r1, 1\n  mov.imm.u64 r2, 2\n  mov.imm.u64 r4, 3\n"
                             "  mov.imm.f32 r3, 1.0\n";
  auto run = [&](const std::string &heads, const std::string &kv_heads,
                 const std::string &q_strides) {
    return run_lib(params,
                   consts + "  attention.f32 %o, %q, %k, %v, none, " + heads + ", " + kv_heads +
                       ", r2, r2, r1, " + q_strides + ", r1, r4, r3, 0\n",
                   {ArgValue::buffer_of(out), ArgValue::buffer_of(q), ArgValue::buffer_of(k),
                    ArgValue::buffer_of(v)});
  };
  ASSERT_TRUE(run("r2", "r1", "r1, r2").is_ok());
  float w0 = std::exp(0.0f), w1 = std::exp(1.0f);
  float want = (10 * w0 + 20 * w1) / (w0 + w1);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[i], want, 1e-5) << i;
  // kv_heads must divide heads; out's rows must not overlap (head stride 0, two heads).
  auto st = run("r2", "r4", "r1, r2");
  EXPECT_EQ(st.code(), ErrorCode::LaunchFailed);
  EXPECT_NE(st.message().find("attention's heads (2) must be a multiple of kv_heads (3)"),
            std::string::npos)
      << st.message();
  st = run("r2", "r1", "r1, r1");
  EXPECT_EQ(st.code(), ErrorCode::LaunchFailed);
  EXPECT_NE(st.message().find("attention's output rows overlap"), std::string::npos)
      << st.message();
  // K must hold every row its strides reach: the last key row starts at 3 and is 1 wide.
  k.resize(3);
  st = run("r2", "r1", "r1, r2");
  EXPECT_EQ(st.code(), ErrorCode::OutOfBounds);
}
