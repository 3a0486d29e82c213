// The value types of the Atlas ISA (SPEC §3.1): names, sizes, classes and type sets.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hologram::isa {

/// A value type. `None` marks an untyped instruction; `Pred` is the predicate type.
enum class Type : uint8_t { None, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, Pred };

inline constexpr int kNumTypes = 14;

/// Size in bytes of a numeric type (0 for None and Pred).
constexpr unsigned type_size(Type t) {
  switch (t) {
  case Type::I8:
  case Type::U8: return 1;
  case Type::I16:
  case Type::U16:
  case Type::F16:
  case Type::BF16: return 2;
  case Type::I32:
  case Type::U32:
  case Type::F32: return 4;
  case Type::I64:
  case Type::U64:
  case Type::F64: return 8;
  case Type::None:
  case Type::Pred: return 0;
  }
  return 0;
}

constexpr bool is_signed_int(Type t) {
  return t == Type::I8 || t == Type::I16 || t == Type::I32 || t == Type::I64;
}
constexpr bool is_unsigned_int(Type t) {
  return t == Type::U8 || t == Type::U16 || t == Type::U32 || t == Type::U64;
}
constexpr bool is_int(Type t) {
  return is_signed_int(t) || is_unsigned_int(t);
}
constexpr bool is_float(Type t) {
  return t == Type::F16 || t == Type::BF16 || t == Type::F32 || t == Type::F64;
}
/// f16 and bf16 are storage types: no arithmetic on them.
constexpr bool is_storage_only(Type t) {
  return t == Type::F16 || t == Type::BF16;
}
constexpr bool is_numeric(Type t) {
  return is_int(t) || is_float(t);
}
constexpr unsigned type_bits(Type t) {
  return type_size(t) * 8;
}

/// The text suffix of a type (`f32`, `pred`, "" for None).
std::string_view type_name(Type t);
/// Parses a type suffix; nullopt if `s` names no type.
std::optional<Type> parse_type(std::string_view s);

/// A set of types, used by the instruction table to state what each instruction accepts.
class TypeSet {
public:
  constexpr TypeSet() = default;
  constexpr explicit TypeSet(uint32_t bits) : bits_(bits) {}
  template <typename... Ts> static constexpr TypeSet of(Ts... ts) {
    return TypeSet(((1u << static_cast<unsigned>(ts)) | ... | 0u));
  }
  [[nodiscard]] constexpr bool contains(Type t) const {
    return (bits_ >> static_cast<unsigned>(t)) & 1u;
  }
  [[nodiscard]] constexpr bool empty() const { return bits_ == 0; }
  [[nodiscard]] constexpr uint32_t bits() const { return bits_; }
  constexpr TypeSet operator|(TypeSet o) const { return TypeSet(bits_ | o.bits_); }

private:
  uint32_t bits_ = 0;
};

namespace types {
inline constexpr TypeSet kNone{};
inline constexpr TypeSet kSInt = TypeSet::of(Type::I8, Type::I16, Type::I32, Type::I64);
inline constexpr TypeSet kUInt = TypeSet::of(Type::U8, Type::U16, Type::U32, Type::U64);
inline constexpr TypeSet kInt = kSInt | kUInt;
inline constexpr TypeSet kFloat = TypeSet::of(Type::F32, Type::F64);
inline constexpr TypeSet kStorage = TypeSet::of(Type::F16, Type::BF16);
inline constexpr TypeSet kNumeric = kInt | kFloat;   ///< arithmetic types
inline constexpr TypeSet kAll = kNumeric | kStorage; ///< every value type
inline constexpr TypeSet kAtomic =                   ///< add/min/max/xchg
    TypeSet::of(Type::I32, Type::U32, Type::I64, Type::U64, Type::F32, Type::F64);
inline constexpr TypeSet kAtomicInt = TypeSet::of(Type::I32, Type::U32, Type::I64, Type::U64);
} // namespace types

} // namespace hologram::isa
