// See value_ops.h.
#include "value_ops.h"

#include "lowering.h"

#include "hologram/support/unreachable.h"

#include <llvm/IR/Intrinsics.h>

namespace hologram::codegen::detail {

using isa::Type;
using llvm::Value;

namespace {
/// Registers of f16/bf16 hold their storage bits: only f32 and f64 are floating values.
bool is_fp(Type t) {
  return t == Type::F32 || t == Type::F64;
}
} // namespace

llvm::Type *ValueOps::scalar_type(Type t) {
  switch (t) {
  case Type::I8:
  case Type::U8: return b_.getInt8Ty();
  case Type::I16:
  case Type::U16:
  case Type::F16:
  case Type::BF16: return b_.getInt16Ty();
  case Type::I32:
  case Type::U32: return b_.getInt32Ty();
  case Type::I64:
  case Type::U64: return b_.getInt64Ty();
  case Type::F32: return b_.getFloatTy();
  case Type::F64: return b_.getDoubleTy();
  case Type::Pred: return b_.getInt1Ty();
  case Type::None:
    throw LoweringError("no LLVM type for ISA type " + std::string(isa::type_name(t)));
  }
  unreachable_enum("Type");
}

Value *ValueOps::constant(Type t, uint64_t bits) {
  llvm::LLVMContext &c = b_.getContext();
  if (t == Type::F32)
    return llvm::ConstantFP::get(
        c, llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(32, bits & 0xffffffffu)));
  if (t == Type::F64)
    return llvm::ConstantFP::get(c,
                                 llvm::APFloat(llvm::APFloat::IEEEdouble(), llvm::APInt(64, bits)));
  return llvm::ConstantInt::get(scalar_type(t), bits);
}

llvm::Type *ValueOps::shaped(llvm::Type *elem, Value *like) {
  if (auto *vty = llvm::dyn_cast<llvm::VectorType>(like->getType()))
    return llvm::VectorType::get(elem, vty);
  return elem;
}

Value *ValueOps::binary(BinaryOp op, Type t, Value *x, Value *y) {
  const bool fp = is_fp(t);
  if ((op == BinaryOp::Div || op == BinaryOp::Rem) && !fp) {
    // Division by zero gives 0 and MIN / -1 gives MIN (MIN rem -1 gives 0): the divisor is
    // replaced by 1 where the hardware would trap, and the quotient by 0 where it was zero.
    llvm::Type *ty = x->getType();
    Value *zero = llvm::Constant::getNullValue(ty), *one = llvm::ConstantInt::get(ty, 1);
    Value *by_zero = b_.CreateICmpEQ(y, zero);
    Value *d = b_.CreateSelect(by_zero, one, y);
    const bool s = isa::is_signed_int(t);
    if (s) {
      unsigned bits = ty->getScalarSizeInBits();
      Value *min = llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(bits));
      Value *overflow = b_.CreateAnd(b_.CreateICmpEQ(x, min),
                                     b_.CreateICmpEQ(d, llvm::Constant::getAllOnesValue(ty)));
      d = b_.CreateSelect(overflow, one, d);
    }
    Value *q = op == BinaryOp::Div ? (s ? b_.CreateSDiv(x, d) : b_.CreateUDiv(x, d))
                                   : (s ? b_.CreateSRem(x, d) : b_.CreateURem(x, d));
    return b_.CreateSelect(by_zero, zero, q);
  }
  switch (op) {
  case BinaryOp::Add: return fp ? b_.CreateFAdd(x, y) : b_.CreateAdd(x, y);
  case BinaryOp::Sub: return fp ? b_.CreateFSub(x, y) : b_.CreateSub(x, y);
  case BinaryOp::Mul: return fp ? b_.CreateFMul(x, y) : b_.CreateMul(x, y);
  case BinaryOp::Div: return b_.CreateFDiv(x, y);
  case BinaryOp::Rem: return fmod(x, y);
  case BinaryOp::And: return b_.CreateAnd(x, y);
  case BinaryOp::Or: return b_.CreateOr(x, y);
  case BinaryOp::Xor: return b_.CreateXor(x, y);
  }
  unreachable_enum("BinaryOp");
}

