// f64 transcendentals in double-double arithmetic (math64.h). Every value below is a double
// or a pair {hi, lo} whose sum carries ~106 bits; the error analysis of each function is in
// docs/spirv.md. The constants come from scripts/gen-math-tables.py.
#include "math64.h"

#include "math_tables.h"

#include <spirv/unified1/GLSL.std.450.h>

#include <array>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace hologram::codegen::spirv {
namespace {

using Op = spv::Op;
using isa::MathOpcode;
namespace T = math_tables;

struct DD {
  Id hi, lo;
};

/// Writes one function of math64.h into the builder's current block.
class F64Math {
public:
  F64Math(Builder &b, F64Flavour &flavour) : b_(b), flavour_(flavour) {}

  Id emit(MathOpcode fn, Id x, Id y) {
    switch (fn) {
    case MathOpcode::Exp: return exp(x);
    case MathOpcode::Exp2: return exp2(x);
    case MathOpcode::Log: return log(x, Base::E);
    case MathOpcode::Log2: return log(x, Base::Two);
    case MathOpcode::Log10: return log(x, Base::Ten);
    case MathOpcode::Sqrt: return sqrt(x);
    case MathOpcode::Rsqrt: return rsqrt(x);
    case MathOpcode::Sin:
    case MathOpcode::Cos:
    case MathOpcode::Tan: return trig(fn, x);
    case MathOpcode::Tanh: return tanh(x);
    case MathOpcode::Sigmoid: return sigmoid(x);
    case MathOpcode::Erf: return erf(x);
    case MathOpcode::Pow: return pow(x, y);
    case MathOpcode::Atan2: return atan2(x, y);
    }
    throw std::logic_error("spirv: not an f64 transcendental");
  }

private:
  // ------------------------------------------------------------------------------------------
  // Shorthands

  Id f64() { return b_.t_float(64); }
  Id u64() { return b_.t_int(64); }
  Id u32() { return b_.t_int(32); }
  Id boolean() { return b_.t_bool(); }
  Id d(double v) { return b_.c_float(64, std::bit_cast<uint64_t>(v)); }
  Id k(uint64_t v) { return b_.c_u64(v); }

