// sin, cos and tan inline (math_ir.h): a Cody-Waite reduction by π/2 (three FMA parts where
// the target has FMA), polynomials for sin r and cos r on the quarter period, chosen and signed
// by the quadrant. The x86 lowering (math.cpp) calls these below the limit and SLEEF for a
// chunk with a lane beyond it; the PTX lowering, which has no library, reduces larger
// arguments itself (Payne–Hanek, emit_trig_any).
#include "math_ir.h"

#include <cstdint>
#include <iterator>
#include <limits>
#include <vector>

namespace hologram::codegen::detail {

namespace {

/// sin, cos or tan of k π/2 + r (+ lo, when not null) for |r| <= π/4 (f32, k of i32).
llvm::Value *eval_trig_f32(MathIR &m, llvm::Value *r, llvm::Value *lo, llvm::Value *k, Trig fn) {
  namespace c = cpu_math::f32;
  llvm::IRBuilder<> &b = m.builder();
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

} // namespace

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
  return eval_trig_f32(m, r, lo, k, fn);
}

namespace {

/// sin, cos or tan of k π/2 + r for a double-double |r| <= π/4 (k of i64); below 2^-27 sin
/// and tan return x.
llvm::Value *eval_trig_f64(MathIR &m, MathIR::Pair r, llvm::Value *k, llvm::Value *x, Trig fn) {
  namespace c = cpu_math::f64;
  using Pair = MathIR::Pair;
  llvm::IRBuilder<> &b = m.builder();
  llvm::Value *u = b.CreateFMul(r.hi, r.hi);
  // sin(r + lo) = r + (r u S(u) + lo (1 - u/2)).
  llvm::Value *sin_lo = b.CreateFMul(r.lo, m.fma(u, m.f(-0.5), m.f(1.0)));
  // cos(r + lo) = (1 - h) + u² C(u) - r lo, h = r²/2 exactly (hi + lo), 1 - h.hi exact.
  Pair sq = m.two_prod(r.hi, r.hi);
  llvm::Value *h_hi = b.CreateFMul(sq.hi, m.f(0.5)), *h_lo = b.CreateFMul(sq.lo, m.f(0.5));
  llvm::Value *w = b.CreateFSub(m.f(1.0), h_hi);
  llvm::Value *w_err = b.CreateFSub(b.CreateFSub(b.CreateFSub(m.f(1.0), w), h_hi), h_lo);
  llvm::Value *cos_lo = b.CreateFNeg(b.CreateFMul(r.hi, r.lo));
  llvm::Value *uu = b.CreateFMul(u, u);
  llvm::Value *v = nullptr;
  if (fn == Trig::Tan) { // the pairs, divided
    llvm::Value *sin_tail = m.fma(b.CreateFMul(r.hi, u), m.horner(u, c::kSinS), sin_lo);
    llvm::Value *cos_tail = b.CreateFAdd(w_err, m.fma(uu, m.horner(u, c::kCosC), cos_lo));
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
    // One polynomial a lane, sin's or cos's by the quadrant, its coefficients and the terms
    // around it chosen per lane: each lane computes what it would from both, bit for bit,
    // with half the polynomials' multiply-adds (which bound a loop of sin).
    auto pick = [&](llvm::Value *cos_value, llvm::Value *sin_value) {
      return b.CreateSelect(odd, cos_value, sin_value);
    };
    static_assert(std::size(c::kSinS) == std::size(c::kCosC));
    llvm::Value *p = pick(m.f(c::kCosC[0]), m.f(c::kSinS[0]));
    for (size_t j = 1; j < std::size(c::kSinS); ++j)
      p = m.fma(p, u, pick(m.f(c::kCosC[j]), m.f(c::kSinS[j])));
    llvm::Value *tail = m.fma(pick(uu, b.CreateFMul(r.hi, u)), p, pick(cos_lo, sin_lo));
    tail = pick(b.CreateFAdd(w_err, tail), tail);
    v = b.CreateFAdd(pick(w, r.hi), tail);
    llvm::Value *sign = b.CreateShl(b.CreateAnd(quadrant, m.i(2)), m.i(62));
    v = m.from_bits(b.CreateXor(m.bits(v), sign));
  }
  if (fn == Trig::Cos) return v;
  llvm::Value *tiny =
      b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), m.f(0x1p-27));
  return b.CreateSelect(tiny, x, v);
}

} // namespace

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
  return eval_trig_f64(m, r, k, x, fn);
}

