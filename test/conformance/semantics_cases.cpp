// Conformance cases for the rules of SPEC §3.4 (semantics/rules.hasm): integer division and
// remainder by zero and MIN / -1, shift amounts reduced modulo the width, abs/neg of MIN,
// minNum/maxNum with NaN and signed zeros, saturating conversions, fma against mad, ordered
// and unordered comparisons, sigmoid saturation, f16/bf16 rounding, and call/ret. Expected
// values are written out here, independently of every backend.
#include "harness.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace hologram::conformance {

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int32_t kMin = std::numeric_limits<int32_t>::min();

Case rule_case(const std::string &kernel, uint32_t n) {
  Case c;
  c.name = "rule_" + kernel;
  c.file = "semantics/rules.hasm";
  c.kernel = kernel;
  c.launch = LaunchConfig::linear(n, n);
  return c;
}

template <typename T> void set(CaseData &d, const std::string &name, Type t, std::vector<T> v) {
  d.arrays[name] = Array::of(t, std::move(v));
}
template <typename T> void zeros(CaseData &d, const std::string &name, Type t, size_t n) {
  d.arrays[name] = Array::of(t, std::vector<T>(n));
}

/// The f32 value nearest v with ties to even, as f16 then back (v finite, |v| < 65520).
float round_to_f16(float v) {
  if (std::isnan(v)) return v;
  if (std::fabs(v) >= 65520.0f) return std::copysign(kInf, v);
  int e;
  std::frexp(v, &e);
  int q = std::max(e - 11, -24); // quantum exponent: 11 significant bits, subnormals at 2^-24
  return static_cast<float>(std::nearbyint(std::ldexp(v, -q))) * std::ldexp(1.0f, q);
}

float round_to_bf16(float v) {
  if (std::isnan(v)) return v;
  uint32_t bits = std::bit_cast<uint32_t>(v);
  bits += 0x7fff + ((bits >> 16) & 1);
  return std::bit_cast<float>(bits & 0xffff0000u);
}

} // namespace