  /// Rounded exactly as written: nothing may fuse or reassociate the error-free transforms.
  Id arith(Op o, Id a, Id c) {
    Id v = b_.op(o, f64(), {a, c});
    flavour_.f64_no_contraction(v);
    return v;
  }
  Id add(Id a, Id c) { return arith(Op::OpFAdd, a, c); }
  Id sub(Id a, Id c) { return arith(Op::OpFSub, a, c); }
  Id mul(Id a, Id c) { return arith(Op::OpFMul, a, c); }
  Id div(Id a, Id c) { return arith(Op::OpFDiv, a, c); }
  Id neg(Id a) { return b_.op(Op::OpFNegate, f64(), {a}); }
  Id cmp(Op o, Id a, Id c) { return b_.op(o, boolean(), {a, c}); }
  Id lt(Id a, Id c) { return cmp(Op::OpFOrdLessThan, a, c); }
  Id gt(Id a, Id c) { return cmp(Op::OpFOrdGreaterThan, a, c); }
  Id ge(Id a, Id c) { return cmp(Op::OpFOrdGreaterThanEqual, a, c); }
  Id eq(Id a, Id c) { return cmp(Op::OpFOrdEqual, a, c); }
  Id both(Id a, Id c) { return cmp(Op::OpLogicalAnd, a, c); }
  Id either(Id a, Id c) { return cmp(Op::OpLogicalOr, a, c); }
  Id no(Id a) { return b_.op(Op::OpLogicalNot, boolean(), {a}); }
  Id sel(Id c, Id a, Id e) { return b_.op(Op::OpSelect, b_.type_of(a), {c, a, e}); }
  DD sel(Id c, DD a, DD e) { return {sel(c, a.hi, e.hi), sel(c, a.lo, e.lo)}; }
  Id nan(Id x) { return b_.op(Op::OpIsNan, boolean(), {x}); }
  Id inf(Id x) { return b_.op(Op::OpIsInf, boolean(), {x}); }
  Id bits(Id x) { return b_.op(Op::OpBitcast, u64(), {x}); }
  Id from_bits(Id u) { return b_.op(Op::OpBitcast, f64(), {u}); }
  Id iop(Op o, Id a, Id c) { return b_.op(o, u64(), {a, c}); }
  Id iand(Id a, Id c) { return iop(Op::OpBitwiseAnd, a, c); }
  Id ior(Id a, Id c) { return iop(Op::OpBitwiseOr, a, c); }
  Id iadd(Id a, Id c) { return iop(Op::OpIAdd, a, c); }
  Id isub(Id a, Id c) { return iop(Op::OpISub, a, c); }
  Id imul(Id a, Id c) { return iop(Op::OpIMul, a, c); }
  Id shl(Id a, Id n) { return iop(Op::OpShiftLeftLogical, a, n); }
  Id shr(Id a, Id n) { return iop(Op::OpShiftRightLogical, a, n); }
  Id ieq(Id a, Id c) { return cmp(Op::OpIEqual, a, c); }
  Id ult(Id a, Id c) { return cmp(Op::OpULessThan, a, c); }
  Id to_f(Id u) { return b_.op(Op::OpConvertUToF, f64(), {u}); }
  Id fabs(Id x) { return from_bits(iand(bits(x), k(0x7FFFFFFFFFFFFFFFull))); }
  Id negative(Id x) { return cmp(Op::OpINotEqual, iand(bits(x), k(uint64_t{1} << 63)), k(0)); }
  Id floor(Id x) { return flavour_.f64_extended(GLSLstd450Floor, x); }
  Id hw_sqrt(Id x) { return flavour_.f64_extended(GLSLstd450Sqrt, x); }
  Id clamp(Id x, double lo, double hi) { // NaN passes through
    return sel(gt(x, d(hi)), d(hi), sel(lt(x, d(lo)), d(lo), x));
  }
  /// c[0] + c[1] x + c[2] x^2 + ...
  Id horner(Id x, const std::vector<double> &c) {
    Id acc = d(c.back());
    for (size_t i = c.size() - 1; i-- > 0;) acc = add(mul(acc, x), d(c[i]));
    return acc;
  }
  /// 2^n for an integer-valued n in [-1022, 1023].
  Id pow2(Id n) {
    Id biased = b_.op(Op::OpConvertFToS, u64(), {add(n, d(1023.0))});
    return from_bits(shl(biased, k(52)));
  }
  /// y 2^n for an integer-valued n, rounded once (two exact steps keep subnormals right).
  Id scale(Id y, Id n) {
    Id nc = clamp(n, -2000, 2000);
    Id n1 = floor(mul(nc, d(0.5)));
    return mul(mul(y, pow2(n1)), pow2(sub(nc, n1)));
  }
  /// A function-scope array holding `values`, read with `at`.
  template <typename V> Id table(const V *values, size_t n, Id element, auto constant) {
    Id type = b_.t_array(element, b_.c_u32(static_cast<uint32_t>(n)));
    std::vector<Id> parts;
    for (size_t i = 0; i < n; ++i) parts.push_back(constant(values[i]));
    Id var = b_.local_variable(type);
    b_.op_void(Op::OpStore, {var, b_.c_composite(type, parts)});
    return var;
  }
  Id pairs(const T::DoubleDouble *values, size_t n) { // hi, lo, hi, lo, ...
    std::vector<double> flat;
    for (size_t i = 0; i < n; ++i) flat.insert(flat.end(), {values[i].hi, values[i].lo});
    return table(flat.data(), flat.size(), f64(), [&](double v) { return d(v); });
  }
  Id at(Id table, Id element, Id index_u64) {
    Id index = b_.op(Op::OpUConvert, u32(), {index_u64});
    Id ptr = b_.op(Op::OpAccessChain, b_.t_pointer(spv::StorageClass::Function, element),
                   {table, index});
    return b_.op(Op::OpLoad, element, {ptr});
  }

  // ------------------------------------------------------------------------------------------
  // Double-double arithmetic (Dekker, Knuth): exact sums and products of doubles, and
  // ~106-bit sums, products and quotients of pairs.

