// Transcendentals (SPEC §3.4 accuracy bounds) for the x86 lowering. Inline IR, scheduled with
// the surrounding arithmetic (docs/isa.md "Transcendentals in compiled x86 code"): every function
// of f32 and f64, sin, cos and tan below 4096 (f32) or 2^19 (f64). The constants are
// support/exp_f32.h's and support/cpu_math.h's (scripts/gen-cpu-math.py); scripts/math-sweep.sh
// measures the f32 ones on every input and samples the f64 ones. The f64 functions use
// double-double arithmetic (MathIR's TwoSum, TwoProd, pair products and quotients) where a
// rounding would cost most of the 1-ulp bound. Chunks of sin, cos and tan with a lane beyond the
// limit, an infinity or NaN call SLEEF's 1-ulp functions (Sleef_<name><f|d><lanes>_u10<isa>), a
// uniform one libm once: no lane ever calls scalar libm inside a vector loop. f32 erf is a
// polynomial per interval, its coefficients permuted from tables, where one permute holds a table
// (AVX2, AVX-512), else evaluated in f64 and rounded once; rsqrt of f32 is evaluated in f64;
// sigmoid is 1/(1+exp(-x)), which saturates to exactly 0 and 1.
#include "lowering.h"
#include "math_ir.h"

#include "hologram/support/cpu_math.h"
#include "hologram/support/exp_f32.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

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

/// Entry k mod `entries` of an f32 table, k in the low bits of `index` (integers), by one
/// permute that indexes the whole table: AVX-512's vpermps for 16 lanes of 16 entries, else
/// AVX's vpermilps for each 8 lanes of 4 entries (it permutes within each 128-bit half, so
/// the 4 entries are repeated in both, and reads only the index's two low bits); for a scalar,
/// an element of a constant.
llvm::Value *permute_table(llvm::IRBuilder<> &b, const float *table, unsigned entries,
                           llvm::Value *index) {
  auto *vty = llvm::dyn_cast<llvm::FixedVectorType>(index->getType());
  auto constant = [&](unsigned lanes) {
    std::vector<llvm::Constant *> v;
    for (unsigned i = 0; i < lanes; ++i)
      v.push_back(llvm::ConstantFP::get(b.getFloatTy(), table[i % entries]));
    return llvm::ConstantVector::get(v);
  };
  if (!vty) return b.CreateExtractElement(constant(entries), b.CreateAnd(index, entries - 1));
  const unsigned lanes = vty->getNumElements();
  if (entries == 16)
    return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_permvar_sf_512, {}, {constant(16), index});
  std::vector<llvm::Value *> parts;
  for (unsigned first = 0; first < lanes; first += 8) {
    llvm::SmallVector<int, 8> take;
    for (unsigned i = 0; i < 8; ++i) take.push_back(static_cast<int>(first + i));
    llvm::Value *part = lanes == 8 ? index : b.CreateShuffleVector(index, take);
    parts.push_back(
        b.CreateIntrinsic(llvm::Intrinsic::x86_avx_vpermilvar_ps_256, {}, {constant(8), part}));
  }
  if (parts.size() == 1) return parts[0];
  llvm::SmallVector<int, 16> both;
  for (unsigned i = 0; i < lanes; ++i) both.push_back(static_cast<int>(i));
  return b.CreateShuffleVector(parts[0], parts[1], both);
}

/// Whether f32 exp goes by quarters (emit_exp_quarters): at x86-64-v3, for vectors of one or two
/// AVX registers and for scalars, so that a uniform value and a lane get the same result.
bool exp_by_quarters(MathIR &m, llvm::Type *ty) {
  if (m.f64() || m.target().width != 8 || !m.fused()) return false;
  auto *vty = llvm::dyn_cast<llvm::FixedVectorType>(ty);
  return !vty || vty->getNumElements() == 8 || vty->getNumElements() == 16;
}

/// exp's reduction for a table of 2^(j/parts), j < parts (by quarters, by sixteenths): t =
/// parts x log2 e + shifter holds k = round(parts x log2 e) in its low bits (kf: k as a float),
/// and r = x - k ln2/parts in two multiply-adds, by ln2/parts split into a head whose products
/// with k are exact and the rest. `negated`: the reduction of -x, the negation folded into the
/// two multiply-adds that read x (-x - k head is -(x + k head): one multiply-add whose addend
/// and result are negated), the same bits as that of -x.
struct PartsReduced {
  llvm::Value *t, *k, *kf, *r;
};
PartsReduced reduce_by_parts(MathIR &m, llvm::Value *x, int parts, float hi, float lo,
                             bool negated) {
  llvm::IRBuilder<> &b = m.builder();
  const float scale = static_cast<float>(parts) * exp_f32::kLog2e; // exact: parts is 2^n
  llvm::Value *t = m.fma(x, m.f(negated ? -scale : scale), m.shifter());
  auto [kf, k] = m.round(t);
  llvm::Value *nk = b.CreateFNeg(kf);
  llvm::Value *head = negated ? b.CreateFNeg(m.fma(kf, m.f(hi), x)) : m.fma(nk, m.f(hi), x);
  return {t, k, kf, m.fma(nk, m.f(lo), head)};
}

/// e^x of f32 by quarters (support/cpu_math.h kExpQ): t = 4 x log2 e + shifter rounds to k in
/// its low bits; r = x - k ln2/4 in two steps (k times the head is exact); e^r - 1 = r + r² Q(r)
/// by Estrin's scheme; s = 2^(k/4) as kExpQuarters[k mod 4] (permute_table reads t's two low
/// bits) with floor(k/4) added to its exponent field; e^x = s + (e^r - 1) s, one FMA rounded
/// once. Two multiply-adds fewer than halves and a degree-6 polynomial, and a smaller error
/// (docs/isa.md). `normal`: every |x| is at most 86.5, so floor(k/4) is within [-125, 125] and
/// t's bits 2 to 10 shifted to 23 to 31 are its exponent's addend (no carry leaves the field):
/// t shifted left by 21 adds floor(k/4) there and k mod 4 at bits 21 and 22, which the entries
/// of exp_f32::kExpQuartersLessIndex have had taken off, so one integer add makes s.
/// Else x is clamped to exp's range and s is 2^(k1/4) 2^k2, the first factor made as above
/// and the second applied after the FMA, exactly where the result is normal: both ways give
/// the same bits there. `negated`: e^-x, with the negation folded into the two multiply-adds
/// that read x (the usual path; sigmoid's), the same bits as e^x of -x.
llvm::Value *emit_exp_quarters(MathIR &m, llvm::Value *x, bool normal, bool negated = false) {
  namespace c = cpu_math::f32;
  llvm::IRBuilder<> &b = m.builder();
  if (negated && !normal) return emit_exp_quarters(m, b.CreateFNeg(x), false);
  if (!normal) x = m.clamp(x, exp_f32::kLowest, exp_f32::kHighest);
  auto [t, k, kf, r] = reduce_by_parts(m, x, 4, c::kLn2QuarterHi, c::kLn2QuarterLo, negated);
  llvm::Value *r2 = b.CreateFMul(r, r);
  llvm::Value *em1 = m.fma(m.estrin(r, r2, c::kExpQ), r2, r);
  llvm::Value *index = m.bits(t);
  if (normal) {
    llvm::Value *entry = m.bits(permute_table(b, exp_f32::kExpQuartersLessIndex.data(), 4, index));
    llvm::Value *s = m.from_bits(b.CreateAdd(entry, b.CreateShl(index, m.i(21))));
    return m.fused_fma(em1, s, s);
  }
  llvm::Value *entry = m.bits(permute_table(b, c::kExpQuarters, 4, index));
  llvm::Value *kq = b.CreateAShr(k, m.i(2));
  llvm::Value *k1 = b.CreateAShr(kq, m.i(1));
  llvm::Value *s1 = m.from_bits(b.CreateAdd(entry, b.CreateShl(k1, m.i(23))));
  return b.CreateFMul(m.fused_fma(em1, s1, s1), m.pow2(b.CreateSub(kq, k1)));
}