void semantics_cases(std::vector<Case> &out) {
  {
    const std::vector<int32_t> a{7, -7, 7, -7, kMin, kMin, 5, 0, -1, 100, kMin, 2147483647};
    const std::vector<int32_t> b{2, 2, -2, -2, -1, 1, 0, 0, 0, 7, kMin, -1};
    Case c = rule_case("int_div", static_cast<uint32_t>(a.size()));
    c.inputs = [=](CaseData &d) {
      set(d, "a", Type::I32, a);
      set(d, "b", Type::I32, b);
      zeros<int32_t>(d, "q", Type::I32, a.size());
      zeros<int32_t>(d, "r", Type::I32, a.size());
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      // Truncation toward zero; x / 0 = 0 and x rem 0 = 0; MIN / -1 = MIN, MIN rem -1 = 0.
      const std::vector<int32_t> q{3, -3, -3, 3, kMin, kMin, 0, 0, 0, 14, 1, -2147483647};
      const std::vector<int32_t> r{1, -1, 1, -1, 0, 0, 0, 0, 0, 2, 0, 0};
      set(d, "q", Type::I32, q);
      set(d, "r", Type::I32, r);
    };
    c.checks = {{"q", {}}, {"r", {}}};
    out.push_back(c);
  }
  {
    Case c = rule_case("udiv_u8", 6);
    c.inputs = [](CaseData &d) {
      set<uint8_t>(d, "a", Type::U8, {200, 255, 7, 0, 9, 250});
      set<uint8_t>(d, "b", Type::U8, {7, 0, 255, 0, 3, 1});
      zeros<uint8_t>(d, "q", Type::U8, 6);
      zeros<uint8_t>(d, "r", Type::U8, 6);
    };
    c.reference = [](CaseData &d, std::vector<Check> &) {
      set<uint8_t>(d, "q", Type::U8, {28, 0, 0, 0, 3, 250});
      set<uint8_t>(d, "r", Type::U8, {4, 0, 7, 0, 0, 0});
    };
    c.checks = {{"q", {}}, {"r", {}}};
    out.push_back(c);
  }
  {
    Case c = rule_case("shifts", 8);
    c.inputs = [](CaseData &d) {
      set<int32_t>(d, "a", Type::I32, {1, -8, -8, 1, -1, 0x40000000, -2, 3});
      set<uint32_t>(d, "s", Type::U32, {31, 1, 33, 32, 63, 100, 0xffffffffu, 4});
      zeros<int32_t>(d, "shl", Type::I32, 8);
      zeros<int32_t>(d, "sar", Type::I32, 8);
      zeros<uint32_t>(d, "lsr", Type::U32, 8);
    };
    c.reference = [](CaseData &d, std::vector<Check> &) {
      // Amounts taken modulo 32: 33 -> 1, 32 -> 0, 63 -> 31, 100 -> 4, 2^32-1 -> 31.
      set<int32_t>(d, "shl", Type::I32, {kMin, -16, -16, 1, kMin, 0, 0, 48});
      set<int32_t>(d, "sar", Type::I32, {0, -4, -4, 1, -1, 0x04000000, -1, 0});
      set<uint32_t>(d, "lsr", Type::U32, {0, 0x7ffffffcu, 0x7ffffffcu, 1, 1, 0x04000000u, 1, 0});
    };
    c.checks = {{"shl", {}}, {"sar", {}}, {"lsr", {}}};
    out.push_back(c);
  }
  {
    Case c = rule_case("abs_neg", 5);
    c.inputs = [](CaseData &d) {
      set<int32_t>(d, "a", Type::I32, {kMin, -5, 0, 5, 2147483647});
      zeros<int32_t>(d, "abs", Type::I32, 5);
      zeros<int32_t>(d, "neg", Type::I32, 5);
    };
    c.reference = [](CaseData &d, std::vector<Check> &) {
      set<int32_t>(d, "abs", Type::I32, {kMin, 5, 0, 5, 2147483647});
      set<int32_t>(d, "neg", Type::I32, {kMin, 5, 0, -5, -2147483647});
    };
    c.checks = {{"abs", {}}, {"neg", {}}};
    out.push_back(c);
  }
  {
    const std::vector<float> a = {25.7f,   -4082600.5f, 5.5f,  -0.0f,   1e30f,  1e-40f,  3.0f,
                                  7.0f,    kInf,        kNan,  -6.25f,  1e-45f, 3.4e38f, -5.0f,
                                  -1e-30f, 100.0f,      1e30f, 3.3e38f, -1e20f};
    const std::vector<float> b = {1.2526654f, -kInf, 0.0f, 2.0f, 3.0f,   3e-41f, -kInf,
                                  kNan,       2.0f,  1.0f, 0.5f, 1e-45f, 1e-45f, 5.0f,
                                  3.0f,       -kInf, 7.0f, 1.1f, 0.3f};
    const std::vector<double> c64 = {
        25.7,  -4082600.5, 5.5,   -0.0,   1e300,   1e-310, 3.0,     7.0,
        kInf,  kNan,       -6.25, 5e-324, 1.7e308, -5.0,   -1e-300, 0x1.fffffffffffffp+1023,
        1e300, 1.7e308,    -1e200};
    const std::vector<double> d64 = {1.2526654, -kInf,     0.0, 2.0,      3.0,    3e-311, -kInf,
                                     kNan,      2.0,       1.0, 0.5,      5e-324, 3e-300, 5.0,
                                     3.0,       0x1p-1073, 0.7, 3.3e-300, 0.3};
    const uint32_t n = static_cast<uint32_t>(a.size());
    Case c = rule_case("float_rem", n);
    c.inputs = [=](CaseData &d) {
      set<float>(d, "a", Type::F32, a);
      set<float>(d, "b", Type::F32, b);
      set<double>(d, "c", Type::F64, c64);
      set<double>(d, "d", Type::F64, d64);
      for (const char *o : {"r32", "s32"}) zeros<float>(d, o, Type::F32, n);
      for (const char *o : {"r64", "s64"}) zeros<double>(d, o, Type::F64, n);
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      std::vector<float> r32(n), s32(n);
      std::vector<double> r64(n), s64(n);
      for (uint32_t i = 0; i < n; ++i) {
        r32[i] = std::fmod(a[i], b[i]);
        s32[i] = 1.0f / r32[i];
        r64[i] = std::fmod(c64[i], d64[i]);
        s64[i] = 1.0 / r64[i];
      }
      set<float>(d, "r32", Type::F32, r32);
      set<float>(d, "s32", Type::F32, s32);
      set<double>(d, "r64", Type::F64, r64);
      set<double>(d, "s64", Type::F64, s64);
    };
    c.checks = {{"r32", {}}, {"s32", {}}, {"r64", {}}, {"s64", {}}};
    out.push_back(c);
  }
  {
    const std::vector<double> x = {-298634240.5, -0.5,
                                   0.5,          -0.0,
                                   2.5,          -2.5,
                                   1e300,        -kInf,
                                   kNan,         4503599627370495.5,
                                   -1.5,         0.49999999999999994,
                                   7.0,          -0.7,
                                   0x1p52 + 1,   -1e-310};
    const uint32_t n = static_cast<uint32_t>(x.size());
    Case c = rule_case("round_f64", n);
    c.inputs = [=](CaseData &d) {
      set<double>(d, "x", Type::F64, x);
      for (const char *o : {"t", "f", "c", "r", "st", "sr"}) zeros<double>(d, o, Type::F64, n);
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      std::vector<double> t(n), f(n), cl(n), r(n), st(n), sr(n);
      for (uint32_t i = 0; i < n; ++i) {
        t[i] = std::trunc(x[i]);
        f[i] = std::floor(x[i]);
        cl[i] = std::ceil(x[i]);
        r[i] = std::round(x[i]);
        st[i] = 1.0 / t[i];
        sr[i] = 1.0 / r[i];
      }
      set<double>(d, "t", Type::F64, t);
      set<double>(d, "f", Type::F64, f);
      set<double>(d, "c", Type::F64, cl);
      set<double>(d, "r", Type::F64, r);
      set<double>(d, "st", Type::F64, st);
      set<double>(d, "sr", Type::F64, sr);
    };
    c.checks = {{"t", {}}, {"f", {}}, {"c", {}}, {"r", {}}, {"st", {}}, {"sr", {}}};
    out.push_back(c);
  }
  {
    const std::vector<int32_t> a = {-5, 7, -1494312166, kMin, -14, 0, 2147483647, -1};
    const uint32_t n = static_cast<uint32_t>(a.size());
    Case c = rule_case("widen_i64", n);
    c.inputs = [=](CaseData &d) {
      set<int32_t>(d, "a", Type::I32, a);
      for (const char *o : {"abs", "rem"}) zeros<int64_t>(d, o, Type::I64, n);
      for (const char *o : {"neg", "sat"}) zeros<uint32_t>(d, o, Type::U32, n);
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      std::vector<int64_t> abs(n), rem(n);
      std::vector<uint32_t> neg(n), sat(n);
      for (uint32_t i = 0; i < n; ++i) {
        const int64_t v = a[i];
        abs[i] = v < 0 ? -v : v;
        rem[i] = v % 7;
        neg[i] = v < 0;
        sat[i] = v < 0 ? 0 : static_cast<uint32_t>(static_cast<float>(v));
      }
      set<int64_t>(d, "abs", Type::I64, abs);
      set<int64_t>(d, "rem", Type::I64, rem);
      set<uint32_t>(d, "neg", Type::U32, neg);
      set<uint32_t>(d, "sat", Type::U32, sat);
    };
    c.checks = {{"abs", {}}, {"rem", {}}, {"neg", {}}, {"sat", {}}};
    out.push_back(c);
  }
  {
    Case c = rule_case("min_max", 7);
    c.inputs = [](CaseData &d) {
      set<float>(d, "a", Type::F32, {kNan, 1.0f, kNan, -0.0f, 0.0f, -0.0f, -kInf});
      set<float>(d, "b", Type::F32, {2.0f, kNan, kNan, 0.0f, -0.0f, -0.0f, 3.0f});
      for (const char *o : {"mn", "mx", "rmn", "rmx"}) zeros<float>(d, o, Type::F32, 7);
    };
    c.reference = [](CaseData &d, std::vector<Check> &) {
      // A NaN loses to a number; -0 < +0; the reciprocal shows the zero's sign.
      set<float>(d, "mn", Type::F32, {2.0f, 1.0f, kNan, -0.0f, -0.0f, -0.0f, -kInf});
      set<float>(d, "mx", Type::F32, {2.0f, 1.0f, kNan, 0.0f, 0.0f, -0.0f, 3.0f});
      set<float>(d, "rmn", Type::F32, {0.5f, 1.0f, kNan, -kInf, -kInf, -kInf, -0.0f});
      set<float>(d, "rmx", Type::F32, {0.5f, 1.0f, kNan, kInf, kInf, -kInf, 1.0f / 3.0f});
    };
    c.checks = {{"mn", {}}, {"mx", {}}, {"rmn", {}}, {"rmx", {}}};
    out.push_back(c);
  }
  {
    Case c = rule_case("conversions", 8);
    c.inputs = [](CaseData &d) {
      set<float>(d, "f", Type::F32, {2.9f, -2.9f, 3e9f, -3e9f, kNan, 300.0f, -1.0f, kInf});
      set<uint32_t>(d, "u", Type::U32,
                    {16777217u, 16777219u, 4294967295u, 0x80u, 0x1ffu, 0xffffff80u, 127u, 0u});
      zeros<int32_t>(d, "to_i32", Type::I32, 8);
      zeros<uint8_t>(d, "to_u8", Type::U8, 8);
      zeros<float>(d, "u_to_f32", Type::F32, 8);
      zeros<int8_t>(d, "narrow", Type::I8, 8);
      zeros<int32_t>(d, "widen", Type::I32, 8);
    };
    c.reference = [](CaseData &d, std::vector<Check> &) {
      set<int32_t>(d, "to_i32", Type::I32, {2, -2, 2147483647, kMin, 0, 300, -1, 2147483647});
      set<uint8_t>(d, "to_u8", Type::U8, {2, 0, 255, 0, 0, 255, 0, 255});
      // 2^24 + 1 and + 3 round to even; 2^32 - 1 rounds up to 2^32.
      set<float>(
          d, "u_to_f32", Type::F32,
          {16777216.0f, 16777220.0f, 4294967296.0f, 128.0f, 511.0f, 4294967168.0f, 127.0f, 0.0f});
      set<int8_t>(d, "narrow", Type::I8, {1, 3, -1, -128, -1, -128, 127, 0});
      set<int32_t>(d, "widen", Type::I32, {1, 3, -1, -128, -1, -128, 127, 0});
    };
    c.checks = {{"to_i32", {}}, {"to_u8", {}}, {"u_to_f32", {}}, {"narrow", {}}, {"widen", {}}};
    out.push_back(c);
  }
  {
    // Saturation at the exact boundaries: 2^31 is one past i32's largest value, -2^31 is its
    // smallest, 2^32 - 256 is the largest f32 below u32's limit; NaN -> 0.
    const std::vector<float> f = {0x1p31f,       -0x1p31f,      0x1p32f,   0x1p63f,   -0x1p63f,
                                  0x1p64f,       128.0f,        -128.0f,   -129.0f,   256.0f,
                                  255.0f,        32768.0f,      -32768.0f, -32769.0f, 65536.0f,
                                  0x1p31f - 128, 0x1p32f - 256, -0.99f,    kNan,      -1.0f};
    const std::vector<double> dv = {0x1p31,         0x1p31 - 1,    2147483647.5,  -0x1p31,
                                    -2147483648.5,  -2147483649.0, 0x1p32,        0x1p32 - 1,
                                    4294967295.5,   0x1p63,        0x1p63 - 1024, -0x1p63,
                                    -0x1p63 - 2048, 0x1p64,        0x1p64 - 2048, 128.0,
                                    256.0,          65536.0,       -0.5,          std::nan("")};
    const auto n = static_cast<uint32_t>(f.size());
    Case c = rule_case("cvt_boundaries", n);
    auto each_target = [](auto &&fn) {
      fn(int32_t{}, "i32", Type::I32);
      fn(uint32_t{}, "u32", Type::U32);
      fn(int64_t{}, "i64", Type::I64);
      fn(uint64_t{}, "u64", Type::U64);
      fn(int16_t{}, "i16", Type::I16);
      fn(uint16_t{}, "u16", Type::U16);
      fn(int8_t{}, "i8", Type::I8);
      fn(uint8_t{}, "u8", Type::U8);
    };
    c.inputs = [=](CaseData &d) {
      set<float>(d, "f", Type::F32, f);
      set<double>(d, "d", Type::F64, dv);
      each_target([&](auto tag, const std::string &t, Type type) {
        zeros<decltype(tag)>(d, "f_" + t, type, n);
        zeros<decltype(tag)>(d, "d_" + t, type, n);
      });
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      each_target([&](auto tag, const std::string &t, Type type) {
        using I = decltype(tag);
        // Truncate exactly (long double holds every f32 and f64 here), then clamp.
        auto sat = [](long double v) -> I {
          if (std::isnan(v)) return 0;
          const long double r = std::trunc(v);
          if (r > static_cast<long double>(std::numeric_limits<I>::max()))
            return std::numeric_limits<I>::max();
          if (r < static_cast<long double>(std::numeric_limits<I>::min()))
            return std::numeric_limits<I>::min();
          return static_cast<I>(r);
        };
        std::vector<I> from_f, from_d;
        for (float v : f) from_f.push_back(sat(v));
        for (double v : dv) from_d.push_back(sat(v));
        set<I>(d, "f_" + t, type, from_f);
        set<I>(d, "d_" + t, type, from_d);
      });
    };
    for (const char *t : {"i32", "u32", "i64", "u64", "i16", "u16", "i8", "u8"}) {
      c.checks.push_back({std::string("f_") + t, {}});
      c.checks.push_back({std::string("d_") + t, {}});
    }
    out.push_back(c);
  }
  {
    // a * b + c where the product's rounding matters: (1 + 2^-12)^2 - (1 + 2^-11). And two
    // where the exact sum lies within 2^-70 of a midpoint between two floats, so that the sum
    // rounded to f64 first is the midpoint and rounding that to f32 goes the wrong way:
    // (1 + 2^-23)(1 - 2^-23) 2^-24 = 2^-24 - 2^-70 added to 1 + 2^-23 (just below the
    // midpoint: down) and to -(1 + 2^-23) (just past it in magnitude: away from zero). Two
    // more below f32's normal range, whose grid is 2^-149: (1 + 2^-23)(1 - 2^-23) 2^-150 =
    // 2^-150 - 2^-196 added to K 2^-149 for an odd K of 23 bits is within 2^-196 of a
    // midpoint, which f64 cannot tell apart at 2^-127: down to K, not up to K + 1 (and for
    // K = 2^23 - 1 not up to 2^-126, the smallest normal).
    const float x = 1.0f + std::ldexp(1.0f, -12);
    const float up = (1.0f + std::ldexp(1.0f, -23)) * std::ldexp(1.0f, -12);
    const float down = (1.0f - std::ldexp(1.0f, -23)) * std::ldexp(1.0f, -12);
    const float odd = 1.0f + std::ldexp(1.0f, -23);
    const float tiny_up = (1.0f + std::ldexp(1.0f, -23)) * std::ldexp(1.0f, -75);
    const float tiny_down = (1.0f - std::ldexp(1.0f, -23)) * std::ldexp(1.0f, -75);
    const float k_low = std::ldexp(float((1 << 22) + 1), -149);
    const float k_high = std::ldexp(float((1 << 23) - 1), -149);
    constexpr size_t n = 7;
    Case c = rule_case("fma_mad", n);
    c.inputs = [=](CaseData &d) {
      set<float>(d, "a", Type::F32, {x, 3.0f, 0.1f, up, up, tiny_up, -tiny_up});
      set<float>(d, "b", Type::F32, {x, 5.0f, 10.0f, down, down, tiny_down, tiny_down});
      set<float>(d, "c", Type::F32,
                 {-(1.0f + std::ldexp(1.0f, -11)), 1.0f, -1.0f, odd, -odd, k_low, -k_high});
      zeros<float>(d, "fused", Type::F32, n);
      zeros<float>(d, "unfused", Type::F32, n);
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto &a = d.arrays.at("a"), &b = d.arrays.at("b"), &cc = d.arrays.at("c");
      std::vector<float> fused(n), unfused(n);
      for (size_t i = 0; i < n; ++i) {
        const float ai = a.as<float>()[i], bi = b.as<float>()[i], ci = cc.as<float>()[i];
        fused[i] = std::fmaf(ai, bi, ci); // C's fmaf rounds once
        volatile float p = ai * bi;
        unfused[i] = p + ci;
      }
      set(d, "fused", Type::F32, fused);
      set(d, "unfused", Type::F32, unfused);
    };
    c.checks = {{"fused", {}}, {"unfused", {}}};
    out.push_back(c);
  }
  {
    // (1 + 2^-52) 1.5 is a tie between two f64 values, which -2^-200 breaks downwards and
    // +2^-200 upwards; MAX 2 overflows before -MAX brings it back; (1 + 2^-52)^2 - (1 + 2^-51)
    // is 2^-104; 0.1 0.1 minus its rounding is the rounding error; products of subnormal size,
    // half the smallest subnormal (a tie to +0), zeros' signs, inf * 0 and NaN.
    const double max = std::numeric_limits<double>::max(), e = 1.0 + 0x1p-52;
    const std::vector<double> a{e,         e,    max,  e,   0.1,  0x1.8p-540,
                                0x1p-1074, -0.0, kInf, 1.0, -max, 0x1.0000000000001p-537};
    const std::vector<double> b{1.5, 1.5, 2.0, e,    0.1, 0x1.8p-540,
                                0.5, 5.0, 0.0, kNan, 2.0, -0x1p-537};
    const std::vector<double> c{-0x1p-200,    0x1p-200,  -max, -(1.0 + 0x1p-51),
                                -(0.1 * 0.1), 0x1p-1074, 0.0,  -0.0,
                                1.0,          2.0,       max,  0x1p-1073};
    const auto n = static_cast<uint32_t>(a.size());
    Case cs = rule_case("fma_f64", n);
    cs.inputs = [=](CaseData &d) {
      set<double>(d, "a", Type::F64, a);
      set<double>(d, "b", Type::F64, b);
      set<double>(d, "c", Type::F64, c);
      for (const char *o : {"fused", "negated"}) zeros<double>(d, o, Type::F64, n);
    };
    cs.reference = [=](CaseData &d, std::vector<Check> &) {
      std::vector<double> fused(n), negated(n);
      for (uint32_t i = 0; i < n; ++i) {
        fused[i] = std::fma(a[i], b[i], c[i]); // C's fma rounds once
        negated[i] = std::fma(a[i], b[i], -c[i]);
      }
      set<double>(d, "fused", Type::F64, fused);
      set<double>(d, "negated", Type::F64, negated);
    };
    cs.checks = {{"fused", {}}, {"negated", {}}};
    out.push_back(cs);
  }
  {
    const std::vector<float> a{1.0f, kNan, 2.0f, 100.0f, -100.0f, 0.1f, 65519.0f, 1e-8f};
    const std::vector<float> b{2.0f, 1.0f, kNan, 100.0f, -50.0f, 0.2f, 0.0f, 0.0f};
    Case c = rule_case("compare_sigmoid_f16", static_cast<uint32_t>(a.size()));
    c.inputs = [=](CaseData &d) {
      set(d, "a", Type::F32, a);
      set(d, "b", Type::F32, b);
      for (const char *o : {"lt", "neu", "ne"}) zeros<uint32_t>(d, o, Type::U32, a.size());
      for (const char *o : {"sig", "h", "bf"}) zeros<float>(d, o, Type::F32, a.size());
    };
    c.reference = [=](CaseData &d, std::vector<Check> &checks) {
      std::vector<uint32_t> lt, neu, ne;
      std::vector<float> sig, h, bf;
      for (size_t i = 0; i < a.size(); ++i) {
        const bool unordered = std::isnan(a[i]) || std::isnan(b[i]);
        lt.push_back(!unordered && a[i] < b[i]);
        neu.push_back(unordered || a[i] != b[i]);
        ne.push_back(!unordered && a[i] != b[i]);
        // Saturates: exactly 0 once exp(-x) overflows f32 (docs/isa.md), never NaN.
        double e = std::exp(-static_cast<double>(a[i]));
        sig.push_back(std::isnan(a[i]) ? kNan
                      : e > std::numeric_limits<float>::max()
                          ? 0.0f
                          : static_cast<float>(1.0 / (1.0 + e)));
        h.push_back(round_to_f16(a[i]));
        bf.push_back(round_to_bf16(a[i]));
      }
      set(d, "lt", Type::U32, lt);
      set(d, "neu", Type::U32, neu);
      set(d, "ne", Type::U32, ne);
      set(d, "sig", Type::F32, sig);
      set(d, "h", Type::F32, h);
      set(d, "bf", Type::F32, bf);
      checks[3].tol.ulps = 4; // sigmoid: within 4 ulp; exactly 1 and 0 at the ends
    };
    c.checks = {{"lt", {}}, {"neu", {}}, {"ne", {}}, {"sig", {}}, {"h", {}}, {"bf", {}}};
    out.push_back(c);
  }
  {
    // f64 transcendentals within 1 ulp of the correctly rounded value (4 for rsqrt and
    // sigmoid), IEEE special values exactly: against long double evaluation rounded once.
    constexpr double inf = std::numeric_limits<double>::infinity();
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> a{
        0.0,   -0.0, 1.0,      -1.0,  0.5,    2.5,   -3.75,  1e-310, 700.5, -740.25,
        1e300, 1e22, -6.02e23, inf,   -inf,   nan,   5.3e-5, 12.345, 0.875, 3.141592653589793,
        -5.9,  0.3,  -20.5,    1e-20, 709.78, -705.0};
    const std::vector<double> b{2.0,  -2.0, 0.5,  3.0,  -1.5,  0.0,  inf, 1e-300, 2.0,
                                -3.0, 0.25, -0.5, 7.0,  1.0,   -inf, 1.0, nan,    10.0,
                                -0.0, 2.5,  3.0,  -0.3, -20.0, 1e20, 1.0, -inf};
    using Fn = long double (*)(long double, long double);
    static const Fn tight[] = {[](long double x, long double) { return expl(x); },
                               [](long double x, long double) { return exp2l(x); },
                               [](long double x, long double) { return logl(x); },
                               [](long double x, long double) { return log2l(x); },
                               [](long double x, long double) { return log10l(x); },
                               [](long double x, long double) { return sqrtl(x); },
                               [](long double x, long double) { return sinl(x); },
                               [](long double x, long double) { return cosl(x); },
                               [](long double x, long double) { return tanl(x); },
                               [](long double x, long double) { return tanhl(x); },
                               [](long double x, long double) { return erfl(x); },
                               [](long double x, long double y) { return powl(x, y); },
                               [](long double x, long double y) { return atan2l(x, y); }};
    static const Fn loose[] = {
        [](long double x, long double) { return 1.0L / sqrtl(x); },
        [](long double x, long double) { // exactly 0 once exp(-x) overflows f64
          return expl(-x) > std::numeric_limits<double>::max() ? 0.0L : 1.0L / (1.0L + expl(-x));
        }};
    const uint32_t n = static_cast<uint32_t>(a.size());
    Case c = rule_case("math_f64", n);
    c.inputs = [=](CaseData &d) {
      set(d, "a", Type::F64, a);
      set(d, "b", Type::F64, b);
      zeros<double>(d, "o", Type::F64, n * std::size(tight));
      zeros<double>(d, "w", Type::F64, n * std::size(loose));
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      std::vector<double> o, w;
      for (size_t i = 0; i < n; ++i) {
        for (Fn f : tight) o.push_back(static_cast<double>(f(a[i], b[i])));
        for (Fn f : loose) w.push_back(static_cast<double>(f(a[i], b[i])));
      }
      set(d, "o", Type::F64, o);
      set(d, "w", Type::F64, w);
    };
    c.checks = {{"o", {1, 0}}, {"w", {4, 0}}};
    out.push_back(c);
  }
  {
    Case c = rule_case("call_ret", 6);
    c.inputs = [](CaseData &d) {
      set<uint32_t>(d, "a", Type::U32, {0, 5, 9, 10, 20, 3});
      zeros<uint32_t>(d, "out", Type::U32, 6);
    };
    c.reference = [](CaseData &d, std::vector<Check> &) {
      auto twice = [](uint32_t x) { return x < 10 ? x + 10 : x + x; };
      std::vector<uint32_t> o;
      for (uint32_t x : {0u, 5u, 9u, 10u, 20u, 3u}) o.push_back(twice(twice(x)));
      set(d, "out", Type::U32, o);
    };
    c.checks = {{"out", {}}};
    out.push_back(c);
  }
  {
    constexpr uint32_t n = 32;
    // Normal floats, so the f32 read is exact on every backend; their bytes still vary.
    auto floats = [](float base) {
      std::vector<uint32_t> v;
      for (uint32_t i = 0; i < 2 * n; ++i)
        v.push_back(std::bit_cast<uint32_t>(base + static_cast<float>(i) * 1.37f));
      return v;
    };
    const std::vector<uint32_t> a = floats(1.0f), b = floats(-300.5f);
    std::vector<uint32_t> p(2 * n);
    for (uint32_t i = 0; i < 2 * n; ++i) p[i] = 0x9e3779b9u * (i + 1);
    Case c = rule_case("addresses", n);
    c.inputs = [=](CaseData &d) {
      set(d, "a", Type::U32, a);
      set(d, "b", Type::U32, b);
      set(d, "p", Type::U32, p);
      zeros<uint32_t>(d, "out", Type::U32, 8 * n);
      zeros<uint32_t>(d, "cnt", Type::U32, 4);
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      std::vector<uint32_t> o(8 * n), q = p;
      for (uint32_t i = 0; i < n; ++i) {
        const std::vector<uint32_t> &src = i % 2 == 0 ? a : b;
        auto byte = [&](uint32_t k) { return (src[k / 4] >> (8 * (k % 4))) & 0xff; };
        auto half = [&](const std::vector<uint32_t> &v, uint32_t k) {
          return (v[k / 2] >> (16 * (k % 2))) & 0xffff;
        };
        uint32_t *w = &o[8 * i];
        w[0] = src[i];
        w[1] = byte(i);
        w[2] = half(src, i + 1);
        w[3] = std::bit_cast<uint32_t>(std::bit_cast<float>(src[i + 1]) + 0.5f);
        w[4] = src[2 * i];
        w[5] = src[2 * i + 1];
        w[6] = byte(i) << 8;
        w[7] = 2 * i + 5;
        q[n + i] ^= p[i] + half(p, i);
      }
      set(d, "out", Type::U32, o);
      set(d, "p", Type::U32, q);
      set<uint32_t>(d, "cnt", Type::U32, {n, n - 1, n * (n - 1) / 2, 0});
    };
    c.checks = {{"out", {}}, {"cnt", {}}, {"p", {}}};
    out.push_back(c);
  }
  {
    // One lane per class, each reading back what it wrote in its neighbour's window.
    Case c = rule_case("neighbours", atlas::kNumClasses);
    c.inputs = [](CaseData &d) { zeros<uint32_t>(d, "out", Type::U32, atlas::kNumClasses); };
    c.reference = [](CaseData &d, std::vector<Check> &) {
      std::vector<uint32_t> o(atlas::kNumClasses);
      for (uint32_t l = 0; l < o.size(); ++l) o[l] = l;
      set(d, "out", Type::U32, o);
    };
    c.checks = {{"out", {}}};
    out.push_back(c);
  }
  {
    constexpr uint32_t n = 64;
    Case c = rule_case("shared_wide", n);
    c.launch.shared_memory = 512;
    c.inputs = [](CaseData &d) {
      zeros<uint32_t>(d, "out", Type::U32, 4 * n);
      zeros<uint64_t>(d, "wide", Type::U64, 16);
    };
    c.reference = [](CaseData &d, std::vector<Check> &) {
      // The shared words when the atomics are done.
      std::vector<uint32_t> w(128);
      for (uint32_t i = 0; i < n; ++i) {
        w[i] = 3 * i;
        uint32_t s = 64 + 2 * (i % 8);
        uint64_t slot = (uint64_t{w[s + 1]} << 32 | w[s]) + i;
        w[s] = static_cast<uint32_t>(slot);
        w[s + 1] = static_cast<uint32_t>(slot >> 32);
        w[80 + i % 4] += i;
        w[84 + i % 4] = std::max(w[84 + i % 4], i);
        w[100 + i / 4] |= i << (8 * (i % 4));
      }
      w[88] = std::bit_cast<uint32_t>(static_cast<float>(n * (n - 1) / 2));
      std::vector<uint32_t> o;
      for (uint32_t i = 0; i < n; ++i) {
        uint32_t e = i & ~1u;
        o.push_back(w[i]);
        o.push_back(w[i + 1]);
        o.push_back(e | (e + 1) << 8);
        o.push_back(i + w[80 + i % 4] + w[84 + i % 4]);
      }
      std::vector<uint64_t> wide;
      for (uint32_t i = 0; i < 16; ++i)
        wide.push_back(uint64_t{w[65 + 2 * i]} << 32 | w[64 + 2 * i]);
      set(d, "out", Type::U32, o);
      set(d, "wide", Type::U64, wide);
    };
    c.checks = {{"out", {}}, {"wide", {}}};
    out.push_back(c);
  }
  // Falling off the end is exit: the stores before it are made, no lane does more.
  {
    Case c = rule_case("falls_off", 8);
    c.inputs = [](CaseData &d) {
      set<uint32_t>(d, "out", Type::U32, std::vector<uint32_t>(8, 99));
    };
    c.reference = [](CaseData &d, std::vector<Check> &) {
      set<uint32_t>(d, "out", Type::U32, {0, 1, 2, 3, 4, 99, 99, 99});
    };
    c.checks = {{"out", {}}};
    out.push_back(c);
  }
  {
    Case c = rule_case("empty", 8);
    c.inputs = [](CaseData &d) {
      set<uint32_t>(d, "out", Type::U32, std::vector<uint32_t>(8, 42));
    };
    c.reference = [](CaseData &, std::vector<Check> &) {}; // nothing changes
    c.checks = {{"out", {}}};
    out.push_back(c);
  }
}

} // namespace hologram::conformance