std::pair<Value *, Value *> ValueOps::split_float(Value *magnitude, unsigned mant) {
  llvm::Type *ity = magnitude->getType();
  const uint64_t hidden = uint64_t{1} << mant;
  Value *e = b_.CreateLShr(magnitude, llvm::ConstantInt::get(ity, mant));
  Value *sub = b_.CreateICmpEQ(e, llvm::Constant::getNullValue(ity));
  Value *frac = b_.CreateAnd(magnitude, llvm::ConstantInt::get(ity, hidden - 1));
  return {b_.CreateSelect(sub, llvm::ConstantInt::get(ity, 1), e),
          b_.CreateSelect(sub, frac, b_.CreateOr(frac, llvm::ConstantInt::get(ity, hidden)))};
}

Value *ValueOps::fold(isa::ReduceOp op, Type t, Value *acc, Value *x) {
  switch (op) {
  case isa::ReduceOp::Add: return binary(BinaryOp::Add, t, acc, x);
  case isa::ReduceOp::Mul: return binary(BinaryOp::Mul, t, acc, x);
  case isa::ReduceOp::Min: return min_max(true, t, acc, x);
  case isa::ReduceOp::Max: return min_max(false, t, acc, x);
  }
  unreachable_enum("ReduceOp");
}

Value *ValueOps::fmod(Value *x, Value *y) {
  llvm::Type *fty = x->getType();
  const bool d = fty->getScalarType()->isDoubleTy();
  const unsigned w = d ? 64 : 32, m = d ? 52 : 23;
  llvm::Type *ity = shaped(b_.getIntNTy(w), x), *i64 = shaped(b_.getInt64Ty(), x);
  auto k = [&](uint64_t v) { return llvm::ConstantInt::get(ity, v); };
  auto k64 = [&](uint64_t v) { return llvm::ConstantInt::get(i64, v); };
  // Shift amounts are taken mod the width: a lane whose select drops the result still computes
  // a value, not poison.
  auto shl = [&](Value *v, Value *n) { return b_.CreateShl(v, b_.CreateAnd(n, k(w - 1))); };
  const uint64_t sign_bit = uint64_t{1} << (w - 1), inf = d ? 0x7ff0000000000000 : 0x7f800000;
  const uint64_t frac_mask = (uint64_t{1} << m) - 1;
  Value *ux = b_.CreateBitCast(x, ity), *uy = b_.CreateBitCast(y, ity);
  Value *sign = b_.CreateAnd(ux, k(sign_bit));
  Value *ax = b_.CreateAnd(ux, k(sign_bit - 1)), *ay = b_.CreateAnd(uy, k(sign_bit - 1));
  // NaN for a NaN, an infinite x or a zero y (an input NaN, quieted); x itself where |x| < |y|
  // (an infinite y too).
  Value *x_nan = b_.CreateICmpUGT(ax, k(inf)), *y_nan = b_.CreateICmpUGT(ay, k(inf));
  Value *nan = b_.CreateOr(b_.CreateOr(b_.CreateICmpEQ(ax, k(inf)), x_nan),
                           b_.CreateOr(y_nan, b_.CreateICmpEQ(ay, k(0))));
  const uint64_t quiet = uint64_t{1} << (m - 1);
  Value *nan_bits =
      b_.CreateSelect(x_nan, b_.CreateOr(ux, k(quiet)),
                      b_.CreateSelect(y_nan, b_.CreateOr(uy, k(quiet)), k(inf | quiet)));
  Value *keep = b_.CreateOr(nan, b_.CreateICmpULT(ax, ay));
  auto [ex, mx] = split_float(ax, m);
  auto [ey, my] = split_float(ay, m);
  // The significands' remainder mx 2^(ex - ey) mod my, by steps of as many bits as a u64
  // holds beside my (40 for f32, 11 for f64) while any lane has some left.
  Value *divisor = b_.CreateSelect(keep, k64(1), b_.CreateZExtOrBitCast(my, i64));
  Value *r0 = b_.CreateURem(b_.CreateZExtOrBitCast(mx, i64), divisor);
  Value *n0 = b_.CreateSelect(keep, k64(0), b_.CreateZExtOrBitCast(b_.CreateSub(ex, ey), i64));
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  llvm::LLVMContext &c = b_.getContext();
  auto *loop = llvm::BasicBlock::Create(c, "fmod.loop", pre->getParent());
  auto *done = llvm::BasicBlock::Create(c, "fmod.done", pre->getParent());
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode *r = b_.CreatePHI(i64, 2, "fmod.r"), *n = b_.CreatePHI(i64, 2, "fmod.n");
  Value *s = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, n, k64(d ? 11 : 40));
  Value *r1 = b_.CreateURem(b_.CreateShl(r, s), divisor);
  Value *n1 = b_.CreateSub(n, s);
  Value *more = b_.CreateICmpNE(n1, k64(0));
  if (more->getType()->isVectorTy()) more = b_.CreateOrReduce(more);
  r->addIncoming(r0, pre);
  r->addIncoming(r1, loop);
  n->addIncoming(n0, pre);
  n->addIncoming(n1, loop);
  b_.CreateCondBr(more, loop, done);
  b_.SetInsertPoint(done);
  // Rebuilt: rem 2^(ey - bias - m), normal where its top bit lands on an exponent of 1 or more.
  Value *rem = b_.CreateTruncOrBitCast(r1, ity);
  Value *top =
      b_.CreateSub(k(w - 1), b_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, rem, b_.getFalse()));
  Value *biased = b_.CreateSub(b_.CreateAdd(ey, top), k(m)); // signed: top <= m, ey >= 1
  Value *frac = b_.CreateAnd(shl(rem, b_.CreateSub(k(m), top)), k(frac_mask));
  Value *normal_bits = b_.CreateAdd(shl(biased, k(m)), frac);
  Value *sub_bits = shl(rem, b_.CreateSub(ey, k(1)));
  Value *bits =
      b_.CreateSelect(b_.CreateICmpEQ(rem, k(0)), k(0),
                      b_.CreateSelect(b_.CreateICmpSGT(biased, k(0)), normal_bits, sub_bits));
  Value *result = b_.CreateSelect(keep, ux, b_.CreateOr(bits, sign));
  return b_.CreateBitCast(b_.CreateSelect(nan, nan_bits, result), fty);
}

