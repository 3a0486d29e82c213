// Bit-exact numeric helpers shared by the literal parser, the interpreter and the tests:
// f16/bf16 conversions with round-to-nearest-even and bit casts.
#pragma once

#include <bit>
#include <cstdint>

namespace hologram::isa {

/// Rounds a double to IEEE binary16 bits (round to nearest even; overflow to infinity).
uint16_t double_to_f16(double v);
/// Rounds a double to bfloat16 bits (round to nearest even; NaN stays NaN).
uint16_t double_to_bf16(double v);
/// Exact widening of f16 / bf16 bits to float.
float f16_to_float(uint16_t bits);
float bf16_to_float(uint16_t bits);

inline float bits_to_f32(uint64_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b));
}
inline double bits_to_f64(uint64_t b) {
  return std::bit_cast<double>(b);
}
inline uint64_t f32_bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
inline uint64_t f64_bits(double d) {
  return std::bit_cast<uint64_t>(d);
}

} // namespace hologram::isa
