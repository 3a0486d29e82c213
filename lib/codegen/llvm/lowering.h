// Internal interface between the parts of the x86 lowering: the kernel lowering (SPMD on
// SIMD), the vector math library calls and the module assembly (descriptors, variants).
#pragma once

#include "hologram/codegen/cpu.h"
#include "hologram/isa/program.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::codegen::detail {

/// A failure of the lowering itself (a bug), reported by emit_cpu as an internal error at the
/// instruction being lowered; it never leaves the back end.
struct LoweringError : std::runtime_error {
  explicit LoweringError(const std::string &why, SourceLoc where = {})
      : std::runtime_error(why), loc(where) {}
  SourceLoc loc; ///< the instruction's location; line 0 until known
};

/// `s` as a C identifier: every character but a letter or digit becomes '_', and one leads
/// where `s` is empty or starts with a digit (a target's name in its functions' symbols).
std::string c_identifier(std::string_view s);

/// The LLVM struct types mirroring cpu_abi.h.
struct AbiTypes {
  llvm::StructType *launch;
  llvm::StructType *worker;
  llvm::StructType *error;
  explicit AbiTypes(llvm::LLVMContext &c);
};

/// The last pass of the x86 optimiser, for functions of a target without AVX-512's mask
/// registers (prefix_masks.cpp): a prefix of a chunk's lanes made from a count (prefix_mask),
/// or both of two, is one compare with its count and its bits are worked out from the
/// count; a phi of prefixes is a phi of their counts and one compare after it. LLVM's
/// instruction selection for AVX2 keeps an i1 vector that crosses blocks in a register of
/// bytes and packs the lanes' sign bits into bytes for a mask's bits, and its combines of
/// those took most of saxpy's partial chunk: the compile of saxpy at x86-64-v3 took 146
/// million instructions with this pass, 160 without (callgrind, hologram-cc -O2
/// --emit=obj). It runs after InstCombine, which would fold its changes back.
struct PrefixMasksPass : llvm::PassInfoMixin<PrefixMasksPass> {
  llvm::PreservedAnalyses run(llvm::Function &f, llvm::FunctionAnalysisManager &am);
};

/// What the module assembly needs to know about one lowered kernel variant.
struct LoweredKernel {
  llvm::Function *blocks = nullptr; ///< hg_cpu_blocks_fn
  uint32_t state_bytes = 0;         ///< saved state per chunk (barrier kernels)
  uint64_t pool_bytes = 0;          ///< pool.alloc scratch per lane
};

/// A private constant array of the u32 `values`, "atlas." + `name`, in address space
/// `address_space` of `m` (the Atlas instructions' tables).
inline llvm::GlobalVariable *constant_table(llvm::Module &m, const std::vector<uint32_t> &values,
                                            const std::string &name, unsigned address_space = 0) {
  llvm::IntegerType *u32 = llvm::Type::getInt32Ty(m.getContext());
  std::vector<llvm::Constant *> c;
  for (uint32_t v : values) c.push_back(llvm::ConstantInt::get(u32, v));
  auto *ty = llvm::ArrayType::get(u32, c.size());
  return new llvm::GlobalVariable(m, ty, true, llvm::GlobalValue::PrivateLinkage,
                                  llvm::ConstantArray::get(ty, c), "atlas." + name, nullptr,
                                  llvm::GlobalValue::NotThreadLocal, address_space);
}

/// A new function `name` of type `fty` in `m` for code that a loop of chunks almost never
/// runs (math's rare inputs, an access that reaches past its page): internal, cold, never
/// inlined, of the preserve_all calling convention, under which the callee saves every
/// register it uses, the vector registers too, so that the loop keeps its registers across
/// the call (a call of the C convention would clobber every vector register). `body(f)` fills
/// it with `b` at its entry block and no debug location (the function has no subprogram);
/// b's insertion point and debug location are restored after. Made while the variant is
/// lowered, the function gets the variant's target attributes (module_lowering.cpp), and it
/// must not return through vzeroupper either. Its calls must take the same convention.
template <typename Body>
llvm::Function *cold_function(llvm::IRBuilderBase &b, llvm::Module &m, const llvm::Twine &name,
                              llvm::FunctionType *fty, Body &&body) {
  auto *f = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage, name, m);
  f->setCallingConv(llvm::CallingConv::PreserveAll);
  f->addFnAttr(llvm::Attribute::NoInline);
  f->addFnAttr(llvm::Attribute::Cold);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilderBase::InsertPointGuard guard(b); // also restores the debug location
  b.SetCurrentDebugLocation(llvm::DebugLoc());
  b.SetInsertPoint(llvm::BasicBlock::Create(m.getContext(), "entry", f));
  body(f);
  return f;
}

/// `body()` in blocks of `fn` that run where `ok` holds (everywhere, with no blocks, when `ok`
/// is null), b's insertion point after them; what it yields, of type `ty` unless that is null,
/// is 0 where it did not run.
template <typename F>
llvm::Value *guarded(llvm::IRBuilderBase &b, llvm::Function *fn, llvm::Value *ok, llvm::Type *ty,
                     F body, const llvm::Twine &name = "guarded") {
  if (!ok) return body();
  llvm::LLVMContext &c = fn->getContext();
  llvm::BasicBlock *pre = b.GetInsertBlock();
  llvm::BasicBlock *run = llvm::BasicBlock::Create(c, name, fn);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(c, name + ".done", fn);
  b.CreateCondBr(ok, run, done);
  b.SetInsertPoint(run);
  llvm::Value *v = body();
  llvm::BasicBlock *run_end = b.GetInsertBlock();
  b.CreateBr(done);
  b.SetInsertPoint(done);
  if (!ty) return nullptr;
  auto *phi = b.CreatePHI(ty, 2);
  phi->addIncoming(llvm::Constant::getNullValue(ty), pre);
  phi->addIncoming(v, run_end);
  return phi;
}

/// Lowers one verified kernel for one target into `module`.
LoweredKernel lower_kernel(llvm::Module &module, const AbiTypes &abi, const isa::Kernel &kernel,
                           uint32_t kernel_index, const CpuTarget &target,
                           const CpuOptions &options, const std::string &symbol);

/// A call of the vector (or, for a uniform value, scalar) math library for `op` on `args`,
/// which are all scalars or all vectors of the target's width.
llvm::Value *emit_math(llvm::IRBuilder<> &b, const CpuTarget &target, isa::MathOpcode op,
                       llvm::ArrayRef<llvm::Value *> args);

} // namespace hologram::codegen::detail