  DD cdd(T::DoubleDouble v) { return {d(v.hi), d(v.lo)}; }
  DD two_sum(Id a, Id c) {
    Id s = add(a, c), bb = sub(s, a);
    return {s, add(sub(a, sub(s, bb)), sub(c, bb))};
  }
  DD fast_two_sum(Id a, Id c) { // |a| >= |c|
    Id s = add(a, c);
    return {s, sub(c, sub(s, a))};
  }
  DD split(Id a) { // a = hi + lo with 26-bit halves; |a| < 2^995
    Id t = mul(d(134217729.0), a);
    Id hi = sub(t, sub(t, a));
    return {hi, sub(a, hi)};
  }
  DD two_prod(Id a, Id c) {
    Id p = mul(a, c);
    return {p, flavour_.f64_product_error(a, c, p, [&] {
              DD x = split(a), y = split(c);
              return add(add(add(sub(mul(x.hi, y.hi), p), mul(x.hi, y.lo)), mul(x.lo, y.hi)),
                         mul(x.lo, y.lo));
            })};
  }
  DD dd_add(DD a, DD c) {
    DD s = two_sum(a.hi, c.hi), t = two_sum(a.lo, c.lo);
    DD u = fast_two_sum(s.hi, add(s.lo, t.hi));
    return fast_two_sum(u.hi, add(u.lo, t.lo));
  }
  DD add_d(DD a, Id c) {
    DD s = two_sum(a.hi, c);
    return fast_two_sum(s.hi, add(s.lo, a.lo));
  }
  DD dd_mul(DD a, DD c) {
    DD p = two_prod(a.hi, c.hi);
    return fast_two_sum(p.hi, add(p.lo, add(mul(a.hi, c.lo), mul(a.lo, c.hi))));
  }
  DD mul_d(DD a, Id c) {
    DD p = two_prod(a.hi, c);
    return fast_two_sum(p.hi, add(p.lo, mul(a.lo, c)));
  }
  DD dd_div(DD a, DD c) {
    Id q1 = div(a.hi, c.hi);
    DD r = dd_add(a, dd_neg(mul_d(c, q1)));
    Id q2 = div(r.hi, c.hi);
    DD r2 = dd_add(r, dd_neg(mul_d(c, q2)));
    Id q3 = div(r2.hi, c.hi);
    DD q = fast_two_sum(q1, q2);
    return add_d(q, q3);
  }
  DD dd_neg(DD a) { return {neg(a.hi), neg(a.lo)}; }
  DD dd(Id hi) { return {hi, d(0.0)}; }

  // ------------------------------------------------------------------------------------------
  // exp: x = k ln2 + r with |r| <= ln2/2 (Cody-Waite with a 32-bit head of ln2, so k * head is
  // exact), e^r = 1 + r + r^2/2 + r^3 P(r) in double-double, then scaled by 2^k.

  struct Reduced {
    Id k;
    DD r;
  };
  Reduced exp_reduce(DD x) {
    Id xh = clamp(x.hi, -1100, 1100);
    Id n = floor(add(mul(xh, d(T::kInvLn2.hi)), d(0.5)));
    const double head = std::bit_cast<double>(uint64_t{0x3FE62E42FEE00000});
    const double rest = T::kLn2.hi - head; // exact: the two agree in their top 32 bits
    Id rh = sub(xh, mul(n, d(head)));
    DD nl = two_prod(n, d(rest));
    nl = fast_two_sum(nl.hi, add(nl.lo, mul(n, d(T::kLn2.lo))));
    Id xl = sel(eq(xh, x.hi), x.lo, d(0.0));
    return {n, dd_add({rh, xl}, dd_neg(nl))};
  }
  /// e^r for |r| <= 0.35, relative error ~2^-60.
  DD exp_core(DD r) {
    Id h = r.hi;
    DD sq = two_prod(h, h);
    DD half{mul(sq.hi, d(0.5)), mul(sq.lo, d(0.5))};
    std::vector<double> c;
    double f = 6;
    for (int i = 0; i < 15; ++i) {
      c.push_back(1.0 / f); // 1/(i+3)!
      f *= i + 4;
    }
    Id cube = mul(sq.hi, h);
    Id small = add(mul(cube, horner(h, c)), add(mul(h, r.lo), r.lo));
    DD acc = add_d(dd(d(1.0)), h);
    acc = dd_add(acc, half);
    return add_d(acc, small);
  }
  Id exp(Id x) {
    Reduced e = exp_reduce(dd(x));
    Id y = scale(exp_core(e.r).hi, e.k);
    return sel(nan(x), x, y);
  }
  Id exp2(Id x) {
    Id xc = clamp(x, -2200, 2200);
    Id n = floor(add(xc, d(0.5)));
    Id f = sub(xc, n); // exact
    DD r = mul_d(cdd(T::kLn2), f);
    Id y = scale(exp_core(r).hi, n);
    return sel(nan(x), x, y);
  }
  /// e^x as an unrounded pair for |x| <= 64 (tanh, sigmoid): e^r 2^k with both halves scaled.
  DD exp_pair(Id x) {
    Reduced e = exp_reduce(dd(x));
    DD p = exp_core(e.r);
    Id s = pow2(e.k);
    return {mul(p.hi, s), mul(p.lo, s)};
  }