/// Whether f32 exp goes by sixteenths (emit_exp_sixteenths): at x86-64-v4, for vectors of one
/// AVX-512 register and for scalars, so that a uniform value and a lane get the same result.
bool exp_by_sixteenths(MathIR &m, llvm::Type *ty) {
  if (m.f64() || m.target().width != 16) return false;
  auto *vty = llvm::dyn_cast<llvm::FixedVectorType>(ty);
  return !vty || vty->getNumElements() == 16;
}

/// e^x of f32 by sixteenths (support/cpu_math.h kExpS): x clamped to exp's range; t = 16 x
/// log2 e + shifter rounds to k in its low bits; r = x - k ln2/16 in two steps (k times the
/// 12-bit head is exact); e^r - 1 = r + r² S(r), S a line; s = 2^((k mod 16)/16) as
/// kExpSixteenths[k mod 16] (permute_table: one vpermps, which reads t's four low bits);
/// s + (e^r - 1) s by one FMA, then scaled by 2^floor(k/16) (vscalefps floors k/16 itself; a
/// scalar shifts k), so a subnormal result is rounded once more at most, as exp's other paths.
/// Where it goes by a polynomial of degree 6, this has two multiply-adds fewer, a chain of
/// dependent operations three shorter, and a smaller error: the table's entries are rounded
/// (half an ulp at most) and the polynomial's error is below a tenth of one (docs/isa.md).
/// `negated`: e^-x (sigmoid's), the negation folded into the two multiply-adds that read x.
llvm::Value *emit_exp_sixteenths(MathIR &m, llvm::Value *x, bool negated) {
  namespace c = cpu_math::f32;
  llvm::IRBuilder<> &b = m.builder();
  x = negated ? m.clamp(x, -exp_f32::kHighest, -exp_f32::kLowest)
              : m.clamp(x, exp_f32::kLowest, exp_f32::kHighest);
  auto [t, k, kf, r] = reduce_by_parts(m, x, 16, c::kLn2SixteenthHi, c::kLn2SixteenthLo, negated);
  // One IR value a statement: the order of a call's arguments is the C++ compiler's, and the
  // IR's order (lit codegen/x86/inline_exp.hasm) must not depend on it.
  llvm::Value *r2 = b.CreateFMul(r, r);
  llvm::Value *em1 = m.fma(m.horner(r, c::kExpS), r2, r);
  llvm::Value *s = permute_table(b, c::kExpSixteenths, 16, m.bits(t));
  llvm::Value *n = b.CreateFMul(kf, m.f(1.0 / 16));
  llvm::Value *p = m.fused_fma(em1, s, s);
  return m.scale(p, n, b.CreateAShr(k, m.i(4)));
}

/// e^x: k = round(x log2 e), r = x - k ln2 in two steps (Cody-Waite), e^r by its polynomial,
/// scaled by 2^k once. The clamps keep k in range and let NaN through to the arithmetic.
/// When every lane's |x| is small enough that e^x and 2^k are normal numbers (k within
/// [-125, 127] for f32, [-1021, 1023] for f64), the clamps change nothing and 2^k is one
/// power of two: that path skips the clamps and multiplies once, with the same result.
/// f32 at x86-64-v3 goes by quarters instead (emit_exp_quarters), with the same two paths, and
/// at x86-64-v4 by sixteenths (emit_exp_sixteenths), clamped and scaled by vscalefps always.
/// `negated`: e^-x (sigmoid's), the negation folded into the arithmetic where it goes by
/// quarters or sixteenths (a vxorps a vector fewer in sigmoid).
llvm::Value *emit_exp(MathIR &m, llvm::Value *x, bool negated = false) {
  const bool d = m.f64();
  // The general path: v clamped to exp's range, reduced, scaled once.
  auto general = [&](llvm::Value *v) {
    const double lo = d ? cpu_math::f64::kExpLowest : exp_f32::kLowest;
    const double hi = d ? cpu_math::f64::kExpHighest : exp_f32::kHighest;
    MathIR::ExpReduced e = m.exp_reduce(m.clamp(v, lo, hi));
    return m.scale(m.exp_reduced(e.r), e.kf, e.k);
  };
  if (exp_by_sixteenths(m, x->getType())) return emit_exp_sixteenths(m, x, negated);
  if (negated && !exp_by_quarters(m, x->getType())) return emit_exp(m, m.builder().CreateFNeg(x));
  llvm::IRBuilder<> &b = m.builder();
  // Ordered: a NaN lane takes the general path.
  llvm::Value *normal = m.all(
      b.CreateFCmpOLE(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), m.f(d ? 708.0 : 86.5)));
  if (exp_by_quarters(m, x->getType()))
    return m.unless_rare(
        normal, x, [&](llvm::Value *v) { return emit_exp_quarters(m, v, true, negated); },
        [&](llvm::Value *v) { return emit_exp_quarters(m, v, false, negated); });
  return m.unless_rare(
      normal, x,
      [&](llvm::Value *v) {
        auto [r, s] = m.exp_reduce_normal(v);
        return b.CreateFMul(m.exp_reduced(r), s);
      },
      [&](llvm::Value *v) { return general(v); });
}

/// 2^x: k = round(x), r = x - k (exact), 2^r = e^y with y = r ln2, scaled by 2^k. For f32, y
/// is rounded once (ln2 rounded plus its rest). For f64, y is a double-double: r's 26-bit head
/// times ln2's 27-bit head is exact without FMA (Dekker), and the rest goes into exp_reduced.
llvm::Value *emit_exp2(MathIR &m, llvm::Value *x) {
  llvm::IRBuilder<> &b = m.builder();
  const bool d = m.f64();
  x = d ? m.clamp(x, -1076.0, 1025.0) : m.clamp(x, -151.0, 129.0);
  auto [kf, k] = m.round(b.CreateFAdd(x, m.shifter()));
  llvm::Value *r = b.CreateFSub(x, kf);
  if (!d) {
    llvm::Value *y =
        m.fma(r, m.f(cpu_math::f32::kLn2), b.CreateFMul(r, m.f(cpu_math::f32::kLn2Rest)));
    return m.scale(m.exp_reduced(y), kf, k);
  }
  namespace c = cpu_math::f64;
  llvm::Value *r_hi = m.from_bits(b.CreateAnd(m.bits(r), m.i(~int64_t{0} << 27)));
  llvm::Value *r_lo = b.CreateFSub(r, r_hi);
  llvm::Value *y_hi = b.CreateFMul(r_hi, m.f(c::kLn2Exp2Hi));
  llvm::Value *y_lo = m.fma(r_lo, m.f(c::kLn2Exp2Hi), b.CreateFMul(r, m.f(c::kLn2Exp2Lo)));
  llvm::Value *y = b.CreateFAdd(y_hi, y_lo);
  llvm::Value *y_rest = b.CreateFAdd(b.CreateFSub(y_hi, y), y_lo); // Fast2Sum: exact
  return m.scale(m.exp_reduced(y, y_rest), kf, k);
}

