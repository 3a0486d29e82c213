// MathIR: the vocabulary of the x86 lowering's inline transcendentals (math.cpp,
// math_trig.cpp): straight-line IR over one floating type and the integers of its width,
// with the double-double steps the f64 functions need.
#pragma once

#include "lowering.h"

#include "hologram/support/cpu_math.h"
#include "hologram/support/exp_f32.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/TargetParser/Triple.h>

#include <utility>
#include <vector>

namespace hologram::codegen::detail {

/// Straight-line IR over one floating type (f32 or f64, scalar or vector) and the integers of
/// its width: the vocabulary of the inline functions below. llvm.fmuladd fuses where the target
/// has FMA (x86-64-v3 and up) and is a multiply and an add below that; every algorithm here is
/// accurate either way (the exhaustive sweep runs each level).
class MathIR {
public:
  MathIR(llvm::IRBuilder<> &b, const CpuTarget &target, llvm::Type *ty)
      : b_(b), target_(target), ty_(ty), f64_(ty->getScalarType()->isDoubleTy()) {
    ity_ = f64_ ? b.getInt64Ty() : b.getInt32Ty();
    if (auto *vty = llvm::dyn_cast<llvm::VectorType>(ty)) ity_ = llvm::VectorType::get(ity_, vty);
  }

