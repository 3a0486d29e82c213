// The SPIR-V module driver: one module per ISA module (an entry point per kernel), SPIRV-Tools
// validation before and after spirv-opt, and disassembly. Targets and reflection: abi.cpp.
#include "hologram/codegen/spirv.h"
#include "hologram/codegen/spirv_library.h"
#include "hologram/support/unreachable.h"
#include "lowering.h"

#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include <array>
#include <sstream>
#include <stdexcept>

namespace hologram::codegen {

namespace {

/// SPIRV-Tools' environment and the SPIR-V version word of a target.
spv_target_env tools_env(SpirvEnv env) {
  switch (env) {
  case SpirvEnv::Vulkan1_1: return SPV_ENV_VULKAN_1_1;
  case SpirvEnv::Vulkan1_2: return SPV_ENV_VULKAN_1_2;
  case SpirvEnv::Vulkan1_3: return SPV_ENV_VULKAN_1_3;
  case SpirvEnv::OpenCL1_2: return SPV_ENV_OPENCL_1_2;
  case SpirvEnv::OpenCL2_0: return SPV_ENV_OPENCL_2_0;
  case SpirvEnv::OpenCL3_0: return SPV_ENV_OPENCL_2_2;
  }
  unreachable_enum("SpirvEnv");
}
uint32_t version_word(SpirvEnv env) {
  switch (env) {
  case SpirvEnv::Vulkan1_1: return 0x00010300;
  case SpirvEnv::Vulkan1_2: return 0x00010500;
  case SpirvEnv::Vulkan1_3: return 0x00010600;
  case SpirvEnv::OpenCL1_2:
  case SpirvEnv::OpenCL2_0: return 0x00010000;
  case SpirvEnv::OpenCL3_0: return 0x00010200;
  }
  unreachable_enum("SpirvEnv");
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

namespace {

/// Validator options without "friendly names": naming every id for messages parses the whole
/// module again first (a seventh of compile time at -O2). A module that fails is validated
/// again with them, for the message.
spvtools::ValidatorOptions fast_validator_options() {
  spvtools::ValidatorOptions options;
  options.SetFriendlyNames(false);
  return options;
}

Status validate_in(const std::vector<uint32_t> &words, spv_target_env env,
                   const std::string &name) {
  spvtools::SpirvTools tools(env);
  if (tools.Validate(words.data(), words.size(), fast_validator_options())) return Status::ok();
  Messages m;
  tools.SetMessageConsumer(m.consumer());
  spvtools::ValidatorOptions named;
  if (tools.Validate(words.data(), words.size(), named))
    return {ErrorCode::Internal,
            "SPIR-V validation for " + name + " failed, and passed when run again"};
  return {ErrorCode::Internal, "SPIR-V validation for " + name + " failed:\n" + m.text};
}

} // namespace

Status validate_spirv(const std::vector<uint32_t> &words, const SpirvTarget &target) {
  return validate_in(words, tools_env(target.env), target.name);
}

Expected<std::string> disassemble_spirv(const std::vector<uint32_t> &words) {
  spvtools::SpirvTools tools(SPV_ENV_UNIVERSAL_1_6);
  Messages m;
  tools.SetMessageConsumer(m.consumer());
  std::string out;
  if (!tools.Disassemble(words, &out,
                         SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES |
                             SPV_BINARY_TO_TEXT_OPTION_NO_HEADER))
    return Status{ErrorCode::InvalidModule, "not a SPIR-V module:\n" + m.text};
  return out;
}

namespace {

spirv::Builder start_module(const SpirvOptions &options) {
  spirv::Builder b;
  if (options.target.is_vulkan())
    b.memory_model(spv::AddressingModel::Logical, spv::MemoryModel::GLSL450);
  else
    b.memory_model(spv::AddressingModel::Physical64, spv::MemoryModel::OpenCL);
  return b;
}

/// One kernel lowered into `b`. An instruction the target cannot run is an error at the
/// instruction in `source`: InvalidProgram for a user's kernel, Internal for the device
/// library's (the build compiles all of those). Anything else the lowering throws is a bug
/// in the back end: Internal, naming the kernel. No exception leaves this function.
Expected<SpirvKernelInfo> lower_one(spirv::Builder &b, const std::string &source,
                                    const isa::Kernel &k, const SpirvOptions &options,
                                    bool library) {
  try {
    return spirv::lower_kernel(b, k, options, library);
  } catch (const spirv::Unsupported &e) {
    return isa::kernel_error(library ? ErrorCode::Internal : ErrorCode::InvalidProgram, source, k,
                             e.loc,
                             std::string(e.what()) + " (target " + options.target.name + ")");
  } catch (const std::exception &e) {
    return isa::kernel_error(ErrorCode::Internal, source, k, k.loc,
                             "the SPIR-V back end failed on this kernel (target " +
                                 options.target.name + "): " + e.what());
  }
}

/// Device library kernels lowered into `b`, their reflection appended to `out`.
Status lower_library_kernels(spirv::Builder &b, const std::vector<isa::Kernel> &kernels,
                             const SpirvOptions &options, SpirvModule &out) {
  for (const auto &k : kernels) {
    auto info = lower_one(b, "<SPIR-V device library>", k, options, true);
    if (!info) return info.status();
    out.kernels.push_back(std::move(*info));
  }
  return Status::ok();
}

/// The words of a lowered module, optimised at options.opt_level and validated.
Status finish_module(spirv::Builder &b, const SpirvOptions &options, SpirvModule &out) {
  out.words = b.finish(version_word(options.target.env));
  // OpenCL has 64-bit atomics as extensions (cl_khr_int64_*_atomics) that a SPIR-V 1.0
  // module cannot declare and SPIRV-Tools' OpenCL environments therefore reject; such modules
  // are checked by SPIR-V 1.0's universal rules, and the runtime checks the device's
  // extensions ("int64_atomics").
  spv_target_env env = tools_env(options.target.env);
  for (const auto &k : out.kernels)
    for (const auto &f : k.requires_features)
      if (f == "int64_atomics" && options.target.env == SpirvEnv::OpenCL1_2)
        env = SPV_ENV_UNIVERSAL_1_0;
  auto lowering_error = [&](const Status &st) -> Status {
    auto dis = disassemble_spirv(out.words);
    return {ErrorCode::Internal, st.message() + "\n" + (dis ? *dis : dis.message())};
  };
  // At -O0 the module is validated as lowered. Otherwise spirv-opt validates its input itself
  // (Optimizer::Run does by default, and refuses an invalid module before any pass runs), so
  // validating it here as well only repeated that work, which grows faster than the module;
  // its output is validated below. When either fails, the module as lowered is validated
  // again to say whether the lowering or the optimiser made it invalid.
  if (options.opt_level == 0) {
    if (auto st = validate_in(out.words, env, options.target.name); !st) return lowering_error(st);
    return Status::ok();
  }
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
  spvtools::OptimizerOptions run_options;
  run_options.set_validator_options(fast_validator_options());
  if (!opt.Run(out.words.data(), out.words.size(), &optimised, run_options)) {
    if (auto lowered = validate_in(out.words, env, options.target.name); !lowered)
      return lowering_error(lowered);
    return {ErrorCode::Internal, "spirv-opt failed:\n" + m.text};
  }
  if (auto st = validate_in(optimised, env, options.target.name); !st) {
    if (auto lowered = validate_in(out.words, env, options.target.name); !lowered)
      return lowering_error(lowered);
    return {ErrorCode::Internal, "after spirv-opt: " + st.message()};
  }
  out.words = std::move(optimised);
  return Status::ok();
}

} // namespace

Expected<SpirvModule> compile_spirv(const isa::Module &module, const SpirvOptions &options) {
  // Whole-launch kernels run on the host beside the device library kernels their
  // instructions need.
  auto library = spirv_library_kernels(module);
  if (!library) return library.status();
  spirv::Builder b = start_module(options);
  SpirvModule out;
  for (const auto &k : module.kernels) {
    if (is_spirv_library_kernel(k.name))
      return isa::kernel_error(ErrorCode::InvalidProgram, module.source_name, k, k.loc,
                               "kernel name '" + k.name + "' is reserved: names starting with " +
                                   std::string(kSpirvLibraryPrefix) +
                                   " are the SPIR-V back end's library kernels");
    if (k.is_launch_level()) {
      SpirvKernelInfo host;
      host.name = k.name;
      host.host = true;
      out.kernels.push_back(std::move(host));
      continue;
    }
    auto info = lower_one(b, module.source_name, k, options, false);
    if (!info) return info.status();
    out.kernels.push_back(std::move(*info));
  }
  if (auto st = lower_library_kernels(b, *library, options, out); !st) return st;
  if (auto st = finish_module(b, options, out); !st) return st;
  return out;
}

Expected<SpirvModule> compile_spirv_library(const std::vector<isa::Kernel> &kernels,
                                            const SpirvOptions &options) {
  spirv::Builder b = start_module(options);
  SpirvModule out;
  if (auto st = lower_library_kernels(b, kernels, options, out); !st) return st;
  if (auto st = finish_module(b, options, out); !st) return st;
  return out;
}

} // namespace hologram::codegen
