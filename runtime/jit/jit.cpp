// Hologram::jit: the code generators the runtime uses to compile programs at run time
// (Backend::execute_program), through the seam of core/jit_hook.h: SPIR-V for the Vulkan and
// OpenCL backends, and x86 code for the CPU backend, linked in memory by LLVM's ORC JIT. What
// they produce is kept in the persistent compile cache (artifact/compile_cache.h).
#include "../core/jit_hook.h"

#include "hologram/artifact/compile_cache.h"
#include "hologram/codegen/cpu.h"
#include "hologram/codegen/ptx.h"
#include "hologram/codegen/spirv.h"
#include "hologram/opt/pass_manager.h"
#include "hologram/runtime/cpu.h"
#include "hologram/support/diagnostics.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>

#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

namespace hologram::runtime {

namespace {

/// `module` after the ISA pipeline at hologram-cc's default level, as every backend's programs
/// are compiled.
Expected<isa::Module> optimised(const isa::Module &module) {
  isa::Module m = module;
  DiagnosticEngine diags;
  if (!opt::optimize(m, opt::PassOptions{}, diags))
    return Status{ErrorCode::InvalidProgram, diags.to_string()};
  return m;
}

/// The cached output of `what` for `module` (in the persistent compile cache as the
/// environment sets it, read at each compile), or `make`'s, which is then stored.
Expected<std::string> cached(std::string_view what, const isa::Module &module, unsigned opt_level,
                             const std::function<Expected<std::string>()> &make) {
  auto settings = artifact::CacheSettings::from_environment();
  if (!settings) return settings.status();
  isa::CompileOptions options;
  options.opt_level = opt_level;
  artifact::CompileCache cache(std::move(*settings));
  return cache.get_or_make(artifact::CompileCache::key(what, module, options), make);
}

/// A compiled module as one string for the cache: its reflection's length (u64), the
/// reflection, then the code.
std::string frame(std::string_view reflection, std::string_view code) {
  uint64_t n = reflection.size();
  std::string s(reinterpret_cast<const char *>(&n), sizeof n);
  s += reflection;
  s += code;
  return s;
}
/// The reflection and the code of what frame wrote; Internal naming `what` if it is damaged.
Expected<std::pair<std::string_view, std::string_view>> unframe(std::string_view s,
                                                                const char *what) {
  uint64_t n = 0;
  if (s.size() >= sizeof n) std::memcpy(&n, s.data(), sizeof n);
  if (s.size() < sizeof n || n > s.size() - sizeof n)
    return Status{ErrorCode::Internal, std::string("a cached ") + what + " module is malformed"};
  return std::pair{s.substr(sizeof n, n), s.substr(sizeof n + n)};
}

/// `make()`'s module, through the compile cache under `key` (pack and unpack turn it into the
/// cache's string and back).
template <typename M, typename Make, typename Pack, typename Unpack>
Expected<M> compile_cached(const std::string &key, const isa::Module &module, unsigned opt_level,
                           Make &&make, Pack &&pack, Unpack &&unpack) {
  std::optional<M> compiled; // made here: nothing to unpack
  auto compile = [&]() -> Expected<std::string> {
    auto m = make();
    if (!m) return m.status();
    compiled = std::move(*m);
    return pack(*compiled);
  };
  auto packed = cached(key, module, opt_level, compile);
  if (!packed) return packed.status();
  if (compiled) return std::move(*compiled);
  return unpack(*packed);
}

Expected<codegen::SpirvModule> compile_spirv(const isa::Module &module,
                                             const codegen::SpirvTarget &target) {
  codegen::SpirvOptions options;
  options.target = target;
  return compile_cached<codegen::SpirvModule>(
      "spirv " + target.name, module, options.opt_level,
      [&]() -> Expected<codegen::SpirvModule> {
        auto m = optimised(module);
        if (!m) return m.status();
        return codegen::compile_spirv(*m, options);
      },
      [](const codegen::SpirvModule &m) {
        return frame(codegen::spirv_reflection_json(m),
                     {reinterpret_cast<const char *>(m.words.data()), m.words.size() * 4});
      },
      [](std::string_view s) -> Expected<codegen::SpirvModule> {
        auto parts = unframe(s, "SPIR-V");
        if (!parts) return parts.status();
        auto [reflection, code] = *parts;
        if (code.size() % 4 != 0)
          return Status{ErrorCode::Internal, "a cached SPIR-V module is malformed"};
        auto kernels = codegen::parse_spirv_reflection(reflection);
        if (!kernels) return kernels.status();
        codegen::SpirvModule m;
        m.kernels = std::move(*kernels);
        m.words.resize(code.size() / 4);
        std::memcpy(m.words.data(), code.data(), code.size());
        return m;
      });
}

Expected<codegen::PtxModule> compile_ptx(const isa::Module &module,
                                         const codegen::PtxTarget &target) {
  codegen::PtxOptions options;
  options.target = target;
  return compile_cached<codegen::PtxModule>(
      "ptx " + target.name, module, options.opt_level,
      [&]() -> Expected<codegen::PtxModule> {
        auto m = optimised(module);
        if (!m) return m.status();
        return codegen::compile_ptx(*m, options);
      },
      [](const codegen::PtxModule &m) {
        return frame(codegen::ptx_reflection_json(m.kernels), m.text);
      },
      [](std::string_view s) -> Expected<codegen::PtxModule> {
        auto parts = unframe(s, "PTX");
        if (!parts) return parts.status();
        auto kernels = codegen::parse_ptx_reflection(parts->first);
        if (!kernels) return kernels.status();
        codegen::PtxModule m;
        m.kernels = std::move(*kernels);
        m.text = std::string(parts->second);
        return m;
      });
}

std::string message_of(llvm::Error e) {
  return llvm::toString(std::move(e));
}

/// The x86 variant to compile: the one set_cpu_isa or $HOLOGRAM_CPU_ISA forces, else the
/// best level at or below its cap whose features this CPU has (as the dispatcher decides).
Expected<codegen::CpuTarget> cpu_target() {
  const auto [want, cap] = parse_cpu_isa_request(requested_cpu_isa());
  if (!want.empty() && cap == 0) return codegen::parse_cpu_target(want);
  auto t = codegen::best_cpu_target(cap, cpu_has_feature);
  if (!t) return Status{ErrorCode::BackendUnavailable, "this CPU runs no x86-64 level from v2 up"};
  return std::move(*t);
}

/// One compiled module: the JIT that holds its code and data.
struct Linked {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

Expected<JitCpuModule> compile_cpu(const isa::Module &module) {
  static std::once_flag native;
  std::call_once(native, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  codegen::CpuOptions options;
  auto target = cpu_target();
  if (!target) return target.status();
  options.targets.push_back(std::move(*target));
  options.module_name = "jit";
  options.source_name = module.kernels.empty() ? "program" : module.kernels.front().name;
  auto compile = [&]() -> Expected<std::string> {
    auto m = optimised(module);
    if (!m) return m.status();
    return codegen::emit_cpu(*m, options, codegen::CpuEmit::Object);
  };
  auto object = cached(options.targets.back().name + " object", module, options.opt_level, compile);
  if (!object) return object.status();

  auto linked = std::make_shared<Linked>();
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) return Status{ErrorCode::Internal, "ORC JIT: " + message_of(jit.takeError())};
  linked->jit = std::move(*jit);
  auto &lib = linked->jit->getMainJITDylib();
  const char prefix = linked->jit->getDataLayout().getGlobalPrefix();
  // Vector math (SLEEF) and libm resolve in the process, which links them with the runtime.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process) return Status{ErrorCode::Internal, "ORC JIT: " + message_of(process.takeError())};
  lib.addGenerator(std::move(*process));
  if (auto e = linked->jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(*object, "jit.o")))
    return Status{ErrorCode::Internal, "ORC JIT: " + message_of(std::move(e))};
  auto symbol = linked->jit->lookup(codegen::module_descriptor_symbol(options.module_name));
  if (!symbol) return Status{ErrorCode::Internal, "ORC JIT: " + message_of(symbol.takeError())};
  JitCpuModule out;
  out.descriptor = symbol->toPtr<const hg_cpu_module_desc *>();
  out.owner = std::move(linked);
  return out;
}

constexpr JitCompiler kCompiler{&compile_spirv, &compile_cpu, &compile_ptx};

} // namespace

} // namespace hologram::runtime

extern "C" const hologram::runtime::JitCompiler *hologram_jit_compiler(void) {
  return &hologram::runtime::kCompiler;
}
