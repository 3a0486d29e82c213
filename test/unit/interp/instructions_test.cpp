// Corner cases of SPEC §3.4 on the interpreter, one test per rule.
#include "test_util.h"

#include <cmath>
#include <limits>

using namespace hologram;
using namespace hologram::test;

template <typename T> using L = std::numeric_limits<T>;

TEST(Instructions, IntegersWrap) {
  EXPECT_EQ(binop<int32_t>("add", L<int32_t>::max(), 1), L<int32_t>::min());
  EXPECT_EQ(binop<uint8_t>("add", 250, 10), 4);
  EXPECT_EQ(binop<int8_t>("mul", 100, 3), static_cast<int8_t>(44));
  EXPECT_EQ(binop<uint64_t>("sub", 0, 1), L<uint64_t>::max());
  EXPECT_EQ(binop<int16_t>("mul", -32768, -1), -32768);
}

TEST(Instructions, DivisionTruncatesAndDivByZeroIsZero) {
  EXPECT_EQ(binop<int32_t>("div", -7, 2), -3);
  EXPECT_EQ(binop<int32_t>("rem", -7, 2), -1);
  EXPECT_EQ(binop<int32_t>("rem", 7, -2), 1);
  EXPECT_EQ(binop<int32_t>("div", 5, 0), 0);
  EXPECT_EQ(binop<uint64_t>("rem", 5, 0), 0u);
  EXPECT_EQ(binop<int8_t>("div", -128, -1), -128);
  EXPECT_EQ(binop<int64_t>("div", L<int64_t>::min(), -1), L<int64_t>::min());
  EXPECT_EQ(binop<int64_t>("rem", L<int64_t>::min(), -1), 0);
  EXPECT_EQ(binop<uint32_t>("div", 7, 2), 3u);
  EXPECT_TRUE(std::isinf(binop<float>("div", 1.0f, 0.0f)));
  EXPECT_FLOAT_EQ(binop<float>("rem", 7.5f, 2.0f), 1.5f);
}

