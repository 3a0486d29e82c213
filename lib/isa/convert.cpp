// Conversions between ISA types (see type_dispatch.h).
#include "hologram/isa/type_dispatch.h"

#include <cmath>
#include <limits>

namespace hologram::isa {

namespace {

/// A value of any numeric type widened for conversion.
struct Wide {
  bool is_float = false;
  double f = 0;
  int64_t i = 0;
  uint64_t u = 0;
  bool is_signed = false;
};

Wide widen(Type t, uint64_t bits) {
  Wide w;
  switch (t) {
  case Type::F16:
    w.is_float = true;
    w.f = f16_to_float(static_cast<uint16_t>(bits));
    break;
  case Type::BF16:
    w.is_float = true;
    w.f = bf16_to_float(static_cast<uint16_t>(bits));
    break;
  case Type::F32:
    w.is_float = true;
    w.f = bits_to_f32(bits);
    break;
  case Type::F64:
    w.is_float = true;
    w.f = bits_to_f64(bits);
    break;
  case Type::None:
  case Type::Pred:
  case Type::I8:
  case Type::I16:
  case Type::I32:
  case Type::I64:
  case Type::U8:
  case Type::U16:
  case Type::U32:
  case Type::U64:
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
double int_to_double_sticky(const Wide &w) {
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

} // namespace

uint64_t reduce_identity(ReduceOp op, Type t) {
  return with_type(t, [&](auto tag) -> uint64_t {
    using T = decltype(tag);
    switch (op) {
    case ReduceOp::Add: return to_bits(T{0});
    case ReduceOp::Mul: return to_bits(T{1});
    case ReduceOp::Min:
      if constexpr (std::is_floating_point_v<T>)
        return to_bits(std::numeric_limits<T>::infinity());
      else
        return to_bits(std::numeric_limits<T>::max());
    case ReduceOp::Max:
      if constexpr (std::is_floating_point_v<T>)
        return to_bits(-std::numeric_limits<T>::infinity());
      else
        return to_bits(std::numeric_limits<T>::lowest());
    }
    return 0;
  });
}

uint64_t convert_bits(Type dst, Type src, uint64_t bits) {
  Wide w = widen(src, bits);
  if (is_float(dst)) {
    switch (dst) {
    case Type::F64:
      return f64_bits(
          w.is_float ? w.f : (w.is_signed ? static_cast<double>(w.i) : static_cast<double>(w.u)));
    case Type::F32:
      return f32_bits(w.is_float
                          ? static_cast<float>(w.f)
                          : (w.is_signed ? static_cast<float>(w.i) : static_cast<float>(w.u)));
    case Type::F16: return double_to_f16(w.is_float ? w.f : int_to_double_sticky(w));
    case Type::BF16: return double_to_bf16(w.is_float ? w.f : int_to_double_sticky(w));
    case Type::None:
    case Type::Pred:
    case Type::I8:
    case Type::I16:
    case Type::I32:
    case Type::I64:
    case Type::U8:
    case Type::U16:
    case Type::U32:
    case Type::U64: return 0;
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

} // namespace hologram::isa