  // ------------------------------------------------------------------------------------------
  // log: x = 2^e m with m in [sqrt(1/2), sqrt(2)], log m = 2 atanh(s) with s = (m-1)/(m+1):
  // 2s + 2s^3/3 in double-double, the rest (below 2^-12 of the total) in double.

  struct Logarithm {
    Id e;  ///< the exponent, as a double
    DD lm; ///< log m
  };
  Logarithm log_parts(Id x) {
    Id tiny = lt(x, d(0x1p-1022));
    Id xs = sel(tiny, mul(x, d(0x1p54)), x);
    Id b = bits(xs);
    Id e = sub(to_f(iand(shr(b, k(52)), k(0x7FF))), d(1023.0));
    Id m = from_bits(ior(iand(b, k(0x000FFFFFFFFFFFFFull)), k(0x3FF0000000000000ull)));
    Id big = gt(m, d(1.4142135623730951));
    m = sel(big, mul(m, d(0.5)), m);
    e = add(e, sel(big, d(1.0), d(0.0)));
    e = sub(e, sel(tiny, d(54.0), d(0.0)));
    Id f = sub(m, d(1.0)); // exact
    DD s = dd_div(dd(f), fast_two_sum(d(2.0), f));
    DD s2 = dd_mul(s, s);
    DD third = dd_mul(dd_mul(s2, s), cdd(T::kTwoThirds));
    std::vector<double> c;
    for (int j = 0; j < 12; ++j) c.push_back(2.0 / (2 * j + 5));
    Id tail = mul(mul(mul(s2.hi, s2.hi), s.hi), horner(s2.hi, c));
    DD lm = dd_add({mul(s.hi, d(2.0)), mul(s.lo, d(2.0))}, third);
    return {e, add_d(lm, tail)};
  }
  DD log_pair(Id x) {
    Logarithm l = log_parts(x);
    return dd_add(mul_d(cdd(T::kLn2), l.e), l.lm);
  }
  enum class Base { E, Two, Ten };
  Id log(Id x, Base base) {
    Id y;
    if (base == Base::Two) {
      Logarithm l = log_parts(x);
      y = add_d(dd_mul(l.lm, cdd(T::kInvLn2)), l.e).hi;
    } else if (base == Base::Ten) {
      y = dd_mul(log_pair(x), cdd(T::kLog10E)).hi;
    } else {
      y = log_pair(x).hi;
    }
    return log_special(x, y);
  }
  Id log_special(Id x, Id y) {
    y = sel(eq(x, d(0.0)), d(-INFINITY), y);
    y = sel(inf(x), x, y);
    return sel(either(lt(x, d(0.0)), nan(x)), d(NAN), y);
  }

  // ------------------------------------------------------------------------------------------
  // pow = e^(y log|x|) with the product in double-double, and C99 Annex F's special cases.

  Id is_integral(Id v) { return eq(floor(v), v); }
  Id pow(Id x, Id y) {
    Id ax = fabs(x);
    DD l = log_pair(ax);
    Id finite = no(either(eq(ax, d(0.0)), inf(ax)));
    l = {log_special(ax, l.hi), sel(finite, l.lo, d(0.0))};
    // Far outside exp's range (or infinite) the pair only carries noise: the plain product.
    Id plain = mul(l.hi, y);
    Id in_range = lt(fabs(plain), d(1000.0));
    DD z = sel(in_range, mul_d(l, y), dd(plain));
    Reduced e = exp_reduce(z);
    Id r = scale(exp_core(e.r).hi, e.k);
    Id y_int = is_integral(y);
    Id y_odd = both(y_int, no(is_integral(mul(y, d(0.5)))));
    r = sel(both(negative(x), y_odd), neg(r), r);
    // A finite negative base to a finite non-integral power has no real value.
    Id finite_neg = both(lt(x, d(0.0)), no(inf(x)));
    r = sel(both(finite_neg, both(no(y_int), no(inf(y)))), d(NAN), r);
    // |x| = 1 to an infinite power is 1.
    r = sel(both(eq(ax, d(1.0)), inf(y)), d(1.0), r);
    r = sel(either(nan(x), nan(y)), d(NAN), r);
    return sel(either(eq(y, d(0.0)), eq(x, d(1.0))), d(1.0), r);
  }