/// x = 2^k (1 + f) with 1 + f in [√½, √2) for positive finite x: k as a float and f (exact).
/// Subnormal x is scaled into the normal range first, unless x is known to be normal.
struct LogArgument {
  llvm::Value *kf, *f;
};

LogArgument log_argument(MathIR &m, llvm::Value *x, bool normal) {
  llvm::IRBuilder<> &b = m.builder();
  const bool d = m.f64();
  const int mant = d ? 52 : 23;
  const int64_t one = d ? 0x3ff0000000000000 : 0x3f800000;
  const int64_t sqrt_half = d ? 0x3fe6a09e667f3bcd : 0x3f3504f3;
  const int up = d ? 54 : 23;
  llvm::Value *sub = normal ? nullptr : b.CreateFCmpOLT(x, m.f(d ? 0x1p-1022 : 0x1p-126));
  if (sub) x = b.CreateSelect(sub, b.CreateFMul(x, m.f(std::ldexp(1.0, up))), x);
  // Adding one - bits(√½) carries into the exponent exactly when the mantissa is >= √2's.
  llvm::Value *ix = b.CreateAdd(m.bits(x), m.i(one - sqrt_half));
  // The exponent's bias, and for a scaled subnormal the scaling too, in one constant.
  const int64_t bias = d ? 1023 : 127;
  llvm::Value *k = b.CreateSub(b.CreateAShr(ix, m.i(mant)),
                               sub ? b.CreateSelect(sub, m.i(bias + up), m.i(bias)) : m.i(bias));
  llvm::Value *mf =
      m.from_bits(b.CreateAdd(b.CreateAnd(ix, m.i((int64_t{1} << mant) - 1)), m.i(sqrt_half)));
  return {b.CreateSIToFP(k, x->getType()), b.CreateFSub(mf, m.f(1.0))};
}

/// The pieces of log x shared by log, log2 and log10: x = 2^k (1 + f) with 1 + f in [√½, √2),
/// and log(1 + f) = f - hfsq + t, where hfsq = f²/2 and t is f³ P(f) for f32, and
/// s (hfsq + s² Q(s²)) with s = f/(2 + f) for f64 (fewer terms, at the cost of a division).
struct LogParts {
  llvm::Value *kf, *f, *hfsq, *t;
};

LogParts log_parts(MathIR &m, llvm::Value *x, bool normal) {
  llvm::IRBuilder<> &b = m.builder();
  const bool d = m.f64();
  auto [kf, f] = log_argument(m, x, normal);
  llvm::Value *ff = b.CreateFMul(f, f);
  llvm::Value *hfsq = b.CreateFMul(m.f(0.5), ff);
  if (!d) { // f32: t = f³ P(f), no division; P by Estrin's scheme where FMA is fused
    const auto &c = cpu_math::f32::kLogP;
    llvm::Value *poly = m.fused() ? m.estrin(f, ff, c) : m.horner(f, c);
    return {kf, f, hfsq, b.CreateFMul(b.CreateFMul(f, ff), poly)};
  }
  llvm::Value *s = b.CreateFDiv(f, b.CreateFAdd(f, m.f(2.0)));
  llvm::Value *z = b.CreateFMul(s, s);
  llvm::Value *t = b.CreateFMul(s, m.fma(z, m.horner(z, cpu_math::f64::kLogQ), hfsq));
  return {kf, f, hfsq, t};
}

/// log x's IEEE special cases over the value computed for finite positive x: +inf for +inf,
/// -inf for ±0, NaN below 0 and for NaN (none when x is known to be positive and normal).
llvm::Value *log_special(MathIR &m, llvm::Value *x, llvm::Value *y, bool normal) {
  if (normal) return y;
  llvm::IRBuilder<> &b = m.builder();
  const double inf = std::numeric_limits<double>::infinity();
  y = b.CreateSelect(b.CreateFCmpOEQ(x, m.f(inf)), m.f(inf), y);
  y = b.CreateSelect(b.CreateFCmpOEQ(x, m.f(0.0)), m.f(-inf), y);
  return b.CreateSelect(b.CreateFCmpULT(x, m.f(0.0)), m.f(std::nan("")), y);
}

/// log x = k ln2 + log(1 + f), the two parts of ln2 added at the ends (ln2's head times k is
/// exact).
llvm::Value *emit_log(MathIR &m, llvm::Value *x, bool normal) {
  llvm::IRBuilder<> &b = m.builder();
  LogParts p = log_parts(m, x, normal);
  llvm::Value *y = b.CreateFAdd(b.CreateFSub(m.fma(p.kf, m.ln2_lo(), p.t), p.hfsq), p.f);
  return log_special(m, x, m.fma(p.kf, m.ln2_hi(), y), normal);
}

/// Whether f32 log, log2 and log10 go by a table (emit_log_table): at x86-64-v4, for vectors of
/// one AVX-512 register and for scalars, so that a uniform value and a lane get the same result.
bool log_by_table(MathIR &m, llvm::Type *ty) {
  return exp_by_sixteenths(m, ty);
}

/// log x of f32 by a table of 16 (support/cpu_math.h kLogInvC): t = bits(x) - kLogTableOff,
/// k = t >> 23 and z = x 2^-k in [0.6992, 1.3984) from t's exponent field; bucket i, bits 19
/// to 22 of t, gives 1/c_i and log c_i (two parts) by three permutes (vpermps reads the four
/// low bits of t >> 19); r = z/c_i - 1 by one FMA, rounded once; log x = (k ln2's head +
/// log c_i's head) + (r + (r² R(r) + k ln2's rest + log c_i's rest)). The first sum is exact
/// (the heads are multiples of 2^-17), so only the last add rounds at the scale of the result
/// (rounded there, the sum put f32 log at 2.5 ulp where the result is just below a power of
/// two). The bucket that holds 1 has c = 1, so near 1 the result is r + r² R(r), r = z - 1. Its
/// polynomial is of degree 5 where f - f²/2 + f³ P(f)'s is of 11: a map of log about a fifth
/// faster at v4 (docs/performance.md). log2 and log10 (`base` Two or Ten) go the same way with
/// their own tables of log_b c_i and polynomial R_b: log_b x = (k log_b 2's head + log_b c_i's
/// head, exact: k itself for log2) + (r log_b e + (r² R_b(r) + the rests)), r log_b e by an FMA
/// of r and log_b e rounded, after r times its rest. `normal`: x is positive and normal in
/// every lane; else subnormals are scaled by 2^23 first and the special cases selected at the
/// end (log_special), with the same operations for the normal lanes.
enum class LogBase { E, Two, Ten };
llvm::Value *emit_log_table(MathIR &m, llvm::Value *x, bool normal, LogBase base) {
  namespace c = cpu_math::f32;
  llvm::IRBuilder<> &b = m.builder();
  llvm::Value *sub = normal ? nullptr : b.CreateFCmpOLT(x, m.f(0x1p-126));
  llvm::Value *ix = m.bits(sub ? b.CreateSelect(sub, b.CreateFMul(x, m.f(0x1p23)), x) : x);
  llvm::Value *t = b.CreateSub(ix, m.i(c::kLogTableOff));
  llvm::Value *k = b.CreateAShr(t, m.i(23));
  if (sub) k = b.CreateSub(k, b.CreateSelect(sub, m.i(23), m.i(0)));
  llvm::Value *z = m.from_bits(b.CreateSub(ix, b.CreateAnd(t, m.i(-(int64_t{1} << 23)))));
  llvm::Value *index = b.CreateAShr(t, m.i(19));
  llvm::Value *invc = permute_table(b, c::kLogInvC, 16, index);
  const bool two = base == LogBase::Two;
  const float *log_c = base == LogBase::E ? c::kLogC : two ? c::kLog2C : c::kLog10C;
  const float *log_c_lo = base == LogBase::E ? c::kLogCLo : two ? c::kLog2CLo : c::kLog10CLo;
  llvm::Value *logc = permute_table(b, log_c, 16, index);
  llvm::Value *logc_lo = permute_table(b, log_c_lo, 16, index);
  llvm::Value *r = m.fused_fma(z, invc, m.f(-1.0));
  llvm::Value *kf = b.CreateSIToFP(k, x->getType());
  llvm::Value *y = nullptr;
  if (base == LogBase::E) {
    // Exact: k ln2's head and log c_i's are multiples of 2^-17, and their sum is below 2^7.
    llvm::Value *head = m.fma(kf, m.ln2_hi(), logc);
    llvm::Value *rest = m.fma(kf, m.ln2_lo(), logc_lo);
    llvm::Value *r2 = b.CreateFMul(r, r);
    llvm::Value *tail = m.fma(m.horner(r, c::kLogR), r2, rest);
    y = b.CreateFAdd(head, b.CreateFAdd(r, tail));
  } else {
    // Exact: log2 c_i's head is a multiple of 2^-16 (k plus it is below 2^8); k log10 2's head
    // and log10 c_i's are multiples of 2^-17 (their sum is below 2^6).
    llvm::Value *head = two ? b.CreateFAdd(kf, logc) : m.fma(kf, m.f(c::kLog10Of2Hi), logc);
    llvm::Value *rest = two ? logc_lo : m.fma(kf, m.f(c::kLog10Of2Lo), logc_lo);
    llvm::Value *r2 = b.CreateFMul(r, r);
    llvm::Value *tail = m.fma(m.horner(r, two ? c::kLog2R : c::kLog10R), r2, rest);
    llvm::Value *lead = m.fma(r, m.f(two ? c::kLog2eRest : c::kLog10eRest), tail);
    y = b.CreateFAdd(head, m.fma(r, m.f(two ? c::kLog2eNear : c::kLog10eNear), lead));
  }
  return log_special(m, x, y, normal);
}

