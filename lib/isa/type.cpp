// Type names of the Atlas ISA.
#include "hologram/isa/type.h"

#include <array>

namespace hologram::isa {

namespace {
constexpr std::array<std::string_view, kNumTypes> kTypeNames = {
    "", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64", "pred"};
}

std::string_view type_name(Type t) {
  return kTypeNames[static_cast<size_t>(t)];
}

std::optional<Type> parse_type(std::string_view s) {
  for (size_t i = 1; i < kTypeNames.size(); ++i)
    if (kTypeNames[i] == s) return static_cast<Type>(i);
  return std::nullopt;
}

} // namespace hologram::isa