  // ------------------------------------------------------------------------------------------
  // sqrt: the target's square root corrected by one Newton step with an exact residual (so a
  // target that does not round it correctly still lands within an ulp); rsqrt divides 1 by
  // that pair.

  struct Root {
    DD s;    ///< sqrt of the scaled argument
    Id tiny; ///< the argument was scaled by 2^200 (so s by 2^100)
  };
  Root root(Id x) {
    Id tiny = lt(x, d(0x1p-960));
    Id xs = sel(tiny, mul(x, d(0x1p200)), x);
    Id y = hw_sqrt(xs);
    DD p = two_prod(y, y);
    Id c = div(sub(sub(xs, p.hi), p.lo), add(y, y));
    return {fast_two_sum(y, c), tiny};
  }
  Id sqrt(Id x) {
    Root r = root(x);
    Id y = sel(r.tiny, mul(r.s.hi, d(0x1p-100)), r.s.hi);
    y = sel(either(eq(x, d(0.0)), inf(x)), x, y);
    return sel(either(lt(x, d(0.0)), nan(x)), d(NAN), y);
  }
  Id rsqrt(Id x) {
    Root r = root(x);
    Id q = dd_div(dd(d(1.0)), r.s).hi;
    Id y = sel(r.tiny, mul(q, d(0x1p100)), q);
    y = sel(eq(x, d(0.0)), div(d(1.0), x), y); // +-inf
    y = sel(inf(x), d(0.0), y);
    return sel(either(lt(x, d(0.0)), nan(x)), d(NAN), y);
  }

  // ------------------------------------------------------------------------------------------
  // sin, cos, tan: |x| >= pi/4 is reduced modulo pi/2 with the bits of 2/pi (Payne-Hanek):
  // x = m 2^E with a 53-bit m, and the 192 bits of 2/pi from bit E-1 on (the earlier ones only
  // add multiples of 4) give m W mod 2^192 = quadrant and 190 bits of fraction, enough for the
  // closest double to a multiple of pi/2 (~2^-61 away). Then Taylor series on |r| <= pi/4 in
  // double-double.

