// f32 vector math for the CPU library ops, written on GCC vector extensions so that each x86
// level's build of gemm_kernel.cpp gets it at its own width (4, 8 or 16 lanes) with FMA where
// the level has it, inlined into the loops that use it: no call per vector. Every function is
// always_inline: left to GCC's budget for the file, exp became a call per vector as soon as the
// file grew (softmax and swiglu 1.3-1.5x slower, 2026-12-07).
//
// exp is the algorithm and constants of hologram/support/exp_f32.h; the scale 2^k is applied
// once (AVX-512 vscalefps, or two exact powers of two), so results in the subnormal range are
// rounded once. The x86-64-v3 build goes by quarters instead, and the x86-64-v4 build by
// sixteenths, with the operations of compiled kernels at those levels (exp_quarters_of,
// exp_sixteenths_of), so the two give the same bits. The exhaustive sweep
// (`scripts/math-sweep.sh`, docs/isa.md) measures its error against the correctly rounded value.
// Everything is branch-free: NaN, ±inf, overflow and underflow come out of clamps and the
// arithmetic itself.
#pragma once

#include "hologram/support/exp_f32.h"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <immintrin.h>
#include <iterator>
#include <utility>

namespace hologram::runtime::vmath {

/// The integer vector with the lanes of float vector V.
template <size_t Bytes> struct IntVector {
  typedef int32_t type __attribute__((vector_size(Bytes)));
};
template <typename V> using IntOf = typename IntVector<sizeof(V)>::type;

template <typename V> [[gnu::always_inline]] inline V splat(float f) {
  return V{} + f;
}

/// 2^k for integer lanes k in [-126, 127].
template <typename V> [[gnu::always_inline]] inline V pow2(IntOf<V> k) {
  return std::bit_cast<V>((k + 127) << 23);
}

/// p·2^k for the float and integer lanes kf, k of the same integer, |k| <= 252, rounded once
/// (results below the normal range round to subnormals or 0, above it to +inf).
template <typename V> [[gnu::always_inline]] inline V scale(V p, V kf, IntOf<V> k) {
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64) {
    (void)k;
    return reinterpret_cast<V>(_mm512_mask_scalef_ps(
        reinterpret_cast<__m512>(p), 0xffff, reinterpret_cast<__m512>(p),
        reinterpret_cast<__m512>(kf))); // the masked form: GCC 12 warns on the undefined source
  }
#endif
  (void)kf;
  const IntOf<V> k1 = k >> 1;
  return p * pow2<V>(k1) * pow2<V>(k - k1);
}

/// The x86 instruction of V's width applied to a and b: op512, op256 or op128 takes and
/// returns __m512, __m256 or __m128. Each is a generic lambda, instantiated only for the width
/// this level's build has.
template <typename V, typename Op512, typename Op256, typename Op128>
[[gnu::always_inline]] inline V x86_binary(V a, V b, Op512 op512, Op256 op256, Op128 op128) {
  (void)op512;
  (void)op256;
  (void)op128;
  if constexpr (sizeof(V) == 64) {
#if defined(__AVX512F__)
    return reinterpret_cast<V>(op512(reinterpret_cast<__m512>(a), reinterpret_cast<__m512>(b)));
#endif
  } else if constexpr (sizeof(V) == 32) {
#if defined(__AVX__)
    return reinterpret_cast<V>(op256(reinterpret_cast<__m256>(a), reinterpret_cast<__m256>(b)));
#endif
  } else {
    static_assert(sizeof(V) == 16);
    return reinterpret_cast<V>(op128(reinterpret_cast<__m128>(a), reinterpret_cast<__m128>(b)));
  }
}

/// Lane-wise maxNum(a, b) when b may be NaN and a is not: one max instruction (the x86 max
/// returns its second operand when either is NaN). The 512-bit forms are the masked ones:
/// GCC 12 warns on the undefined source of the unmasked intrinsics.
template <typename V> [[gnu::always_inline]] inline V max(V a, V b) {
  return x86_binary(
      a, b, [](auto x, auto y) { return _mm512_mask_max_ps(x, 0xffff, x, y); },
      [](auto x, auto y) { return _mm256_max_ps(x, y); },
      [](auto x, auto y) { return _mm_max_ps(x, y); });
}