/// log2 and log10: log(1 + f) as hi + lo with hi cut to 12 bits (f32) or 26 (f64), so its
/// products with the heads of log2(e) and log10(e), of as many bits, are exact; k log10(2)
/// likewise in two parts.
llvm::Value *emit_log_base(MathIR &m, llvm::Value *x, bool ten, bool normal) {
  namespace c32 = cpu_math::f32;
  namespace c64 = cpu_math::f64;
  llvm::IRBuilder<> &b = m.builder();
  const bool d = m.f64();
  LogParts p = log_parts(m, x, normal);
  llvm::Value *hi = b.CreateFSub(p.f, p.hfsq);
  const int64_t cut = d ? ~((int64_t{1} << 27) - 1) : static_cast<int32_t>(0xfffff000u);
  hi = m.from_bits(b.CreateAnd(m.bits(hi), m.i(cut)));
  llvm::Value *lo = b.CreateFAdd(b.CreateFSub(b.CreateFSub(p.f, hi), p.hfsq), p.t);
  const double head =
      ten ? (d ? c64::kLog10eHi : c32::kLog10eHi) : (d ? c64::kLog2eHi : c32::kLog2eHi);
  const double rest =
      ten ? (d ? c64::kLog10eLo : c32::kLog10eLo) : (d ? c64::kLog2eLo : c32::kLog2eLo);
  llvm::Value *y = b.CreateFMul(b.CreateFAdd(lo, hi), m.f(rest));
  y = m.fma(lo, m.f(head), y);
  if (ten) {
    y = m.fma(p.kf, m.f(d ? c64::kLog10Of2Lo : c32::kLog10Of2Lo), y);
    y = m.fma(hi, m.f(head), y);
    y = m.fma(p.kf, m.f(d ? c64::kLog10Of2Hi : c32::kLog10Of2Hi), y);
  } else {
    y = b.CreateFAdd(m.fma(hi, m.f(head), y), p.kf);
  }
  return log_special(m, x, y, normal);
}

/// tanh of f32: x + x u P(u) (u = x²) below 0.625, else 1 - 2/(e^2|x| + 1) with x's sign
/// (the subtraction loses nothing there: 2/(e^2|x| + 1) <= 0.54). NaN takes the second form and
/// stays NaN; e^2|x| overflows to +inf and gives exactly ±1.
llvm::Value *emit_tanh_f32(MathIR &m, llvm::Value *x) {
  namespace c = cpu_math::f32;
  llvm::IRBuilder<> &b = m.builder();
  llvm::Value *u = b.CreateFMul(x, x);
  llvm::Value *small = m.fma(b.CreateFMul(x, u), m.horner(u, c::kTanhP), x);
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value *e = emit_exp(m, b.CreateFAdd(a, a));
  llvm::Value *large = b.CreateFSub(m.f(1.0), b.CreateFDiv(m.f(2.0), b.CreateFAdd(e, m.f(1.0))));
  large = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
  return b.CreateSelect(b.CreateFCmpOLT(a, m.f(c::kTanhPolyLimit)), small, large);
}

/// tanh of f64: x + x u P(u) (u = x²) below kTanhPolyLimit; above, 1 - q with
/// q = 2/(e^2a + 1), a = |x| clamped to kTanhOne: e^2a as a double-double (exp's pair scaled
/// by 2^k exactly), q by divide_once, and 1 - q with its rounding error kept, so the result is
/// rounded about once. x's sign last (-0 stays -0); NaN passes the clamp. The chain is pow's
/// kind (exp, then a division): exp's polynomial by Estrin's scheme where it may.
llvm::Value *emit_tanh_f64(MathIR &m, llvm::Value *x) {
  namespace c = cpu_math::f64;
  using Pair = MathIR::Pair;
  llvm::IRBuilder<> &b = m.builder();
  llvm::Value *u = b.CreateFMul(x, x);
  llvm::Value *small = m.fma(b.CreateFMul(x, u), m.horner(u, c::kTanhP), x);
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value *ac = b.CreateSelect(b.CreateFCmpOGT(a, m.f(c::kTanhOne)), m.f(c::kTanhOne), a);
  MathIR::ExpReduced e = m.exp_reduce(b.CreateFAdd(ac, ac));
  Pair unnormalised = m.exp_reduced_pair(e.r, nullptr, true);
  Pair p = m.fast_two_sum(unnormalised.hi, unnormalised.lo); // 1 + r >= 0.6 > |the rest|
  llvm::Value *s = m.pow2(e.k);
  Pair big = m.fast_two_sum(b.CreateFMul(p.hi, s), m.f(1.0)); // e^2a + 1, e^2a >= 3
  big.lo = b.CreateFAdd(big.lo, b.CreateFMul(p.lo, s));
  Pair q = m.divide_once(m.f(2.0), big);
  Pair one_minus = m.fast_two_sum(m.f(1.0), b.CreateFNeg(q.hi));
  llvm::Value *large = b.CreateFAdd(one_minus.hi, b.CreateFSub(one_minus.lo, q.lo));
  llvm::Value *r = b.CreateSelect(b.CreateFCmpOLT(a, m.f(c::kTanhPolyLimit)), small, large);
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
}

