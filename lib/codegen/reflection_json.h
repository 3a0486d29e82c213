// What the SPIR-V and PTX reflections (spirv_abi.h, ptx_abi.h) store alike: kernel
// parameters as JSON, and the tables that name enum values in it.
#pragma once

#include "hologram/isa/program.h"
#include "hologram/isa/type.h"

#include <nlohmann/json.hpp>

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hologram::codegen::reflection {

template <typename K, size_t N> using NameTable = std::array<std::pair<K, std::string_view>, N>;

template <typename K, size_t N> std::string_view kind_name(const NameTable<K, N> &table, K k) {
  for (const auto &[kind, name] : table)
    if (kind == k) return name;
  return "?";
}
template <typename K, size_t N> K kind_of(const NameTable<K, N> &table, const std::string &name) {
  for (const auto &[kind, n] : table)
    if (n == name) return kind;
  throw std::runtime_error("unknown kind '" + name + "'");
}

inline constexpr NameTable<isa::ParamKind, 3> kParamKinds = {{
    {isa::ParamKind::Buffer, "buffer"},
    {isa::ParamKind::Pool, "pool"},
    {isa::ParamKind::Scalar, "scalar"},
}};
inline constexpr NameTable<isa::Access, 3> kAccesses = {{
    {isa::Access::Read, "read"},
    {isa::Access::Write, "write"},
    {isa::Access::ReadWrite, "readwrite"},
}};

/// [{"name", "kind", "type", "access"}, ...]
inline nlohmann::ordered_json params_json(const std::vector<isa::Param> &params) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto &p : params)
    out.push_back({{"name", p.name},
                   {"kind", kind_name(kParamKinds, p.kind)},
                   {"type", isa::type_name(p.type)},
                   {"access", kind_name(kAccesses, p.access)}});
  return out;
}

/// What params_json wrote; throws std::runtime_error naming what is wrong.
inline std::vector<isa::Param> params_of(const nlohmann::json &array) {
  std::vector<isa::Param> out;
  for (const auto &x : array) {
    isa::Param p;
    p.name = x.at("name").get<std::string>();
    p.kind = kind_of(kParamKinds, x.at("kind").get<std::string>());
    auto type = x.at("type").get<std::string>();
    auto t = isa::parse_type(type);
    if (!t && type != isa::type_name(isa::Type::None))
      throw std::runtime_error("unknown type '" + type + "'");
    p.type = t.value_or(isa::Type::None);
    p.access = kind_of(kAccesses, x.at("access").get<std::string>());
    out.push_back(std::move(p));
  }
  return out;
}

} // namespace hologram::codegen::reflection