namespace {

/// 2/π in binary, 64 bits a word, most significant first: 2/π = Σ kTwoOverPiBits[j] 2^(-64(j+1)).
/// 20 words reach the bits every finite double needs (below).
constexpr uint64_t kTwoOverPiBits[20] = {
    0xa2f9836e4e441529, 0xfc2757d1f534ddc0, 0xdb6295993c439041, 0xfe5163abdebbc561,
    0xb7246e3a424dd2e0, 0x06492eea09d1921c, 0xfe1deb1cb129a73e, 0xe88235f52ebb4484,
    0xe99c7026b45f7e41, 0x3991d639835339f4, 0x9c845f8bbdf9283b, 0x1ff897ffde05980f,
    0xef2f118b5a0a6d1f, 0x6d367ecf27cb09b7, 0x4f463f669e5fea2d, 0x7527bac7ebe5f17b,
    0x3d0739f78a5292ea, 0x6bfb5fb11f8d5d08, 0x56033046fc7b6bab, 0xf0cfbc209af4361d,
};

/// The reduction of a finite double |x| >= 4 (scalar): k and r with x = k π/2 + r, |r| <= π/4,
/// k exact modulo 4 (i64) and r a double-double. With x = M 2^E (M the 53-bit significand),
/// the words of 2/π whose product with x is a multiple of 4 are skipped (j0 of them), and M
/// times the next four words (a 309-bit integer P in six 64-bit limbs) holds x 2/π mod 4 with
/// the binary point at bit 256 - s, s = E - 64 j0 in [-40, 65]: two bits of k above it, 128
/// bits of fraction below (the fraction's error is under 2^-138; the closest a double comes
/// to a multiple of π/2 is about 2^-61 of it). k rounds to nearest: the fraction then is the
/// signed 128-bit number below the point.
std::pair<llvm::Value *, MathIR::Pair> reduce_large(MathIR &m64, llvm::Value *x) {
  llvm::IRBuilder<> &b = m64.builder();
  llvm::Type *i64 = b.getInt64Ty(), *i128 = b.getIntNTy(128);
  llvm::Module *module = b.GetInsertBlock()->getModule();
  const char *table_name = "hg_two_over_pi_bits";
  llvm::GlobalVariable *table = module->getNamedGlobal(table_name);
  if (!table) {
    auto *ty = llvm::ArrayType::get(i64, std::size(kTwoOverPiBits));
    std::vector<llvm::Constant *> words;
    for (uint64_t w : kTwoOverPiBits) words.push_back(llvm::ConstantInt::get(i64, w));
    table = new llvm::GlobalVariable(*module, ty, true, llvm::GlobalValue::InternalLinkage,
                                     llvm::ConstantArray::get(ty, words), table_name);
    table->setAlignment(llvm::Align(8));
  }
  llvm::Value *bits = b.CreateBitCast(x, i64);
  llvm::Value *exponent = b.CreateAnd(b.CreateLShr(bits, 52), 0x7ff);
  llvm::Value *significand =
      b.CreateOr(b.CreateAnd(bits, (uint64_t{1} << 52) - 1), uint64_t{1} << 52);
  llvm::Value *e = b.CreateSub(exponent, llvm::ConstantInt::get(i64, 1075)); // x = M 2^e
  llvm::Value *j0 = b.CreateSelect(b.CreateICmpSLT(e, llvm::ConstantInt::get(i64, 2)),
                                   llvm::ConstantInt::get(i64, 0),
                                   b.CreateLShr(b.CreateSub(e, llvm::ConstantInt::get(i64, 2)), 6));
  llvm::Value *s = b.CreateSub(e, b.CreateShl(j0, 6));
  // P = M (w0 w1 w2 w3), limbs L0 (least significant) .. L5.
  llvm::Value *m128 = b.CreateZExt(significand, i128);
  // In the entry block: a static alloca (NVPTX has no dynamic ones).
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().getFirstInsertionPt());
  llvm::Value *limbs = entry.CreateAlloca(llvm::ArrayType::get(i64, 6));
  auto limb = [&](llvm::Value *index) {
    return b.CreateInBoundsGEP(llvm::ArrayType::get(i64, 6), limbs,
                               {llvm::ConstantInt::get(i64, 0), index});
  };
  llvm::Value *carry = llvm::ConstantInt::get(i128, 0);
  for (int w = 3; w >= 0; --w) {
    llvm::Value *word =
        b.CreateLoad(i64, b.CreateInBoundsGEP(table->getValueType(), table,
                                              {llvm::ConstantInt::get(i64, 0),
                                               b.CreateAdd(j0, llvm::ConstantInt::get(i64, w))}));
    llvm::Value *product = b.CreateMul(m128, b.CreateZExt(word, i128)); // below 2^117
    llvm::Value *sum = b.CreateAdd(carry, product);                     // below 2^118: no overflow
    b.CreateStore(b.CreateTrunc(sum, i64), limb(llvm::ConstantInt::get(i64, 3 - w)));
    carry = b.CreateLShr(sum, 64);
  }
  b.CreateStore(b.CreateTrunc(carry, i64), limb(llvm::ConstantInt::get(i64, 4)));
  b.CreateStore(llvm::ConstantInt::get(i64, 0), limb(llvm::ConstantInt::get(i64, 5)));
  // The 64 bits of P from bit p up.
  auto field = [&](llvm::Value *p) {
    llvm::Value *w = b.CreateLShr(p, 6);
    llvm::Value *lo = b.CreateLoad(i64, limb(w));
    llvm::Value *hi = b.CreateLoad(i64, limb(b.CreateAdd(w, llvm::ConstantInt::get(i64, 1))));
    return b.CreateIntrinsic(llvm::Intrinsic::fshr, {i64}, {hi, lo, b.CreateAnd(p, 63)});
  };
  llvm::Value *point = b.CreateSub(llvm::ConstantInt::get(i64, 256), s);
  llvm::Value *whole = field(point);
  llvm::Value *high = field(b.CreateSub(point, llvm::ConstantInt::get(i64, 64)));
  llvm::Value *low = field(b.CreateSub(point, llvm::ConstantInt::get(i64, 128)));
  // k = the two bits above the point, plus one where the fraction is 1/2 or more.
  llvm::Value *k = b.CreateAdd(whole, b.CreateLShr(high, 63));
  // The fraction f = (high low) as a signed 128-bit number times 2^-128, as hi + lo: high's
  // top 53 bits exactly, its low 11 bits with `low` (rounded once), then normalised.
  llvm::Type *f64 = b.getDoubleTy();
  llvm::Value *top = b.CreateFMul(b.CreateSIToFP(b.CreateAShr(high, 11), f64),
                                  llvm::ConstantFP::get(f64, 0x1p-53));
  llvm::Value *rest =
      b.CreateFAdd(b.CreateFMul(b.CreateUIToFP(b.CreateAnd(high, 0x7ff), f64),
                                llvm::ConstantFP::get(f64, 0x1p-64)),
                   b.CreateFMul(b.CreateUIToFP(low, f64), llvm::ConstantFP::get(f64, 0x1p-128)));
  MathIR::Pair f = m64.two_sum(top, rest);
  // r = f π/2, π/2 as a double-double.
  constexpr double kPiOver2Hi = 0x1.921fb54442d18p0, kPiOver2Lo = 0x1.1a62633145c07p-54;
  MathIR::Pair p = m64.two_prod(f.hi, m64.f(kPiOver2Hi));
  llvm::Value *tail = m64.fma(f.hi, m64.f(kPiOver2Lo), m64.fma(f.lo, m64.f(kPiOver2Hi), p.lo));
  return {k, m64.fast_two_sum(p.hi, tail)};
}

} // namespace