/// erf of f64. a = |x|. Below kErfMiddle: a (2/√π) + a t P(t), t = a², with a times 2/√π's
/// head exact (TwoProd). Up to kErfcFrom: erf(c) + erf'(c) v + v² R(v) around c = kErfCentre,
/// the head of erf'(c) v exact and added to erf(c)'s head exactly (TwoSum), the rest small.
/// From there: 1 - e^(-a²) Q(a), a clamped to kErfOne (where 1 - erfc rounds to 1), a² exact as
/// a pair whose low part enters exp as e^(r - lo) = e^r - lo (1 + r), and Q a centred
/// polynomial whose coefficients are chosen per lane between two intervals. x's sign last; NaN
/// passes the clamp, ±inf gives ±1.
llvm::Value *emit_erf_f64(MathIR &m, llvm::Value *x) {
  namespace c = cpu_math::f64;
  using Pair = MathIR::Pair;
  llvm::IRBuilder<> &b = m.builder();
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value *t = b.CreateFMul(a, a);
  Pair head = m.two_prod(a, m.f(c::kTwoOverSqrtPiHi));
  llvm::Value *tail =
      b.CreateFMul(a, m.fma(t, m.horner(t, c::kErfSmallP), m.f(c::kTwoOverSqrtPiLo)));
  llvm::Value *small = b.CreateFAdd(head.hi, b.CreateFAdd(head.lo, tail));
  llvm::Value *v = b.CreateFSub(a, m.f(c::kErfCentre)); // exact where used
  Pair linear = m.two_prod(v, m.f(c::kErfSlopeHi));
  Pair sum = m.two_sum(m.f(c::kErfAtCentreHi), linear.hi);
  llvm::Value *rest = m.fma(b.CreateFMul(v, v), m.horner(v, c::kErfMiddleR),
                            m.fma(v, m.f(c::kErfSlopeLo), m.f(c::kErfAtCentreLo)));
  llvm::Value *middle = b.CreateFAdd(sum.hi, b.CreateFAdd(sum.lo, b.CreateFAdd(linear.lo, rest)));
  llvm::Value *ac = m.clamp(a, c::kErfcFrom, c::kErfOne);
  Pair sq = m.two_prod(ac, ac);
  MathIR::ExpReduced e = m.exp_reduce(b.CreateFNeg(sq.hi));
  llvm::Value *nlo = b.CreateFNeg(sq.lo);
  llvm::Value *ex = m.scale(m.exp_reduced(e.r, m.fma(nlo, e.r, nlo)), e.kf, e.k);
  llvm::Value *far = b.CreateFCmpOGE(ac, m.f(c::kErfcSplit));
  auto pick = [&](double if_far, double if_near) {
    return b.CreateSelect(far, m.f(if_far), m.f(if_near));
  };
  static_assert(std::size(c::kErfcFar) == std::size(c::kErfcNear));
  llvm::Value *u = b.CreateFSub(ac, pick(c::kErfcFarCentre, c::kErfcNearCentre));
  llvm::Value *q = pick(c::kErfcFar[0], c::kErfcNear[0]);
  for (size_t j = 1; j < std::size(c::kErfcFar); ++j)
    q = m.fma(q, u, pick(c::kErfcFar[j], c::kErfcNear[j]));
  llvm::Value *large = m.fma(b.CreateFNeg(ex), q, m.f(1.0));
  llvm::Value *r = b.CreateSelect(b.CreateFCmpOLT(a, m.f(c::kErfcFrom)), middle, large);
  r = b.CreateSelect(b.CreateFCmpOLT(a, m.f(c::kErfMiddle)), small, r);
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
}

/// erf of f32 by intervals (support/cpu_math.h kErfTable16/4), where one permute indexes a whole
/// table: vpermps of 16 lanes with AVX-512, vpermilps of 8 (each 128-bit half permuted within
/// itself, the table's 4 entries repeated in both halves). a = |x|, y = S a - 1/2
/// (S a is exact), k = round(y), the interval from the low bits of y + the shifter (the permute
/// reads only those, so NaN and huge a index some interval and no conversion is poison),
/// u = y - k in [-1/2, 1/2], then
/// erf(a) = a p_0(u) or e_k + p_k(u), each coefficient permuted from its row; 1 from
/// kErfTableOne on; the sign of x last. NaN stays NaN, ±inf gives ±1, -0 gives -0. nullptr for
/// other types.
llvm::Value *emit_erf_f32_table(llvm::IRBuilder<> &b, const CpuTarget &target, llvm::Value *x) {
  namespace c = cpu_math::f32;
  auto *vty = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!vty || !vty->getElementType()->isFloatTy()) return nullptr;
  const unsigned lanes = vty->getNumElements();
  auto evaluate = [&](auto &table, float scale) {
    MathIR m(b, target, vty);
    llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value *y = m.fma(a, m.f(scale), m.f(-0.5));
    // k = round(y) in one operation (the shifter's t gives the same k where |y| < 2^22, and
    // beyond that erf is 1), so that u does not wait for t; t only indexes the permutes.
    llvm::Value *t = b.CreateFAdd(y, m.shifter());
    llvm::Value *k = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, y);
    llvm::Value *u = b.CreateFSub(y, k);
    llvm::Value *index = m.bits(t);
    const size_t entries = std::size(table[0]);
    auto row = [&](const float *r) {
      return permute_table(b, r, static_cast<unsigned>(entries), index);
    };
    // The 4-interval table has e_k in its constant row (p_k(0) + e_k rounds to e_k), the
    // 16-interval one a row of e_k after the coefficients.
    const bool folded = entries == 4;
    const size_t degree = std::size(table) - (folded ? 1 : 2);
    llvm::Value *p = nullptr;
    if (folded) {
      // p(u) = c_0 + u E(u), E by Estrin's scheme: the chain from the load to the store is
      // what bounds a loop of erf (no iteration's chain fits beside the next in the
      // out-of-order window). Only the last step rounds at p's own scale: all of p by
      // Estrin's scheme put erf 3.49 ulp off at x = 0.2175, this 1.95 at worst.
      std::vector<llvm::Value *> c;
      for (size_t j = 0; j < degree; ++j) c.push_back(row(table[j]));
      p = m.estrin(u, b.CreateFMul(u, u), c);
      p = m.fma(p, u, row(table[degree]));
    } else {
      p = row(table[0]);
      for (size_t j = 1; j <= degree; ++j) p = m.fma(p, u, row(table[j]));
    }
    llvm::Value *first = b.CreateFCmpOEQ(k, m.f(0.0));
    llvm::Value *factor = b.CreateSelect(first, a, m.f(1.0));
    llvm::Value *r = folded ? b.CreateFMul(factor, p) : m.fma(factor, p, row(table[degree + 1]));
    r = b.CreateSelect(b.CreateFCmpOGE(a, m.f(c::kErfTableOne)), m.f(1.0), r);
    // x's sign onto r, which is +0 or more (or NaN): an or of x ^ |x|, one operation fewer
    // than copysign's, which clears r's sign first.
    return m.from_bits(b.CreateOr(m.bits(r), b.CreateXor(m.bits(x), m.bits(a))));
  };
  if (lanes == 16 && target.width == 16) return evaluate(c::kErfTable16, c::kErfScale16);
  if (lanes == 8 && target.width >= 8) return evaluate(c::kErfTable4, c::kErfScale4);
  if (lanes == 2 * target.width && target.width >= 8) {
    // A chunk of twice the native width (chunk_widths): each half in its registers.
    llvm::SmallVector<int, 32> low, high, both;
    for (unsigned i = 0; i < lanes; ++i)
      (i < lanes / 2 ? low : high).push_back(static_cast<int>(i));
    for (unsigned i = 0; i < lanes; ++i) both.push_back(static_cast<int>(i));
    llvm::Value *lo = emit_erf_f32_table(b, target, b.CreateShuffleVector(x, low));
    llvm::Value *hi = emit_erf_f32_table(b, target, b.CreateShuffleVector(x, high));
    return lo && hi ? b.CreateShuffleVector(lo, hi, both) : nullptr;
  }
  return nullptr;
}