namespace hologram::conformance {

namespace {

Case library_case(const std::string &kernel) {
  Case c;
  c.name = kernel;
  c.file = "semantics/library.hasm";
  c.kernel = kernel;
  c.launch = LaunchConfig::linear(1);
  return c;
}

constexpr double kEps = std::numeric_limits<float>::epsilon();

} // namespace

void library_cases(std::vector<Case> &out) {
  {
    const uint32_t m = 400, n = 100;
    Case c = library_case("lib_gemv");
    c.inputs = [=](CaseData &d) {
      Random r(7);
      d.arrays["a"] = Array::of(Type::F32, r.floats(m * n, -1, 1));
      d.arrays["x"] = Array::of(Type::F32, r.floats(n, -1, 1));
      d.arrays["y"] = Array::of(Type::F32, r.floats(m, -1, 1));
      d.arrays["xt"] = Array::of(Type::F32, r.floats(m, -1, 1));
      d.arrays["yt"] = Array::of(Type::F32, r.floats(n, -1, 1));
      d.scalars["m"] = m;
      d.scalars["n"] = n;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &checks) {
      auto A = d.array<float>("a"), x = d.array<float>("x"), y = d.array<float>("y");
      auto xt = d.array<float>("xt"), yt = d.array<float>("yt");
      double worst = 0;
      for (uint32_t i = 0; i < m; ++i) {
        double acc = 0, mag = 0;
        for (uint32_t j = 0; j < n; ++j) {
          acc += double{A[i * n + j]} * x[j];
          mag += std::fabs(double{A[i * n + j]} * x[j]);
        }
        y[i] = static_cast<float>(2 * acc + 0.5 * y[i]);
        worst = std::max(worst, mag);
      }
      for (uint32_t j = 0; j < n; ++j) {
        double acc = 0, mag = 0;
        for (uint32_t i = 0; i < m; ++i) {
          acc += double{A[i * n + j]} * xt[i];
          mag += std::fabs(double{A[i * n + j]} * xt[i]);
        }
        yt[j] = static_cast<float>(2 * acc + 0.5 * yt[j]);
        worst = std::max(worst, mag);
      }
      checks[0].tol.abs = checks[1].tol.abs = 4 * m * kEps * worst;
    };
    c.checks = {{"y", {}}, {"yt", {}}};
    out.push_back(c);
  }
  {
    const uint32_t n = 50000, rows = 300, dim = 64;
    Case c = library_case("lib_axpy_rope");
    c.inputs = [=](CaseData &d) {
      Random r(8);
      d.arrays["x"] = Array::of(Type::F32, r.floats(n, -4, 4));
      d.arrays["y"] = Array::of(Type::F32, r.floats(n, -4, 4));
      d.arrays["rx"] = Array::of(Type::F32, r.floats(rows * dim, -2, 2));
      d.arrays["cs"] = Array::of(Type::F32, r.floats(rows * dim / 2, -1, 1));
      d.arrays["sn"] = Array::of(Type::F32, r.floats(rows * dim / 2, -1, 1));
      d.arrays["ry"] = Array::of(Type::F32, std::vector<float>(rows * dim));
      d.scalars["n"] = n;
      d.scalars["rows"] = rows;
      d.scalars["dim"] = dim;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto x = d.array<float>("x"), y = d.array<float>("y");
      for (uint32_t i = 0; i < n; ++i) y[i] = std::fma(-1.5f, x[i], y[i]);
      auto rx = d.array<float>("rx"), cs = d.array<float>("cs"), sn = d.array<float>("sn");
      auto ry = d.array<float>("ry");
      for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t i = 0; i < dim / 2; ++i) {
          double x0 = rx[r * dim + 2 * i], x1 = rx[r * dim + 2 * i + 1];
          double cv = cs[r * dim / 2 + i], sv = sn[r * dim / 2 + i];
          ry[r * dim + 2 * i] = static_cast<float>(x0 * cv - x1 * sv);
          ry[r * dim + 2 * i + 1] = static_cast<float>(x0 * sv + x1 * cv);
        }
    };
    c.checks = {{"y", {}}, {"ry", {1, 0}}};
    out.push_back(c);
  }
  {
    const uint32_t n = 40000;
    Case c = library_case("lib_maps");
    c.inputs = [=](CaseData &d) {
      Random r(9);
      d.arrays["x"] = Array::of(Type::F32, r.floats(n, -10, 10));
      d.arrays["p"] = Array::of(Type::F32, r.floats(n, 0.1f, 4));
      for (const char *o : {"e", "pw", "si"})
        d.arrays[o] = Array::of(Type::F32, std::vector<float>(n));
      d.scalars["n"] = n;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto x = d.array<float>("x"), p = d.array<float>("p");
      auto e = d.array<float>("e"), pw = d.array<float>("pw"), si = d.array<float>("si");
      for (uint32_t i = 0; i < n; ++i) {
        const double v = x[i];
        e[i] = static_cast<float>(std::exp(v));
        pw[i] = static_cast<float>(std::pow(double{p[i]}, v));
        si[i] = static_cast<float>(v / (1.0 + std::exp(-v)));
      }
    };
    c.checks = {{"e", {2, 0}}, {"pw", {4, 0}}, {"si", {4, 0}}};
    out.push_back(c);
  }
}

} // namespace hologram::conformance