TEST(Instructions, CheckDivFailsTheLaunch) {
  interp::InterpOptions o;
  o.check_div = true;
  std::vector<int32_t> out(1);
  auto st = run_text(
      ".kernel k\n.param %out : buffer<i32> write\n  mov.imm.i32 r1, 5\n  mov.imm.i32 r2, 0\n"
      "  div.i32 r3, r1, r2\n  st.i32 [%out], r3\n",
      {}, {interp::ArgValue::buffer_of(out)}, nullptr, o);
  EXPECT_EQ(st.code(), ErrorCode::DivisionByZero);
  EXPECT_NE(st.message().find("kernel 'k': lane 0"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("div.i32"), std::string::npos) << st.message();
}

TEST(Instructions, ShiftsAreMaskedAndShrFollowsSignedness) {
  auto shift = [](const std::string &op, const std::string &t, const std::string &a, uint32_t s) {
    return run_out<uint64_t>("  mov.imm." + t + " r1, " + a + "\n  mov.imm.u32 r2, " +
                             std::to_string(s) + "\n  " + op + "." + t + " r3, r1, r2\n  cvt.u64." +
                             t + " r4, r3\n  st.u64 [%out], r4\n")[0];
  };
  EXPECT_EQ(shift("shl", "u32", "1", 33), 2u);
  EXPECT_EQ(shift("shl", "i8", "1", 8), 1u);
  EXPECT_EQ(static_cast<int64_t>(shift("shr", "i32", "-8", 33)), -4);
  EXPECT_EQ(shift("shr", "u32", "0x80000000", 31), 1u);
  EXPECT_EQ(static_cast<int64_t>(shift("shr", "i64", "-1", 63)), -1);
  EXPECT_EQ(shift("shl", "u64", "1", 64), 1u);
}

TEST(Instructions, AbsAndNegOfMin) {
  EXPECT_EQ(unop<int32_t>("abs", L<int32_t>::min()), L<int32_t>::min());
  EXPECT_EQ(unop<int32_t>("neg", L<int32_t>::min()), L<int32_t>::min());
  EXPECT_EQ(unop<int8_t>("abs", -5), 5);
  EXPECT_EQ(unop<float>("abs", -0.0f), 0.0f);
  EXPECT_FALSE(std::signbit(unop<float>("abs", -0.0f)));
  EXPECT_EQ(unop<uint32_t>("neg", 1), L<uint32_t>::max());
}

TEST(Instructions, MinMaxAreMinNumMaxNum) {
  float nan = L<float>::quiet_NaN();
  EXPECT_EQ(binop<float>("min", nan, 2.0f), 2.0f);
  EXPECT_EQ(binop<float>("max", 2.0f, nan), 2.0f);
  EXPECT_TRUE(std::isnan(binop<float>("min", nan, nan)));
  EXPECT_EQ(binop<double>("max", -1.0, 3.0), 3.0);
  EXPECT_EQ(binop<int32_t>("min", -1, 3), -1);
  EXPECT_EQ(binop<uint32_t>("max", 0xffffffffu, 3), 0xffffffffu);
  EXPECT_EQ(ternop<float>("clamp", nan, 0.0f, 1.0f), 0.0f);
  EXPECT_EQ(ternop<int32_t>("clamp", 9, 0, 5), 5);
}

TEST(Instructions, FmaRoundsOnceMadTwice) {
  float a = 0.1f, b = 10.0f, c = -1.0f;
  EXPECT_EQ(ternop<float>("fma", a, b, c), std::fma(a, b, c));
  EXPECT_NE(ternop<float>("fma", a, b, c), 0.0f);
  EXPECT_EQ(ternop<float>("mad", a, b, c), 0.0f);
  EXPECT_EQ(ternop<float>("fms", a, b, 1.0f), std::fma(a, b, -1.0f));
  EXPECT_EQ(ternop<int32_t>("mad", 1 << 30, 4, 7), 7);
}

TEST(Instructions, ConversionsSaturateAndTruncate) {
  EXPECT_EQ((cvt<int32_t, float>(3e9f)), L<int32_t>::max());
  EXPECT_EQ((cvt<int32_t, float>(-3e9f)), L<int32_t>::min());
  EXPECT_EQ((cvt<uint32_t, float>(-1.5f)), 0u);
  EXPECT_EQ((cvt<int32_t, float>(-2.7f)), -2);
  EXPECT_EQ((cvt<int32_t, float>(L<float>::quiet_NaN())), 0);
  EXPECT_EQ((cvt<uint8_t, double>(1e10)), 255);
  EXPECT_EQ((cvt<int64_t, double>(9.3e18)), L<int64_t>::max());
  EXPECT_EQ((cvt<uint64_t, float>(L<float>::infinity())), L<uint64_t>::max());
  EXPECT_EQ((cvt<int8_t, int32_t>(300)), 44);
  EXPECT_EQ((cvt<int64_t, int8_t>(-1)), -1);
  EXPECT_EQ((cvt<uint64_t, uint8_t>(255)), 255u);
  EXPECT_EQ((cvt<uint32_t, int32_t>(-1)), 4294967295u);
  EXPECT_EQ((cvt<int64_t, uint32_t>(0xffffffffu)), 4294967295);
  EXPECT_EQ((cvt<float, int32_t>(16777217)), 16777216.0f);
  EXPECT_EQ((cvt<float, uint64_t>(L<uint64_t>::max())), 18446744073709551616.0f);
  EXPECT_EQ((cvt<float, double>(1e300)), L<float>::infinity());
  EXPECT_EQ((cvt<double, float>(0.1f)), static_cast<double>(0.1f));
}

TEST(Instructions, ConversionsSaturateAtTheExactBoundary) {
  // One past the largest value saturates; the smallest value and the largest float below the
  // limit convert exactly (a `>` where `>=` belongs gets 2^31 wrong).
  EXPECT_EQ((cvt<int32_t, float>(0x1p31f)), L<int32_t>::max());
  EXPECT_EQ((cvt<int32_t, float>(-0x1p31f)), L<int32_t>::min());
  EXPECT_EQ((cvt<int32_t, float>(0x1p31f - 128)), 2147483520);
  EXPECT_EQ((cvt<int32_t, double>(0x1p31)), L<int32_t>::max());
  EXPECT_EQ((cvt<int32_t, double>(0x1p31 - 1)), L<int32_t>::max());
  EXPECT_EQ((cvt<int32_t, double>(-2147483648.5)), L<int32_t>::min());
  EXPECT_EQ((cvt<int32_t, double>(-2147483649.0)), L<int32_t>::min());
  EXPECT_EQ((cvt<uint32_t, float>(0x1p32f)), L<uint32_t>::max());
  EXPECT_EQ((cvt<uint32_t, float>(0x1p32f - 256)), 4294967040u);
  EXPECT_EQ((cvt<uint32_t, double>(4294967295.5)), L<uint32_t>::max());
  EXPECT_EQ((cvt<int64_t, float>(0x1p63f)), L<int64_t>::max());
  EXPECT_EQ((cvt<int64_t, float>(-0x1p63f)), L<int64_t>::min());
  EXPECT_EQ((cvt<int64_t, double>(0x1p63 - 1024)), 9223372036854774784);
  EXPECT_EQ((cvt<uint64_t, double>(0x1p64)), L<uint64_t>::max());
  EXPECT_EQ((cvt<uint64_t, double>(0x1p64 - 2048)), 18446744073709549568u);
  EXPECT_EQ((cvt<int8_t, float>(128.0f)), 127);
  EXPECT_EQ((cvt<int8_t, float>(-128.0f)), -128);
  EXPECT_EQ((cvt<int8_t, float>(-129.0f)), -128);
  EXPECT_EQ((cvt<uint8_t, float>(256.0f)), 255);
  EXPECT_EQ((cvt<uint8_t, float>(255.0f)), 255);
  EXPECT_EQ((cvt<int16_t, double>(32768.0)), 32767);
  EXPECT_EQ((cvt<uint16_t, double>(65536.0)), 65535);
  EXPECT_EQ((cvt<uint8_t, float>(-0.99f)), 0);
}

TEST(Instructions, HalfAndBfloatStorageRoundTrips) {
  auto via = [](const std::string &t, const std::string &v) {
    return run_out<float>("  mov.imm.f32 r1, " + v + "\n  cvt." + t + ".f32 r2, r1\n  cvt.f32." +
                          t + " r3, r2\n  st.f32 [%out], r3\n")[0];
  };
  EXPECT_EQ(via("f16", "1.0"), 1.0f);
  EXPECT_EQ(via("f16", "65504.0"), 65504.0f);
  EXPECT_TRUE(std::isinf(via("f16", "65520.0")));       // rounds up to infinity
  EXPECT_EQ(via("f16", "1.00048828125"), 1.0f);         // tie to even (down)
  EXPECT_EQ(via("f16", "1.00146484375"), 1.001953125f); // tie to even (up)
  EXPECT_EQ(via("f16", "5.9604645e-8"), 5.9604645e-8f); // smallest subnormal
  EXPECT_EQ(via("bf16", "1.00390625"), 1.0f);           // tie to even
  EXPECT_EQ(via("bf16", "3.0"), 3.0f);
  EXPECT_TRUE(std::isnan(via("f16", "nan")));
  // Storage through memory.
  auto out = run_out<uint16_t>("  mov.imm.f16 r1, 0x3c00\n  mov.f16 r2, r1\n  cvt.u16.f16 r3, r2\n"
                               "  st.u16 [%out], r3\n");
  EXPECT_EQ(out[0], 1);
}

TEST(Instructions, ComparisonsOrderedAndUnordered) {
  float nan = L<float>::quiet_NaN();
  EXPECT_FALSE(cmp<float>("eq", nan, nan));
  EXPECT_FALSE(cmp<float>("ne", nan, 1.0f));
  EXPECT_TRUE(cmp<float>("neu", nan, 1.0f));
  EXPECT_TRUE(cmp<float>("ltu", nan, 1.0f));
  EXPECT_FALSE(cmp<float>("lt", nan, 1.0f));
  EXPECT_TRUE(cmp<float>("geu", 2.0f, 1.0f));
  EXPECT_TRUE(cmp<int32_t>("lt", -1, 0));
  EXPECT_FALSE(cmp<uint32_t>("lt", 0xffffffffu, 0));
  EXPECT_TRUE(cmp<uint8_t>("ge", 200, 100));
  EXPECT_TRUE(cmp<int64_t>("le", 5, 5));
}

TEST(Instructions, Transcendentals) {
  EXPECT_EQ(unop<float>("sigmoid", 100.0f), 1.0f);
  EXPECT_EQ(unop<float>("sigmoid", -100.0f), 0.0f);
  EXPECT_EQ(unop<double>("sigmoid", -1000.0), 0.0);
  EXPECT_EQ(unop<double>("sigmoid", 1000.0), 1.0);
  EXPECT_FLOAT_EQ(unop<float>("sigmoid", 0.0f), 0.5f);
  EXPECT_EQ(unop<float>("log", 0.0f), -L<float>::infinity());
  EXPECT_TRUE(std::isnan(unop<float>("sqrt", -1.0f)));
  EXPECT_EQ(unop<float>("rsqrt", 0.0f), L<float>::infinity());
  EXPECT_EQ(unop<float>("exp", 0.0f), 1.0f);
  EXPECT_EQ(unop<float>("exp2", 10.0f), 1024.0f);
  EXPECT_EQ(unop<float>("log2", 1024.0f), 10.0f);
  EXPECT_EQ(unop<double>("log10", 1000.0), 3.0);
  EXPECT_FLOAT_EQ(unop<float>("tanh", 0.5f), std::tanh(0.5f));
  EXPECT_FLOAT_EQ(unop<float>("erf", 0.5f), std::erf(0.5f));
  EXPECT_FLOAT_EQ(binop<float>("pow", 2.0f, 0.5f), std::sqrt(2.0f));
  EXPECT_FLOAT_EQ(binop<float>("atan2", 1.0f, -1.0f), 2.3561945f);
  EXPECT_EQ(unop<float>("round", 2.5f), 3.0f);
  EXPECT_EQ(unop<float>("floor", -2.5f), -3.0f);
  EXPECT_EQ(unop<float>("ceil", -2.5f), -2.0f);
  EXPECT_EQ(unop<float>("trunc", -2.5f), -2.0f);
  EXPECT_EQ(unop<float>("sign", -7.0f), -1.0f);
  EXPECT_EQ(unop<int32_t>("sign", -7), -1);
  EXPECT_EQ(unop<float>("rcp", 4.0f), 0.25f);
  EXPECT_EQ(ternop<float>("lerp", 1.0f, 3.0f, 0.5f), 2.0f);
}

TEST(Instructions, SelectAndPredicateLogic) {
  auto out = run_out<uint32_t>(
      "  mov.imm.u32 r1, 1\n  mov.imm.u32 r2, 2\n  seteq.u32 p0, r1, r1\n  setne.u32 p1, r1, r1\n"
      "  pand p2, p0, p1\n  por p3, p0, p1\n  pnot p4, p1\n"
      "  sel.u32 r3, p2, r1, r2\n  st.u32 [%out], r3\n  sel.u32 r4, p3, r1, r2\n  st.u32 [%out + "
      "4], r4\n"
      "  sel.u32 r5, p4, r1, r2\n  st.u32 [%out + 8], r5\n",
      3);
  EXPECT_EQ(out, (std::vector<uint32_t>{2, 1, 1}));
}

TEST(Instructions, ControlFlow) {
  // loop: do-while with count-1; bra to self is a real jump; call/ret.
  auto out = run_out<uint32_t>("  mov.imm.u32 r1, 4\n  mov.imm.u32 r2, 0\n  mov.imm.u32 r3, 1\n"
                               "@body:\n  add.u32 r2, r2, r3\n  loop r1, @body\n"
                               "  call @twice\n  st.u32 [%out], r2\n  exit\n"
                               "@twice:\n  add.u32 r2, r2, r2\n  ret\n");
  EXPECT_EQ(out[0], 10u);
  interp::InterpOptions o;
  o.max_steps = 1000;
  std::vector<uint32_t> buf(1);
  auto st = run_text(".kernel k\n.param %out : buffer<u32> write\n@self:\n  bra @self\n", {},
                     {interp::ArgValue::buffer_of(buf)}, nullptr, o);
  EXPECT_EQ(st.code(), ErrorCode::StepLimitExceeded) << st.message();
}

TEST(Instructions, RegisterAndMemoryReductions) {
  auto out = run_out<int32_t>(
      "  mov.imm.i32 r10, 3\n  mov.imm.i32 r11, -5\n  mov.imm.i32 r12, 7\n"
      "  reduce.add.i32 r1, r10, 3\n  reduce.min.i32 r2, r10, 3\n"
      "  reduce.max.i32 r3, r10, 3\n  reduce.mul.i32 r4, r10, 3\n"
      "  reduce.max.i32 r5, r10, 0\n"
      "  st.i32 [%out], r1\n  st.i32 [%out + 4], r2\n  st.i32 [%out + 8], r3\n"
      "  st.i32 [%out + 12], r4\n  st.i32 [%out + 16], r5\n"
      "  mov.imm.u64 r20, 3\n  reduce.add.i32 r6, [%out], r20\n  st.i32 [%out + 20], r6\n",
      6);
  EXPECT_EQ(out, (std::vector<int32_t>{5, -5, 7, -105, L<int32_t>::min(), 5 + -5 + 7}));
}

TEST(Instructions, AtlasOps) {
  auto out = run_out<uint64_t>(
      "  mov.imm.u32 r1, 0x2a\n  cls.get r2, r1\n  cvt.u64.u32 r3, r2\n  st.u64 [%out], r3\n"
      "  mov.imm.u32 r4, 8\n  mirror r5, r4\n  cvt.u64.u32 r6, r5\n  st.u64 [%out + 8], r6\n"
      "  nbr.count r7, r4\n  cvt.u64.u32 r8, r7\n  st.u64 [%out + 16], r8\n"
      "  mov.imm.u32 r9, 0\n  nbr.get r10, r9, 3\n  cvt.u64.u32 r11, r10\n  st.u64 [%out + 24], "
      "r11\n"
      "  mov.imm.u32 r12, 1\n  mov.imm.u32 r13, 2\n  mov.imm.u32 r14, 3\n"
      "  bound.map r15, r12, r13, r14\n  st.u64 [%out + 32], r15\n",
      5);
  EXPECT_EQ(out, (std::vector<uint64_t>{21, 16, 5, 72, 12803}));
}

TEST(Instructions, AtlasFaults) {
  std::vector<uint64_t> buf(1);
  auto st = run_text(
      ".kernel k\n.param %out : buffer<u64> write\n  mov.imm.u32 r1, 96\n  mov.imm.u32 r2, 0\n"
      "  bound.map r3, r1, r2, r2\n  st.u64 [%out], r3\n",
      {}, {interp::ArgValue::buffer_of(buf)});
  EXPECT_EQ(st.code(), ErrorCode::LaunchFailed);
  EXPECT_NE(st.message().find("class 96 is out of range"), std::string::npos) << st.message();
}