/// The f64 vector (or scalar) type with the lanes of f32 `ty`.
llvm::Type *widened(llvm::IRBuilder<> &b, llvm::Type *ty) {
  auto *vty = llvm::dyn_cast<llvm::VectorType>(ty);
  return vty ? llvm::VectorType::get(b.getDoubleTy(), vty) : b.getDoubleTy();
}

/// erf of f32, evaluated in f64 and rounded once, where no permute holds a table (SSE, scalars):
/// a = |x| (a² is exact in f64), a P(a²) below 1, else
/// 1 - e^(-a²) Q(a) with a clamped to 4, where erf is 1 in f32; the sign of x last. Branch-free;
/// NaN takes the second form and stays NaN, ±inf gives ±1, -0 gives -0.
llvm::Value *emit_erf_f32(llvm::IRBuilder<> &b, const CpuTarget &target, llvm::Value *x) {
  if (llvm::Value *r = emit_erf_f32_table(b, target, x)) return r;
  namespace c = cpu_math::f64;
  llvm::Type *ty = x->getType();
  llvm::Type *wide = widened(b, ty);
  MathIR m(b, target, wide);
  llvm::Value *d = b.CreateFPExt(x, wide);
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d);
  llvm::Value *small = b.CreateFMul(a, m.horner(b.CreateFMul(a, a), c::kErfP));
  llvm::Value *ac = b.CreateSelect(b.CreateFCmpOGT(a, m.f(c::kErfHighest)), m.f(c::kErfHighest), a);
  llvm::Value *e = emit_exp(m, b.CreateFNeg(b.CreateFMul(ac, ac)));
  llvm::Value *large = b.CreateFSub(m.f(1.0), b.CreateFMul(e, m.horner(ac, c::kErfcQ)));
  llvm::Value *r = b.CreateSelect(b.CreateFCmpOLT(a, m.f(1.0)), small, large);
  return b.CreateFPTrunc(b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, d), ty);
}

/// C99's special cases of pow over r = |x|^y, by selects (x, y and r of one type): pow(x, ±0) =
/// pow(1, y) = pow(-1, ±inf) = 1 (NaN included); a negative finite x with a finite non-integer
/// y is NaN; a negative x (-0 and -inf included) with an odd integer y negates |x|^y. Zeros and
/// infinities come out of log and exp (log 0 = -inf, log inf = inf).
llvm::Value *pow_special(MathIR &m, llvm::Value *x, llvm::Value *y, llvm::Value *r) {
  llvm::IRBuilder<> &b = m.builder();
  const double inf = std::numeric_limits<double>::infinity();
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  auto trunc = [&](llvm::Value *v) { return b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, v); };
  llvm::Value *integer = b.CreateFCmpOEQ(trunc(y), y); // ±inf counts as even
  llvm::Value *half = b.CreateFMul(y, m.f(0.5));
  llvm::Value *odd = b.CreateAnd(integer, b.CreateFCmpONE(trunc(half), half));
  llvm::Value *negative = b.CreateICmpSLT(m.bits(x), m.i(0)); // the sign bit: -0 too
  r = b.CreateSelect(b.CreateAnd(negative, odd), b.CreateFNeg(r), r);
  llvm::Value *finite_negative =
      b.CreateAnd(b.CreateFCmpOLT(x, m.f(0.0)), b.CreateFCmpOGT(x, m.f(-inf)));
  llvm::Value *ay = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y);
  llvm::Value *y_finite = b.CreateFCmpOLT(ay, m.f(inf)),
              *y_infinite = b.CreateFCmpOEQ(ay, m.f(inf));
  llvm::Value *domain = b.CreateAnd(finite_negative, b.CreateAnd(y_finite, b.CreateNot(integer)));
  r = b.CreateSelect(domain, m.f(std::nan("")), r);
  llvm::Value *one = b.CreateOr(b.CreateFCmpOEQ(y, m.f(0.0)), b.CreateFCmpOEQ(x, m.f(1.0)));
  one = b.CreateOr(one, b.CreateAnd(b.CreateFCmpOEQ(a, m.f(1.0)), y_infinite));
  return b.CreateSelect(one, m.f(1.0), r);
}

/// pow of f32, evaluated in f64 and rounded once: e^(y log|x|) on the inline f64 log and exp
/// (y log|x| carries under 2^-52 relative error, so the f32 result is within about half an
/// ulp), then pow_special.
llvm::Value *emit_pow_f32(llvm::IRBuilder<> &b, const CpuTarget &target, llvm::Value *x,
                          llvm::Value *y) {
  llvm::Type *ty = x->getType();
  MathIR m(b, target, widened(b, ty));
  llvm::Value *xd = b.CreateFPExt(x, m.type()), *yd = b.CreateFPExt(y, m.type());
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, xd);
  llvm::Value *r = emit_exp(m, b.CreateFMul(yd, emit_log(m, a, false)));
  return b.CreateFPTrunc(pow_special(m, xd, yd, r), ty);
}

/// log a of f64 as a double-double for a > 0 finite (other lanes give garbage the caller
/// replaces), relative error about 2^-66: a = 2^k m with m in [√½, √2) (subnormals scaled
/// first), s = (m - 1)/(m + 1) as a pair (divide_once), log m = 2s + s³ W(z) with z = s's head
/// squared and W = 2/3 + z V(z). s³ and s⁵ are a head (TwoProd from z exact) and a first-order
/// rest; s³ times 2/3's head is exact (TwoProd); s⁵ V(z) = s⁵ v0 + s⁷ V1(z). The heads k ln 2
/// (ln 2's 32-bit head, exact), 2s and s³ 2/3 are summed by Fast2Sum (each larger than the
/// next, or k = 0), the low parts after them, s⁵ v0 (up to 2^-12 of the log) last. Built for a
/// short chain of dependent operations (pow's loop is bound by it): one division, V1 by
/// Estrin's scheme, and no double-double product in a row.
MathIR::Pair log_pair(MathIR &m, llvm::Value *a) {
  namespace c = cpu_math::f64;
  using Pair = MathIR::Pair;
  llvm::IRBuilder<> &b = m.builder();
  auto [kf, f] = log_argument(m, a, false);
  Pair s = m.divide_once(f, m.fast_two_sum(m.f(2.0), f));
  Pair z = m.two_prod(s.hi, s.hi);
  Pair cube = m.two_prod(z.hi, s.hi);
  // (s + e)³ = s³ + 3 s² e to first order in e = s.lo; s³ = c + c.lo + s z.lo.
  llvm::Value *cube_lo = m.fma(b.CreateFMul(m.f(3.0), z.hi), s.lo, m.fma(s.hi, z.lo, cube.lo));
  Pair t = m.two_prod(cube.hi, m.f(c::kTwoThirdsHi));
  // s⁵ = c z.hi + e5: c z.hi's error and the first-order terms of the low parts of s³ and s²
  // (the relative 5 s.lo/s reaches 2^-50, s being an unnormalised quotient).
  Pair fifth = m.two_prod(cube.hi, z.hi);
  llvm::Value *z_lo = m.fma(b.CreateFMul(m.f(2.0), s.hi), s.lo, z.lo);
  llvm::Value *e5 = m.fma(cube_lo, z.hi, m.fma(cube.hi, z_lo, fifth.lo));
  // s⁵ V(z) = s⁵ v0 + s⁷ V1(z), v0 V's constant term: V1's rounding weighs 0.03 of V's.
  constexpr size_t kV = std::size(c::kLogV) - 1;
  llvm::Value *v1 = m.estrin(z.hi, b.CreateFMul(z.hi, z.hi), m.coefficients(c::kLogV, kV));
  llvm::Value *v0 = m.f(c::kLogV[kV]);
  // The small terms: c times 2/3's low part, s³'s low part times 2/3, e5 v0, s⁷ V1.
  llvm::Value *small = m.fma(cube.hi, m.f(c::kTwoThirdsLo), t.lo);
  small = m.fma(cube_lo, m.f(c::kTwoThirdsHi), small);
  small = m.fma(e5, v0, small);
  small = m.fma(b.CreateFMul(fifth.hi, z.hi), v1, small);
  // The heads k ln 2, 2s and c 2/3 by Fast2Sum; the low parts, then c z.hi v0 (up to 2^-12 of
  // the log) last, rounded once; normalised, as exp's reduction takes its k from the head.
  Pair u = m.fast_two_sum(b.CreateFMul(kf, m.f(c::kLn2Hi)), b.CreateFMul(s.hi, m.f(2.0)));
  Pair w = m.fast_two_sum(u.hi, t.hi);
  llvm::Value *lows = b.CreateFAdd(w.lo, m.fma(s.lo, m.f(2.0), m.fma(kf, m.f(c::kLn2Lo), u.lo)));
  return m.fast_two_sum(w.hi, m.fma(fifth.hi, v0, b.CreateFAdd(lows, small)));
}

