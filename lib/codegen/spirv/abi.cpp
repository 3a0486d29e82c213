// The contract between hologram-cc's SPIR-V output and the runtime that loads it: target
// names, and the reflection stored beside the words (JSON, one object per kernel). Nothing
// here needs SPIRV-Tools: the runtime links this, the code generator writes it.
#include "hologram/codegen/spirv_abi.h"

#include "hologram/isa/opcode.h"
#include "hologram/isa/type.h"

#include "../reflection_json.h"

#include <nlohmann/json.hpp>

#include <array>
#include <stdexcept>

namespace hologram::codegen {

namespace {

struct TargetRow {
  std::string_view name;
  SpirvEnv env;
};

constexpr std::array<TargetRow, 6> kTargets = {{
    {"vulkan1.1", SpirvEnv::Vulkan1_1},
    {"vulkan1.2", SpirvEnv::Vulkan1_2},
    {"vulkan1.3", SpirvEnv::Vulkan1_3},
    {"opencl1.2", SpirvEnv::OpenCL1_2},
    {"opencl2.0", SpirvEnv::OpenCL2_0},
    {"opencl3.0", SpirvEnv::OpenCL3_0},
}};

} // namespace

bool is_spirv_target_name(std::string_view name) {
  return parse_spirv_target(name).has_value();
}

std::optional<SpirvTarget> parse_spirv_target(std::string_view name) {
  for (const auto &r : kTargets)
    if (r.name == name) return SpirvTarget{std::string(r.name), r.env};
  return std::nullopt;
}

namespace {

constexpr std::array<std::pair<SpirvBinding::Kind, std::string_view>, 6> kBindingKinds = {{
    {SpirvBinding::Kind::Scratch, "scratch"},
    {SpirvBinding::Kind::Atlas, "atlas"},
    {SpirvBinding::Kind::Buffer, "buffer"},
    {SpirvBinding::Kind::Pool, "pool"},
    {SpirvBinding::Kind::Status, "status"},
    {SpirvBinding::Kind::Boundary, "boundary"},
}};
constexpr std::array<std::pair<SpirvKernelArg::Kind, std::string_view>, 11> kArgKinds = {{
    {SpirvKernelArg::Kind::Scratch, "scratch"},
    {SpirvKernelArg::Kind::Pool, "pool"},
    {SpirvKernelArg::Kind::Atlas, "atlas"},
    {SpirvKernelArg::Kind::Phase, "phase"},
    {SpirvKernelArg::Kind::Buffer, "buffer"},
    {SpirvKernelArg::Kind::Scalar, "scalar"},
    {SpirvKernelArg::Kind::Status, "status"},
    {SpirvKernelArg::Kind::Boundary, "boundary"},
    {SpirvKernelArg::Kind::Shared, "shared"},
    {SpirvKernelArg::Kind::SharedWords, "shared_words"},
    {SpirvKernelArg::Kind::BufferBytes, "buffer_bytes"},
}};

using reflection::kind_name;
using reflection::kind_of;

} // namespace

std::string spirv_reflection_json(const SpirvModule &module) {
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const auto &k : module.kernels) {
    nlohmann::ordered_json j;
    j["name"] = k.name;
    if (k.host) {
      j["host"] = true;
      kernels.push_back(j);
      continue;
    }
    nlohmann::ordered_json bindings = nlohmann::ordered_json::array();
    for (const auto &bd : k.bindings) {
      nlohmann::ordered_json x;
      x["binding"] = bd.binding;
      x["kind"] = kind_name(kBindingKinds, bd.kind);
      if (bd.kind == SpirvBinding::Kind::Buffer || bd.kind == SpirvBinding::Kind::Pool)
        x["param"] = bd.param;
      bindings.push_back(x);
    }
    j["bindings"] = bindings;
    nlohmann::ordered_json scalars = nlohmann::ordered_json::array();
    for (const auto &s : k.scalars)
      scalars.push_back({{"param", s.param}, {"offset", s.offset}, {"size", s.size}});
    j["push_constants"] = {{"bytes", k.push_constant_bytes}, {"scalars", scalars}};
    j["local_size_spec_ids"] = {k.local_size_spec_ids[0], k.local_size_spec_ids[1],
                                k.local_size_spec_ids[2]};
    j["shared_words_spec_id"] = k.shared_words_spec_id;
    j["narrow_lanes_spec_id"] = k.narrow_lanes_spec_id;
    j["flat_grid_spec_id"] = k.flat_grid_spec_id;
    if (k.exact_fma) j["fma_spec_ids"] = {k.fma_spec_ids[0], k.fma_spec_ids[1]};
    j["static_shared_bytes"] = k.static_shared_bytes;
    if (k.has_status) j["status_binding"] = k.status_binding;
    if (k.phase_offset) j["phase_offset"] = k.phase_offset;
    if (k.scratch_bytes_per_lane) j["scratch_bytes_per_lane"] = k.scratch_bytes_per_lane;
    if (!k.kernel_args.empty()) {
      nlohmann::ordered_json args = nlohmann::ordered_json::array();
      for (const auto &a : k.kernel_args)
        args.push_back({{"kind", kind_name(kArgKinds, a.kind)}, {"param", a.param}});
      j["kernel_args"] = args;
    }
    j["params"] = reflection::params_json(k.params);
    if (k.block[0] != 0) j["block"] = k.block;
    j["requires"] = k.requires_features;
    kernels.push_back(j);
  }
  return kernels.dump();
}