/// Lane-wise minNum(a, b) when b may be NaN and a is not.
template <typename V> [[gnu::always_inline]] inline V min(V a, V b) {
  return x86_binary(
      a, b, [](auto x, auto y) { return _mm512_mask_min_ps(x, 0xffff, x, y); },
      [](auto x, auto y) { return _mm256_min_ps(x, y); },
      [](auto x, auto y) { return _mm_min_ps(x, y); });
}

/// The lowest argument exp_parts takes: exp of anything below is under 2^-158, and the scale
/// of exp_parts(kLowestArgument)·2^64 is still within scale()'s range.
constexpr float kLowestArgument = -110.0f;

/// Above this argument e^x is normal, and so is 2^k for k = round(x / ln 2) (k >= -125).
constexpr float kNormalArgument = -86.5f;
/// Up to this argument 2^k is finite, k = round(x / ln 2) <= 127 (e^x < 2^127 there, so it
/// is finite too).
constexpr float kNormalHighest = 88.0f;

/// Whether no lane of v is below `bound` (a NaN lane is not below it): one compare and a
/// mask test.
template <typename V> [[gnu::always_inline]] inline bool all_at_least(V v, V bound) {
  if constexpr (sizeof(V) == 64) {
#if defined(__AVX512F__)
    return _mm512_cmp_ps_mask(reinterpret_cast<__m512>(v), reinterpret_cast<__m512>(bound),
                              _CMP_LT_OQ) == 0;
#endif
  } else if constexpr (sizeof(V) == 32) {
#if defined(__AVX__)
    return _mm256_movemask_ps(_mm256_cmp_ps(reinterpret_cast<__m256>(v),
                                            reinterpret_cast<__m256>(bound), _CMP_LT_OQ)) == 0;
#endif
  } else {
    static_assert(sizeof(V) == 16);
    return _mm_movemask_ps(
               _mm_cmplt_ps(reinterpret_cast<__m128>(v), reinterpret_cast<__m128>(bound))) == 0;
  }
}

/// Whether no lane of v is below `lo` or above `hi` (a NaN lane is neither): two compares and
/// one mask test.
template <typename V> [[gnu::always_inline]] inline bool all_within(V v, V lo, V hi) {
  if constexpr (sizeof(V) == 64) {
#if defined(__AVX512F__)
    const auto x = reinterpret_cast<__m512>(v);
    return (_mm512_cmp_ps_mask(x, reinterpret_cast<__m512>(lo), _CMP_LT_OQ) |
            _mm512_cmp_ps_mask(x, reinterpret_cast<__m512>(hi), _CMP_GT_OQ)) == 0;
#endif
  } else if constexpr (sizeof(V) == 32) {
#if defined(__AVX__)
    const auto x = reinterpret_cast<__m256>(v);
    return _mm256_movemask_ps(
               _mm256_or_ps(_mm256_cmp_ps(x, reinterpret_cast<__m256>(lo), _CMP_LT_OQ),
                            _mm256_cmp_ps(x, reinterpret_cast<__m256>(hi), _CMP_GT_OQ))) == 0;
#endif
  } else {
    static_assert(sizeof(V) == 16);
    const auto x = reinterpret_cast<__m128>(v);
    return _mm_movemask_ps(_mm_or_ps(_mm_cmplt_ps(x, reinterpret_cast<__m128>(lo)),
                                     _mm_cmpgt_ps(x, reinterpret_cast<__m128>(hi)))) == 0;
  }
}

/// Whether exp goes by quarters (exp_quarters_of): in the x86-64-v3 build (8 lanes, FMA, no
/// AVX-512), as compiled kernels do at that level.
template <typename V>
constexpr bool kExpByQuarters =
#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
    sizeof(V) == 32;
#else
    false;
#endif

/// Whether exp goes by sixteenths (exp_sixteenths_of): in the x86-64-v4 build (16 lanes), as
/// compiled kernels do at that level.
template <typename V>
constexpr bool kExpBySixteenths =
#if defined(__AVX512F__)
    sizeof(V) == 64;
#else
    false;
#endif