/// pow of f64: e^z with z = y log|x| a double-double (log_pair, times y by TwoProd): k =
/// round(z log2 e), r = z - k ln 2 as a pair (the head's product exact, z's low part and the
/// rest added by TwoSum), its low part passed to exp_reduced (Estrin's scheme for the terms of
/// high degree), scaled by 2^k once; z clamped to exp's range (its low part dropped there, and
/// where log|x| or z is not finite). Then pow_special.
llvm::Value *emit_pow_f64(MathIR &m, llvm::Value *x, llvm::Value *y) {
  namespace c = cpu_math::f64;
  using Pair = MathIR::Pair;
  llvm::IRBuilder<> &b = m.builder();
  const double inf = std::numeric_limits<double>::infinity();
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  Pair l = log_pair(m, a);
  llvm::Value *finite = b.CreateAnd(b.CreateFCmpOGT(a, m.f(0.0)), b.CreateFCmpOLT(a, m.f(inf)));
  l.hi = b.CreateSelect(finite, l.hi, b.CreateSelect(b.CreateFCmpOEQ(a, m.f(0.0)), m.f(-inf), a));
  Pair z = m.two_prod(l.hi, y);
  z.lo = b.CreateFAdd(z.lo, b.CreateFMul(l.lo, y));
  llvm::Value *zh = m.clamp(z.hi, c::kExpLowest, c::kExpHighest);
  llvm::Value *keep = b.CreateAnd(finite, b.CreateFCmpOEQ(zh, z.hi));
  llvm::Value *zl = b.CreateSelect(keep, z.lo, m.f(0.0));
  MathIR::ExpReduced e = m.exp_reduce(zh);
  Pair r = m.two_sum(e.head, b.CreateFAdd(zl, b.CreateFMul(b.CreateFNeg(e.kf), m.ln2_lo())));
  // e^(hi + lo) = e^hi + lo (1 + hi) to within lo hi²/2, far below an ulp.
  llvm::Value *ex = m.scale(m.exp_reduced(r.hi, m.fma(r.lo, r.hi, r.lo), true), e.kf, e.k);
  return pow_special(m, x, y, ex);
}

/// atan2 of f32, evaluated in f64 and rounded once. With mn and mx the smaller and larger of
/// |x| and |y|: t = mn/mx, or (mn - mx)/(mn + mx) (exact numerator and denominator, one
/// divide) above tan(π/8), where atan adds π/4; atan(t) = t + t u P(u), u = t²; then π/2 - r
/// when |y| > |x|, π - r when x's sign bit is set, y's sign last. Both zero: t = 0 (so ±0 or
/// ±π); both infinite: t = 0 past π/4 (±π/4 or ±3π/4); a NaN operand gives NaN.
llvm::Value *emit_atan2_f32(llvm::IRBuilder<> &b, const CpuTarget &target, llvm::Value *y,
                            llvm::Value *x) {
  namespace c = cpu_math::f64;
  llvm::Type *ty = x->getType();
  MathIR m(b, target, widened(b, ty));
  const double inf = std::numeric_limits<double>::infinity();
  llvm::Value *xd = b.CreateFPExt(x, m.type()), *yd = b.CreateFPExt(y, m.type());
  llvm::Value *ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, xd);
  llvm::Value *ay = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, yd);
  llvm::Value *swap = b.CreateFCmpOGT(ay, ax);
  llvm::Value *mn = b.CreateSelect(swap, ax, ay), *mx = b.CreateSelect(swap, ay, ax);
  llvm::Value *both_inf = b.CreateFCmpOEQ(mn, m.f(inf));
  llvm::Value *big =
      b.CreateOr(b.CreateFCmpOGT(mn, b.CreateFMul(mx, m.f(c::kTanPiOver8))), both_inf);
  llvm::Value *t = b.CreateFDiv(b.CreateSelect(big, b.CreateFSub(mn, mx), mn),
                                b.CreateSelect(big, b.CreateFAdd(mn, mx), mx));
  t = b.CreateSelect(b.CreateOr(both_inf, b.CreateFCmpOEQ(mx, m.f(0.0))), m.f(0.0), t);
  llvm::Value *u = b.CreateFMul(t, t);
  llvm::Value *r = m.fma(b.CreateFMul(t, u), m.horner(u, c::kAtanP), t);
  r = b.CreateSelect(big, b.CreateFAdd(m.f(c::kPiOver4), r), r);
  r = b.CreateSelect(swap, b.CreateFSub(m.f(c::kPiOver2), r), r);
  r = b.CreateSelect(b.CreateICmpSLT(m.bits(xd), m.i(0)), b.CreateFSub(m.f(c::kPi), r), r);
  r = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, yd);
  r = b.CreateSelect(b.CreateFCmpUNO(xd, yd), b.CreateFAdd(xd, yd), r);
  return b.CreateFPTrunc(r, ty);
}

