// Scalar semantics of the Atlas ISA (SPEC §3.4) on raw register bits: one template per
// instruction family, dispatched on the instruction type. Internal to lib/interp.
#pragma once

#include "hologram/isa/numeric.h"
#include "hologram/isa/opcode.h"
#include "hologram/isa/type.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace hologram::interp::sem {

using isa::Type;

template <typename T> T from_bits(uint64_t b) {
  if constexpr (std::is_same_v<T, float>)
    return isa::bits_to_f32(b);
  else if constexpr (std::is_same_v<T, double>)
    return isa::bits_to_f64(b);
  else
    return static_cast<T>(b);
}
template <typename T> uint64_t to_bits(T v) {
  if constexpr (std::is_same_v<T, float>)
    return isa::f32_bits(v);
  else if constexpr (std::is_same_v<T, double>)
    return isa::f64_bits(v);
  else
    return static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(v));
}

/// Calls f(T{}) with the C++ type of an arithmetic ISA type (f16/bf16 are raw uint16_t).
template <typename F> decltype(auto) with_type(Type t, F &&f) {
  switch (t) {
  case Type::I8: return f(int8_t{});
  case Type::I16: return f(int16_t{});
  case Type::I32: return f(int32_t{});
  case Type::I64: return f(int64_t{});
  case Type::U8: return f(uint8_t{});
  case Type::U16: return f(uint16_t{});
  case Type::U32: return f(uint32_t{});
  case Type::U64: return f(uint64_t{});
  case Type::F32: return f(float{});
  case Type::F64: return f(double{});
  default: return f(uint16_t{});
  }
}

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

/// A value of any numeric type widened for conversion.
struct Wide {
  bool is_float = false;
  double f = 0;
  int64_t i = 0;
  uint64_t u = 0;
  bool is_signed = false;
};

inline Wide widen(Type t, uint64_t bits) {
  Wide w;
  switch (t) {
  case Type::F16:
    w.is_float = true;
    w.f = isa::f16_to_float(static_cast<uint16_t>(bits));
    break;
  case Type::BF16:
    w.is_float = true;
    w.f = isa::bf16_to_float(static_cast<uint16_t>(bits));
    break;
  case Type::F32:
    w.is_float = true;
    w.f = isa::bits_to_f32(bits);
    break;
  case Type::F64:
    w.is_float = true;
    w.f = isa::bits_to_f64(bits);
    break;
  default:
    with_type(t, [&](auto tag) {
      using T = decltype(tag);
      T v = from_bits<T>(bits);
      w.is_signed = std::is_signed_v<T>;
      w.i = static_cast<int64_t>(v);
      w.u = static_cast<uint64_t>(v);
      return 0;
    });
  }
  return w;
}

/// An integer as a double, rounded to odd when inexact so a later narrower rounding is exact.
inline double int_to_double_sticky(const Wide &w) {
  bool neg = w.is_signed && w.i < 0;
  uint64_t mag = neg ? (~static_cast<uint64_t>(w.i) + 1) : w.u;
  int shift = 0;
  bool sticky = false;
  while (mag >= (uint64_t{1} << 53)) {
    sticky |= mag & 1;
    mag >>= 1;
    ++shift;
  }
  if (sticky) mag |= 1;
  double d = std::ldexp(static_cast<double>(mag), shift);
  return neg ? -d : d;
}

inline uint64_t convert(Type dst, Type src, uint64_t bits) {
  Wide w = widen(src, bits);
  if (isa::is_float(dst)) {
    switch (dst) {
    case Type::F64:
      return isa::f64_bits(
          w.is_float ? w.f : (w.is_signed ? static_cast<double>(w.i) : static_cast<double>(w.u)));
    case Type::F32:
      return isa::f32_bits(w.is_float
                               ? static_cast<float>(w.f)
                               : (w.is_signed ? static_cast<float>(w.i) : static_cast<float>(w.u)));
    case Type::F16: return isa::double_to_f16(w.is_float ? w.f : int_to_double_sticky(w));
    case Type::BF16: return isa::double_to_bf16(w.is_float ? w.f : int_to_double_sticky(w));
    default: return 0;
    }
  }
  return with_type(dst, [&](auto tag) -> uint64_t {
    using T = decltype(tag);
    if (!w.is_float) return to_bits(static_cast<T>(w.is_signed ? static_cast<uint64_t>(w.i) : w.u));
    if (std::isnan(w.f)) return 0;
    double t = std::trunc(w.f);
    const double lo = static_cast<double>(std::numeric_limits<T>::min());
    const double hi_excl = static_cast<double>(std::numeric_limits<T>::max()) + 1.0; // 2^digits
    if (t <= lo) return to_bits(std::numeric_limits<T>::min());
    if (t >= hi_excl) return to_bits(std::numeric_limits<T>::max());
    return to_bits(static_cast<T>(t));
  });
}

} // namespace hologram::interp::sem