Value *ValueOps::min_max(bool is_min, Type t, Value *x, Value *y) {
  if (!is_fp(t)) {
    auto id = isa::is_signed_int(t) ? (is_min ? llvm::Intrinsic::smin : llvm::Intrinsic::smax)
                                    : (is_min ? llvm::Intrinsic::umin : llvm::Intrinsic::umax);
    return b_.CreateBinaryIntrinsic(id, x, y);
  }
  // IEEE minNum/maxNum, with -0 below +0: for equal operands combine the sign bits.
  Value *r =
      b_.CreateBinaryIntrinsic(is_min ? llvm::Intrinsic::minnum : llvm::Intrinsic::maxnum, x, y);
  llvm::Type *ty = x->getType();
  llvm::Type *ity = shaped(b_.getIntNTy(ty->getScalarSizeInBits()), x);
  Value *xa = b_.CreateBitCast(x, ity), *xb = b_.CreateBitCast(y, ity);
  Value *both = b_.CreateBitCast(is_min ? b_.CreateOr(xa, xb) : b_.CreateAnd(xa, xb), ty);
  return b_.CreateSelect(b_.CreateFCmpOEQ(x, y), both, r);
}

Value *ValueOps::compare(isa::CmpCode cc, Type t, Value *x, Value *y) {
  using P = llvm::CmpInst::Predicate;
  P p;
  if (is_fp(t)) {
    static constexpr P kFloat[] = {P::FCMP_OEQ, P::FCMP_ONE, P::FCMP_OLT, P::FCMP_OLE,
                                   P::FCMP_OGT, P::FCMP_OGE, P::FCMP_UEQ, P::FCMP_UNE,
                                   P::FCMP_ULT, P::FCMP_ULE, P::FCMP_UGT, P::FCMP_UGE};
    p = kFloat[static_cast<int>(cc)];
  } else {
    const bool s = isa::is_signed_int(t);
    static constexpr P kInt[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_ULT,
                                 P::ICMP_ULE, P::ICMP_UGT, P::ICMP_UGE};
    static constexpr P kSigned[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_SLT,
                                    P::ICMP_SLE, P::ICMP_SGT, P::ICMP_SGE};
    p = (s ? kSigned : kInt)[static_cast<int>(cc) % 6];
  }
  return b_.CreateCmp(p, x, y);
}

