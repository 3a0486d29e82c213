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

} // namespace hologram::exp_f32
