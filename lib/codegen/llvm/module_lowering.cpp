// Assembles a module for x86: every kernel lowered once per target variant (each function
// carries its variant's target-cpu and target-features, as clang's target_clones does), the
// descriptor tables of cpu_abi.h that the runtime's dispatcher reads, the LLVM optimisation
// pipeline, and emission of IR, bitcode, assembly or an ELF object.
#include "hologram/artifact/header.h"
#include "hologram/codegen/cpu_abi.h"
#include "hologram/isa/encoding.h"
#include "hologram/isa/text.h"
#include "lowering.h"

#include <llvm/ADT/iterator_range.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/X86TargetParser.h>
#include <llvm/Transforms/Scalar/SimpleLoopUnswitch.h>

#include <algorithm>
#include <iterator>
#include <mutex>

namespace hologram::codegen {

std::string detail::c_identifier(std::string_view s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}
using detail::c_identifier;

namespace {

/// CPU features the runtime's dispatcher can test (see runtime/cpu/cpu_features.cpp).
constexpr std::string_view kCheckableFeatures[] = {
    "sse2",    "sse3",     "ssse3",    "sse4.1",   "sse4.2",  "popcnt", "avx",
    "avx2",    "fma",      "f16c",     "bmi",      "bmi2",    "lzcnt",  "movbe",
    "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"};

const char *kTriple = "x86_64-unknown-linux-gnu";

void initialise_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
  });
}

class ModuleLowering {
public:
  ModuleLowering(const isa::Module &m, const CpuOptions &o)
      : isa_(m), opts_(o), module_(std::make_unique<llvm::Module>(o.module_name, ctx_)),
        abi_(ctx_) {}

  Status run(CpuEmit emit, std::string &out) {
    initialise_llvm();
    std::string error;
    const llvm::Target *target = llvm::TargetRegistry::lookupTarget(kTriple, error);
    if (!target) return {ErrorCode::Internal, "LLVM has no x86 target: " + error};
    llvm::TargetOptions to;
    to.UnsafeFPMath = opts_.fast_math;
    to.NoInfsFPMath = opts_.fast_math;
    to.NoNaNsFPMath = opts_.fast_math;
    auto level = opts_.opt_level == 0   ? llvm::CodeGenOptLevel::None
                 : opts_.opt_level == 1 ? llvm::CodeGenOptLevel::Less
                 : opts_.opt_level == 2 ? llvm::CodeGenOptLevel::Default
                                        : llvm::CodeGenOptLevel::Aggressive;
    tm_.reset(target->createTargetMachine(kTriple, "x86-64", "", to, llvm::Reloc::PIC_,
                                          std::nullopt, level));
    module_->setTargetTriple(kTriple);
    module_->setDataLayout(tm_->createDataLayout());
    if (opts_.debug_info) {
      module_->addModuleFlag(llvm::Module::Warning, "Debug Info Version",
                             llvm::DEBUG_METADATA_VERSION);
      module_->addModuleFlag(llvm::Module::Warning, "Dwarf Version", 5);
    }
    if (auto st = lower_kernels(); !st) return st;
    try {
      emit_descriptor();
      if (opts_.c_entry_points) emit_entry_points();
    } catch (const std::exception &e) {
      return {ErrorCode::Internal, std::string("x86 lowering failed: ") + e.what()};
    }
    std::string verify;
    llvm::raw_string_ostream vs(verify);
    if (llvm::verifyModule(*module_, &vs))
      return {ErrorCode::Internal, "x86 lowering produced invalid LLVM IR:\n" + vs.str()};
    optimise();
    return write(emit, out);
  }

private:
  /// Lowers every kernel for every target. A failure (a bug in the back end) is an internal
  /// error at the instruction being lowered.
  Status lower_kernels() {
    for (uint32_t k = 0; k < isa_.kernels.size(); ++k) {
      const auto &kernel = isa_.kernels[k];
      std::vector<detail::LoweredKernel> variants;
      for (const auto &t : opts_.targets) {
        std::string symbol =
            "hg." + opts_.module_name + "." + kernel.name + "." + c_identifier(t.name);
        detail::LoweredKernel lk;
        // Functions are appended to the module as they are made: those after this one are
        // the variant's.
        llvm::Function *before = module_->empty() ? nullptr : &module_->getFunctionList().back();
        try {
          lk = detail::lower_kernel(*module_, abi_, kernel, k, t, opts_, symbol);
        } catch (const detail::LoweringError &e) {
          return isa::kernel_error(ErrorCode::Internal, isa_.source_name, kernel, e.loc,
                                   "the x86 back end failed (target " + t.name + "): " + e.what());
        } catch (const std::exception &e) {
          return isa::kernel_error(ErrorCode::Internal, isa_.source_name, kernel, kernel.loc,
                                   "the x86 back end failed (target " + t.name + "): " + e.what());
        }
        // The driver, its chunk function, the functions of its loops of whole chunks and
        // those math made for its rare paths: every function this variant's lowering defined
        // (it also declares library functions, which keep no attributes of a variant).
        auto made = before ? std::next(before->getIterator()) : module_->begin();
        for (llvm::Function &f : llvm::make_range(made, module_->end())) {
          if (f.isDeclaration()) continue;
          f.addFnAttr("target-cpu", t.name);
          // A function that keeps every register for its caller (math's rare paths, the
          // preserve_all convention) must not clear the vector registers' upper halves as it
          // returns, which LLVM's vzeroupper insertion would do.
          const bool keeps_all = f.getCallingConv() == llvm::CallingConv::PreserveAll;
          f.addFnAttr("target-features", t.llvm_features + (keeps_all ? ",-vzeroupper" : ""));
          f.addFnAttr(llvm::Attribute::NoUnwind);
          if (opts_.fast_math) f.addFnAttr("unsafe-fp-math", "true");
        }
        variants.push_back(lk);
      }
      kernels_.push_back(std::move(variants));
    }
    return Status::ok();
  }

