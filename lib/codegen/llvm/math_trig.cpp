// sin, cos and tan inline for the x86 lowering (math_ir.h): a Cody-Waite reduction by π/2
// (three FMA parts where the target has FMA), polynomials for sin r and cos r on the quarter
// period, chosen and signed by the quadrant. math.cpp calls these below the limit and SLEEF
// for a chunk with a lane beyond it.
#include "math_ir.h"

namespace hologram::codegen::detail {

/// sin, cos or tan of f32 for |x| < kSinCosLimit: k = round(x 2/π) by the shifter,
/// r = x - k π/2 (below), then sin r and cos r by their polynomials, chosen and signed by the
/// quadrant k mod 4 (cos x = sin(x + π/2): quadrant k + 1; tan x = sin r / cos r for even k,
/// -cos r / sin r for odd k, one divide). -0 stays -0 for sin and tan.
llvm::Value *emit_trig_f32(MathIR &m, llvm::Value *x, Trig fn) {
  namespace c = cpu_math::f32;
  llvm::IRBuilder<> &b = m.builder();
  auto [kf, k] = m.round(m.fma(x, m.f(c::kTwoOverPi), m.shifter()));
  llvm::Value *nk = b.CreateFNeg(kf);
  llvm::Value *r = nullptr, *lo = nullptr;
  if (m.fused()) {
    // Three FMAs (support/cpu_math.h kPiOver2Fma*): the first exact, the others rounded once;
    // r alone carries under an ulp of error, and the polynomials keep sin and cos within 2.
    r = m.fused_fma(nk, m.f(c::kPiOver2Fma1), x);
    r = m.fused_fma(nk, m.f(c::kPiOver2Fma2), r);
    r = m.fused_fma(nk, m.f(c::kPiOver2Fma3), r);
  } else {
    // Without FMA: r1 = x - k A is exact (Sterbenz); then r1 - k B - k C as rounded sums with
    // their exact errors (TwoSum; each k·part is exact), the errors and k D added last,
    // r = hi + lo. Near a multiple of π/2 the sums cancel exactly and r keeps its relative
    // accuracy.
    auto two_sum = [&](llvm::Value *a, llvm::Value *c, llvm::Value *&err) {
      llvm::Value *sum = b.CreateFAdd(a, c);
      llvm::Value *cc = b.CreateFSub(sum, a);
      err = b.CreateFAdd(b.CreateFSub(a, b.CreateFSub(sum, cc)), b.CreateFSub(c, cc));
      return sum;
    };
    llvm::Value *e2 = nullptr, *e3 = nullptr;
    llvm::Value *r1 = m.fma(nk, m.f(c::kPiOver2A), x);
    llvm::Value *r2 = two_sum(r1, b.CreateFMul(nk, m.f(c::kPiOver2B)), e2);
    llvm::Value *r3 = two_sum(r2, b.CreateFMul(nk, m.f(c::kPiOver2C)), e3);
    llvm::Value *tail = m.fma(nk, m.f(c::kPiOver2D), b.CreateFAdd(e2, e3));
    r = b.CreateFAdd(r3, tail);
    lo = b.CreateFAdd(b.CreateFSub(r3, r), tail);
  }
  // With lo: sin(r + lo) = sin r + lo cos r, cos(r + lo) = cos r - lo sin r, to first order.
  llvm::Value *u = b.CreateFMul(r, r);
  llvm::Value *sin_r = nullptr, *cos_r = nullptr;
  if (lo) {
    sin_r = b.CreateFAdd(r, m.fma(b.CreateFMul(r, u), m.horner(u, c::kSinS), lo));
    cos_r =
        b.CreateFAdd(m.fma(u, m.f(-0.5), m.f(1.0)), m.fma(b.CreateFMul(u, u), m.horner(u, c::kCosC),
                                                          b.CreateFMul(lo, b.CreateFNeg(r))));
  } else {
    sin_r = m.fma(b.CreateFMul(r, u), m.horner(u, c::kSinS), r);
    cos_r = m.fma(b.CreateFMul(u, u), m.horner(u, c::kCosC), m.fma(u, m.f(-0.5), m.f(1.0)));
  }
  if (fn == Trig::Tan) {
    llvm::Value *odd = b.CreateICmpNE(b.CreateAnd(k, m.i(1)), m.i(0));
    return b.CreateFDiv(b.CreateSelect(odd, cos_r, sin_r),
                        b.CreateSelect(odd, b.CreateFNeg(sin_r), cos_r));
  }
  llvm::Value *q = fn == Trig::Cos ? b.CreateAdd(k, m.i(1)) : k;
  llvm::Value *odd = b.CreateICmpNE(b.CreateAnd(q, m.i(1)), m.i(0));
  llvm::Value *v = m.bits(b.CreateSelect(odd, cos_r, sin_r));
  return m.from_bits(b.CreateXor(v, b.CreateShl(b.CreateAnd(q, m.i(2)), m.i(30))));
}

/// sin, cos or tan of f64 for |x| < kSinCosLimit (support/cpu_math.h): k = round(x 2/π),
/// r = x - k π/2 as a double-double. Where FMA is, x - k P1 by one FMA (exact), k P2 as a
/// TwoProd added by TwoSum, k P3 with the errors. Else x - k A is exact (k A is, and the two are
/// within a factor of two or r is 0), k B and k C are exact and added by TwoSum, k D with the
/// errors.
/// Then sin r and cos r as double-doubles (r's low part entering to first order; cos's
/// 1 - r²/2 with r² exact and the rounding of the subtraction kept), chosen and signed by the
/// quadrant; tan divides the pairs. Below 2^-27 sin and tan return x (their value rounds to
/// it, and -0 stays -0).
llvm::Value *emit_trig_f64(MathIR &m, llvm::Value *x, Trig fn) {
  namespace c = cpu_math::f64;
  using Pair = MathIR::Pair;
  llvm::IRBuilder<> &b = m.builder();
  auto [kf, k] = m.round(m.fma(x, m.f(c::kTwoOverPi), m.shifter()));
  llvm::Value *nk = b.CreateFNeg(kf);
  Pair r;
  if (m.fused()) { // x - k P1 exact by one FMA, k P2 by TwoProd (support/cpu_math.h)
    llvm::Value *r1 = m.fused_fma(nk, m.f(c::kPiOver2Fma1), x);
    Pair p2 = m.two_prod(nk, m.f(c::kPiOver2Fma2));
    Pair r2 = m.two_sum(r1, p2.hi);
    r = m.fast_two_sum(r2.hi, m.fma(nk, m.f(c::kPiOver2Fma3), b.CreateFAdd(r2.lo, p2.lo)));
  } else {
    llvm::Value *r1 = b.CreateFAdd(x, b.CreateFMul(nk, m.f(c::kPiOver2A)));
    Pair r2 = m.two_sum(r1, b.CreateFMul(nk, m.f(c::kPiOver2B)));
    Pair r3 = m.two_sum(r2.hi, b.CreateFMul(nk, m.f(c::kPiOver2C)));
    r = m.fast_two_sum(r3.hi, m.fma(nk, m.f(c::kPiOver2D), b.CreateFAdd(r2.lo, r3.lo)));
  }
  llvm::Value *u = b.CreateFMul(r.hi, r.hi);
  // sin(r + lo) = r + (r u S(u) + lo (1 - u/2)).
  llvm::Value *sin_lo = b.CreateFMul(r.lo, m.fma(u, m.f(-0.5), m.f(1.0)));
  llvm::Value *sin_tail = m.fma(b.CreateFMul(r.hi, u), m.horner(u, c::kSinS), sin_lo);
  // cos(r + lo) = (1 - h) + u² C(u) - r lo, h = r²/2 exactly (hi + lo), 1 - h.hi exact.
  Pair sq = m.two_prod(r.hi, r.hi);
  llvm::Value *h_hi = b.CreateFMul(sq.hi, m.f(0.5)), *h_lo = b.CreateFMul(sq.lo, m.f(0.5));
  llvm::Value *w = b.CreateFSub(m.f(1.0), h_hi);
  llvm::Value *w_err = b.CreateFSub(b.CreateFSub(b.CreateFSub(m.f(1.0), w), h_hi), h_lo);
  llvm::Value *cos_tail = b.CreateFAdd(w_err, m.fma(b.CreateFMul(u, u), m.horner(u, c::kCosC),
                                                    b.CreateFNeg(b.CreateFMul(r.hi, r.lo))));
  llvm::Value *v = nullptr;
  if (fn == Trig::Tan) { // the pairs, divided
    Pair sin_r = m.fast_two_sum(r.hi, sin_tail), cos_r = m.fast_two_sum(w, cos_tail);
    llvm::Value *odd = b.CreateICmpNE(b.CreateAnd(k, m.i(1)), m.i(0));
    Pair n{b.CreateSelect(odd, cos_r.hi, sin_r.hi), b.CreateSelect(odd, cos_r.lo, sin_r.lo)};
    Pair d{b.CreateSelect(odd, b.CreateFNeg(sin_r.hi), cos_r.hi),
           b.CreateSelect(odd, b.CreateFNeg(sin_r.lo), cos_r.lo)};
    Pair q = m.divide(n, d);
    v = b.CreateFAdd(q.hi, q.lo);
  } else {                                                                // each rounded once
    llvm::Value *quadrant = fn == Trig::Cos ? b.CreateAdd(k, m.i(1)) : k; // cos x = sin(x + π/2)
    llvm::Value *odd = b.CreateICmpNE(b.CreateAnd(quadrant, m.i(1)), m.i(0));
    v = b.CreateSelect(odd, b.CreateFAdd(w, cos_tail), b.CreateFAdd(r.hi, sin_tail));
    llvm::Value *sign = b.CreateShl(b.CreateAnd(quadrant, m.i(2)), m.i(62));
    v = m.from_bits(b.CreateXor(m.bits(v), sign));
  }
  if (fn == Trig::Cos) return v;
  llvm::Value *tiny =
      b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), m.f(0x1p-27));
  return b.CreateSelect(tiny, x, v);
}

} // namespace hologram::codegen::detail