  bool f64() const { return f64_; }
  const CpuTarget &target() const { return target_; }
  llvm::Value *f(double v) const { return llvm::ConstantFP::get(ty_, v); }
  llvm::Value *i(int64_t v) const {
    return llvm::ConstantInt::get(ity_, static_cast<uint64_t>(v), true);
  }
  llvm::Value *fma(llvm::Value *p, llvm::Value *q, llvm::Value *r) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {ty_}, {p, q, r});
  }
  /// Whether the target has FMA (v3 and v4: CpuTarget's width 8 needs AVX2 and FMA, 16
  /// AVX-512, which implies it), so fma() is fused, rounded once.
  bool fused() const { return target_.width >= 8; }
  /// p q + r rounded once, always (where fused()).
  llvm::Value *fused_fma(llvm::Value *p, llvm::Value *q, llvm::Value *r) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fma, {ty_}, {p, q, r});
  }
  /// c[0] x^(n-1) + ... + c[n-1], Horner's rule.
  template <typename T, size_t N> llvm::Value *horner(llvm::Value *x, const T (&c)[N]) {
    llvm::Value *p = f(c[0]);
    for (size_t n = 1; n < N; ++n) p = fma(p, x, f(c[n]));
    return p;
  }
  /// c[0] x^(n-1) + ... + c[n-1] by Estrin's scheme, given x2 = x²: pairs c[i] x + c[i+1]
  /// (the highest coefficient of an odd count folded in as c[0] x² + the highest pair), then
  /// pairs of those by x², x⁴, ...: about log2(n) multiply-adds in a row where Horner's rule
  /// has n - 1, with as many in all.
  template <typename T, size_t N>
  llvm::Value *estrin(llvm::Value *x, llvm::Value *x2, const T (&c)[N]) {
    static_assert(N >= 3);
    return estrin(x, x2, coefficients(c, N));
  }
  /// The first `count` of the constants `c` as values (estrin of a polynomial's high terms).
  template <typename T, size_t N>
  std::vector<llvm::Value *> coefficients(const T (&c)[N], size_t count) {
    std::vector<llvm::Value *> values;
    for (size_t j = 0; j < count && j < N; ++j) values.push_back(f(c[j]));
    return values;
  }
  /// The same, of coefficients that are values (at least 3).
  llvm::Value *estrin(llvm::Value *x, llvm::Value *x2, const std::vector<llvm::Value *> &c) {
    const size_t n = c.size();
    std::vector<llvm::Value *> terms; // lowest degree first
    for (size_t j = 0; j + 1 < n; j += 2) terms.push_back(fma(c[n - 2 - j], x, c[n - 1 - j]));
    if (n % 2) terms.back() = fma(c[0], x2, terms.back());
    llvm::Value *p = x2;
    while (terms.size() > 1) {
      std::vector<llvm::Value *> next;
      for (size_t i = 0; i < terms.size(); i += 2)
        next.push_back(i + 1 < terms.size() ? fma(terms[i + 1], p, terms[i]) : terms[i]);
      terms.swap(next);
      if (terms.size() > 1) p = b_.CreateFMul(p, p); // the next level's power of x
    }
    return terms[0];
  }
  /// c[0] x^(n-1) + ... + c[n-1] for a short chain with the rounding of Horner's rule where it
  /// weighs most: the terms of high degree by Estrin's scheme (given x2 = x²), the last `tail`
  /// by Horner's rule, so the low terms are rounded once each (Estrin's scheme to the end put
  /// f64 pow 0.05 ulp further off).
  template <typename T, size_t N>
  llvm::Value *estrin_horner(llvm::Value *x, llvm::Value *x2, const T (&c)[N], size_t tail) {
    llvm::Value *p = estrin(x, x2, coefficients(c, N - tail));
    for (size_t j = N - tail; j < N; ++j) p = fma(p, x, f(c[j]));
    return p;
  }
  llvm::Value *bits(llvm::Value *v) { return b_.CreateBitCast(v, ity_); }
  llvm::Value *from_bits(llvm::Value *v) { return b_.CreateBitCast(v, ty_); }
  /// x clamped to [lo, hi]; NaN passes (the compares are ordered).
  llvm::Value *clamp(llvm::Value *x, double lo, double hi) {
    x = b_.CreateSelect(b_.CreateFCmpOLT(x, f(lo)), f(lo), x);
    return b_.CreateSelect(b_.CreateFCmpOGT(x, f(hi)), f(hi), x);
  }
  /// 1.5·2^(mantissa bits): t = x + shifter rounds x to an integer (|x| < 2^22 for f32, 2^51
  /// for f64).
  llvm::Value *shifter() const { return f(f64_ ? cpu_math::f64::kShifter : exp_f32::kShifter); }
  /// ln 2 in two parts (Cody-Waite): a head whose products with the exponents k of exp and log
  /// are exact, and the rest.
  llvm::Value *ln2_hi() const { return f(f64_ ? cpu_math::f64::kLn2Hi : exp_f32::kLn2Hi); }
  llvm::Value *ln2_lo() const { return f(f64_ ? cpu_math::f64::kLn2Lo : exp_f32::kLn2Lo); }
  /// For t = x + shifter: the integer x was rounded to, as a float, and as an integer from t's
  /// low bits.
  std::pair<llvm::Value *, llvm::Value *> round(llvm::Value *t) {
    return {b_.CreateFSub(t, shifter()), b_.CreateSub(bits(t), bits(shifter()))};
  }
  /// A double-double: hi + lo with |lo| at most half an ulp of hi (or unnormalised where said).
  struct Pair {
    llvm::Value *hi, *lo;
  };
  /// a + c exactly (Knuth's TwoSum).
  Pair two_sum(llvm::Value *a, llvm::Value *c) {
    llvm::Value *s = b_.CreateFAdd(a, c);
    llvm::Value *cc = b_.CreateFSub(s, a);
    return {s, b_.CreateFAdd(b_.CreateFSub(a, b_.CreateFSub(s, cc)), b_.CreateFSub(c, cc))};
  }
  /// a + c exactly where |a| >= |c| or a is 0 (Dekker's Fast2Sum).
  Pair fast_two_sum(llvm::Value *a, llvm::Value *c) {
    llvm::Value *s = b_.CreateFAdd(a, c);
    return {s, b_.CreateFSub(c, b_.CreateFSub(s, a))};
  }
  /// a c exactly: the rounded product and its error, by one FMA where fused(), else by
  /// Dekker's splitting (|a|, |c| far from overflow).
  Pair two_prod(llvm::Value *a, llvm::Value *c) {
    llvm::Value *p = b_.CreateFMul(a, c);
    if (fused()) return {p, fused_fma(a, c, b_.CreateFNeg(p))};
    auto split = [&](llvm::Value *v) {
      llvm::Value *t = b_.CreateFMul(v, f(f64_ ? 134217729.0 : 4097.0)); // 2^27 + 1, 2^12 + 1
      llvm::Value *hi = b_.CreateFSub(t, b_.CreateFSub(t, v));
      return Pair{hi, b_.CreateFSub(v, hi)};
    };
    Pair x = split(a), y = split(c);
    llvm::Value *e = b_.CreateFSub(b_.CreateFMul(x.hi, y.hi), p);
    e = b_.CreateFAdd(e, b_.CreateFMul(x.hi, y.lo));
    e = b_.CreateFAdd(e, b_.CreateFMul(x.lo, y.hi));
    return {p, b_.CreateFAdd(e, b_.CreateFMul(x.lo, y.lo))};
  }
  /// n / d for double-doubles, as a pair: the quotient of the heads and its correction from
  /// the exact residual (relative error about 2^-104 plus the low parts' own).
  Pair divide(Pair n, Pair d) {
    llvm::Value *q = b_.CreateFDiv(n.hi, d.hi);
    Pair p = two_prod(q, d.hi);
    llvm::Value *rem = b_.CreateFAdd(b_.CreateFSub(b_.CreateFSub(n.hi, p.hi), p.lo), n.lo);
    rem = b_.CreateFSub(rem, b_.CreateFMul(q, d.lo));
    return {q, b_.CreateFDiv(rem, d.hi)};
  }
  /// n / d for a double n and a double-double d, as a pair, by one division where divide()
  /// takes two: q = n times the reciprocal of d's head (within about an ulp of the quotient),
  /// the residual n - q d (its head by one FMA where fused(), else TwoProd), times the
  /// reciprocal. The pair is unnormalised (|lo| up to about an ulp of q) and within about
  /// 2^-100 of the quotient; for a chain whose length decides (pow, tanh), the division is
  /// the longest step.
  Pair divide_once(llvm::Value *n, Pair d) {
    llvm::Value *inv = b_.CreateFDiv(f(1.0), d.hi);
    llvm::Value *q = b_.CreateFMul(n, inv);
    llvm::Value *nq = b_.CreateFNeg(q);
    llvm::Value *rem = nullptr;
    if (fused()) {
      rem = fused_fma(nq, d.hi, n);
    } else {
      Pair p = two_prod(q, d.hi);
      rem = b_.CreateFSub(b_.CreateFSub(n, p.hi), p.lo);
    }
    return {q, b_.CreateFMul(fma(nq, d.lo, rem), inv)};
  }
  /// a c for double-doubles (relative error about 2^-104).
  Pair mul(Pair a, Pair c) {
    Pair p = two_prod(a.hi, c.hi);
    llvm::Value *cross = b_.CreateFAdd(b_.CreateFMul(a.hi, c.lo), b_.CreateFMul(a.lo, c.hi));
    return fast_two_sum(p.hi, b_.CreateFAdd(p.lo, cross));
  }
  /// a + c for double-doubles whose sum cancels at most a factor of two.
  Pair add(Pair a, Pair c) {
    Pair s = two_sum(a.hi, c.hi);
    return fast_two_sum(s.hi, b_.CreateFAdd(s.lo, b_.CreateFAdd(a.lo, c.lo)));
  }
  /// e^r for |r| <= ln2/2 (slightly beyond is fine): 1 + (r + r² Q(r)), the f32 polynomial of
  /// support/exp_f32.h or the f64 one of support/cpu_math.h.
  /// For f64, e^r + extra (a caller with r + lo passes lo e^r to first order): 1 + r is split
  /// exactly (Fast2Sum) and its rounding error added back with r² Q(r) + extra, so the result
  /// is rounded about once (under 1 ulp at every level).
  /// `estrin`: Q by Estrin's scheme (f64), for a caller whose chain of dependent operations
  /// decides its speed more than the count of operations does (pow, tanh).
  llvm::Value *exp_reduced(llvm::Value *r, llvm::Value *extra = nullptr, bool estrin = false) {
    if (!f64_) return b_.CreateFAdd(fma(horner(r, exp_f32::kPoly), b_.CreateFMul(r, r), r), f(1.0));
    Pair e = exp_reduced_pair(r, extra, estrin);
    return b_.CreateFAdd(e.hi, e.lo);
  }
  /// e^(r + extra) of f64 as an unnormalised pair: 1 + r rounded, and its error plus the rest.
  Pair exp_reduced_pair(llvm::Value *r, llvm::Value *extra = nullptr, bool estrin = false) {
    const auto &q = cpu_math::f64::kExpQ;
    llvm::Value *r2 = b_.CreateFMul(r, r);
    llvm::Value *poly = estrin ? estrin_horner(r, r2, q, 3) : horner(r, q);
    llvm::Value *t = fma(poly, r2, extra ? extra : f(0.0));
    llvm::Value *s = b_.CreateFAdd(f(1.0), r);
    llvm::Value *lost = b_.CreateFAdd(b_.CreateFSub(f(1.0), s), r);
    return {s, b_.CreateFAdd(lost, t)};
  }
  /// 2^e for an integer e in the normal exponent range, exactly.
  llvm::Value *pow2(llvm::Value *e) {
    return from_bits(b_.CreateShl(b_.CreateAdd(e, i(f64_ ? 1023 : 127)), i(f64_ ? 52 : 23)));
  }
  /// p·2^k for k as a float (kf) and an integer, |k| at most twice the largest exponent,
  /// rounded once: results in the subnormal range round once to the nearest subnormal.
  llvm::Value *scale(llvm::Value *p, llvm::Value *kf, llvm::Value *k) {
    auto *vty = llvm::dyn_cast<llvm::FixedVectorType>(ty_);
    if (!f64_ && target_.width == 16 && vty && vty->getNumElements() == 16) // AVX-512: vscalefps
      return b_.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
                                {p, kf, p, b_.getInt16(0xffff), b_.getInt32(4)});
    // 2^k as two exact powers of two.
    llvm::Value *k1 = b_.CreateAShr(k, i(1));
    llvm::Value *k2 = b_.CreateSub(k, k1);
    return b_.CreateFMul(b_.CreateFMul(p, pow2(k1)), pow2(k2));
  }
  /// The Cody-Waite reduction of exp: k = round(x log2 e) (as a float and an integer),
  /// head = x - k ln 2's head (exact) and r = head - k ln 2's rest (rounded).
  struct ExpReduced {
    llvm::Value *kf, *k, *head, *r;
  };
  ExpReduced exp_reduce(llvm::Value *x) {
    auto [kf, k] = round(fma(x, f(f64_ ? cpu_math::f64::kLog2e : exp_f32::kLog2e), shifter()));
    llvm::Value *nk = b_.CreateFNeg(kf);
    llvm::Value *head = fma(nk, ln2_hi(), x);
    return {kf, k, head, fma(nk, ln2_lo(), head)};
  }
  /// exp's reduction where 2^k is a normal number (k + bias within [1, 2 bias]): r as in
  /// exp_reduce, and 2^k. With the bias added to the shifter, x log2 e + shifter + bias rounds
  /// to the same integer k and leaves k + bias in the low bits of the sum's representation,
  /// from which one shift makes 2^k (the shifter's bits shift out): no integer add, and one
  /// constant fewer in a loop short of vector registers.
  std::pair<llvm::Value *, llvm::Value *> exp_reduce_normal(llvm::Value *x) {
    const double biased = f64_ ? cpu_math::f64::kShifter + 1023 : exp_f32::kShifter + 127;
    llvm::Value *t = fma(x, f(f64_ ? cpu_math::f64::kLog2e : exp_f32::kLog2e), f(biased));
    llvm::Value *nk = b_.CreateFNeg(b_.CreateFSub(t, f(biased)));
    llvm::Value *r = fma(nk, ln2_lo(), fma(nk, ln2_hi(), x));
    return {r, from_bits(b_.CreateShl(bits(t), i(f64_ ? 52 : 23)))};
  }
  llvm::IRBuilder<> &builder() { return b_; }
  llvm::Type *type() const { return ty_; }

  /// Whether x is a positive, finite, normal number (every lane of a vector).
  llvm::Value *all_positive_normal(llvm::Value *x) {
    const int64_t min_normal = f64_ ? 0x0010000000000000 : 0x00800000;
    const int64_t inf = f64_ ? 0x7ff0000000000000 : 0x7f800000;
    // bits - min_normal, unsigned, is below inf - min_normal exactly for those.
    return all(b_.CreateICmpULT(b_.CreateSub(bits(x), i(min_normal)), i(inf - min_normal)));
  }
  /// Whether `test` holds in every lane (a scalar as it is).
  llvm::Value *all(llvm::Value *test) {
    return test->getType()->isVectorTy() ? b_.CreateAndReduce(test) : test;
  }
  /// `usual(x)` when `test` holds, else `rare(x)`: a branch around the code for inputs that
  /// need more care (special values, subnormals), which a chunk almost never has. The builder
  /// continues in the join block. On x86 the rare code is a function of its own (rare_call),
  /// so that a loop of chunks holds no register for it.
  template <typename Usual, typename Rare>
  llvm::Value *unless_rare(llvm::Value *test, llvm::Value *x, Usual &&usual, Rare &&rare) {
    llvm::Function *fn = b_.GetInsertBlock()->getParent();
    llvm::LLVMContext &c = b_.getContext();
    auto *usual_bb = llvm::BasicBlock::Create(c, "math.usual", fn);
    auto *rare_bb = llvm::BasicBlock::Create(c, "math.rare", fn);
    auto *done = llvm::BasicBlock::Create(c, "math.done", fn);
    b_.CreateCondBr(test, usual_bb, rare_bb, llvm::MDBuilder(c).createLikelyBranchWeights());
    b_.SetInsertPoint(usual_bb);
    llvm::Value *u = usual(x);
    llvm::BasicBlock *usual_end = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(rare_bb);
    const bool x86 = llvm::Triple(fn->getParent()->getTargetTriple()).isX86();
    llvm::Value *r = x86 ? rare_call(x, rare) : rare(x);
    llvm::BasicBlock *rare_end = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    llvm::PHINode *phi = b_.CreatePHI(ty_, 2);
    phi->addIncoming(u, usual_end);
    phi->addIncoming(r, rare_end);
    return phi;
  }

  /// rare(x) computed by a call to a cold_function (lowering.h). Inline, the rare code's own
  /// constants and temporaries competed for the 16 vector registers with the usual path's
  /// across the whole loop of chunks, and the allocator reloaded the usual path's constants
  /// from memory in every chunk (exp at v3: up to eight broadcasts a chunk of 16 lanes;
  /// docs/design.md). The result comes back through a stack slot, so that no return register
  /// needs an exception to the convention.
  template <typename Rare> llvm::Value *rare_call(llvm::Value *x, Rare &&rare) {
    llvm::Function *parent = b_.GetInsertBlock()->getParent();
    auto *fty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), x->getType()}, false);
    llvm::Type *result_ty = nullptr;
    llvm::Function *fn = cold_function(b_, *parent->getParent(), parent->getName() + ".rare", fty,
                                       [&](llvm::Function *f) {
                                         llvm::Value *r = rare(f->getArg(1));
                                         result_ty = r->getType();
                                         b_.CreateStore(r, f->getArg(0));
                                         b_.CreateRetVoid();
                                       });
    llvm::IRBuilder<> entry(&parent->getEntryBlock(), parent->getEntryBlock().begin());
    llvm::AllocaInst *slot = entry.CreateAlloca(result_ty, nullptr, "math.rare.result");
    llvm::CallInst *call = b_.CreateCall(fn, {slot, x});
    call->setCallingConv(llvm::CallingConv::PreserveAll);
    return b_.CreateLoad(result_ty, slot);
  }

private:
  llvm::IRBuilder<> &b_;
  const CpuTarget &target_;
  llvm::Type *ty_;
  llvm::Type *ity_;
  bool f64_;
};

/// Which of sin, cos and tan (math_trig.cpp).
enum class Trig { Sin, Cos, Tan };

/// sin, cos or tan of f32 for |x| below cpu_math::f32::kSinCosLimit.
llvm::Value *emit_trig_f32(MathIR &m, llvm::Value *x, Trig fn);
/// sin, cos or tan of f64 for |x| below cpu_math::f64::kSinCosLimit.
llvm::Value *emit_trig_f64(MathIR &m, llvm::Value *x, Trig fn);
/// sin, cos or tan of a scalar f32 or f64 of any value without a library call (the PTX
/// lowering): inline below the limit, beyond it after a Payne–Hanek reduction by 2/π to 256
/// bits; infinities and NaN give NaN.
llvm::Value *emit_trig_any(MathIR &m, llvm::Value *x, Trig fn);

} // namespace hologram::codegen::detail
