// Type dispatch for code that evaluates ISA semantics on raw register bits: the C++ type of
// each arithmetic ISA type, and the conversion between any two of them (SPEC §3.4), defined
// once for the interpreter and the runtimes.
#pragma once

#include "hologram/isa/numeric.h"
#include "hologram/isa/opcode.h"
#include "hologram/isa/type.h"
#include "hologram/support/unreachable.h"

#include <cstdint>
#include <type_traits>

namespace hologram::isa {

template <typename T> T from_bits(uint64_t b) {
  if constexpr (std::is_same_v<T, float>)
    return bits_to_f32(b);
  else if constexpr (std::is_same_v<T, double>)
    return bits_to_f64(b);
  else
    return static_cast<T>(b);
}
template <typename T> uint64_t to_bits(T v) {
  if constexpr (std::is_same_v<T, float>)
    return f32_bits(v);
  else if constexpr (std::is_same_v<T, double>)
    return f64_bits(v);
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
  case Type::F16:
  case Type::BF16:
  case Type::None:
  case Type::Pred: return f(uint16_t{});
  }
  unreachable_enum("Type");
}

/// The identity of a reduction of type t (0, 1, +inf/MAX for min, -inf/MIN for max), as bits.
uint64_t reduce_identity(ReduceOp op, Type t);

/// Converts `bits` of type `src` to type `dst` with the ISA's rules: float to int truncates
/// and saturates (NaN gives 0), int to float and float narrowing round to nearest even, once.
uint64_t convert_bits(Type dst, Type src, uint64_t bits);

} // namespace hologram::isa
