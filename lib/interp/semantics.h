// Scalar semantics of the Atlas ISA (SPEC §3.4) on raw register bits: one template per
// instruction family, dispatched on the instruction type. Internal to lib/interp.
#pragma once

#include "hologram/isa/numeric.h"
#include "hologram/isa/opcode.h"
#include "hologram/isa/type.h"
#include "hologram/isa/type_dispatch.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace hologram::interp::sem {

using isa::Type;

using isa::from_bits;
using isa::to_bits;
using isa::with_type;

template <typename T> using U = std::make_unsigned_t<T>;

template <typename T> T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<U<T>>(static_cast<U<T>>(a) + static_cast<U<T>>(b)));
}
template <typename T> T wrap_sub(T a, T b) {
  return static_cast<T>(static_cast<U<T>>(static_cast<U<T>>(a) - static_cast<U<T>>(b)));
}
template <typename T> T wrap_mul(T a, T b) {
  // Promote to at least unsigned int so the multiplication itself cannot overflow a signed int.
  using P = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U<T>>;
  return static_cast<T>(static_cast<U<T>>(static_cast<P>(static_cast<U<T>>(a)) *
                                          static_cast<P>(static_cast<U<T>>(b))));
}

template <typename T> T int_div(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>)
    if (a == std::numeric_limits<T>::min() && b == -1) return a;
  return static_cast<T>(a / b);
}
template <typename T> T int_rem(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>)
    if (a == std::numeric_limits<T>::min() && b == -1) return 0;
  return static_cast<T>(a % b);
}

/// minNum / maxNum: a NaN operand loses to a number; -0 orders below +0.
template <typename T> T num_min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a == 0 && b == 0) return std::signbit(a) ? a : b;
    return std::fmin(a, b);
  } else {
    return a < b ? a : b;
  }
}
template <typename T> T num_max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a == 0 && b == 0) return std::signbit(a) ? b : a;
    return std::fmax(a, b);
  } else {
    return a > b ? a : b;
  }
}

/// sigmoid(x) = 1 / (1 + exp(-x)). When exp(-x) overflows T the result is exactly 0, and it
/// rounds to exactly 1 for large x: it saturates and is never NaN for finite x.
template <typename T> T sigmoid(T x) {
  if (std::isnan(x)) return x;
  double e = std::exp(-static_cast<double>(x));
  if (e > static_cast<double>(std::numeric_limits<T>::max())) return T{0};
  return static_cast<T>(1.0 / (1.0 + e));
}

/// Unary math on f32 evaluates in double and rounds once; f64 uses libm directly.
template <typename T> T math1(isa::Opcode op, T x) {
  using isa::Opcode;
  using C = double;
  C v = x;
  C r;
  switch (op) {
  case Opcode::Exp: r = std::exp(v); break;
  case Opcode::Exp2: r = std::exp2(v); break;
  case Opcode::Log: r = std::log(v); break;
  case Opcode::Log2: r = std::log2(v); break;
  case Opcode::Log10: r = std::log10(v); break;
  case Opcode::Sqrt: r = std::sqrt(v); break;
  case Opcode::Rsqrt: r = 1.0 / std::sqrt(v); break;
  case Opcode::Sin: r = std::sin(v); break;
  case Opcode::Cos: r = std::cos(v); break;
  case Opcode::Tan: r = std::tan(v); break;
  case Opcode::Tanh: r = std::tanh(v); break;
  case Opcode::Erf: r = std::erf(v); break;
  case Opcode::Sigmoid: return sigmoid(x);
  default: r = v; break;
  }
  if constexpr (std::is_same_v<T, double>) {
    if (op == Opcode::Rsqrt) return 1.0 / std::sqrt(x);
    return r;
  } else {
    return static_cast<T>(r);
  }
}

template <typename T> bool compare(isa::CmpCode cc, T a, T b) {
  using isa::CmpCode;
  bool unordered = false;
  if constexpr (std::is_floating_point_v<T>) unordered = std::isnan(a) || std::isnan(b);
  switch (cc) {
  case CmpCode::Eq: return !unordered && a == b;
  case CmpCode::Ne: return !unordered && a != b;
  case CmpCode::Lt: return !unordered && a < b;
  case CmpCode::Le: return !unordered && a <= b;
  case CmpCode::Gt: return !unordered && a > b;
  case CmpCode::Ge: return !unordered && a >= b;
  case CmpCode::Equ: return unordered || a == b;
  case CmpCode::Neu: return unordered || a != b;
  case CmpCode::Ltu: return unordered || a < b;
  case CmpCode::Leu: return unordered || a <= b;
  case CmpCode::Gtu: return unordered || a > b;
  case CmpCode::Geu: return unordered || a >= b;
  }
  return false;
}

/// Conversion between any two numeric types (one definition, in lib/isa).
inline uint64_t convert(Type dst, Type src, uint64_t bits) {
  return isa::convert_bits(dst, src, bits);
}

} // namespace hologram::interp::sem