  llvm::Constant *string(const std::string &s, const std::string &name) {
    auto *init = llvm::ConstantDataArray::getString(ctx_, s);
    auto *g = new llvm::GlobalVariable(*module_, init->getType(), true,
                                       llvm::GlobalValue::PrivateLinkage, init, name);
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return g;
  }
  template <typename T>
  llvm::Constant *array(llvm::Type *elem, const std::vector<T *> &items, const std::string &name) {
    auto *ty = llvm::ArrayType::get(elem, items.size());
    std::vector<llvm::Constant *> c(items.begin(), items.end());
    return new llvm::GlobalVariable(*module_, ty, true, llvm::GlobalValue::PrivateLinkage,
                                    llvm::ConstantArray::get(ty, c), name);
  }

  void emit_descriptor() {
    auto *ptr = llvm::PointerType::get(ctx_, 0);
    auto *i32 = llvm::Type::getInt32Ty(ctx_);
    auto *i64 = llvm::Type::getInt64Ty(ctx_);
    auto *kdesc = llvm::StructType::create(
        ctx_, {ptr, i32, i32, i32, i64, ptr, ptr, llvm::ArrayType::get(i32, 3)},
        "hg_cpu_kernel_desc");
    auto *mdesc = llvm::StructType::create(
        ctx_, {i32, i32, ptr, i32, ptr, ptr, ptr, ptr, i64, ptr, ptr, i32, ptr},
        "hg_cpu_module_desc");
    auto *sdesc = llvm::StructType::create(ctx_, {ptr, ptr, i64, ptr}, "hg_spirv_module_desc");
    const std::string prefix = "hg." + opts_.module_name + ".";
    std::vector<llvm::Constant *> kernels;
    for (size_t k = 0; k < isa_.kernels.size(); ++k) {
      const auto &kernel = isa_.kernels[k];
      std::vector<llvm::Constant *> fns, states;
      uint64_t pool = 0;
      for (const auto &v : kernels_[k]) {
        fns.push_back(v.blocks);
        states.push_back(llvm::ConstantInt::get(i32, v.state_bytes));
        pool = std::max(pool, v.pool_bytes);
      }
      uint32_t flags = 0;
      if (kernel.is_launch_level()) flags |= HG_CPU_KERNEL_LAUNCH_LEVEL;
      for (const auto &inst : kernel.insts)
        if (inst.op == isa::Opcode::BarSync) flags |= HG_CPU_KERNEL_BARRIERS;
      if (kernel.uses_atlas_state()) flags |= HG_CPU_KERNEL_ATLAS;
      kernels.push_back(llvm::ConstantStruct::get(
          kdesc,
          {string(kernel.name, prefix + kernel.name + ".name"), llvm::ConstantInt::get(i32, flags),
           llvm::ConstantInt::get(i32, kernel.params.size()),
           llvm::ConstantInt::get(i32, kernel.shared_bytes), llvm::ConstantInt::get(i64, pool),
           array(ptr, fns, prefix + kernel.name + ".variants"),
           array(i32, states, prefix + kernel.name + ".states"),
           llvm::ConstantArray::get(llvm::ArrayType::get(i32, 3),
                                    {llvm::ConstantInt::get(i32, opts_.block[0]),
                                     llvm::ConstantInt::get(i32, opts_.block[1]),
                                     llvm::ConstantInt::get(i32, opts_.block[2])})}));
    }
    auto *kty = llvm::ArrayType::get(kdesc, kernels.size());
    auto *ktable =
        new llvm::GlobalVariable(*module_, kty, true, llvm::GlobalValue::PrivateLinkage,
                                 llvm::ConstantArray::get(kty, kernels), prefix + "kernels");
    std::vector<llvm::Constant *> names, features, widths;
    for (const auto &t : opts_.targets) {
      names.push_back(string(t.name, prefix + "variant." + t.name));
      std::string f;
      for (const auto &x : t.features) f += (f.empty() ? "" : ",") + x;
      features.push_back(string(f, prefix + "features." + t.name));
      widths.push_back(llvm::ConstantInt::get(i32, t.width));
    }
    std::string options = "-O" + std::to_string(opts_.opt_level);
    if (opts_.fast_math) options += " -ffast-math";
    if (opts_.bounds_check) options += " -fbounds-check";
    if (opts_.check_div) options += " -fcheck-div";
    if (opts_.debug_info) options += " -g";
    if (opts_.block[0] != 0)
      options += " --block=" + std::to_string(opts_.block[0]) + "," +
                 std::to_string(opts_.block[1]) + "," + std::to_string(opts_.block[2]);
    std::vector<llvm::Constant *> spirv;
    for (const auto &m : opts_.spirv) {
      auto *words = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint32_t>(m.words));
      auto *g = new llvm::GlobalVariable(*module_, words->getType(), true,
                                         llvm::GlobalValue::PrivateLinkage, words,
                                         prefix + "spirv." + m.target);
      g->setAlignment(llvm::Align(4));
      spirv.push_back(llvm::ConstantStruct::get(
          sdesc, {string(m.target, prefix + "spirv." + m.target + ".target"), g,
                  llvm::ConstantInt::get(i64, m.words.size()),
                  string(m.reflection, prefix + "spirv." + m.target + ".reflection")}));
    }
    auto *sty = llvm::ArrayType::get(sdesc, spirv.size());
    auto *stable = new llvm::GlobalVariable(*module_, sty, true, llvm::GlobalValue::PrivateLinkage,
                                            llvm::ConstantArray::get(sty, spirv), prefix + "spirv");
    // The module as binary reflection (encoding and source locations): the runtime decodes
    // it at load, no ISA text to parse.
    const std::vector<uint8_t> encoded = isa::encode_module_with_locations(isa_);
    const uint64_t isa_size = encoded.size();
    auto *isa_init = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint8_t>(encoded));
    auto *isa_bytes =
        new llvm::GlobalVariable(*module_, isa_init->getType(), true,
                                 llvm::GlobalValue::PrivateLinkage, isa_init, prefix + "isa");
    auto *desc = llvm::ConstantStruct::get(
        mdesc,
        {llvm::ConstantInt::get(i32, HG_CPU_ABI_VERSION),
         llvm::ConstantInt::get(i32, isa_.kernels.size()), ktable,
         llvm::ConstantInt::get(i32, opts_.targets.size()),
         array(ptr, names, prefix + "variant_names"),
         array(ptr, features, prefix + "variant_features"),
         array(i32, widths, prefix + "variant_widths"), isa_bytes,
         llvm::ConstantInt::get(i64, isa_size), string(opts_.source_name, prefix + "source"),
         string(options, prefix + "options"), llvm::ConstantInt::get(i32, spirv.size()), stable});
    auto *g = new llvm::GlobalVariable(*module_, mdesc, true, llvm::GlobalValue::ExternalLinkage,
                                       desc, module_descriptor_symbol(opts_.module_name));
    g->setVisibility(llvm::GlobalValue::DefaultVisibility);
    if (opts_.export_default_symbol)
      llvm::GlobalAlias::create(llvm::GlobalValue::ExternalLinkage, "hologram_module", g);
  }

  /// int kernel(T0 p0, ..., const hg_launch *launch): packs the arguments and calls the
  /// runtime, which runs the kernel on this module's chosen variant.
  void emit_entry_points() {
    auto *ptr = llvm::PointerType::get(ctx_, 0);
    auto *i32 = llvm::Type::getInt32Ty(ctx_);
    auto *i64 = llvm::Type::getInt64Ty(ctx_);
    auto *call_ty = llvm::FunctionType::get(i32, {ptr, i32, ptr, ptr}, false);
    auto callee = module_->getOrInsertFunction("hologram_cpu_call", call_ty);
    auto *desc = module_->getNamedGlobal(module_descriptor_symbol(opts_.module_name));
    for (uint32_t k = 0; k < isa_.kernels.size(); ++k) {
      const auto &kernel = isa_.kernels[k];
      std::vector<llvm::Type *> params;
      for (const auto &p : kernel.params) {
        if (p.kind != isa::ParamKind::Scalar) {
          params.push_back(ptr);
          continue;
        }
        switch (p.type) {
        case isa::Type::F32: params.push_back(llvm::Type::getFloatTy(ctx_)); break;
        case isa::Type::F64: params.push_back(llvm::Type::getDoubleTy(ctx_)); break;
        case isa::Type::BF16:
        case isa::Type::F16:
        case isa::Type::I16:
        case isa::Type::I32:
        case isa::Type::I64:
        case isa::Type::I8:
        case isa::Type::None:
        case isa::Type::Pred:
        case isa::Type::U16:
        case isa::Type::U32:
        case isa::Type::U64:
        case isa::Type::U8:
          params.push_back(llvm::Type::getIntNTy(ctx_, isa::type_size(p.type) * 8));
          break;
        }
      }
      params.push_back(ptr);
      auto *f = llvm::Function::Create(llvm::FunctionType::get(i32, params, false),
                                       llvm::GlobalValue::ExternalLinkage,
                                       artifact::c_entry_point_name(kernel.name), *module_);
      f->addFnAttr(llvm::Attribute::NoUnwind);
      for (size_t i = 0; i < kernel.params.size(); ++i) {
        const auto t = kernel.params[i].type;
        if (kernel.params[i].kind == isa::ParamKind::Scalar && isa::type_size(t) < 4)
          f->addParamAttr(static_cast<unsigned>(i),
                          isa::is_signed_int(t) ? llvm::Attribute::SExt : llvm::Attribute::ZExt);
      }
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx_, "entry", f));
      const size_t n = std::max<size_t>(1, kernel.params.size());
      auto *args = b.CreateAlloca(llvm::ArrayType::get(ptr, n));
      auto *bits = b.CreateAlloca(llvm::ArrayType::get(i64, n));
      for (size_t i = 0; i < kernel.params.size(); ++i) {
        llvm::Value *v = f->getArg(static_cast<unsigned>(i));
        llvm::Value *slot = b.CreateConstGEP2_64(args->getAllocatedType(), args, 0, i);
        if (kernel.params[i].kind != isa::ParamKind::Scalar) {
          b.CreateStore(v, slot);
          continue;
        }
        llvm::Value *cell = b.CreateConstGEP2_64(bits->getAllocatedType(), bits, 0, i);
        if (v->getType()->isFloatTy())
          v = b.CreateZExt(b.CreateBitCast(v, i32), i64);
        else if (v->getType()->isDoubleTy())
          v = b.CreateBitCast(v, i64);
        else
          v = b.CreateZExt(v, i64);
        b.CreateStore(v, cell);
        b.CreateStore(cell, slot);
      }
      b.CreateRet(b.CreateCall(callee, {desc, b.getInt32(k), args,
                                        f->getArg(static_cast<unsigned>(kernel.params.size()))}));
    }
  }

  void optimise() {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions pto;
    // Lanes are already vectors: the loop vectoriser has nothing to do, and the SLP
    // vectoriser found only the packing of a runtime call's arguments while its time grew
    // faster than the kernel (a ninth of -O2 at 16,000 instructions).
    pto.LoopVectorization = false;
    pto.SLPVectorization = false;
    // Reassociate rewrites a chain of integer adds as one tree placed at its root: a register
    // that a kernel adds to under a branch every few instructions (a count, an offset) then
    // has all its addends computed where they were and summed at the end of the block, each
    // one live across everything between, spilled by the hundred in a long kernel. The
    // optimiser's own passes already fold what reassociation would expose in index
    // arithmetic, so the CPU pipeline skips it.
    llvm::PassInstrumentationCallbacks pic;
    pic.registerShouldRunOptionalPassCallback(
        [](llvm::StringRef pass, llvm::Any) { return pass != "ReassociatePass"; });
    llvm::PassBuilder pb(tm_.get(), pto, std::nullopt, &pic);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    const llvm::OptimizationLevel levels[] = {
        llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1, llvm::OptimizationLevel::O2,
        llvm::OptimizationLevel::O3};
    auto level = levels[std::min(opts_.opt_level, 3u)];
    // The driver's chunk loop tests, in every chunk, conditions that hold for the whole block
    // (a bound check on %gid agrees at its first and last lane; in a kernel too large for the
    // driver's loop of its own for blocks of whole chunks, also whether the block is a whole
    // number of chunks): LLVM unswitches the loop on them at -O3 only. -O2 does it too, so
    // that full blocks run a loop with no test in it.
    if (level == llvm::OptimizationLevel::O2)
      pb.registerLateLoopOptimizationsEPCallback(
          [](llvm::LoopPassManager &lpm, llvm::OptimizationLevel) {
            lpm.addPass(llvm::SimpleLoopUnswitchPass(/*NonTrivial=*/true));
          });
    pb.registerOptimizerLastEPCallback([](llvm::ModulePassManager &mpm, llvm::OptimizationLevel) {
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(detail::PrefixMasksPass()));
    });
    llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0
                                      ? pb.buildO0DefaultPipeline(level)
                                      : pb.buildPerModuleDefaultPipeline(level);
    mpm.run(*module_, mam);
  }

  Status write(CpuEmit emit, std::string &out) {
    out.clear();
    llvm::raw_string_ostream os(out);
    switch (emit) {
    case CpuEmit::LlvmIr: module_->print(os, nullptr); break;
    case CpuEmit::Bitcode: llvm::WriteBitcodeToFile(*module_, os); break;
    case CpuEmit::Assembly:
    case CpuEmit::Object: {
      llvm::SmallString<0> buffer;
      llvm::raw_svector_ostream bs(buffer);
      llvm::legacy::PassManager pm;
      auto kind = emit == CpuEmit::Object ? llvm::CodeGenFileType::ObjectFile
                                          : llvm::CodeGenFileType::AssemblyFile;
      if (tm_->addPassesToEmitFile(pm, bs, nullptr, kind))
        return {ErrorCode::Internal, "LLVM cannot emit this file type for x86"};
      pm.run(*module_);
      os << buffer.str();
      break;
    }
    }
    os.flush();
    return {};
  }

  const isa::Module &isa_;
  const CpuOptions &opts_;
  llvm::LLVMContext ctx_;
  std::unique_ptr<llvm::Module> module_;
  detail::AbiTypes abi_;
  std::unique_ptr<llvm::TargetMachine> tm_;
  std::vector<std::vector<detail::LoweredKernel>> kernels_;
};

} // namespace