/// atan2 of f64. With mn and mx the smaller and larger of |x| and |y|: t = mn/mx as a
/// double-double (the quotient and its exact residual, from values scaled by a power of two
/// into a range where the residual is exact; dropped where t < 2^-60, whose atan rounds to t);
/// atan t = atan c + atan u around c = j/4 nearest t, u = (t - c)/(1 + t c) as a quotient of
/// pairs (|u| <= 1/8), atan u = u + u v P(v), v = u², atan c from a table as a pair; then
/// π/2 - r when |y| > |x| and π - r when x's sign bit is set, as pairs; y's sign last. Both
/// zero: t = 0 (±0 or ±π); both infinite: t = 1 (±π/4 or ±3π/4); NaN gives NaN.
llvm::Value *emit_atan2_f64(MathIR &m, llvm::Value *y, llvm::Value *x) {
  namespace c = cpu_math::f64;
  using Pair = MathIR::Pair;
  llvm::IRBuilder<> &b = m.builder();
  const double inf = std::numeric_limits<double>::infinity();
  llvm::Value *ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value *ay = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y);
  llvm::Value *swap = b.CreateFCmpOGT(ay, ax);
  llvm::Value *mn = b.CreateSelect(swap, ax, ay), *mx = b.CreateSelect(swap, ay, ax);
  llvm::Value *q = b.CreateFDiv(mn, mx);
  llvm::Value *factor =
      b.CreateSelect(b.CreateFCmpOGT(mx, m.f(0x1p900)), m.f(0x1p-600),
                     b.CreateSelect(b.CreateFCmpOLT(mx, m.f(0x1p-900)), m.f(0x1p600), m.f(1.0)));
  llvm::Value *sm = b.CreateFMul(mn, factor), *sx = b.CreateFMul(mx, factor);
  Pair p = m.two_prod(q, sx);
  llvm::Value *residual = b.CreateFDiv(b.CreateFSub(b.CreateFSub(sm, p.hi), p.lo), sx);
  llvm::Value *exact = b.CreateAnd(b.CreateFCmpOGE(q, m.f(0x1p-60)), b.CreateFCmpOLT(mx, m.f(inf)));
  Pair t{q, b.CreateSelect(exact, residual, m.f(0.0))};
  t.hi = b.CreateSelect(b.CreateFCmpOEQ(mx, m.f(0.0)), m.f(0.0), t.hi);
  t.hi = b.CreateSelect(b.CreateFCmpOEQ(mn, m.f(inf)), m.f(1.0), t.hi);
  auto [kf, k] = m.round(m.fma(t.hi, m.f(4.0), m.shifter()));
  llvm::Value *centre = b.CreateFMul(kf, m.f(0.25));
  Pair tc = m.two_prod(t.hi, centre);
  Pair den = m.fast_two_sum(m.f(1.0), tc.hi);
  den.lo = b.CreateFAdd(den.lo, b.CreateFAdd(tc.lo, b.CreateFMul(t.lo, centre)));
  Pair u = m.divide({b.CreateFSub(t.hi, centre), t.lo}, den);
  llvm::Value *v = b.CreateFMul(u.hi, u.hi);
  llvm::Value *tail = m.fma(b.CreateFMul(u.hi, v), m.horner(v, c::kAtanNearP), u.lo);
  llvm::Value *base_hi = m.f(c::kAtanCentreHi[0]), *base_lo = m.f(c::kAtanCentreLo[0]);
  for (int64_t j = 1; j < static_cast<int64_t>(std::size(c::kAtanCentreHi)); ++j) {
    llvm::Value *here = b.CreateICmpEQ(k, m.i(j));
    base_hi = b.CreateSelect(here, m.f(c::kAtanCentreHi[j]), base_hi);
    base_lo = b.CreateSelect(here, m.f(c::kAtanCentreLo[j]), base_lo);
  }
  Pair s = m.two_sum(base_hi, u.hi);
  Pair r = m.fast_two_sum(s.hi, b.CreateFAdd(s.lo, b.CreateFAdd(base_lo, tail)));
  auto minus = [&](double hi, double lo, Pair w) { // (hi + lo) - w
    Pair d = m.two_sum(m.f(hi), b.CreateFNeg(w.hi));
    return Pair{d.hi, b.CreateFAdd(d.lo, b.CreateFSub(m.f(lo), w.lo))};
  };
  auto choose = [&](llvm::Value *when, Pair a, Pair e) {
    return Pair{b.CreateSelect(when, a.hi, e.hi), b.CreateSelect(when, a.lo, e.lo)};
  };
  r = choose(swap, minus(c::kPiOver2, c::kPiOver2Lo, r), r);
  r = choose(b.CreateICmpSLT(m.bits(x), m.i(0)), minus(c::kPi, c::kPiLo, r), r);
  llvm::Value *result =
      b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, b.CreateFAdd(r.hi, r.lo), y);
  return b.CreateSelect(b.CreateFCmpUNO(x, y), b.CreateFAdd(x, y), result);
}

} // namespace

llvm::Value *emit_math(llvm::IRBuilder<> &b, const CpuTarget &target, MathOpcode op,
                       llvm::ArrayRef<llvm::Value *> args) {
  llvm::Type *ty = args[0]->getType();
  llvm::Value *x = args[0];
  MathIR m(b, target, ty);
  switch (op) {
  case MathOpcode::Sqrt: return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
  case MathOpcode::Rsqrt: {
    if (ty->getScalarType()->isFloatTy()) {
      llvm::Type *wide = widened(b, ty);
      llvm::Value *d = b.CreateFPExt(x, wide);
      llvm::Value *r = b.CreateFDiv(llvm::ConstantFP::get(wide, 1.0),
                                    b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, d));
      return b.CreateFPTrunc(r, ty);
    }
    return b.CreateFDiv(llvm::ConstantFP::get(ty, 1.0),
                        b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
  }
  case MathOpcode::Sigmoid: {
    llvm::Value *e = emit_exp(m, x, /*negated=*/true);
    return b.CreateFDiv(llvm::ConstantFP::get(ty, 1.0),
                        b.CreateFAdd(llvm::ConstantFP::get(ty, 1.0), e));
  }
  case MathOpcode::Erf: return m.f64() ? emit_erf_f64(m, x) : emit_erf_f32(b, target, x);
  case MathOpcode::Exp: return emit_exp(m, x);
  case MathOpcode::Exp2: return emit_exp2(m, x);
  case MathOpcode::Log:
  case MathOpcode::Log2:
  case MathOpcode::Log10: {
    // Positive normal inputs skip the subnormal scaling and the special cases.
    const LogBase base = op == MathOpcode::Log    ? LogBase::E
                         : op == MathOpcode::Log2 ? LogBase::Two
                                                  : LogBase::Ten;
    const bool table = log_by_table(m, x->getType());
    auto form = [&](llvm::Value *v, bool normal) {
      if (table) return emit_log_table(m, v, normal, base);
      if (base == LogBase::E) return emit_log(m, v, normal);
      return emit_log_base(m, v, base == LogBase::Ten, normal);
    };
    return m.unless_rare(
        m.all_positive_normal(x), x, [&](llvm::Value *v) { return form(v, true); },
        [&](llvm::Value *v) { return form(v, false); });
  }
  case MathOpcode::Tanh: return m.f64() ? emit_tanh_f64(m, x) : emit_tanh_f32(m, x);
  case MathOpcode::Sin:
  case MathOpcode::Cos:
  case MathOpcode::Tan: {
    // Inline below kSinCosLimit (every lane); SLEEF for larger arguments, infinities and NaN.
    const double limit = m.f64() ? cpu_math::f64::kSinCosLimit : cpu_math::f32::kSinCosLimit;
    llvm::Value *small =
        m.all(b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), m.f(limit)));
    const Trig fn = op == MathOpcode::Sin   ? Trig::Sin
                    : op == MathOpcode::Cos ? Trig::Cos
                                            : Trig::Tan;
    return m.unless_rare(
        small, x,
        [&](llvm::Value *v) { return m.f64() ? emit_trig_f64(m, v, fn) : emit_trig_f32(m, v, fn); },
        [&](llvm::Value *v) { return call_library(b, target, op, {v}); });
  }
  case MathOpcode::Pow:
    return m.f64() ? emit_pow_f64(m, args[0], args[1]) : emit_pow_f32(b, target, args[0], args[1]);
  case MathOpcode::Atan2:
    return m.f64() ? emit_atan2_f64(m, args[0], args[1])
                   : emit_atan2_f32(b, target, args[0], args[1]);
  }
  throw LoweringError("unhandled math opcode");
}

} // namespace hologram::codegen::detail
