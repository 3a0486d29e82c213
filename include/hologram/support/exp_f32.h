// The f32 exponential that both CPU code paths inline: the x86 lowering emits it as LLVM IR
// (lib/codegen/llvm/math.cpp) and the runtime's library kernels as vector code
// (runtime/cpu/vector_math.h). One set of constants, so the two cannot drift.
//
// exp(x) = 2^k · p(r): k = round(x·log2 e) by the 1.5·2^23 shifter, r = x − k·ln 2 in two parts
// (Cody–Waite; kLn2Hi has 9 trailing zero bits, so k·kLn2Hi is exact for |k| <= 256), and
// p(r) = 1 + r + r²·P(r) with the degree-5 P below (the Cephes/SLEEF coefficients). Its error
// is 1.02 ulp over every f32 input (docs/isa.md).
#pragma once

namespace hologram::exp_f32 {

inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kShifter = 12582912.0f; // 1.5·2^23
inline constexpr float kLn2Hi = 0.693145751953125f;
inline constexpr float kLn2Lo = 1.42860682030941723212e-6f;
/// P(r), highest degree first.
inline constexpr float kPoly[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                  4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
/// Outside [kLowest, kHighest] exp is 0 or +inf in f32; clamping there keeps k in range.
inline constexpr float kLowest = -105.0f;
inline constexpr float kHighest = 89.0f;

} // namespace hologram::exp_f32