bool is_cpu_target_name(std::string_view name) {
  return !(name.starts_with("vulkan") || name.starts_with("opencl") || name.starts_with("cuda"));
}

Expected<CpuTarget> parse_cpu_target(std::string_view name) {
  if (llvm::X86::parseArchX86(name, /*Only64Bit=*/true) == llvm::X86::CK_None)
    return Status{ErrorCode::InvalidArgument,
                  "unknown x86 target '" + std::string(name) +
                      "' (expected x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM CPU name such as "
                      "skylake)"};
  llvm::SmallVector<llvm::StringRef, 64> feats;
  llvm::X86::getFeaturesForCPU(name, feats, /*NeedPlus=*/false);
  CpuTarget t;
  t.name = std::string(name);
  // The CPU's features and everything they imply (sse4.2 implies sse4.1, avx2 implies avx...).
  llvm::StringMap<bool> implied;
  for (auto f : feats) {
    implied[f] = true;
    llvm::X86::updateImpliedFeatures(f, true, implied);
  }
  std::vector<std::string> all;
  for (const auto &e : implied)
    if (e.getValue()) all.emplace_back(e.getKey());
  std::sort(all.begin(), all.end());
  for (const auto &f : all) t.llvm_features += (t.llvm_features.empty() ? "+" : ",+") + f;
  for (auto f : kCheckableFeatures)
    if (std::find(all.begin(), all.end(), f) != all.end()) t.features.emplace_back(f);
  auto has = [&](std::string_view f) { return std::find(all.begin(), all.end(), f) != all.end(); };
  if (has("avx512f") && has("avx512bw") && has("avx512dq") && has("avx512vl")) {
    t.width = 16;
  } else if (has("avx2") && has("fma")) {
    t.width = 8;
  } else if (has("sse4.1")) {
    t.width = 4;
  } else {
    return Status{ErrorCode::InvalidArgument, "x86 target '" + std::string(name) +
                                                  "' lacks SSE4.1, which the code generator needs"};
  }
  return t;
}

