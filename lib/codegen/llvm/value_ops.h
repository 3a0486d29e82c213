// The semantics of SPEC §3.4 on LLVM values, shared by the x86 lowering (SPMD on SIMD, where a
// value is a scalar for a uniform register or a vector of lanes) and the PTX lowering (SIMT, a
// scalar per thread): every operation here works on scalars and vectors alike. Integer
// division by zero yields 0 and MIN / -1 yields MIN, shift amounts are reduced modulo the
// width, min/max are IEEE minNum/maxNum with -0 below +0, float->int conversions truncate and
// saturate with NaN -> 0, f16/bf16 are their 16 storage bits.
#pragma once

#include "hologram/isa/program.h"

#include <llvm/IR/IRBuilder.h>

#include <utility>

namespace hologram::codegen::detail {

class ValueOps {
public:
  explicit ValueOps(llvm::IRBuilder<> &b) : b_(b) {}

  enum class BinaryOp { Add, Sub, Mul, Div, Rem, And, Or, Xor };

  /// The LLVM scalar type of a register of ISA type t (f16/bf16: their 16 storage bits;
  /// Pred: i1).
  llvm::Type *scalar_type(isa::Type t);
  /// A constant of type t from literal bits.
  llvm::Value *constant(isa::Type t, uint64_t bits);

  /// x op y of type t.
  llvm::Value *binary(BinaryOp op, isa::Type t, llvm::Value *x, llvm::Value *y);
  llvm::Value *min_max(bool is_min, isa::Type t, llvm::Value *x, llvm::Value *y);
  llvm::Value *compare(isa::CmpCode cc, isa::Type t, llvm::Value *x, llvm::Value *y);
  /// shl or shr of x by `amount` (u32) reduced modulo the width.
  llvm::Value *shift(bool left, isa::Type t, llvm::Value *x, llvm::Value *amount);
  /// abs, neg, sign, rcp.
  llvm::Value *abs(isa::Type t, llvm::Value *x);
  llvm::Value *neg(isa::Type t, llvm::Value *x);
  llvm::Value *sign(isa::Type t, llvm::Value *x);
  llvm::Value *rcp(llvm::Value *x);
  /// x * y + z with two roundings for floats (mad), or rounded once (fma; fms subtracts z).
  llvm::Value *mad(isa::Type t, llvm::Value *x, llvm::Value *y, llvm::Value *z);
  llvm::Value *fma(bool subtract, llvm::Value *x, llvm::Value *y, llvm::Value *z);
  llvm::Value *lerp(llvm::Value *a, llvm::Value *b, llvm::Value *t);
  /// acc op x for `reduce` (add, mul, min or max with their rules above).
  llvm::Value *fold(isa::ReduceOp op, isa::Type t, llvm::Value *acc, llvm::Value *x);
  /// Float `rem`: C's fmod, exact, in integer arithmetic (no libm, so x86 and PTX share it):
  /// the significands' remainder mx 2^(ex - ey) mod my in u64 steps (40 bits for f32, 11 for
  /// f64) in a loop that runs while any lane has bits left, then rebuilt with y's exponent.
  /// The builder continues in the loop's exit block.
  llvm::Value *fmod(llvm::Value *x, llvm::Value *y);

  /// The atomic `aop` (or, with `cas`, a compare-exchange of `val` where the memory holds
  /// `cmp`) on the t at `p`, relaxed (monotonic): the value the memory held. Float min and max
  /// are a compare-exchange loop with minNum semantics (no hardware has that form).
  llvm::Value *atomic(bool cas, isa::AtomicOp aop, isa::Type t, llvm::Value *p, llvm::Value *val,
                      llvm::Value *cmp);

  /// x of type src converted to dst.
  llvm::Value *convert(llvm::Value *x, isa::Type dst, isa::Type src);
  /// x (f64, or a 32- or 64-bit integer: a source f32 does not hold exactly) as the 16 bits of
  /// an f16 or bf16, rounded once to nearest even in integer arithmetic (LLVM's own rounds
  /// twice through f32, or calls a libgcc routine): its magnitude m 2^e shifted to the result's
  /// lowest bit with a half bit and a sticky bit; subnormal results, overflow to infinity,
  /// and a NaN as the quiet NaN of x's sign.
  llvm::Value *narrow_exact(llvm::Value *x, isa::Type dst, isa::Type src);

private:
  /// A float's magnitude bits (sign cleared; `mant` fraction bits) as (biased exponent,
  /// significand): the exponent field and the fraction with its hidden bit, or 1 and the
  /// fraction for a subnormal, so that |x| = significand 2^(exponent - bias - mant).
  std::pair<llvm::Value *, llvm::Value *> split_float(llvm::Value *magnitude, unsigned mant);
  /// `elem` in the shape of `like` (a scalar, or a vector of its lanes).
  llvm::Type *shaped(llvm::Type *elem, llvm::Value *like);

  llvm::IRBuilder<> &b_;
};

} // namespace hologram::codegen::detail