llvm::Value *emit_trig_any(MathIR &m, llvm::Value *x, Trig fn) {
  llvm::IRBuilder<> &b = m.builder();
  const double limit = m.f64() ? cpu_math::f64::kSinCosLimit : cpu_math::f32::kSinCosLimit;
  llvm::Value *small =
      b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), m.f(limit));
  return m.unless_rare(
      small, x,
      [&](llvm::Value *v) { return m.f64() ? emit_trig_f64(m, v, fn) : emit_trig_f32(m, v, fn); },
      [&](llvm::Value *arg) {
        MathIR m64(b, m.target(), b.getDoubleTy());
        llvm::Value *xd = m.f64() ? arg : b.CreateFPExt(arg, b.getDoubleTy());
        llvm::Value *ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, xd);
        auto [k, r] = reduce_large(m64, ax);
        // sin(-x) = -sin x: -x = (-k) π/2 + (-r).
        llvm::Value *negative = b.CreateFCmpOLT(xd, m64.f(0.0));
        k = b.CreateSelect(negative, b.CreateNeg(k), k);
        r = {b.CreateSelect(negative, b.CreateFNeg(r.hi), r.hi),
             b.CreateSelect(negative, b.CreateFNeg(r.lo), r.lo)};
        llvm::Value *v = nullptr;
        if (m.f64()) {
          v = eval_trig_f64(m, r, k, arg, fn);
        } else {
          llvm::Value *hi = b.CreateFPTrunc(r.hi, b.getFloatTy());
          llvm::Value *lo = b.CreateFPTrunc(
              b.CreateFAdd(b.CreateFSub(r.hi, b.CreateFPExt(hi, b.getDoubleTy())), r.lo),
              b.getFloatTy());
          v = eval_trig_f32(m, hi, lo, b.CreateTrunc(k, b.getInt32Ty()), fn);
        }
        // Infinities and NaN: NaN (x - x).
        llvm::Value *finite = b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, arg),
                                              m.f(std::numeric_limits<double>::infinity()));
        return b.CreateSelect(finite, v, b.CreateFSub(arg, arg));
      });
}

} // namespace hologram::codegen::detail
