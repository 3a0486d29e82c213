// The PTX back end (ptx_lowering.h): the kernel function and its plan, failures, special
// registers, blocks and calls, and compile_ptx, which lowers a module and runs LLVM's pipeline
// and NVPTX's code generator.
#include "ptx_lowering.h"

#include "hologram/codegen/spirv_abi.h"
#include "hologram/isa/atlas.h"
#include "hologram/support/unreachable.h"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <mutex>

namespace hologram::codegen {

namespace ptx {

namespace {

const char *kPtxTriple = "nvptx64-nvidia-cuda";

void initialise_nvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

/// The math code's view of a CUDA device (math_ir.h): a scalar per thread with fused FMA, as
/// on x86-64-v3 (width 8 is what MathIR reads as "has FMA"); no vector tables or AVX-512
/// scaling apply to scalars.
CpuTarget math_target() {
  CpuTarget t;
  t.name = "nvptx";
  t.width = 8;
  return t;
}

} // namespace

SimtLowering::SimtLowering(llvm::Module &m, const isa::Kernel &k, const PtxOptions &o,
                           const LibraryLaunchBounds &bounds)
    : m_(m), c_(m.getContext()), k_(k), o_(o), bounds_(bounds), b_(c_), ops_(b_),
      cfg_(isa::build_cfg(k)), math_(math_target()) {}

PtxKernelInfo SimtLowering::run() {
  plan();
  std::vector<llvm::Type *> params;
  for (const auto &p : k_.params) {
    if (p.kind == isa::ParamKind::Scalar) {
      params.push_back(ops_.scalar_type(p.type));
    } else {
      params.push_back(b_.getPtrTy(kGlobal));
      params.push_back(b_.getInt64Ty());
    }
  }
  for (bool hidden : {info_.has_status, info_.has_boundary, info_.has_atlas})
    if (hidden) params.push_back(b_.getPtrTy(kGlobal));
  if (info_.has_phase) params.push_back(i32());
  auto *fty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  fn_ = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, k_.name, m_);
  fn_->setCallingConv(llvm::CallingConv::PTX_Kernel);
  auto *annotations = m_.getOrInsertNamedMetadata("nvvm.annotations");
  auto annotate = [&](const char *key, uint32_t value) {
    annotations->addOperand(
        llvm::MDNode::get(c_, {llvm::ValueAsMetadata::get(fn_), llvm::MDString::get(c_, key),
                               llvm::ConstantAsMetadata::get(b_.getInt32(value))}));
  };
  annotate("kernel", 1);
  // .maxntid and .minnctapersm: ptxas then keeps the registers within what that many blocks
  // of that size leave each lane.
  if (bounds_.block[0]) {
    annotate("maxntidx", bounds_.block[0]);
    annotate("maxntidy", bounds_.block[1]);
    annotate("maxntidz", bounds_.block[2]);
  }
  if (bounds_.blocks_per_unit) annotate("minctasm", bounds_.blocks_per_unit);
  auto arg = fn_->arg_begin();
  for (const auto &p : k_.params) {
    Arg a;
    if (p.kind == isa::ParamKind::Scalar) {
      a.value = &*arg++;
    } else {
      a.value = &*arg++;
      a.bytes = &*arg++;
      a.bytes->setName(p.name + ".bytes");
    }
    a.value->setName(p.name);
    args_.push_back(a);
  }
  auto hidden = [&](bool has, const char *name) -> Value * {
    if (!has) return nullptr;
    Value *v = &*arg++;
    v->setName(name);
    return v;
  };
  status_ = hidden(info_.has_status, "hg.status");
  boundary_ = hidden(info_.has_boundary, "hg.boundary");
  atlas_ = hidden(info_.has_atlas, "hg.atlas");
  phase_ = hidden(info_.has_phase, "hg.phase");
  entry_ = BasicBlock::Create(c_, "entry", fn_);
  for (size_t i = 0; i < cfg_.blocks.size(); ++i)
    bbs_.push_back(BasicBlock::Create(c_, "b" + std::to_string(i), fn_));
  exit_ = BasicBlock::Create(c_, "exit", fn_);
  b_.SetInsertPoint(exit_);
  b_.CreateRetVoid();
  b_.SetInsertPoint(entry_);
  b_.CreateBr(cfg_.blocks.empty() ? exit_ : bbs_[0]);
  for (uint32_t i = 0; i < cfg_.blocks.size(); ++i) emit_block(i);
  return info_;
}

void SimtLowering::plan() {
  addressed_ = isa::handle::addressed_params(k_);
  for (uint32_t i = 0; i < k_.insts.size(); ++i)
    if (k_.insts[i].op == Opcode::PoolAlloc) {
      pool_sites_[i] = scratch_bytes_;
      scratch_bytes_ += (k_.insts[i].operands[1].imm + 15) & ~uint64_t{15};
    }
  info_.name = k_.name;
  info_.params = k_.params;
  info_.static_shared_bytes = k_.shared_bytes;
  for (const auto &inst : k_.insts) {
    // The Atlas instructions check their class, page and byte ranges, as on every backend.
    if (isa::family_of(inst.op) == isa::OpFamily::Atlas && inst.op != Opcode::PhaseGet &&
        inst.op != Opcode::PhaseAdv)
      info_.has_status = true;
    if (inst.op == Opcode::NbrLd || inst.op == Opcode::NbrSt) info_.has_boundary = true;
    if (inst.op == Opcode::ResAccum || inst.op == Opcode::PhaseAdv) info_.has_atlas = true;
    if (inst.op == Opcode::PhaseGet) info_.has_phase = true;
    if (o_.check_div && (inst.op == Opcode::Div || inst.op == Opcode::Rem) &&
        isa::is_int(inst.type))
      info_.has_status = true;
    for (const auto &opnd : inst.operands) {
      if (opnd.kind != isa::OperandKind::Addr) continue;
      if (o_.bounds_check) info_.has_status = true;
      if (opnd.addr.base == isa::AddrBase::Class || opnd.addr.base == isa::AddrBase::Boundary)
        info_.has_boundary = true;
    }
  }
}

void SimtLowering::record_if(Value *bad, uint32_t code, uint32_t param, Value *offset,
                             uint32_t size) {
  record_region_if(bad, code, b_.getInt32(param), offset, size);
}

void SimtLowering::record_region_if(Value *bad, uint32_t code, Value *param, Value *offset,
                                    uint32_t size) {
  BasicBlock *fail = BasicBlock::Create(c_, "fail", fn_);
  BasicBlock *first = BasicBlock::Create(c_, "fail.first", fn_);
  BasicBlock *go_on = BasicBlock::Create(c_, "ok", fn_);
  b_.CreateCondBr(bad, fail, go_on, llvm::MDBuilder(c_).createUnlikelyBranchWeights());
  b_.SetInsertPoint(fail);
  auto word = [&](uint32_t w) { return b_.CreateConstGEP1_32(i32(), status_, w); };
  auto *prev =
      b_.CreateAtomicCmpXchg(word(0), b_.getInt32(0), b_.getInt32(code), llvm::MaybeAlign(4),
                             llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  b_.CreateCondBr(b_.CreateExtractValue(prev, 1), first, go_on);
  b_.SetInsertPoint(first);
  auto split = [&](Value *v64, uint32_t lo) {
    b_.CreateStore(b_.CreateTrunc(v64, i32()), word(lo));
    b_.CreateStore(b_.CreateTrunc(b_.CreateLShr(v64, 32), i32()), word(lo + 1));
  };
  split(special(isa::Special::Gid), 1);
  b_.CreateStore(param, word(3));
  split(b_.CreateZExtOrTrunc(offset, i64()), 4);
  b_.CreateStore(b_.getInt32(size), word(6));
  b_.CreateStore(b_.getInt32(cur_), word(7));
  b_.CreateBr(go_on);
  b_.SetInsertPoint(go_on);
}

Value *SimtLowering::in_range(Value *v, uint32_t limit, uint32_t which) {
  record_if(b_.CreateICmpUGE(v, b_.getInt32(limit)), spirv_status::AtlasRange, which, v, 0);
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, v, b_.getInt32(limit - 1));
}

Value *SimtLowering::special(isa::Special s) {
  using S = isa::Special;
  switch (s) {
  case S::LaneX: return tid(0);
  case S::LaneY: return tid(1);
  case S::LaneZ: return tid(2);
  case S::BlockX: return ctaid(0);
  case S::BlockY: return ctaid(1);
  case S::BlockZ: return ctaid(2);
  case S::BdimX: return ntid(0);
  case S::BdimY: return ntid(1);
  case S::BdimZ: return ntid(2);
  case S::GdimX: return nctaid(0);
  case S::GdimY: return nctaid(1);
  case S::GdimZ: return nctaid(2);
  case S::GidX: return b_.CreateAdd(b_.CreateMul(z64(ctaid(0)), z64(ntid(0))), z64(tid(0)));
  case S::GidY: return b_.CreateAdd(b_.CreateMul(z64(ctaid(1)), z64(ntid(1))), z64(tid(1)));
  case S::GidZ: return b_.CreateAdd(b_.CreateMul(z64(ctaid(2)), z64(ntid(2))), z64(tid(2)));
  case S::Gid: {
    Value *lane = b_.CreateAdd(
        b_.CreateMul(b_.CreateAdd(b_.CreateMul(z64(tid(2)), z64(ntid(1))), z64(tid(1))),
                     z64(ntid(0))),
        z64(tid(0)));
    Value *block = b_.CreateAdd(
        b_.CreateMul(b_.CreateAdd(b_.CreateMul(z64(ctaid(2)), z64(nctaid(1))), z64(ctaid(1))),
                     z64(nctaid(0))),
        z64(ctaid(0)));
    return b_.CreateAdd(b_.CreateMul(block, lanes()), lane);
  }
  case S::Gsize:
    return b_.CreateMul(b_.CreateMul(b_.CreateMul(z64(nctaid(0)), z64(nctaid(1))), z64(nctaid(2))),
                        lanes());
  }
  unreachable_enum("Special");
}

BasicBlock *SimtLowering::block_of_label(const isa::Operand &label) {
  const uint32_t target = k_.labels.at(label.index).target;
  if (target >= k_.insts.size()) return exit_;
  return bbs_.at(cfg_.block_of.at(target));
}

BasicBlock *SimtLowering::fallthrough(uint32_t block) {
  const uint32_t next = cfg_.blocks[block].end;
  return next >= k_.insts.size() ? exit_ : bbs_.at(cfg_.block_of.at(next));
}

void SimtLowering::emit_block(uint32_t i) {
  b_.SetInsertPoint(bbs_[i]);
  const isa::BasicBlock &bb = cfg_.blocks[i];
  for (uint32_t n = bb.begin; n < bb.end; ++n) {
    const isa::Instruction &inst = k_.insts[n];
    cur_ = n;
    const bool transfers = isa::info(inst.op).ends_block();
    if (inst.guard.present && transfers && inst.op != Opcode::Bra) {
      // A guarded call, ret, loop or exit: the other threads fall through.
      BasicBlock *run = BasicBlock::Create(c_, "guarded", fn_);
      Value *p = get_pred(inst.guard.pred);
      b_.CreateCondBr(inst.guard.negate ? b_.CreateNot(p) : p, run, fallthrough(i));
      b_.SetInsertPoint(run);
      emit(inst, i);
      return;
    }
    if (inst.guard.present && !transfers) {
      // A guarded instruction runs in the threads whose predicate holds.
      Value *p = get_pred(inst.guard.pred);
      guarded(inst.guard.negate ? b_.CreateNot(p) : p, nullptr, [&]() -> Value * {
        emit(inst, i);
        return nullptr;
      });
    } else {
      emit(inst, i);
    }
    if (transfers) return;
  }
  b_.CreateBr(fallthrough(i));
}

void SimtLowering::make_stack() {
  if (stack_) return;
  stack_ = entry_alloca(llvm::ArrayType::get(i32(), kMaxCallDepth));
  sp_ = entry_alloca(i32());
  llvm::IRBuilder<> entry(entry_->getTerminator());
  entry.CreateStore(entry.getInt32(0), sp_);
}

uint32_t SimtLowering::return_site(uint32_t b) {
  auto it = std::find(cfg_.return_sites.begin(), cfg_.return_sites.end(), b);
  if (it == cfg_.return_sites.end()) throw detail::LoweringError("a call without a return site");
  return static_cast<uint32_t>(it - cfg_.return_sites.begin());
}

void SimtLowering::emit_call(const isa::Instruction &inst, uint32_t block) {
  make_stack();
  const uint32_t after = cfg_.block_of.at(cfg_.blocks[block].end);
  Value *sp = b_.CreateLoad(i32(), sp_);
  Value *full = b_.CreateICmpUGE(sp, b_.getInt32(kMaxCallDepth));
  BasicBlock *overflow = BasicBlock::Create(c_, "call.overflow", fn_);
  BasicBlock *push = BasicBlock::Create(c_, "call", fn_);
  b_.CreateCondBr(full, overflow, push);
  b_.SetInsertPoint(overflow); // unreachable in a verified program; a trap if ever reached
  b_.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
  b_.CreateUnreachable();
  b_.SetInsertPoint(push);
  b_.CreateStore(b_.getInt32(return_site(after)),
                 b_.CreateGEP(i32(), stack_, {b_.CreateZExt(sp, i64())}));
  b_.CreateStore(b_.CreateAdd(sp, b_.getInt32(1)), sp_);
  b_.CreateBr(block_of_label(inst.operands[0]));
}

void SimtLowering::emit_ret() {
  make_stack();
  Value *sp = b_.CreateLoad(i32(), sp_);
  BasicBlock *pop = BasicBlock::Create(c_, "ret", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(sp, b_.getInt32(0)), exit_, pop);
  b_.SetInsertPoint(pop);
  Value *top = b_.CreateSub(sp, b_.getInt32(1));
  b_.CreateStore(top, sp_);
  Value *site = b_.CreateLoad(i32(), b_.CreateGEP(i32(), stack_, {b_.CreateZExt(top, i64())}));
  auto *sw = b_.CreateSwitch(site, exit_, static_cast<unsigned>(cfg_.return_sites.size()));
  for (uint32_t i = 0; i < cfg_.return_sites.size(); ++i)
    sw->addCase(b_.getInt32(i), bbs_.at(cfg_.return_sites[i]));
}

} // namespace ptx