  /// m * w as (high, low) 64-bit halves, for m < 2^53.
  std::array<Id, 2> mul_wide(Id m, Id w) {
    Id mask = k(0xFFFFFFFFull), n32 = k(32);
    Id mh = shr(m, n32), ml = iand(m, mask), wh = shr(w, n32), wl = iand(w, mask);
    Id ll = imul(ml, wl), lh = imul(ml, wh), hl = imul(mh, wl), hh = imul(mh, wh);
    Id mid = iadd(iadd(shr(ll, n32), iand(lh, mask)), iand(hl, mask));
    Id lo = ior(iand(ll, mask), shl(mid, n32));
    Id hi = iadd(iadd(hh, shr(lh, n32)), iadd(shr(hl, n32), shr(mid, n32)));
    return {hi, lo};
  }
  struct Quadrant {
    Id q; ///< u64 in 0..3
    DD r; ///< |x| - q pi/2 (mod 2pi), |r| <= pi/4
  };
  Quadrant reduce_pio2(Id ax) {
    Id b = bits(ax);
    Id small = lt(ax, d(0.78539816339744828));
    // The window starts at bit 62 + E of the table (E = exponent - 1075); small arguments
    // take the first window instead, their result is not used.
    Id ex = sel(small, k(1022), shr(b, k(52)));
    Id start = isub(ex, k(1013));
    Id word = shr(start, k(6)), sh = iand(start, k(63));
    Id tab = table(T::kTwoOverPiWords, std::size(T::kTwoOverPiWords), u64(),
                   [&](uint64_t v) { return k(v); });
    std::array<Id, 4> t;
    for (uint64_t i = 0; i < 4; ++i) t[i] = at(tab, u64(), iadd(word, k(i)));
    Id aligned = ieq(sh, k(0)), back = iand(isub(k(64), sh), k(63));
    auto window = [&](int i) {
      return sel(aligned, t[i], ior(shl(t[i], sh), shr(t[i + 1], back)));
    };
    Id w0 = window(0), w1 = window(1), w2 = window(2);
    Id m = ior(iand(b, k(0x000FFFFFFFFFFFFFull)), k(uint64_t{1} << 52));
    auto p2 = mul_wide(m, w2), p1 = mul_wide(m, w1);
    Id lo = p2[1];
    Id mid = iadd(p2[0], p1[1]);
    Id carry = sel(ult(mid, p2[0]), k(1), k(0));
    Id hi = iadd(iadd(imul(m, w0), p1[0]), carry);
    Id q = shr(hi, k(62));
    Id frac_mask = k((uint64_t{1} << 62) - 1);
    Id f_hi = iand(hi, frac_mask);
    // A fraction of 1/2 or more is taken from the next quadrant: 2^190 - f, negated.
    Id up = cmp(Op::OpUGreaterThanEqual, f_hi, k(uint64_t{1} << 61));
    Id zero = k(0), one = k(1);
    Id c0 = sel(ieq(lo, zero), one, zero);
    Id c1 = sel(both(ieq(lo, zero), ieq(mid, zero)), one, zero);
    Id n_lo = iadd(b_.op(Op::OpNot, u64(), {lo}), one);
    Id n_mid = iadd(b_.op(Op::OpNot, u64(), {mid}), c0);
    Id n_hi = iand(iadd(b_.op(Op::OpNot, u64(), {f_hi}), c1), frac_mask);
    Id g_hi = sel(up, n_hi, f_hi), g_mid = sel(up, n_mid, mid), g_lo = sel(up, n_lo, lo);
    q = iand(iadd(q, sel(up, one, zero)), k(3));
    // The fraction in 32-bit pieces (each exact as a double), smallest first.
    Id mask = k(0xFFFFFFFFull), n32 = k(32);
    std::array<std::pair<Id, double>, 6> pieces{{{iand(g_lo, mask), 0x1p-190},
                                                 {shr(g_lo, n32), 0x1p-158},
                                                 {iand(g_mid, mask), 0x1p-126},
                                                 {shr(g_mid, n32), 0x1p-94},
                                                 {iand(g_hi, mask), 0x1p-62},
                                                 {shr(g_hi, n32), 0x1p-30}}};
    DD f = dd(mul(to_f(pieces[0].first), d(pieces[0].second)));
    for (size_t i = 1; i < pieces.size(); ++i)
      f = add_d(f, mul(to_f(pieces[i].first), d(pieces[i].second)));
    DD r = dd_mul(f, cdd(T::kPiOver2));
    r = sel(up, dd_neg(r), r);
    return {sel(small, k(0), q), sel(small, dd(ax), r)};
  }
  DD sin_pair(DD r) {
    Id h = r.hi, h2 = mul(h, h);
    std::vector<double> c;
    double f = 6;
    for (int i = 0; i < 12; ++i) {
      c.push_back((i % 2 ? 1.0 : -1.0) / f); // -1/3!, 1/5!, ...
      f *= (2 * i + 4) * (2 * i + 5);
    }
    Id tail = mul(mul(h, h2), horner(h2, c));
    Id small = add(sub(r.lo, mul(mul(r.lo, h2), d(0.5))), tail);
    return fast_two_sum(h, small);
  }
  DD cos_pair(DD r) {
    Id h = r.hi, h2 = mul(h, h);
    DD sq = two_prod(h, h);
    DD acc = dd_add(dd(d(1.0)), {mul(sq.hi, d(-0.5)), mul(sq.lo, d(-0.5))});
    std::vector<double> c;
    double f = 24;
    for (int i = 0; i < 12; ++i) {
      c.push_back((i % 2 ? -1.0 : 1.0) / f); // 1/4!, -1/6!, ...
      f *= (2 * i + 5) * (2 * i + 6);
    }
    Id tail = mul(mul(h2, h2), horner(h2, c));
    return add_d(acc, sub(tail, mul(h, r.lo)));
  }
  Id trig(MathOpcode fn, Id x) {
    Quadrant red = reduce_pio2(fabs(x));
    DD s = sin_pair(red.r), c = cos_pair(red.r);
    auto is = [&](uint64_t n) { return ieq(red.q, k(n)); };
    Id y;
    if (fn == MathOpcode::Cos) {
      DD v = sel(is(0), c, sel(is(1), dd_neg(s), sel(is(2), dd_neg(c), s)));
      y = v.hi;
    } else {
      Id odd = either(is(1), is(3));
      if (fn == MathOpcode::Sin) {
        DD v = sel(is(0), s, sel(is(1), c, sel(is(2), dd_neg(s), dd_neg(c))));
        y = v.hi;
      } else {
        y = dd_div(sel(odd, dd_neg(c), s), sel(odd, s, c)).hi;
      }
      y = sel(negative(x), neg(y), y);
    }
    return sel(either(nan(x), inf(x)), d(NAN), y);
  }

