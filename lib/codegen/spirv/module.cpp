// The SPIR-V module driver: targets, one module per ISA module (an entry point per kernel),
// SPIRV-Tools validation before and after spirv-opt, disassembly and reflection.
#include "hologram/codegen/spirv.h"
#include "hologram/codegen/spirv_library.h"
#include "lowering.h"

#include <nlohmann/json.hpp>
#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include <array>
#include <sstream>
#include <stdexcept>

namespace hologram::codegen {

namespace {

struct TargetRow {
  std::string_view name;
  SpirvEnv env;
  spv_target_env tools_env;
  uint32_t version; ///< SPIR-V version word
};

constexpr std::array<TargetRow, 6> kTargets = {{
    {"vulkan1.1", SpirvEnv::Vulkan1_1, SPV_ENV_VULKAN_1_1, 0x00010300},
    {"vulkan1.2", SpirvEnv::Vulkan1_2, SPV_ENV_VULKAN_1_2, 0x00010500},
    {"vulkan1.3", SpirvEnv::Vulkan1_3, SPV_ENV_VULKAN_1_3, 0x00010600},
    {"opencl1.2", SpirvEnv::OpenCL1_2, SPV_ENV_OPENCL_1_2, 0x00010000},
    {"opencl2.0", SpirvEnv::OpenCL2_0, SPV_ENV_OPENCL_2_0, 0x00010000},
    {"opencl3.0", SpirvEnv::OpenCL3_0, SPV_ENV_OPENCL_2_2, 0x00010200},
}};

const TargetRow &row(SpirvEnv env) {
  for (const auto &r : kTargets)
    if (r.env == env) return r;
  return kTargets[0];
}

constexpr std::array<std::string_view, 22> kKernelPasses = {
    "--eliminate-dead-branches",
    "--merge-return",
    "--inline-entry-points-exhaustive",
    "--eliminate-dead-functions",
    "--eliminate-dead-code-aggressive",
    "--private-to-local",
    "--eliminate-local-single-block",
    "--eliminate-local-single-store",
    "--scalar-replacement=100",
    "--convert-local-access-chains",
    "--ssa-rewrite",
    "--ccp",
    "--redundancy-elimination",
    "--combine-access-chains",
    "--simplify-instructions",
    "--vector-dce",
    "--eliminate-dead-inserts",
    "--if-conversion",
    "--copy-propagate-arrays",
    "--reduce-load-size",
    "--eliminate-dead-code-aggressive",
    "--merge-blocks",
};

/// Shader modules at -O1 and -O2. The lowering already writes registers as SSA values (phis
/// where control flow joins) and calls one function for each exact f32 fma, so what is left
/// is the few variables of loops inside one instruction (a dot product's accumulator),
/// folding, the `cur == block` guards of the structured form and dead code: passes whose
/// time grows with the module. spirv-opt's performance passes (-O3) inline every call and
/// repeat aggressive dead-code elimination nine times; on one function of 16k instructions
/// they take 10x the time of these for a module four times the size (a driver inlines the
/// calls and optimises the result anyway).
constexpr std::array<std::string_view, 10> kShaderPasses = {
    "--eliminate-local-single-block",
    "--eliminate-local-single-store",
    "--ssa-rewrite",
    "--ccp",
    "--simplify-instructions",
    "--eliminate-dead-branches",
    "--merge-blocks",
    "--local-redundancy-elimination",
    "--eliminate-dead-code-aggressive",
    "--merge-blocks",
};

/// Collects SPIRV-Tools messages.
struct Messages {
  std::string text;
  spvtools::MessageConsumer consumer() {
    return [this](spv_message_level_t, const char *, const spv_position_t &pos, const char *msg) {
      text += "  word " + std::to_string(pos.index) + ": " + msg + "\n";
    };
  }
};

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

Status validate_in(const std::vector<uint32_t> &words, spv_target_env env,
                   const std::string &name) {
  spvtools::SpirvTools tools(env);
  Messages m;
  tools.SetMessageConsumer(m.consumer());
  spvtools::ValidatorOptions options;
  if (!tools.Validate(words.data(), words.size(), options))
    return {ErrorCode::Internal, "SPIR-V validation for " + name + " failed:\n" + m.text};
  return Status::ok();
}

} // namespace

Status validate_spirv(const std::vector<uint32_t> &words, const SpirvTarget &target) {
  return validate_in(words, row(target.env).tools_env, target.name);
}

Status disassemble_spirv(const std::vector<uint32_t> &words, std::string &out) {
  spvtools::SpirvTools tools(SPV_ENV_UNIVERSAL_1_6);
  Messages m;
  tools.SetMessageConsumer(m.consumer());
  if (!tools.Disassemble(words, &out,
                         SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES |
                             SPV_BINARY_TO_TEXT_OPTION_NO_HEADER))
    return {ErrorCode::InvalidModule, "not a SPIR-V module:\n" + m.text};
  return Status::ok();
}

Status compile_spirv(const isa::Module &module, const SpirvOptions &options, SpirvModule &out) {
  const TargetRow &r = row(options.target.env);
  spirv::Builder b;
  if (options.target.is_vulkan())
    b.memory_model(spv::AddressingModel::Logical, spv::MemoryModel::GLSL450);
  else
    b.memory_model(spv::AddressingModel::Physical64, spv::MemoryModel::OpenCL);
  out = {};
  try {
    // Whole-launch kernels become the device library kernels their instructions need.
    std::vector<isa::Kernel> library;
    for (const auto &k : module.kernels) {
      if (is_spirv_library_kernel(k.name))
        return {ErrorCode::InvalidProgram, "kernel '" + k.name +
                                               "': names starting with __hg_ are reserved for "
                                               "the SPIR-V back end's library kernels"};
      if (!k.is_launch_level()) {
        out.kernels.push_back(spirv::lower_kernel(b, k, options));
        continue;
      }
      if (auto st = spirv_library_kernels(k, library); !st) return st;
      SpirvKernelInfo host;
      host.name = k.name;
      host.host = true;
      out.kernels.push_back(std::move(host));
    }
    for (const auto &k : library) out.kernels.push_back(spirv::lower_kernel(b, k, options, true));
  } catch (const spirv::Unsupported &e) {
    return {ErrorCode::InvalidProgram,
            std::string(e.what()) + " (target " + options.target.name + ")"};
  }
  out.words = b.finish(r.version);
  // OpenCL has 64-bit atomics as extensions (cl_khr_int64_*_atomics) that a SPIR-V 1.0
  // module cannot declare and SPIRV-Tools' OpenCL environments therefore reject; such modules
  // are checked by SPIR-V 1.0's universal rules, and the runtime checks the device's
  // extensions ("int64_atomics").
  spv_target_env env = r.tools_env;
  for (const auto &k : out.kernels)
    for (const auto &f : k.requires_features)
      if (f == "int64_atomics" && options.target.env == SpirvEnv::OpenCL1_2)
        env = SPV_ENV_UNIVERSAL_1_0;
  if (auto st = validate_in(out.words, env, options.target.name); !st) {
    std::string dis;
    (void)disassemble_spirv(out.words, dis);
    return {ErrorCode::Internal, st.message() + "\n" + dis};
  }
  if (options.opt_level > 0) {
    spvtools::Optimizer opt(env);
    Messages m;
    opt.SetMessageConsumer(m.consumer());
    std::vector<std::string> flags;
    if (options.target.is_vulkan() && options.opt_level >= 3) {
      opt.RegisterPerformancePasses();
    } else if (options.target.is_vulkan()) {
      for (std::string_view f : kShaderPasses) flags.emplace_back(f);
    } else {
      // The performance passes without the loop unroller, which crashes on Kernel modules in
      // SPIRV-Tools 2023.1 (merge-blocks after a full unroll). Most passes leave Kernel
      // modules alone (they need Shader); the OpenCL compiler does the real work.
      for (std::string_view f : kKernelPasses) flags.emplace_back(f);
    }
    if (!flags.empty() && !opt.RegisterPassesFromFlags(flags))
      return {ErrorCode::Internal, "spirv-opt rejects its pass list:\n" + m.text};
    std::vector<uint32_t> optimised;
    if (!opt.Run(out.words.data(), out.words.size(), &optimised))
      return {ErrorCode::Internal, "spirv-opt failed:\n" + m.text};
    out.words = std::move(optimised);
    if (auto st = validate_in(out.words, env, options.target.name); !st)
      return {ErrorCode::Internal, "after spirv-opt: " + st.message()};
  }
  return Status::ok();
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

template <typename K, size_t N>
std::string_view kind_name(const std::array<std::pair<K, std::string_view>, N> &table, K k) {
  for (const auto &[kind, name] : table)
    if (kind == k) return name;
  return "?";
}
template <typename K, size_t N>
K kind_of(const std::array<std::pair<K, std::string_view>, N> &table, const std::string &name) {
  for (const auto &[kind, n] : table)
    if (n == name) return kind;
  throw std::runtime_error("unknown kind '" + name + "'");
}

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
    j["requires"] = k.requires_features;
    kernels.push_back(j);
  }
  return kernels.dump();
}

Status parse_spirv_reflection(std::string_view json, std::vector<SpirvKernelInfo> &out) {
  out.clear();
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
      k.requires_features = j.at("requires").get<std::vector<std::string>>();
      out.push_back(std::move(k));
    }
  } catch (const std::exception &e) {
    out.clear();
    return {ErrorCode::InvalidModule,
            std::string("the SPIR-V reflection is malformed: ") + e.what()};
  }
  return Status::ok();
}

} // namespace hologram::codegen
