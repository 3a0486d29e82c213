// Bit-exact numeric helpers shared by the literal parser, the interpreter, the CPU runtime and
// the tests: f16/bf16 conversions with round-to-nearest-even, bit casts, and the wrapping
// integer arithmetic of SPEC §3.4.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

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

/// Integer addition, subtraction and multiplication modulo 2^bits (SPEC §3.4), computed in an
/// unsigned type so that no signed overflow is undefined.
template <typename T> using Unsigned = std::make_unsigned_t<T>;

template <typename T> T wrap_add(T a, T b) {
  return static_cast<T>(
      static_cast<Unsigned<T>>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b)));
}
template <typename T> T wrap_sub(T a, T b) {
  return static_cast<T>(
      static_cast<Unsigned<T>>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b)));
}
template <typename T> T wrap_mul(T a, T b) {
  // Promote to at least unsigned int so the multiplication itself cannot overflow a signed int.
  using P = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, Unsigned<T>>;
  return static_cast<T>(static_cast<Unsigned<T>>(static_cast<P>(static_cast<Unsigned<T>>(a)) *
                                                 static_cast<P>(static_cast<Unsigned<T>>(b))));
}

} // namespace hologram::isa