std::string host_cpu_level() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "x86-64-v4";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "x86-64-v3";
  return "x86-64-v2";
}

std::optional<CpuTarget> best_cpu_target(int cap,
                                         const std::function<bool(std::string_view)> &has) {
  for (int level = 4; level >= 2; --level) {
    if (cap != 0 && level > cap) continue;
    auto t = parse_cpu_target("x86-64-v" + std::to_string(level));
    if (t && std::all_of(t->features.begin(), t->features.end(),
                         [&](const std::string &f) { return has(f); }))
      return std::move(*t);
  }
  return std::nullopt;
}

std::string c_module_name(std::string_view module_name) {
  return c_identifier(module_name);
}

std::string module_descriptor_symbol(std::string_view module_name) {
  return "hologram_module_" + c_identifier(module_name);
}

Expected<std::string> emit_cpu(const isa::Module &module, const CpuOptions &options, CpuEmit emit) {
  if (options.targets.empty()) return Status{ErrorCode::InvalidArgument, "no x86 target given"};
  CpuOptions o = options;
  o.module_name = c_identifier(o.module_name.empty() ? "module" : o.module_name);
  std::string out;
  if (auto st = ModuleLowering(module, o).run(emit, out); !st) return st;
  return out;
}

} // namespace hologram::codegen