  // ------------------------------------------------------------------------------------------
  // tanh = (e^2a - 1) / (e^2a + 1) and sigmoid = 1 / (1 + e^-x) on double-double exponentials.

  Id tanh(Id x) {
    Id a = fabs(x);
    DD e = exp_pair(mul(clamp(a, 0, 22), d(2.0)));
    Id t = dd_div(add_d(e, d(-1.0)), add_d(e, d(1.0))).hi;
    t = sel(gt(a, d(22.0)), d(1.0), t);
    t = sel(negative(x), neg(t), t);
    return sel(either(lt(a, d(0x1p-27)), nan(x)), x, t);
  }
  Id sigmoid(Id x) {
    // Below -40, sigmoid(x) = e^x to within 2^-57; above 40 it rounds to 1.
    Id low = lt(x, d(-40.0));
    Id arg = sel(low, x, neg(clamp(x, -40, 40)));
    Reduced e = exp_reduce(dd(arg));
    DD p = exp_core(e.r);
    Id tiny = scale(p.hi, e.k);
    Id s = pow2(clamp(e.k, -1000, 1000));
    DD ex{mul(p.hi, s), mul(p.lo, s)};
    Id y = dd_div(dd(d(1.0)), add_d(ex, d(1.0))).hi;
    y = sel(low, tiny, y);
    // Exactly 0 once e^-x overflows, as 1 / (1 + e^-x) is in IEEE arithmetic (SPEC §3.4).
    y = sel(lt(x, d(-709.782712893384)), d(0.0), y);
    return sel(nan(x), x, y);
  }

  // ------------------------------------------------------------------------------------------
  // erf: the Maclaurin series below 1/2; up to 6, Taylor series around the nearest multiple c
  // of 1/8 from tabulated erf(c) (Hermite polynomials give the derivatives); 1 beyond.

  Id erf(Id x) {
    Id a = fabs(x);
    // Small: (2/sqrt(pi)) a (1 + t), t = sum_{n>=1} (-1)^n a^2n / (n! (2n+1)).
    Id a2 = mul(a, a);
    std::vector<double> c;
    double f = 1;
    for (int n = 1; n <= 16; ++n) {
      f *= n;
      c.push_back((n % 2 ? -1.0 : 1.0) / (f * (2 * n + 1)));
    }
    Id t = mul(a2, horner(a2, c));
    DD p = mul_d(cdd(T::kTwoOverSqrtPi), a);
    Id small = add_d(p, mul(p.hi, t)).hi;

    // Middle: erf(c + h) = erf(c) + slope(c) sum_n (-1)^n H_n(c) h^(n+1) / (n+1)!.
    Id j = floor(add(mul(clamp(a, T::kErfFirst / 8.0, T::kErfLast / 8.0), d(8.0)), d(0.5)));
    Id cen = mul(j, d(0.125)), h = sub(a, cen); // exact
    Id index = b_.op(Op::OpConvertFToU, u64(), {sub(j, d(T::kErfFirst))});
    Id erf_c = pairs(T::kErf, std::size(T::kErf));
    Id slopes = table(T::kErfSlope, std::size(T::kErfSlope), f64(), [&](double v) { return d(v); });
    Id twice = shl(index, k(1));
    DD base{at(erf_c, f64(), twice), at(erf_c, f64(), iadd(twice, k(1)))};
    Id slope = at(slopes, f64(), index);
    std::vector<Id> coef;
    Id h_prev = d(1.0), h_cur = mul(cen, d(2.0)); // H_0, H_1
    double fact = 1;
    coef.push_back(d(1.0));
    for (int n = 1; n < 20; ++n) {
      fact *= n + 1;
      coef.push_back(mul(h_cur, d((n % 2 ? -1.0 : 1.0) / fact)));
      Id next = sub(mul(mul(cen, d(2.0)), h_cur), mul(d(2.0 * n), h_prev));
      h_prev = h_cur;
      h_cur = next;
    }
    Id sum = coef.back();
    for (size_t i = coef.size() - 1; i-- > 0;) sum = add(mul(sum, h), coef[i]);
    Id middle = add_d(base, mul(slope, mul(sum, h))).hi;

    Id y = sel(lt(a, d(0.5)), small, sel(lt(a, d(6.0)), middle, d(1.0)));
    y = sel(negative(x), neg(y), y);
    return sel(nan(x), x, y);
  }