/// exp(x + lo) = p·2^k with p in [0.7, 1.98], before the scale is applied.
template <typename V> struct ExpParts {
  V p, kf;    ///< p, and k as a float (by sixteenths k/16, which vscalefps floors)
  IntOf<V> k; ///< k as an integer (by sixteenths floor(k/16))
  /// By quarters (kExpByQuarters), p·2^k where 2^k and the result are normal, made more
  /// cheaply than by a multiplication; unset otherwise.
  V normal{};
  /// p·2^(k + shift), rounded once.
  [[nodiscard, gnu::always_inline]] V scaled(int shift = 0) const {
    return scale(p, kf + splat<V>(static_cast<float>(shift)), k + shift);
  }
  /// p·2^k where 2^k and the result are normal (k in [-125, 127]): one exact multiplication
  /// (AVX-512's scale instruction where there is one).
  [[nodiscard, gnu::always_inline]] V scaled_normal() const {
    if constexpr (kExpByQuarters<V>) return normal;
    if constexpr (sizeof(V) == 64) return scaled();
    return p * pow2<V>(k);
  }
};

/// exp's reduction of x + lo for a table of 2^(j/parts), j < parts (1: no table): t =
/// parts·x·log2 e + shifter holds k = round(parts·x·log2 e) in its low mantissa bits (kf: k as
/// a float), and r = x − k·ln2/parts in two steps, by ln2/parts split into a head whose
/// products with k are exact (`hi`) and the rest, plus lo (WithLo; false: no add).
template <typename V> struct Reduced {
  V t, kf;
  IntOf<V> k;
  V r;
};
template <bool WithLo, typename V>
[[gnu::always_inline]] inline Reduced<V> reduce(V x, V lo, float parts, float hi, float rest) {
  const V shifter = splat<V>(exp_f32::kShifter);
  const V t = x * splat<V>(parts * exp_f32::kLog2e) + shifter; // exact: parts is 2^n
  const V kf = t - shifter;
  V r = x - kf * splat<V>(hi);
  r = r - kf * splat<V>(rest);
  if constexpr (WithLo) r = r + lo;
  return {t, kf, std::bit_cast<IntOf<V>>(t) - std::bit_cast<IntOf<V>>(shifter), r};
}

/// The parts of exp(x + lo) by quarters, as compiled kernels at x86-64-v3 compute it
/// (lib/codegen/llvm/math.cpp emit_exp_quarters, docs/isa.md): k = round(4x·log2 e) by the
/// shifter, r = x − k·ln2/4 in two steps (k times the 14-bit head is exact), e^r − 1 =
/// r + r²·Q(r) with Q of degree 2 by Estrin's scheme, 2^(k/4) = kExpQuarters[k mod 4] (one
/// vpermilps, which reads the two low bits of t = k + shifter) times 2^floor(k/4); p is the
/// table entry times e^r, one FMA rounded once, and the scale is 2^floor(k/4).
template <bool WithLo, typename V>
[[gnu::always_inline]] inline ExpParts<V> exp_quarters_of(V x, V lo) {
  using I = IntOf<V>;
  namespace q = cpu_math::f32;
  const auto [t, kf, k, r] = reduce<WithLo>(x, lo, 4, q::kLn2QuarterHi, q::kLn2QuarterLo);
  const V r2 = r * r;
  const V poly = splat<V>(q::kExpQ[0]) * r2 + (splat<V>(q::kExpQ[1]) * r + splat<V>(q::kExpQ[2]));
  const V em1 = poly * r2 + r;
  // Entry k mod 4 of a table of 4, by one vpermilps (which reads t's two low bits).
  auto entry_of = [&]([[maybe_unused]] const auto &table) {
    V entry{};
#if defined(__AVX__)
    if constexpr (sizeof(V) == 32) {
      const __m256 both = _mm256_setr_ps(table[0], table[1], table[2], table[3], table[0], table[1],
                                         table[2], table[3]);
      entry = reinterpret_cast<V>(_mm256_permutevar_ps(both, std::bit_cast<__m256i>(t)));
    }
#endif
    return entry;
  };
  const V entry = entry_of(q::kExpQuarters);
  const I whole = k >> 2; // floor(k / 4)
  // Where the result is normal, 2^floor(k/4) goes into the entry's exponent field before the
  // FMA: t's bits 2 to 10 moved to 23 to 31 (the shifter's are 0 there) add floor(k/4) to it
  // modulo 2^9, and 127 + floor(k/4) is in [2, 254], so no carry reaches the sign. t's bits 0
  // and 1 land at 21 and 22, which kExpQuartersLessIndex's entries have had taken off. Each
  // caller uses p or normal, and the other's permute is dead code.
  const V s = std::bit_cast<V>(std::bit_cast<I>(entry_of(exp_f32::kExpQuartersLessIndex)) +
                               (std::bit_cast<I>(t) << 21));
  return {entry * em1 + entry, __builtin_convertvector(whole, V), whole, s * em1 + s};
}

