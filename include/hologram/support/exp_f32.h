// The f32 exponential that both CPU code paths inline: the x86 lowering emits it as LLVM IR
// (lib/codegen/llvm/math.cpp) and the runtime's library kernels as vector code
// (runtime/cpu/vector_math.h). One set of constants, so the two cannot drift. Both go by
// quarters at x86-64-v3 instead (a table of 2^(j/4) and a shorter polynomial,
// support/cpu_math.h kExpQ), with this shifter, log2 e and range.
//
// exp(x) = 2^k · p(r): k = round(x·log2 e) by the 1.5·2^23 shifter, r = x − k·ln 2 in two parts
// (Cody–Waite; kLn2Hi has 9 trailing zero bits, so k·kLn2Hi is exact for |k| <= 256), and
// p(r) = 1 + r + r²·P(r), P of degree 4 (a Chebyshev fit, error 8e-9 on [-ln2/2, ln2/2]). Its
// error over every f32 input is in docs/isa.md.
#pragma once

#include "hologram/support/cpu_math.h"

#include <array>
#include <bit>
#include <cstdint>

namespace hologram::exp_f32 {

inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kShifter = 12582912.0f; // 1.5·2^23
inline constexpr float kLn2Hi = 0.693145751953125f;
inline constexpr float kLn2Lo = 1.42860682030941723212e-6f;
/// P(r), highest degree first (support/cpu_math.h, scripts/gen-cpu-math.py).
inline constexpr const auto &kPoly = cpu_math::f32::kExpP;
/// Outside [kLowest, kHighest] exp is 0 or +inf in f32; clamping there keeps k in range.
inline constexpr float kLowest = -105.0f;
inline constexpr float kHighest = 89.0f;

/// By quarters, where 2^floor(k/4) and the result are normal: kExpQuarters[j] with j·2^21 taken
/// off its bits. t = 4x·log2 e + kShifter holds k in its low bits, and t's bits shifted left by
/// 21 are floor(k/4)·2^23 + (k mod 4)·2^21 modulo 2^32, so this table's entry k mod 4 plus them
/// is kExpQuarters[k mod 4] with floor(k/4) added to its exponent field: one integer add, no
/// mask. Its entries are only permuted and added to as integers, never computed with as floats.
inline constexpr std::array<float, 4> kExpQuartersLessIndex = [] {
  std::array<float, 4> t{};
  for (uint32_t j = 0; j < 4; ++j)
    t[j] =
        std::bit_cast<float>(std::bit_cast<uint32_t>(cpu_math::f32::kExpQuarters[j]) - (j << 21));
  return t;
}();

} // namespace hologram::exp_f32