Value *ValueOps::shift(bool left, Type t, Value *x, Value *amount) {
  const unsigned bits = isa::type_size(t) * 8;
  Value *s = b_.CreateAnd(amount, llvm::ConstantInt::get(amount->getType(), bits - 1));
  s = b_.CreateZExtOrTrunc(s, x->getType());
  if (left) return b_.CreateShl(x, s);
  return isa::is_signed_int(t) ? b_.CreateAShr(x, s) : b_.CreateLShr(x, s);
}

Value *ValueOps::abs(Type t, Value *x) {
  if (is_fp(t)) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  if (!isa::is_signed_int(t)) return x;
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());
}

Value *ValueOps::neg(Type t, Value *x) {
  return is_fp(t) ? b_.CreateFNeg(x) : b_.CreateNeg(x);
}

Value *ValueOps::sign(Type t, Value *x) {
  llvm::Type *ty = x->getType();
  Value *zero = llvm::Constant::getNullValue(ty);
  if (is_fp(t)) {
    Value *pos = b_.CreateFCmpOGT(x, zero), *neg = b_.CreateFCmpOLT(x, zero);
    return b_.CreateSelect(pos, llvm::ConstantFP::get(ty, 1.0),
                           b_.CreateSelect(neg, llvm::ConstantFP::get(ty, -1.0), x));
  }
  Value *one = llvm::ConstantInt::get(ty, 1);
  if (!isa::is_signed_int(t)) return b_.CreateSelect(b_.CreateICmpNE(x, zero), one, zero);
  return b_.CreateSelect(
      b_.CreateICmpSGT(x, zero), one,
      b_.CreateSelect(b_.CreateICmpSLT(x, zero), llvm::ConstantInt::getSigned(ty, -1), zero));
}

Value *ValueOps::rcp(Value *x) {
  return b_.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), x);
}

Value *ValueOps::mad(Type t, Value *x, Value *y, Value *z) {
  if (is_fp(t)) return b_.CreateFAdd(b_.CreateFMul(x, y), z); // two roundings
  return b_.CreateAdd(b_.CreateMul(x, y), z);
}

Value *ValueOps::fma(bool subtract, Value *x, Value *y, Value *z) {
  Value *c = subtract ? b_.CreateFNeg(z) : z;
  return b_.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, c});
}

Value *ValueOps::lerp(Value *a, Value *b, Value *t) {
  return b_.CreateFAdd(a, b_.CreateFMul(b_.CreateFSub(b, a), t));
}

Value *ValueOps::atomic(bool cas, isa::AtomicOp aop, Type t, Value *p, Value *val, Value *cmp) {
  const auto relaxed = llvm::AtomicOrdering::Monotonic;
  if (cas)
    return b_.CreateExtractValue(
        b_.CreateAtomicCmpXchg(p, val, cmp, llvm::MaybeAlign(), relaxed, relaxed), 0);
  if (is_fp(t) && (aop == isa::AtomicOp::Min || aop == isa::AtomicOp::Max)) {
    // No hardware form with minNum semantics: a compare-exchange loop.
    llvm::Type *ty = val->getType();
    llvm::Type *ity = b_.getIntNTy(isa::type_size(t) * 8);
    llvm::Function *fn = b_.GetInsertBlock()->getParent();
    llvm::LLVMContext &c = b_.getContext();
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    llvm::BasicBlock *loop = llvm::BasicBlock::Create(c, "atom.loop", fn);
    llvm::BasicBlock *done = llvm::BasicBlock::Create(c, "atom.done", fn);
    Value *init = b_.CreateAlignedLoad(ity, p, llvm::Align(isa::type_size(t)));
    llvm::cast<llvm::LoadInst>(init)->setAtomic(relaxed);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    auto *cur = b_.CreatePHI(ity, 2);
    cur->addIncoming(init, pre);
    Value *next = min_max(aop == isa::AtomicOp::Min, t, b_.CreateBitCast(cur, ty), val);
    auto *x = b_.CreateAtomicCmpXchg(p, cur, b_.CreateBitCast(next, ity), llvm::MaybeAlign(),
                                     relaxed, relaxed);
    cur->addIncoming(b_.CreateExtractValue(x, 0), loop);
    b_.CreateCondBr(b_.CreateExtractValue(x, 1), done, loop);
    b_.SetInsertPoint(done);
    return b_.CreateBitCast(cur, ty);
  }
  using B = llvm::AtomicRMWInst::BinOp;
  B bop = B::Xchg;
  switch (aop) {
  case isa::AtomicOp::Add: bop = is_fp(t) ? B::FAdd : B::Add; break;
  case isa::AtomicOp::Min: bop = isa::is_signed_int(t) ? B::Min : B::UMin; break;
  case isa::AtomicOp::Max: bop = isa::is_signed_int(t) ? B::Max : B::UMax; break;
  case isa::AtomicOp::And: bop = B::And; break;
  case isa::AtomicOp::Or: bop = B::Or; break;
  case isa::AtomicOp::Xor: bop = B::Xor; break;
  case isa::AtomicOp::Xchg: bop = B::Xchg; break;
  }
  return b_.CreateAtomicRMW(bop, p, val, llvm::MaybeAlign(), relaxed);
}

