// Transcendentals (SPEC §3.4 accuracy bounds) for the x86 lowering. f32 exp (and sigmoid,
// built on it) is inline IR (support/exp_f32.h, 1.02 ulp). Other vectors call SLEEF's
// 1-ulp functions (Sleef_<name><f|d><lanes>_u10<sse4|avx2|avx512f>), whose error bound meets
// the SPEC's for f32 (2 and 4 ulp) and f64 (1 ulp of the correctly rounded value): no lane ever
// calls scalar libm inside a vector loop. f32 erf is evaluated in f64 and rounded once (gelu's
// 1 + erf(x) cancels for negative x); rsqrt of f32 likewise; sigmoid is 1/(1+exp(-x)), which
// saturates to exactly 0 and 1. Uniform values call libm once.
#include "lowering.h"

#include "hologram/support/exp_f32.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <iterator>

namespace hologram::codegen::detail {

namespace {

using isa::MathOpcode;

/// The libm / SLEEF base name of a function the lowering calls.
const char *math_name(MathOpcode op) {
  switch (op) {
  case MathOpcode::Exp: return "exp";
  case MathOpcode::Exp2: return "exp2";
  case MathOpcode::Log: return "log";
  case MathOpcode::Log2: return "log2";
  case MathOpcode::Log10: return "log10";
  case MathOpcode::Sin: return "sin";
  case MathOpcode::Cos: return "cos";
  case MathOpcode::Tan: return "tan";
  case MathOpcode::Tanh: return "tanh";
  case MathOpcode::Erf: return "erf";
  case MathOpcode::Pow: return "pow";
  case MathOpcode::Atan2: return "atan2";
  case MathOpcode::Sqrt:
  case MathOpcode::Rsqrt:
  case MathOpcode::Sigmoid: break; // built from LLVM intrinsics and exp (emit_math)
  }
  throw LoweringError("no math library function for this opcode");
}

/// Lanes of one SLEEF call for the element type: a chunk's f32 lanes fill one register of
/// the target (4 SSE, 8 AVX2, 16 AVX-512), so f64 calls take half as many.
unsigned native_lanes(const CpuTarget &t, bool f64) {
  return f64 ? t.width / 2 : t.width;
}

const char *sleef_isa(const CpuTarget &t) {
  return t.width == 16 ? "avx512f" : t.width == 8 ? "avx2" : "sse4";
}

llvm::Value *call_library(llvm::IRBuilder<> &b, const CpuTarget &target, MathOpcode op,
                          llvm::ArrayRef<llvm::Value *> args) {
  llvm::Module &m = *b.GetInsertBlock()->getModule();
  llvm::Type *ty = args[0]->getType();
  llvm::Type *elem = ty->getScalarType();
  const bool f64 = elem->isDoubleTy();
  auto *vty = llvm::dyn_cast<llvm::FixedVectorType>(ty);
  if (!vty) { // a uniform value: one scalar libm call
    std::string base = std::string(math_name(op)) + (f64 ? "" : "f");
    std::vector<llvm::Type *> params(args.size(), elem);
    auto callee = m.getOrInsertFunction(base, llvm::FunctionType::get(elem, params, false));
    auto *call = b.CreateCall(callee, args);
    call->setDoesNotThrow();
    call->setDoesNotAccessMemory();
    return call;
  }
  const unsigned n = native_lanes(target, f64);
  const unsigned width = vty->getNumElements();
  auto *part_ty = llvm::FixedVectorType::get(elem, n);
  std::string name = std::string("Sleef_") + math_name(op) + (f64 ? "d" : "f") + std::to_string(n) +
                     "_u10" + sleef_isa(target);
  std::vector<llvm::Type *> params(args.size(), part_ty);
  auto callee = m.getOrInsertFunction(name, llvm::FunctionType::get(part_ty, params, false));
  llvm::Value *result = llvm::PoisonValue::get(vty);
  for (unsigned first = 0; first < width; first += n) {
    // Lanes [first, first+n) of each argument (padded when the width is smaller than n).
    llvm::SmallVector<int, 16> take;
    for (unsigned i = 0; i < n; ++i)
      take.push_back(first + i < width ? static_cast<int>(first + i) : -1);
    std::vector<llvm::Value *> parts;
    for (auto *a : args) parts.push_back(b.CreateShuffleVector(a, take));
    auto *call = b.CreateCall(callee, parts);
    call->setDoesNotThrow();
    call->setDoesNotAccessMemory();
    // Widen the part back to the full width, then blend it into the result.
    llvm::SmallVector<int, 16> widen(width, -1), blend(width);
    for (unsigned i = 0; i < width; ++i) {
      if (i >= first && i < first + n) widen[i] = static_cast<int>(i - first);
      blend[i] = i >= first && i < first + n ? static_cast<int>(width + i) : static_cast<int>(i);
    }
    llvm::Value *wide = b.CreateShuffleVector(call, widen);
    result = b.CreateShuffleVector(result, wide, blend);
  }
  return result;
}

/// exp of f32 values (scalar or vector) inline: the algorithm and constants of
/// support/exp_f32.h, as straight-line IR that LLVM schedules with the surrounding arithmetic.
/// llvm.fmuladd fuses where the target has FMA. NaN passes the clamps (compare and select)
/// and reaches the polynomial, so it stays NaN.
llvm::Value *emit_exp_f32(llvm::IRBuilder<> &b, const CpuTarget &target, llvm::Value *x) {
  namespace c = exp_f32;
  llvm::Type *ty = x->getType();
  llvm::Type *ity = b.getInt32Ty();
  if (auto *vty = llvm::dyn_cast<llvm::VectorType>(ty)) ity = llvm::VectorType::get(ity, vty);
  auto f = [&](float v) { return llvm::ConstantFP::get(ty, v); };
  auto i = [&](int32_t v) { return llvm::ConstantInt::get(ity, static_cast<uint64_t>(v), true); };
  auto fmuladd = [&](llvm::Value *p, llvm::Value *q, llvm::Value *r) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {ty}, {p, q, r});
  };
  x = b.CreateSelect(b.CreateFCmpOLT(x, f(c::kLowest)), f(c::kLowest), x);
  x = b.CreateSelect(b.CreateFCmpOGT(x, f(c::kHighest)), f(c::kHighest), x);
  llvm::Value *t = fmuladd(x, f(c::kLog2e), f(c::kShifter));
  llvm::Value *kf = b.CreateFSub(t, f(c::kShifter));
  llvm::Value *k = b.CreateSub(b.CreateBitCast(t, ity), b.CreateBitCast(f(c::kShifter), ity));
  llvm::Value *r = fmuladd(b.CreateFNeg(kf), f(c::kLn2Hi), x);
  r = fmuladd(b.CreateFNeg(kf), f(c::kLn2Lo), r);
  llvm::Value *p = f(c::kPoly[0]);
  for (size_t n = 1; n < std::size(c::kPoly); ++n) p = fmuladd(p, r, f(c::kPoly[n]));
  p = fmuladd(p, b.CreateFMul(r, r), r);
  p = b.CreateFAdd(p, f(1.0f));
  // AVX-512: p·2^k in one vscalefps, rounded once (subnormal results included).
  auto *vty = llvm::dyn_cast<llvm::FixedVectorType>(ty);
  if (target.width == 16 && vty && vty->getNumElements() == 16)
    return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
                             {p, kf, p, b.getInt16(0xffff), b.getInt32(4)});
  // Otherwise 2^k as two exact powers of two, so a subnormal result is rounded once.
  llvm::Value *k1 = b.CreateAShr(k, i(1));
  llvm::Value *k2 = b.CreateSub(k, k1);
  auto pow2 = [&](llvm::Value *e) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, i(127)), i(23)), ty);
  };
  return b.CreateFMul(b.CreateFMul(p, pow2(k1)), pow2(k2));
}

