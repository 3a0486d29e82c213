// Scalar semantics of the Atlas ISA (SPEC §3.4) on raw register bits: one template per
// instruction family, dispatched on the instruction type. Internal to lib/interp.
#pragma once

#include "hologram/isa/numeric.h"
#include "hologram/isa/opcode.h"
#include "hologram/isa/program.h"
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
using isa::wrap_add;
using isa::wrap_mul;
using isa::wrap_sub;

template <typename T> using U = std::make_unsigned_t<T>;

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

/// A Math instruction: on f32 it evaluates in double and rounds once; f64 uses libm directly.
/// `y` is the second source of pow and atan2, ignored by the others.
template <typename T> T math(isa::MathOpcode op, T x, T y) {
  using enum isa::MathOpcode;
  if constexpr (!std::is_floating_point_v<T>) {
    return T{}; // the verifier admits float types only
  } else {
    const double v = x, w = y;
    double r = 0;
    switch (op) {
    case Exp: r = std::exp(v); break;
    case Exp2: r = std::exp2(v); break;
    case Log: r = std::log(v); break;
    case Log2: r = std::log2(v); break;
    case Log10: r = std::log10(v); break;
    case Sqrt: r = std::sqrt(v); break;
    case Rsqrt:
      if constexpr (std::is_same_v<T, double>) return 1.0 / std::sqrt(x);
      r = 1.0 / std::sqrt(v);
      break;
    case Sin: r = std::sin(v); break;
    case Cos: r = std::cos(v); break;
    case Tan: r = std::tan(v); break;
    case Tanh: r = std::tanh(v); break;
    case Erf: r = std::erf(v); break;
    case Sigmoid: return sigmoid(x);
    case Pow: r = std::pow(v, w); break;
    case Atan2: r = std::atan2(v, w); break;
    }
    return static_cast<T>(r);
  }
}

/// An Arith instruction on its sources x, y, z (those it does not have are ignored); an
/// integer div or rem by zero sets `div_by_zero` (the result is 0, SPEC §3.4).
template <typename T> T arith(isa::ArithOpcode op, T x, T y, T z, bool &div_by_zero) {
  using enum isa::ArithOpcode;
  constexpr bool kInt = std::is_integral_v<T>;
  constexpr bool kFloat = std::is_floating_point_v<T>;
  switch (op) {
  case Add:
    if constexpr (kInt)
      return wrap_add(x, y);
    else
      return static_cast<T>(x + y);
  case Sub:
    if constexpr (kInt)
      return wrap_sub(x, y);
    else
      return static_cast<T>(x - y);
  case Mul:
    if constexpr (kInt)
      return wrap_mul(x, y);
    else
      return static_cast<T>(x * y);
  case Div:
    if constexpr (kInt) {
      div_by_zero = y == 0;
      return int_div(x, y);
    } else {
      return static_cast<T>(x / y);
    }
  case Rem:
    if constexpr (kInt) {
      div_by_zero = y == 0;
      return int_rem(x, y);
    } else {
      return static_cast<T>(std::fmod(x, y));
    }
  case Mad:
    if constexpr (kInt) {
      return wrap_add(wrap_mul(x, y), z);
    } else {
      volatile T p = x * y; // rounded product, then a rounded sum
      return static_cast<T>(p + z);
    }
  case Fma:
    if constexpr (kFloat)
      return std::fma(x, y, z);
    else
      return T{};
  case Fms:
    if constexpr (kFloat)
      return std::fma(x, y, -z);
    else
      return T{};
  case Min: return num_min(x, y);
  case Max: return num_max(x, y);
  case Abs:
    if constexpr (kFloat)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<T>)
      return x < 0 ? wrap_sub(T{0}, x) : x;
    else
      return x;
  case Neg:
    if constexpr (kFloat)
      return static_cast<T>(-x);
    else
      return wrap_sub(T{0}, x);
  case Rcp:
    if constexpr (kFloat)
      return static_cast<T>(T{1} / x);
    else
      return T{};
  case Clamp: return num_min(num_max(x, y), z);
  case Lerp:
    if constexpr (kFloat) {
      volatile T d = y - x;
      volatile T m = d * z;
      return static_cast<T>(x + m);
    } else {
      return T{};
    }
  case Sign:
    if constexpr (kFloat)
      return x > 0 ? T{1} : x < 0 ? T{-1} : x;
    else if constexpr (std::is_signed_v<T>)
      return static_cast<T>(x > 0 ? 1 : x < 0 ? -1 : 0);
    else
      return static_cast<T>(x > 0 ? 1 : 0);
  case Floor:
    if constexpr (kFloat)
      return std::floor(x);
    else
      return T{};
  case Ceil:
    if constexpr (kFloat)
      return std::ceil(x);
    else
      return T{};
  case Round:
    if constexpr (kFloat)
      return std::round(x);
    else
      return T{};
  case Trunc:
    if constexpr (kFloat)
      return std::trunc(x);
    else
      return T{};
  }
  return T{};
}

/// A Logic instruction on integer values: x and y are its sources, `shift` the u32 amount of
/// shl/shr. The comparison, selection and predicate instructions have no integer result; the
/// interpreter evaluates them itself.
template <typename T> T logic(isa::LogicOpcode op, T x, T y, uint32_t shift) {
  using enum isa::LogicOpcode;
  if constexpr (!std::is_integral_v<T>) {
    return T{}; // the verifier admits integer types only
  } else {
    switch (op) {
    case And: return static_cast<T>(x & y);
    case Or: return static_cast<T>(x | y);
    case Xor: return static_cast<T>(x ^ y);
    case Not: return static_cast<T>(~x);
    case Shl:
      return static_cast<T>(static_cast<U<T>>(static_cast<U<T>>(x) << (shift % (sizeof(T) * 8))));
    case Shr: return static_cast<T>(x >> (shift % (sizeof(T) * 8)));
    case Set:
    case Sel:
    case PAnd:
    case POr:
    case PNot: return T{};
    }
    return T{};
  }
}

/// The value of an Arith, integer Logic or Math instruction whose sources hold the bits a, b, c
/// (in operand order; those it does not have are ignored); 0 for other instructions. Shared by
/// the interpreter and constant folding (interp::evaluate_pure), so both compute alike.
inline uint64_t compute(const isa::Instruction &inst, uint64_t a, uint64_t b, uint64_t c,
                        bool &div_by_zero) {
  using isa::OpFamily;
  return with_type(inst.type, [&](auto tag) -> uint64_t {
    using T = decltype(tag);
    const T x = from_bits<T>(a), y = from_bits<T>(b), z = from_bits<T>(c);
    switch (isa::family_of(inst.op)) {
    case OpFamily::Arith:
      return to_bits(arith(isa::as_family<isa::ArithOpcode>(inst.op), x, y, z, div_by_zero));
    case OpFamily::Logic:
      return to_bits(
          logic(isa::as_family<isa::LogicOpcode>(inst.op), x, y, static_cast<uint32_t>(b)));
    case OpFamily::Math: return to_bits(math(isa::as_family<isa::MathOpcode>(inst.op), x, y));
    case OpFamily::Move:
    case OpFamily::Control:
    case OpFamily::Sync:
    case OpFamily::Atomic:
    case OpFamily::Atlas:
    case OpFamily::Reduce:
    case OpFamily::Pool:
    case OpFamily::HigherOrder:
    case OpFamily::Library: break; // not a computation on registers
    }
    return uint64_t{0};
  });
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