Value *ValueOps::narrow_exact(Value *x, Type dst, Type src) {
  llvm::Type *i64 = shaped(b_.getInt64Ty(), x);
  auto k = [&](uint64_t v) { return llvm::ConstantInt::get(i64, v); };
  auto ks = [&](int64_t v) { return llvm::ConstantInt::get(i64, static_cast<uint64_t>(v), true); };
  // Shift amounts are taken mod 64: a lane whose select drops the result still computes a
  // value, not poison.
  auto shl = [&](Value *v, Value *n) { return b_.CreateShl(v, b_.CreateAnd(n, k(63))); };
  auto lshr = [&](Value *v, Value *n) { return b_.CreateLShr(v, b_.CreateAnd(n, k(63))); };
  // The source as sign, magnitude m and exponent e: |x| = m 2^e.
  Value *sign, *m, *e, *nan = nullptr, *inf = nullptr;
  if (src == Type::F64) {
    Value *u = b_.CreateBitCast(x, i64);
    sign = b_.CreateICmpSLT(u, k(0));
    Value *a = b_.CreateAnd(u, k(~(uint64_t{1} << 63)));
    nan = b_.CreateICmpUGT(a, k(0x7ff0000000000000));
    inf = b_.CreateICmpEQ(a, k(0x7ff0000000000000));
    auto [ex, significand] = split_float(a, 52);
    m = significand;
    e = b_.CreateSub(ex, k(1075));
  } else {
    const bool s = isa::is_signed_int(src);
    Value *v = s ? b_.CreateSExt(x, i64) : b_.CreateZExt(x, i64);
    sign = s ? b_.CreateICmpSLT(v, k(0)) : llvm::Constant::getNullValue(shaped(b_.getInt1Ty(), x));
    m = s ? b_.CreateSelect(sign, b_.CreateNeg(v), v) : v; // MIN's magnitude is 2^63 as a u64
    e = k(0);
  }
  // The result's lowest bit 2^l, l = max(msb + e - (p - 1), lowest) for p bits of precision;
  // bits = (l - lowest) 2^(p - 1) + q then covers subnormal results, a carry to the next
  // binade, and (at or above the infinity's bits) overflow.
  const bool half = dst == Type::F16;
  const int64_t p = half ? 11 : 8, lowest = half ? -24 : -133;
  const uint64_t inf_bits = half ? 0x7c00 : 0x7f80, nan_bits = half ? 0x7e00 : 0x7fc0;
  Value *msb =
      b_.CreateSub(k(63), b_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, m, b_.getFalse()));
  Value *l = b_.CreateAdd(b_.CreateAdd(msb, e), ks(1 - p));
  l = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, l, ks(lowest));
  Value *r = b_.CreateSub(l, e);
  Value *rounds = b_.CreateICmpSGT(r, k(0));
  // Rounding: t = m >> (r - 1) keeps the half bit at its bottom; nothing is left of m where
  // r - 1 >= 64.
  Value *s1 = b_.CreateSub(r, k(1));
  Value *gone = b_.CreateICmpUGE(s1, k(64));
  Value *t = b_.CreateSelect(gone, k(0), lshr(m, s1));
  Value *lost = b_.CreateICmpNE(b_.CreateAnd(m, b_.CreateSub(shl(k(1), s1), k(1))), k(0));
  Value *q = b_.CreateLShr(t, k(1));
  Value *up = b_.CreateAnd(b_.CreateICmpNE(b_.CreateAnd(t, k(1)), k(0)),
                           b_.CreateOr(lost, b_.CreateICmpNE(b_.CreateAnd(q, k(1)), k(0))));
  q = b_.CreateAdd(q, b_.CreateZExt(up, i64));
  q = b_.CreateSelect(rounds, q, shl(m, b_.CreateNeg(r))); // exact: m < 2^p here
  Value *bits = b_.CreateAdd(shl(b_.CreateSub(l, ks(lowest)), k(p - 1)), q);
  bits = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, bits, k(inf_bits));
  bits = b_.CreateSelect(b_.CreateICmpEQ(m, k(0)), k(0), bits);
  if (nan) bits = b_.CreateSelect(nan, k(nan_bits), b_.CreateSelect(inf, k(inf_bits), bits));
  bits = b_.CreateOr(bits, b_.CreateSelect(sign, k(0x8000), k(0)));
  return b_.CreateTrunc(bits, shaped(b_.getInt16Ty(), x));
}