/// The parts of exp(x + lo) by sixteenths, as compiled kernels at x86-64-v4 compute it
/// (lib/codegen/llvm/math.cpp emit_exp_sixteenths, docs/isa.md): k = round(16x·log2 e) by the
/// shifter, r = x − k·ln2/16 in two steps (k times the 12-bit head is exact), e^r − 1 =
/// r + r²·S(r) with S a line, p = kExpSixteenths[k mod 16] (one vpermps, which reads the four
/// low bits of t = k + shifter) times e^r, one FMA rounded once; the scale is 2^floor(k/16),
/// and kf is k/16, which vscalefps floors itself.
template <bool WithLo, typename V>
[[gnu::always_inline]] inline ExpParts<V> exp_sixteenths_of(V x, V lo) {
  namespace c = cpu_math::f32;
  const auto [t, kf, k, r] = reduce<WithLo>(x, lo, 16, c::kLn2SixteenthHi, c::kLn2SixteenthLo);
  const V em1 = (splat<V>(c::kExpS[0]) * r + splat<V>(c::kExpS[1])) * (r * r) + r;
  V entry{};
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64) { // the masked form: GCC 12 warns on the unmasked one's source
    const __m512 table = _mm512_loadu_ps(c::kExpSixteenths);
    entry = reinterpret_cast<V>(
        _mm512_mask_permutexvar_ps(table, 0xffff, std::bit_cast<__m512i>(t), table));
  }
#endif
  return {entry * em1 + entry, kf * splat<V>(1.0f / 16), k >> 4};
}

/// The parts of exp(x + lo) for x in [kLowestArgument, 89] (or NaN) and |lo| <= 2^-10: lo is the
/// rounding error of the caller's argument, folded into the reduced argument so it costs one
/// add (WithLo false: there is none, and no add). A NaN reaches r and stays NaN with no select.
template <bool WithLo, typename V>
[[gnu::always_inline]] inline ExpParts<V> exp_parts_of(V x, V lo) {
  if constexpr (kExpByQuarters<V>) return exp_quarters_of<WithLo>(x, lo);
  if constexpr (kExpBySixteenths<V>) return exp_sixteenths_of<WithLo>(x, lo);
  namespace c = exp_f32;
  const auto [t, kf, k, r] = reduce<WithLo>(x, lo, 1, c::kLn2Hi, c::kLn2Lo);
  V p = splat<V>(c::kPoly[0]);
  for (size_t i = 1; i < std::size(c::kPoly); ++i) p = p * r + splat<V>(c::kPoly[i]);
  p = p * (r * r) + r;
  p = p + splat<V>(1.0f);
  return {p, kf, k};
}
template <typename V> [[gnu::always_inline]] inline ExpParts<V> exp_parts(V x, V lo) {
  return exp_parts_of<true>(x, lo);
}
/// The parts of exp(x): the same values as exp_parts(x, 0) (r + 0 differs from r only in the
/// sign of a zero, which p = 1 + r + r²·P(r) does not keep).
template <typename V> [[gnu::always_inline]] inline ExpParts<V> exp_parts(V x) {
  return exp_parts_of<false>(x, V{});
}

/// exp(x + lo) for x in [kLowestArgument, 89]: results below 2^-150 round to 0, above the f32 range
/// to +inf.
template <typename V> [[gnu::always_inline]] inline V exp_in_range(V x, V lo) {
  return exp_parts(x, lo).scaled();
}

/// x clamped to [-105, 89], outside which exp is 0 or +inf anyway (NaN passes both clamps).
template <typename V> [[gnu::always_inline]] inline V exp_domain(V x) {
  return min(splat<V>(exp_f32::kHighest), max(splat<V>(exp_f32::kLowest), x));
}