Expected<PtxModule> compile_ptx(const isa::Module &module, const PtxOptions &options) {
  ptx::initialise_nvptx();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(ptx::kPtxTriple, error);
  if (!target) return Status{ErrorCode::Internal, "LLVM has no NVPTX target: " + error};
  llvm::TargetOptions to;
  to.UnsafeFPMath = options.fast_math;
  to.NoInfsFPMath = options.fast_math;
  to.NoNaNsFPMath = options.fast_math;
  const std::string cpu = "sm_" + std::to_string(options.target.sm);
  const std::string features = "+ptx" + std::to_string(options.target.ptx_version);
  auto level =
      options.opt_level == 0 ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Default;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      ptx::kPtxTriple, cpu, features, to, std::nullopt, std::nullopt, level));
  llvm::LLVMContext ctx;
  auto m = std::make_unique<llvm::Module>(
      module.source_name.empty() ? "module" : module.source_name, ctx);
  m->setTargetTriple(ptx::kPtxTriple);
  m->setDataLayout(tm->createDataLayout());
  // Whole-launch kernels run on the host beside the device library kernels their
  // instructions need (spirv_library.h: kernels in the ISA, shared with the SPIR-V backends).
  auto library = spirv_library_kernels(module);
  if (!library) return library.status();
  PtxModule out;
  auto lower = [&](const isa::Kernel &k, const std::string &source,
                   const LibraryLaunchBounds &bounds = {}) -> Status {
    try {
      out.kernels.push_back(ptx::SimtLowering(*m, k, options, bounds).run());
    } catch (const ptx::Unsupported &e) {
      return isa::kernel_error(ErrorCode::InvalidProgram, source, k, e.loc,
                               std::string(e.what()) + " (target " + options.target.name + ")");
    } catch (const std::exception &e) {
      return isa::kernel_error(ErrorCode::Internal, source, k, k.loc,
                               "the CUDA back end failed on this kernel (target " +
                                   options.target.name + "): " + e.what());
    }
    return Status::ok();
  };
  for (const auto &k : module.kernels) {
    if (is_spirv_library_kernel(k.name))
      return isa::kernel_error(ErrorCode::InvalidProgram, module.source_name, k, k.loc,
                               "kernel name '" + k.name + "' is reserved: names starting with " +
                                   std::string(kSpirvLibraryPrefix) +
                                   " are the device library's kernels");
    if (k.is_launch_level()) {
      PtxKernelInfo host;
      host.name = k.name;
      host.host = true;
      out.kernels.push_back(std::move(host));
      continue;
    }
    if (auto st = lower(k, module.source_name); !st) return st;
  }
  for (const auto &k : *library)
    if (auto st = lower(k, "the device library", spirv_library_launch_bounds(k.name)); !st)
      return st;
  std::string verify;
  llvm::raw_string_ostream vs(verify);
  if (llvm::verifyModule(*m, &vs))
    return Status{ErrorCode::Internal, "the CUDA back end produced invalid LLVM IR:\n" + vs.str()};
  if (options.opt_level > 0) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    const auto opt = options.opt_level >= 3   ? llvm::OptimizationLevel::O3
                     : options.opt_level == 2 ? llvm::OptimizationLevel::O2
                                              : llvm::OptimizationLevel::O1;
    pb.buildPerModuleDefaultPipeline(opt).run(*m, mam);
  }
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream bs(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, bs, nullptr, llvm::CodeGenFileType::AssemblyFile))
    return Status{ErrorCode::Internal, "LLVM cannot emit PTX"};
  pm.run(*m);
  out.text = std::string(buffer.str());
  return out;
}

} // namespace hologram::codegen
