// See case_file.h.
#include "case_file.h"

#include "hologram/isa/type.h"
#include "hologram/support/unreachable.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <span>
#include <stdexcept>

namespace hologram::conformance {

using nlohmann::json;

namespace {

json bytes_of(std::span<const std::byte> b) {
  const auto *p = reinterpret_cast<const uint8_t *>(b.data());
  return json::binary(std::vector<uint8_t>(p, p + b.size()));
}

std::vector<std::byte> bytes_from(const json &j) {
  const auto &bin = j.get_binary();
  std::vector<std::byte> out(bin.size());
  std::transform(bin.begin(), bin.end(), out.begin(), [](uint8_t v) { return std::byte{v}; });
  return out;
}

json dim3(const Dim3 &d) {
  return json::array({d.x, d.y, d.z});
}

Dim3 dim3_from(const json &j) {
  if (!j.is_array() || j.size() != 3) throw std::runtime_error("a dimension is not [x, y, z]");
  return {j.at(0).get<uint32_t>(), j.at(1).get<uint32_t>(), j.at(2).get<uint32_t>()};
}

const char *kind_name(isa::ParamKind k) {
  switch (k) {
  case isa::ParamKind::Buffer: return "buffer";
  case isa::ParamKind::Pool: return "pool";
  case isa::ParamKind::Scalar: return "scalar";
  }
  unreachable_enum("ParamKind");
}

template <typename E, size_t N>
E enum_from(const json &j, const std::array<std::pair<const char *, E>, N> &names,
            const char *what) {
  const std::string s = j.get<std::string>();
  for (const auto &[name, value] : names)
    if (s == name) return value;
  throw std::runtime_error(std::string("unknown ") + what + " '" + s + "'");
}

Type type_from(const json &j) {
  const std::string s = j.get<std::string>();
  if (s == "none") return Type::None;
  auto t = isa::parse_type(s);
  if (!t) throw std::runtime_error("unknown type '" + s + "'");
  return *t;
}

std::string type_text(Type t) {
  return t == Type::None ? "none" : std::string(isa::type_name(t));
}

/// Arrays, scalars and the boundary pool's classes that are not all zero.
json data_of(const CaseData &d) {
  json arrays = json::object(), classes = json::object();
  for (const auto &[name, a] : d.arrays)
    arrays[name] = {{"type", type_text(a.type)}, {"bytes", bytes_of(a.bytes)}};
  for (uint32_t k = 0; k < atlas::kNumClasses; ++k) {
    std::span<const std::byte> c(d.boundary.data() + uint64_t{k} * atlas::kClassBytes,
                                 atlas::kClassBytes);
    if (std::any_of(c.begin(), c.end(), [](std::byte b) { return b != std::byte{0}; }))
      classes[std::to_string(k)] = bytes_of(c);
  }
  return {{"arrays", arrays}, {"scalars", d.scalars}, {"classes", classes}};
}

CaseData data_from(const json &j) {
  CaseData d;
  for (const auto &[name, a] : j.at("arrays").items())
    d.arrays[name] = Array{type_from(a.at("type")), bytes_from(a.at("bytes"))};
  for (const auto &[name, v] : j.at("scalars").items()) d.scalars[name] = v.get<uint64_t>();
  for (const auto &[key, bytes] : j.at("classes").items()) {
    const unsigned long k = std::stoul(key);
    std::vector<std::byte> b = bytes_from(bytes);
    if (k >= atlas::kNumClasses || b.size() != atlas::kClassBytes)
      throw std::runtime_error("boundary class " + key + " is not a class of " +
                               std::to_string(atlas::kClassBytes) + " bytes");
    std::copy(b.begin(), b.end(),
              d.boundary.begin() + static_cast<std::ptrdiff_t>(k) * atlas::kClassBytes);
  }
  return d;
}

const std::array<std::pair<const char *, isa::ParamKind>, 3> kKinds = {
    {{"buffer", isa::ParamKind::Buffer},
     {"pool", isa::ParamKind::Pool},
     {"scalar", isa::ParamKind::Scalar}}};
const std::array<std::pair<const char *, isa::Access>, 3> kAccesses = {
    {{"read", isa::Access::Read},
     {"write", isa::Access::Write},
     {"readwrite", isa::Access::ReadWrite}}};

} // namespace

std::string encode_case(const ExportedCase &c) {
  json params = json::array(), checks = json::array();
  for (const auto &p : c.params)
    params.push_back({{"name", p.name},
                      {"kind", kind_name(p.kind)},
                      {"type", type_text(p.type)},
                      {"access", std::string(isa::access_name(p.access))}});
  for (const auto &k : c.checks)
    checks.push_back({{"name", k.name},
                      {"ulps", k.tol.ulps},
                      {"abs", k.tol.abs},
                      {"count", static_cast<uint64_t>(k.count)},
                      {"unordered", k.unordered}});
  json levels = json::array();
  for (const auto &l : c.levels)
    levels.push_back(
        {{"opt_level", l.opt_level}, {"bundle", l.bundle}, {"unsupported", l.unsupported}});
  json j = {{"name", c.name},
            {"kernel", c.kernel},
            {"grid", dim3(c.launch.grid)},
            {"block", dim3(c.launch.block)},
            {"shared_memory", c.launch.shared_memory},
            {"params", params},
            {"inputs", data_of(c.inputs)},
            {"expected", data_of(c.expected)},
            {"checks", checks},
            {"cpu_paths", c.cpu_paths},
            {"device_paths", c.device_paths},
            {"levels", levels}};
  const std::vector<uint8_t> bytes = json::to_cbor(j);
  return {bytes.begin(), bytes.end()};
}

Expected<ExportedCase> decode_case(std::string_view bytes, const std::string &what) {
  try {
    const json j = json::from_cbor(bytes.begin(), bytes.end());
    ExportedCase c;
    c.name = j.at("name").get<std::string>();
    c.kernel = j.at("kernel").get<std::string>();
    c.launch.grid = dim3_from(j.at("grid"));
    c.launch.block = dim3_from(j.at("block"));
    c.launch.shared_memory = j.at("shared_memory").get<uint32_t>();
    for (const auto &p : j.at("params")) {
      isa::Param param;
      param.name = p.at("name").get<std::string>();
      param.kind = enum_from(p.at("kind"), kKinds, "parameter kind");
      param.type = type_from(p.at("type"));
      param.access = enum_from(p.at("access"), kAccesses, "access");
      c.params.push_back(std::move(param));
    }
    c.inputs = data_from(j.at("inputs"));
    c.expected = data_from(j.at("expected"));
    for (const auto &k : j.at("checks")) {
      Check check;
      check.name = k.at("name").get<std::string>();
      check.tol.ulps = k.at("ulps").get<uint32_t>();
      check.tol.abs = k.at("abs").get<double>();
      check.count = static_cast<size_t>(k.at("count").get<uint64_t>());
      check.unordered = k.at("unordered").get<bool>();
      c.checks.push_back(std::move(check));
    }
    c.cpu_paths = j.at("cpu_paths").get<std::set<std::string>>();
    c.device_paths = j.at("device_paths").get<std::set<std::string>>();
    for (const auto &l : j.at("levels"))
      c.levels.push_back({l.at("opt_level").get<unsigned>(), l.at("bundle").get<std::string>(),
                          l.at("unsupported").get<std::map<std::string, std::string>>()});
    return c;
  } catch (const std::exception &e) {
    return Status{ErrorCode::InvalidModule, what + " is not a conformance case file: " + e.what()};
  }
}

} // namespace hologram::conformance
