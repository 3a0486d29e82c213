// Hologram::jit: the code generators the runtime uses to compile programs at run time
// (Backend::execute_program), through the seam of core/jit_hook.h: SPIR-V for the Vulkan and
// OpenCL backends, and x86 code for the CPU backend, linked in memory by LLVM's ORC JIT. What
// they produce is kept in the persistent compile cache (artifact/compile_cache.h).
#include "../core/jit_hook.h"

#include "hologram/artifact/compile_cache.h"
#include "hologram/codegen/cpu.h"
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

namespace hologram::runtime {

namespace {

/// The cached output of `what` for `module` (in the persistent compile cache as the
/// environment sets it, read at each compile), or `make`'s, which is then stored.
Status cached(std::string_view what, const isa::Module &module, unsigned opt_level,
              const std::function<Status(std::string &)> &make, std::string &out) {
  artifact::CacheSettings settings;
  if (auto st = artifact::CacheSettings::from_environment(settings); !st) return st;
  isa::CompileOptions options;
  options.opt_level = opt_level;
  artifact::CompileCache cache(std::move(settings));
  return cache.get_or_make(artifact::CompileCache::key(what, module, options), make, out);
}

/// A SPIR-V module as one string for the cache: the reflection's length (u64), the
/// reflection, then the words.
std::string pack(const codegen::SpirvModule &m) {
  std::string reflection = codegen::spirv_reflection_json(m);
  uint64_t n = reflection.size();
  std::string s(reinterpret_cast<const char *>(&n), sizeof n);
  s += reflection;
  s.append(reinterpret_cast<const char *>(m.words.data()), m.words.size() * 4);
  return s;
}
Status unpack(std::string_view s, codegen::SpirvModule &m) {
  uint64_t n = 0;
  if (s.size() >= sizeof n) std::memcpy(&n, s.data(), sizeof n);
  if (s.size() < sizeof n || n > s.size() - sizeof n || (s.size() - sizeof n - n) % 4 != 0)
    return {ErrorCode::Internal, "a cached SPIR-V module is malformed"};
  if (auto st = codegen::parse_spirv_reflection(s.substr(sizeof n, n), m.kernels); !st) return st;
  m.words.resize((s.size() - sizeof n - n) / 4);
  std::memcpy(m.words.data(), s.data() + sizeof n + n, m.words.size() * 4);
  return Status::ok();
}

Status compile_spirv(const isa::Module &module, const codegen::SpirvTarget &target,
                     codegen::SpirvModule &out) {
  codegen::SpirvOptions options;
  options.target = target;
  std::string packed;
  bool compiled = false; // `out` holds the module already: nothing to unpack
  auto compile = [&](std::string &bytes) {
    if (auto st = codegen::compile_spirv(module, options, out); !st) return st;
    bytes = pack(out);
    compiled = true;
    return Status::ok();
  };
  if (auto st = cached("spirv " + target.name, module, options.opt_level, compile, packed); !st)
    return st;
  return compiled ? Status::ok() : unpack(packed, out);
}

std::string message_of(llvm::Error e) {
  return llvm::toString(std::move(e));
}

/// The x86 variant to compile: the one set_cpu_isa or $HOLOGRAM_CPU_ISA forces, else the
/// best level at or below its cap whose features this CPU has (as the dispatcher decides).
Status cpu_target(codegen::CpuTarget &out) {
  const auto [want, cap] = parse_cpu_isa_request(requested_cpu_isa());
  if (!want.empty() && cap == 0) {
    std::string error;
    auto t = codegen::parse_cpu_target(want, error);
    if (!t) return {ErrorCode::InvalidArgument, error};
    out = *t;
    return Status::ok();
  }
  auto t = codegen::best_cpu_target(cap, cpu_has_feature);
  if (!t) return {ErrorCode::BackendUnavailable, "this CPU runs no x86-64 level from v2 up"};
  out = *t;
  return Status::ok();
}

/// One compiled module: the JIT that holds its code and data.
struct Linked {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

Status compile_cpu(const isa::Module &module, std::shared_ptr<const void> &owner,
                   const hg_cpu_module_desc *&descriptor) {
  static std::once_flag native;
  std::call_once(native, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  codegen::CpuOptions options;
  options.targets.emplace_back();
  if (auto st = cpu_target(options.targets.back()); !st) return st;
  options.module_name = "jit";
  options.source_name = module.kernels.empty() ? "program" : module.kernels.front().name;
  auto compile = [&](std::string &object) {
    isa::Module optimised = module;
    DiagnosticEngine diags;
    if (!opt::optimize(optimised, opt::PassOptions{}, diags))
      return Status{ErrorCode::InvalidProgram, diags.to_string()};
    return codegen::emit_cpu(optimised, options, codegen::CpuEmit::Object, object);
  };
  std::string object;
  if (auto st = cached(options.targets.back().name + " object", module, options.opt_level, compile,
                       object);
      !st)
    return st;

  auto linked = std::make_shared<Linked>();
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) return {ErrorCode::Internal, "ORC JIT: " + message_of(jit.takeError())};
  linked->jit = std::move(*jit);
  auto &lib = linked->jit->getMainJITDylib();
  const char prefix = linked->jit->getDataLayout().getGlobalPrefix();
  // Vector math (SLEEF) and libm resolve in the process, which links them with the runtime.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process) return {ErrorCode::Internal, "ORC JIT: " + message_of(process.takeError())};
  lib.addGenerator(std::move(*process));
  if (auto e = linked->jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, "jit.o")))
    return {ErrorCode::Internal, "ORC JIT: " + message_of(std::move(e))};
  auto symbol = linked->jit->lookup(codegen::module_descriptor_symbol(options.module_name));
  if (!symbol) return {ErrorCode::Internal, "ORC JIT: " + message_of(symbol.takeError())};
  descriptor = symbol->toPtr<const hg_cpu_module_desc *>();
  owner = std::move(linked);
  return Status::ok();
}

constexpr JitCompiler kCompiler{&compile_spirv, &compile_cpu};

} // namespace

} // namespace hologram::runtime

extern "C" const hologram::runtime::JitCompiler *hologram_jit_compiler(void) {
  return &hologram::runtime::kCompiler;
}