/// exp of `x`: inline for f32, the library for f64.
llvm::Value *emit_exp(llvm::IRBuilder<> &b, const CpuTarget &target, llvm::Value *x) {
  if (x->getType()->getScalarType()->isFloatTy()) return emit_exp_f32(b, target, x);
  return call_library(b, target, MathOpcode::Exp, {x});
}

} // namespace

llvm::Value *emit_math(llvm::IRBuilder<> &b, const CpuTarget &target, MathOpcode op,
                       llvm::ArrayRef<llvm::Value *> args) {
  llvm::Type *ty = args[0]->getType();
  llvm::Value *x = args[0];
  switch (op) {
  case MathOpcode::Sqrt: return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
  case MathOpcode::Rsqrt: {
    if (ty->getScalarType()->isFloatTy()) {
      llvm::Type *wide = ty->isVectorTy() ? llvm::VectorType::get(b.getDoubleTy(),
                                                                  llvm::cast<llvm::VectorType>(ty))
                                          : b.getDoubleTy();
      llvm::Value *d = b.CreateFPExt(x, wide);
      llvm::Value *r = b.CreateFDiv(llvm::ConstantFP::get(wide, 1.0),
                                    b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, d));
      return b.CreateFPTrunc(r, ty);
    }
    return b.CreateFDiv(llvm::ConstantFP::get(ty, 1.0),
                        b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
  }
  case MathOpcode::Sigmoid: {
    llvm::Value *e = emit_exp(b, target, b.CreateFNeg(x));
    return b.CreateFDiv(llvm::ConstantFP::get(ty, 1.0),
                        b.CreateFAdd(llvm::ConstantFP::get(ty, 1.0), e));
  }
  case MathOpcode::Erf:
    if (ty->getScalarType()->isFloatTy()) {
      // gelu's 1 + erf(x) cancels for negative x: erf of f32 is computed in f64 and rounded
      // once, so the sum keeps its relative accuracy (as the interpreter's does).
      llvm::Type *wide = ty->isVectorTy() ? llvm::VectorType::get(b.getDoubleTy(),
                                                                  llvm::cast<llvm::VectorType>(ty))
                                          : b.getDoubleTy();
      return b.CreateFPTrunc(call_library(b, target, op, {b.CreateFPExt(x, wide)}), ty);
    }
    return call_library(b, target, op, args);
  case MathOpcode::Exp: return emit_exp(b, target, x);
  case MathOpcode::Exp2:
  case MathOpcode::Log:
  case MathOpcode::Log2:
  case MathOpcode::Log10:
  case MathOpcode::Sin:
  case MathOpcode::Cos:
  case MathOpcode::Tan:
  case MathOpcode::Tanh:
  case MathOpcode::Pow:
  case MathOpcode::Atan2: return call_library(b, target, op, args);
  }
  throw LoweringError("unhandled math opcode");
}

} // namespace hologram::codegen::detail