Value *ValueOps::convert(Value *x, Type dst, Type src) {
  if (dst == src) return x;
  // Widen f16/bf16 sources to f32 exactly.
  if (src == Type::F16) {
    Value *h = b_.CreateBitCast(x, shaped(b_.getHalfTy(), x));
    return convert(b_.CreateFPExt(h, shaped(b_.getFloatTy(), x)), dst, Type::F32);
  }
  if (src == Type::BF16) {
    Value *w = b_.CreateShl(b_.CreateZExt(x, shaped(b_.getInt32Ty(), x)), 16);
    return convert(b_.CreateBitCast(w, shaped(b_.getFloatTy(), x)), dst, Type::F32);
  }
  if (dst == Type::F16 || dst == Type::BF16) {
    // Narrow sources that f32 holds exactly convert through f32; the others are rounded once
    // in integers (narrow_exact), as the SPEC requires.
    const bool exact_in_f32 = src == Type::F32 || (!is_fp(src) && isa::type_size(src) <= 2);
    if (!exact_in_f32) return narrow_exact(x, dst, src);
    Value *f = convert(x, Type::F32, src);
    Value *bits = b_.CreateBitCast(f, shaped(b_.getInt32Ty(), f));
    Value *isnan = b_.CreateFCmpUNO(f, f);
    Value *sign = b_.CreateTrunc(b_.CreateLShr(b_.CreateAnd(bits, 0x80000000u), 16),
                                 shaped(b_.getInt16Ty(), f));
    Value *out;
    if (dst == Type::F16) {
      out = b_.CreateBitCast(b_.CreateFPTrunc(f, shaped(b_.getHalfTy(), f)),
                             shaped(b_.getInt16Ty(), f));
      out = b_.CreateSelect(isnan, b_.CreateOr(sign, 0x7e00), out);
    } else { // round to nearest even on the bits
      Value *lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), 1);
      Value *rounded = b_.CreateLShr(
          b_.CreateAdd(bits, b_.CreateAdd(lsb, llvm::ConstantInt::get(bits->getType(), 0x7fff))),
          16);
      out = b_.CreateTrunc(rounded, shaped(b_.getInt16Ty(), f));
      out = b_.CreateSelect(isnan, b_.CreateOr(sign, 0x7fc0), out);
    }
    return out;
  }
  llvm::Type *to = shaped(scalar_type(dst), x);
  const bool from_fp = is_fp(src), to_fp = is_fp(dst);
  if (from_fp && to_fp)
    return isa::type_size(dst) > isa::type_size(src) ? b_.CreateFPExt(x, to)
                                                     : b_.CreateFPTrunc(x, to);
  if (from_fp) { // truncate toward zero, saturate, NaN -> 0
    auto id = isa::is_signed_int(dst) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b_.CreateIntrinsic(id, {to, x->getType()}, {x});
  }
  if (to_fp) return isa::is_signed_int(src) ? b_.CreateSIToFP(x, to) : b_.CreateUIToFP(x, to);
  if (isa::type_size(dst) < isa::type_size(src)) return b_.CreateTrunc(x, to);
  return isa::is_signed_int(src) ? b_.CreateSExt(x, to) : b_.CreateZExt(x, to);
}

} // namespace hologram::codegen::detail