/// exp(x) for every x: clamped to [-105, 89], outside which the result is 0 or +inf anyway
/// (NaN passes both clamps). Below AVX-512 (where the scale is one instruction and the clamps
/// cost less than the test), the usual case, every lane in [kNormalArgument, kNormalHighest]
/// (NaN counts), needs no clamp: e^x and 2^k are normal there, and one multiplication by 2^k
/// gives the bits of the general path's two.
template <typename V> [[gnu::always_inline]] inline V exp(V x) {
  if constexpr (sizeof(V) < 64)
    if (all_within(x, splat<V>(kNormalArgument), splat<V>(kNormalHighest)))
      return exp_parts(x).scaled_normal();
  return exp_in_range(exp_domain(x), V{});
}

/// exp(x - m) for finite m and x <= m (or NaN): the difference's rounding error is carried into
/// the exponential (TwoSum), so the result is as accurate as exp of the exact difference. A
/// difference below kLowestArgument gives 0: it is clamped there and its error dropped (an
/// infinite one's is NaN). The clamp is on the difference, not on x: m + kLowestArgument is m
/// itself once m is above 2^31, and every x would then count as the maximum.
template <typename V> [[gnu::always_inline]] inline V exp_below(V x, V m) {
  const V s = x - m;
  const V bb = s - x;
  const V err = (x - (s - bb)) - (m + bb);
  // The usual case: every difference above kNormalArgument (NaN counts), where e^s and 2^k
  // are normal. Then no clamp and one scale give the same bits as the general path below.
  if (all_at_least(s, splat<V>(kNormalArgument))) return exp_parts(s, err).scaled_normal();
  const V lowest = splat<V>(kLowestArgument);
  return exp_in_range(max(lowest, s), s < lowest ? V{} : err);
}

/// Running sum with compensation: add() costs six adds, one of them on the chain to the next
/// add, and the error of the total is one rounding of it plus a term of order n²u²·Σ|terms|,
/// however many terms (Ogita, Rump, Oishi, "Accurate sum and dot product", 2005).
template <typename V> struct Compensated {
  V sum{}, comp{}; ///< the total is sum - comp
  [[gnu::always_inline]] void add(V v) {
    // TwoSum: t + err = sum + v exactly. The errors are summed apart from the running sum
    // (Ogita, Rump and Oishi's Sum2), so the chain from one add to the next is one addition,
    // not Kahan's four.
    const V t = sum + v;
    const V vt = t - sum;
    const V err = (sum - (t - vt)) + (v - vt);
    comp -= err;
    sum = t;
  }
};

/// The lower and upper halves of v, as vectors of half the width (in registers: a lane
/// extract, not a trip through memory).
template <typename V, size_t... I>
[[gnu::always_inline]] inline auto low_half(V v, std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, I...);
}
template <typename V, size_t... I>
[[gnu::always_inline]] inline auto high_half(V v, std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, (I + sizeof...(I))...);
}

/// Sum of the lanes of v (any element type), pairwise: the upper half added to the lower,
/// down to two lanes: log2(lanes) dependent adds, not one per lane.
template <typename V> [[gnu::always_inline]] inline auto lane_sum(V v) {
  constexpr size_t n = sizeof(V) / sizeof(v[0]);
  if constexpr (n == 2) {
    return v[0] + v[1];
  } else {
    constexpr auto half = std::make_index_sequence<n / 2>{};
    return lane_sum(low_half(v, half) + high_half(v, half));
  }
}

/// Largest lane of v (NaN lanes ignored unless all are NaN), pairwise like lane_sum.
template <typename V> [[gnu::always_inline]] inline float lane_max(V v) {
  constexpr size_t n = sizeof(V) / sizeof(float);
  if constexpr (n == 2) {
    return v[1] > v[0] || v[0] != v[0] ? v[1] : v[0];
  } else {
    constexpr auto half = std::make_index_sequence<n / 2>{};
    const auto lo = low_half(v, half), hi = high_half(v, half);
    return lane_max(hi > lo || lo != lo ? hi : lo);
  }
}

} // namespace hologram::runtime::vmath