Expected<std::vector<SpirvKernelInfo>> parse_spirv_reflection(std::string_view json) {
  std::vector<SpirvKernelInfo> out;
  try {
    for (const auto &j : nlohmann::json::parse(json)) {
      SpirvKernelInfo k;
      k.name = j.at("name").get<std::string>();
      if (j.contains("host")) {
        k.host = j["host"].get<bool>();
        out.push_back(std::move(k));
        continue;
      }
      for (const auto &x : j.at("bindings")) {
        SpirvBinding b;
        b.binding = x.at("binding").get<uint32_t>();
        b.kind = kind_of(kBindingKinds, x.at("kind").get<std::string>());
        if (b.kind == SpirvBinding::Kind::Buffer || b.kind == SpirvBinding::Kind::Pool)
          b.param = x.at("param").get<uint32_t>();
        k.bindings.push_back(b);
      }
      const auto &pc = j.at("push_constants");
      k.push_constant_bytes = pc.at("bytes").get<uint32_t>();
      for (const auto &s : pc.at("scalars"))
        k.scalars.push_back({s.at("param").get<uint32_t>(), s.at("offset").get<uint32_t>(),
                             s.at("size").get<uint32_t>()});
      const auto &ids = j.at("local_size_spec_ids");
      for (uint32_t d = 0; d < 3; ++d) k.local_size_spec_ids[d] = ids.at(d).get<uint32_t>();
      k.shared_words_spec_id = j.at("shared_words_spec_id").get<uint32_t>();
      k.narrow_lanes_spec_id = j.value("narrow_lanes_spec_id", k.narrow_lanes_spec_id);
      k.flat_grid_spec_id = j.value("flat_grid_spec_id", k.flat_grid_spec_id);
      if (j.contains("fma_spec_ids")) {
        k.exact_fma = true;
        for (uint32_t i = 0; i < 2; ++i)
          k.fma_spec_ids[i] = j["fma_spec_ids"].at(i).get<uint32_t>();
      }
      k.static_shared_bytes = j.at("static_shared_bytes").get<uint32_t>();
      if (j.contains("status_binding")) {
        k.has_status = true;
        k.status_binding = j["status_binding"].get<uint32_t>();
      }
      if (j.contains("phase_offset")) k.phase_offset = j["phase_offset"].get<uint32_t>();
      if (j.contains("scratch_bytes_per_lane"))
        k.scratch_bytes_per_lane = j["scratch_bytes_per_lane"].get<uint64_t>();
      if (j.contains("kernel_args"))
        for (const auto &a : j["kernel_args"])
          k.kernel_args.push_back(
              {kind_of(kArgKinds, a.at("kind").get<std::string>()), a.at("param").get<uint32_t>()});
      k.params = reflection::params_of(j.value("params", nlohmann::json::array()));
      if (j.contains("block")) k.block = j["block"].get<std::array<uint32_t, 3>>();
      k.requires_features = j.at("requires").get<std::vector<std::string>>();
      out.push_back(std::move(k));
    }
  } catch (const std::exception &e) {
    return Status{ErrorCode::InvalidModule,
                  std::string("the SPIR-V reflection is malformed: ") + e.what()};
  }
  return out;
}

std::string spirv_library_reduce_kernel(isa::ReduceOp op, isa::Type type) {
  return std::string(kSpirvLibraryPrefix) + "reduce_" + std::string(isa::reduce_op_name(op)) + "_" +
         std::string(isa::type_name(type));
}

std::string spirv_library_gemm_kernel(isa::Type type, const spirv_library::GemmShape &shape) {
  const bool wide = shape.per_lane == spirv_library::kGemmWide.per_lane;
  return std::string(kSpirvLibraryPrefix) + (wide ? "gemm_wide_" : "gemm_") +
         std::string(isa::type_name(type));
}

std::string spirv_library_kernel(const isa::Instruction &inst) {
  using isa::LaunchOpcode;
  const std::string p(kSpirvLibraryPrefix), tn(isa::type_name(inst.type));
  auto family = [&](std::string_view f) { return p + std::string(f) + "_" + tn; };
  switch (isa::as_launch(inst.op)) {
  case LaunchOpcode::Map:
    return family("map_" + std::string(isa::sub_name(isa::SubKind::MapUnary, inst.sub)));
  case LaunchOpcode::Map2:
    return family("map2_" + std::string(isa::sub_name(isa::SubKind::MapBinary, inst.sub)));
  case LaunchOpcode::ReduceAll:
    return spirv_library_reduce_kernel(static_cast<isa::ReduceOp>(inst.sub), inst.type);
  case LaunchOpcode::Dot: return family("dot");
  case LaunchOpcode::Gemm:
  case LaunchOpcode::BatchedGemm:
    return spirv_library_gemm_kernel(inst.type, spirv_library::kGemmNarrow);
  case LaunchOpcode::Gemv: return family("gemv");
  case LaunchOpcode::Softmax:
  case LaunchOpcode::LogSoftmax: return family("softmax");
  case LaunchOpcode::LayerNorm:
  case LaunchOpcode::RmsNorm: return family("norm");
  case LaunchOpcode::Silu:
  case LaunchOpcode::Gelu:
  case LaunchOpcode::GeluTanh: return family("act");
  case LaunchOpcode::Rope: return family("rope");
  case LaunchOpcode::Attention: return family("attention");
  case LaunchOpcode::Conv2d: return family("conv2d");
  case LaunchOpcode::Axpy: return family("axpy");
  }
  throw std::logic_error("spirv_library_kernel: not a whole-launch opcode");
}

} // namespace hologram::codegen
