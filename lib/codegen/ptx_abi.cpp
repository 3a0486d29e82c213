// See ptx_abi.h.
#include "hologram/codegen/ptx_abi.h"

#include "reflection_json.h"

#include <nlohmann/json.hpp>

namespace hologram::codegen {

namespace {

/// cuda-sm_NN: the architectures and the oldest PTX ISA version each needs.
struct Arch {
  unsigned sm, ptx;
};
constexpr Arch kArchs[] = {{70, 60}, {75, 63}, {80, 70}, {86, 71}, {89, 78}, {90, 78}};

} // namespace

bool is_ptx_target_name(std::string_view name) {
  return name.starts_with("cuda");
}

std::optional<PtxTarget> parse_ptx_target(std::string_view name) {
  for (const Arch &a : kArchs)
    if (name == "cuda-sm_" + std::to_string(a.sm)) return PtxTarget{std::string(name), a.sm, a.ptx};
  return std::nullopt;
}

std::string ptx_target_names() {
  std::string out;
  for (const Arch &a : kArchs)
    out += (out.empty() ? "" : ", ") + ("cuda-sm_" + std::to_string(a.sm));
  return out;
}

std::string ptx_reflection_json(const std::vector<PtxKernelInfo> &kernels) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto &k : kernels) {
    if (k.host) {
      out.push_back({{"name", k.name}, {"host", true}});
      continue;
    }
    out.push_back({{"name", k.name},
                   {"static_shared_bytes", k.static_shared_bytes},
                   {"status", k.has_status},
                   {"boundary", k.has_boundary},
                   {"atlas", k.has_atlas},
                   {"phase", k.has_phase},
                   {"params", reflection::params_json(k.params)}});
  }
  return out.dump();
}

Expected<std::vector<PtxKernelInfo>> parse_ptx_reflection(std::string_view json) {
  try {
    const auto j = nlohmann::json::parse(json);
    if (!j.is_array()) throw std::runtime_error("not an array of kernels");
    std::vector<PtxKernelInfo> out;
    for (const auto &k : j) {
      PtxKernelInfo info;
      info.name = k.at("name").get<std::string>();
      if (k.value("host", false)) {
        info.host = true;
        out.push_back(std::move(info));
        continue;
      }
      info.params = reflection::params_of(k.value("params", nlohmann::json::array()));
      info.static_shared_bytes = k.at("static_shared_bytes").get<uint32_t>();
      info.has_status = k.at("status").get<bool>();
      info.has_boundary = k.at("boundary").get<bool>();
      info.has_atlas = k.at("atlas").get<bool>();
      info.has_phase = k.at("phase").get<bool>();
      out.push_back(std::move(info));
    }
    return out;
  } catch (const std::exception &e) {
    return Status{ErrorCode::InvalidModule, std::string("PTX reflection: ") + e.what()};
  }
}

} // namespace hologram::codegen