  // ------------------------------------------------------------------------------------------
  // atan2: t = |y|/|x| as a pair (a residual with an exact product), atan t = atan c +
  // atan((t - c) / (1 + tc)) around the nearest c = j/16 (tabulated) after reflecting t > 1 to
  // 1/t, then pi - a for x < 0 and the sign of y.

  DD atan_pair(DD t) { // 0 <= t <= 1
    Id j = floor(add(mul(t.hi, d(16.0)), d(0.5)));
    Id c = mul(j, d(0.0625));
    Id tab = pairs(T::kAtan, std::size(T::kAtan));
    Id twice = shl(b_.op(Op::OpConvertFToU, u64(), {j}), k(1));
    DD base{at(tab, f64(), twice), at(tab, f64(), iadd(twice, k(1)))};
    DD v = dd_div(add_d(t, neg(c)), add_d(mul_d(t, c), d(1.0)));
    std::vector<double> co;
    for (int n = 1; n <= 9; ++n) co.push_back((n % 2 ? -1.0 : 1.0) / (2 * n + 1));
    Id v2 = mul(v.hi, v.hi);
    Id tail = mul(mul(v.hi, v2), horner(v2, co));
    return add_d(dd_add(base, v), tail);
  }
  Id atan2(Id y, Id x) {
    Id ay = fabs(y), ax = fabs(x);
    // Keep both in a range where the residual's products neither overflow nor underflow
    // (exact: only quotients outside [2^-60, 2^60] lose a half, and those do not use it).
    Id big = either(gt(ax, d(0x1p900)), gt(ay, d(0x1p900)));
    Id tiny = either(lt(ax, d(0x1p-900)), lt(ay, d(0x1p-900)));
    Id factor = sel(big, d(0x1p-600), sel(tiny, d(0x1p600), d(1.0)));
    Id sy = mul(ay, factor), sx = mul(ax, factor);
    Id q = div(sy, sx);
    DD p = two_prod(q, sx);
    Id res = div(sub(sub(sy, p.hi), p.lo), sx);
    DD t = fast_two_sum(q, res);
    Id both_inf = both(inf(y), inf(x));
    Id both_zero = both(eq(ay, d(0.0)), eq(ax, d(0.0)));
    Id q_plain = sel(both_inf, d(1.0), sel(both_zero, d(0.0), div(ay, ax)));
    Id extreme = either(either(lt(q_plain, d(0x1p-60)), gt(q_plain, d(0x1p60))),
                        either(both_inf, both_zero));
    t = sel(extreme, dd(q_plain), t);
    Id over = gt(t.hi, d(1.0));
    DD u = sel(over, sel(extreme, dd(div(d(1.0), t.hi)), dd_div(dd(d(1.0)), t)), t);
    DD a = atan_pair(sel(gt(u.hi, d(1.0)), dd(d(1.0)), u)); // 1/inf = 0 stays in range
    a = sel(over, dd_add(cdd(T::kPiOver2), dd_neg(a)), a);
    a = sel(negative(x), dd_add(cdd(T::kPi), dd_neg(a)), a);
    Id r = sel(negative(y), neg(a.hi), a.hi);
    return sel(either(nan(x), nan(y)), d(NAN), r);
  }

  Builder &b_;
  F64Flavour &flavour_;
};

} // namespace

Id call_f64_math(Builder &b, F64Flavour &flavour, MathOpcode fn, Id x, Id y) {
  bool binary = fn == MathOpcode::Pow || fn == MathOpcode::Atan2;
  Id f64 = b.t_float(64);
  const std::string name(isa::info(isa::to_opcode(fn)).mnemonic);
  Id fn_id = b.shared_global("math64." + name, [&] {
    Id id = b.fresh();
    b.aside([&] {
      Id type = b.t_function(f64, binary ? std::vector<Id>{f64, f64} : std::vector<Id>{f64});
      b.begin_function(f64, type, id);
      Id px = b.function_param(f64), py = binary ? b.function_param(f64) : 0;
      b.begin_block(b.fresh());
      Id r = F64Math(b, flavour).emit(fn, px, py);
      b.terminate(spv::Op::OpReturnValue, {r});
      b.end_function();
    });
    b.name(id, "__hg_f64_" + name);
    return id;
  });
  return b.op(spv::Op::OpFunctionCall, f64, binary ? Words{fn_id, x, y} : Words{fn_id, x});
}

} // namespace hologram::codegen::spirv
