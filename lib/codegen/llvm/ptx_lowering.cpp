// PTX for CUDA (SPEC §9.4; include/hologram/codegen/ptx.h): each kernel lowered to one SIMT
// function, a scalar per thread, run through LLVM's optimisation pipeline and NVPTX's code
// generator.
//
// Registers are allocas per (register, type) slot, which SROA turns into SSA values; the ISA's
// blocks are LLVM blocks and its branches are branches (the hardware handles divergence);
// `bar.sync N` is PTX's barrier N (both have 16). Arithmetic, comparisons and conversions are
// value_ops.h's, the same IR the x86 lowering builds per lane, and transcendentals are math.cpp's
// inline IR (no libdevice) with FMA fused, as on x86-64-v3. Memory accesses carry the alignment the
// address proves (buffer bases are at least 16-byte aligned), so NVPTX splits an access that may be
// misaligned into narrower ones: the ISA has no alignment requirement.
#include "hologram/codegen/ptx.h"

#include "hologram/codegen/spirv_abi.h"
#include "hologram/codegen/spirv_library.h"
#include "hologram/isa/atlas.h"
#include "hologram/isa/cfg.h"
#include "hologram/isa/type_dispatch.h"
#include "hologram/support/unreachable.h"
#include "lowering.h"
#include "math_ir.h"
#include "value_ops.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <mutex>
#include <tuple>

namespace hologram::codegen {

namespace {

using isa::Opcode;
using isa::Type;
using llvm::BasicBlock;
using llvm::Value;

const char *kPtxTriple = "nvptx64-nvidia-cuda";

/// Address space numbers of NVPTX.
constexpr unsigned kGlobal = 1, kShared = 3, kConstant = 4;

/// A buffer's first byte is at least this aligned: cuMemAlloc aligns to 256 bytes, and a
/// view starts at a multiple of the device's view alignment, which the CUDA backend sets to
/// at least this.
constexpr uint64_t kBaseAlign = 16;

/// An instruction this back end does not lower (yet): InvalidProgram at the instruction.
struct Unsupported : std::runtime_error {
  Unsupported(const std::string &why, SourceLoc where) : std::runtime_error(why), loc(where) {}
  SourceLoc loc;
};

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

class SimtLowering {
public:
  SimtLowering(llvm::Module &m, const isa::Kernel &k, const PtxOptions &o,
               const LibraryLaunchBounds &bounds = {})
      : m_(m), c_(m.getContext()), k_(k), o_(o), bounds_(bounds), b_(c_), ops_(b_),
        cfg_(isa::build_cfg(k)), math_(math_target()) {}

  PtxKernelInfo run() {
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

private:
  struct Arg {
    Value *value = nullptr; ///< the scalar, or the buffer's pointer
    Value *bytes = nullptr; ///< the buffer's size
  };

  llvm::Type *i32() { return b_.getInt32Ty(); }
  llvm::Type *i64() { return b_.getInt64Ty(); }

  [[noreturn]] void unsupported(const isa::Instruction &inst, const std::string &what) {
    throw Unsupported("the CUDA back end does not lower " + what + " yet", inst.loc);
  }

  /// What the kernel needs beyond its parameters (PtxKernelInfo).
  void plan() {
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

  // Failures ----------------------------------------------------------------------------------

  /// Records the launch's first failure when `bad` holds (spirv_status's words: the code,
  /// the lane, `param`, `offset`, `size`, the instruction); the thread goes on, with the
  /// access that failed not made.
  void record_if(Value *bad, uint32_t code, uint32_t param, Value *offset, uint32_t size) {
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
    b_.CreateStore(b_.getInt32(param), word(3));
    split(b_.CreateZExtOrTrunc(offset, i64()), 4);
    b_.CreateStore(b_.getInt32(size), word(6));
    b_.CreateStore(b_.getInt32(cur_), word(7));
    b_.CreateBr(go_on);
    b_.SetInsertPoint(go_on);
  }

  /// v, or limit - 1 after recording that v >= limit (an Atlas range: 0 class, 1 page, 2 byte).
  Value *in_range(Value *v, uint32_t limit, uint32_t which) {
    record_if(b_.CreateICmpUGE(v, b_.getInt32(limit)), spirv_status::AtlasRange, which, v, 0);
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, v, b_.getInt32(limit - 1));
  }

  // Registers ---------------------------------------------------------------------------------

  llvm::AllocaInst *slot(bool pred, isa::Reg r, Type t) {
    auto [it, fresh] = slots_.try_emplace({pred, r, t}, nullptr);
    if (fresh) {
      llvm::IRBuilder<> entry(entry_, entry_->getFirstInsertionPt());
      it->second = entry.CreateAlloca(ops_.scalar_type(t));
    }
    return it->second;
  }

  Value *get(isa::Reg r, Type t) {
    if (isa::is_special(r)) {
      const isa::Special s = isa::reg_special(r);
      if (isa::special_type(s) != t)
        throw detail::LoweringError("special register read with the wrong type");
      return special(s);
    }
    llvm::AllocaInst *a = slot(false, r, t);
    return b_.CreateLoad(a->getAllocatedType(), a);
  }
  Value *src(const isa::Instruction &inst, size_t i, Type t) {
    return get(inst.operands[i].index, t);
  }
  void set(const isa::Instruction &inst, size_t i, Type t, Value *v) {
    b_.CreateStore(v, slot(false, inst.operands[i].index, t));
  }
  Value *get_pred(unsigned p) {
    llvm::AllocaInst *a = slot(true, static_cast<isa::Reg>(p), Type::Pred);
    return b_.CreateLoad(b_.getInt1Ty(), a);
  }
  void set_pred(unsigned p, Value *v) {
    b_.CreateStore(v, slot(true, static_cast<isa::Reg>(p), Type::Pred));
  }

  // Launch geometry ---------------------------------------------------------------------------

  Value *sreg(llvm::Intrinsic::ID id) { return b_.CreateIntrinsic(id, {}, {}); }
  Value *tid(unsigned d) {
    constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z};
    return sreg(ids[d]);
  }
  Value *ntid(unsigned d) {
    constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_z};
    return sreg(ids[d]);
  }
  Value *ctaid(unsigned d) {
    constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
    return sreg(ids[d]);
  }
  Value *nctaid(unsigned d) {
    constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
    return sreg(ids[d]);
  }
  Value *z64(Value *v) { return b_.CreateZExt(v, i64()); }
  /// Lanes per block (u64).
  Value *lanes() { return b_.CreateMul(b_.CreateMul(z64(ntid(0)), z64(ntid(1))), z64(ntid(2))); }

  /// SPEC §3.3's special registers; %gid is (block linear id) * lanes + (lane linear id).
  Value *special(isa::Special s) {
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
      return b_.CreateMul(
          b_.CreateMul(b_.CreateMul(z64(nctaid(0)), z64(nctaid(1))), z64(nctaid(2))), lanes());
    }
    unreachable_enum("Special");
  }

  // Memory ------------------------------------------------------------------------------------

  /// The dynamic shared memory of the block (the launch sizes it).
  Value *shared() {
    if (!shared_) {
      auto *ty = llvm::ArrayType::get(b_.getInt8Ty(), 0);
      shared_ = new llvm::GlobalVariable(m_, ty, false, llvm::GlobalValue::ExternalLinkage, nullptr,
                                         "hg_shared", nullptr, llvm::GlobalValue::NotThreadLocal,
                                         kShared);
      shared_->setAlignment(llvm::Align(kBaseAlign));
    }
    return shared_;
  }

  /// The dynamic shared memory's size in bytes (PTX's %dynamic_smem_size).
  Value *shared_bytes() {
    auto *fty = llvm::FunctionType::get(i32(), false);
    auto *asm_ = llvm::InlineAsm::get(fty, "mov.u32 $0, %dynamic_smem_size;", "=r", false);
    return b_.CreateZExt(b_.CreateCall(fty, asm_), i64());
  }

  /// Where an access goes: the pointer, the alignment its address proves, and whether it may
  /// happen (-fbounds-check; null when not checked).
  struct Place {
    Value *ptr;
    llvm::Align align;
    Value *ok = nullptr;
  };

  Place address(const isa::Address &a, uint64_t size) {
    Value *base = nullptr, *limit = nullptr;
    uint32_t region = a.base_id;
    switch (a.base) {
    case isa::AddrBase::Param:
    case isa::AddrBase::Pool:
      base = args_.at(a.base_id).value;
      limit = args_.at(a.base_id).bytes;
      break;
    case isa::AddrBase::Shared:
      base = shared();
      limit = o_.bounds_check ? shared_bytes() : nullptr;
      region = spirv_status::kSharedMemory;
      break;
    case isa::AddrBase::Class:
      base = b_.CreateConstGEP1_64(b_.getInt8Ty(), boundary_,
                                   uint64_t{a.base_id} * atlas::kClassBytes);
      limit = b_.getInt64(atlas::kClassBytes);
      region = spirv_status::kBoundaryPool;
      break;
    case isa::AddrBase::Boundary:
      base = boundary_;
      limit = b_.getInt64(atlas::kBoundaryPoolBytes);
      region = spirv_status::kBoundaryPool;
      break;
    case isa::AddrBase::Reg: {
      // An address `addr` or pool.alloc made: a generic address (of global memory, or of the
      // thread's scratch in local memory), 16-byte aligned. Not bounds-checked, as on x86.
      base = b_.CreateIntToPtr(get(a.base_id, Type::U64), b_.getPtrTy());
      break;
    }
    }
    Value *off = b_.getInt64(static_cast<uint64_t>(a.disp));
    uint64_t align = kBaseAlign;
    auto proven = [](uint64_t v) {
      return v == 0 ? kBaseAlign : uint64_t{1} << std::countr_zero(v);
    };
    align = std::min(align, proven(static_cast<uint64_t>(a.disp)));
    if (a.index != isa::kNoReg) {
      off = b_.CreateAdd(b_.CreateMul(get(a.index, Type::U64), b_.getInt64(a.scale)), off);
      align = std::min(align, proven(a.scale));
    }
    Place place{b_.CreateGEP(b_.getInt8Ty(), base, off), llvm::Align(std::min(align, size))};
    if (o_.bounds_check && limit) {
      // off + size > limit, without overflow: limit < size || off > limit - size.
      Value *bad = b_.CreateOr(b_.CreateICmpULT(limit, b_.getInt64(size)),
                               b_.CreateICmpUGT(off, b_.CreateSub(limit, b_.getInt64(size))));
      record_if(bad, spirv_status::OutOfBounds, region, off, static_cast<uint32_t>(size));
      place.ok = b_.CreateNot(bad);
    }
    return place;
  }

  /// `body()` where `ok` holds (everywhere when `ok` is null); what it yields, of type `ty`
  /// unless that is null, is 0 where it did not run.
  template <typename F> Value *guarded(Value *ok, llvm::Type *ty, F body) {
    if (!ok) return body();
    BasicBlock *pre = b_.GetInsertBlock();
    BasicBlock *run = BasicBlock::Create(c_, "guarded", fn_);
    BasicBlock *done = BasicBlock::Create(c_, "guarded.done", fn_);
    b_.CreateCondBr(ok, run, done);
    b_.SetInsertPoint(run);
    Value *v = body();
    BasicBlock *run_end = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    if (!ty) return nullptr;
    auto *phi = b_.CreatePHI(ty, 2);
    phi->addIncoming(llvm::Constant::getNullValue(ty), pre);
    phi->addIncoming(v, run_end);
    return phi;
  }

  /// A load of t at `p` (0 where the access may not happen).
  Value *load(Type t, const Place &p) {
    llvm::Type *ty = ops_.scalar_type(t);
    return guarded(p.ok, ty, [&] { return b_.CreateAlignedLoad(ty, p.ptr, p.align); });
  }

  void store(const Place &p, Value *v) {
    guarded(p.ok, nullptr, [&] { return b_.CreateAlignedStore(v, p.ptr, p.align); });
  }

  // The Atlas instructions (SPEC §4) ----------------------------------------------------------

  /// table[index] from a constant table (index within it).
  Value *table_lookup(const std::vector<uint32_t> &table, Value *index, const std::string &name) {
    auto &g = tables_[name];
    if (!g) g = detail::constant_table(m_, table, name, kConstant);
    return b_.CreateLoad(i32(), b_.CreateGEP(i32(), g, {b_.CreateZExt(index, i64())}));
  }

  template <typename F> static std::vector<uint32_t> tabulate(uint32_t n, F f) {
    std::vector<uint32_t> t(n);
    for (uint32_t i = 0; i < n; ++i) t[i] = f(i);
    return t;
  }

  Value *neighbour(Value *c, uint64_t k) {
    return table_lookup(tabulate(atlas::kNumClasses,
                                 [k](uint32_t x) {
                                   auto n = atlas::neighbours(x);
                                   return n.items[k % n.count];
                                 }),
                        c, "neighbour" + std::to_string(k));
  }

  void emit_atlas(const isa::Instruction &inst) {
    const auto &opnds = inst.operands;
    auto klass = [&](size_t i) { return in_range(src(inst, i, Type::U32), atlas::kNumClasses, 0); };
    switch (isa::as_family<isa::AtlasOpcode>(inst.op)) {
    case isa::AtlasOpcode::ClsGet:
      set(inst, 0, Type::U32,
          table_lookup(tabulate(256, [](uint32_t x) { return atlas::byte_to_class(x); }),
                       in_range(src(inst, 1, Type::U32), 256, 2), "class_of_byte"));
      return;
    case isa::AtlasOpcode::Mirror:
      set(inst, 0, Type::U32,
          table_lookup(tabulate(atlas::kNumClasses, atlas::mirror), klass(1), "mirror"));
      return;
    case isa::AtlasOpcode::UnityTest:
      set_pred(opnds[0].index,
               b_.CreateICmpNE(
                   table_lookup(tabulate(atlas::kNumClasses,
                                         [](uint32_t x) { return uint32_t{atlas::is_unity(x)}; }),
                                klass(1), "unity"),
                   b_.getInt32(0)));
      return;
    case isa::AtlasOpcode::NbrCount:
      set(inst, 0, Type::U32,
          table_lookup(
              tabulate(atlas::kNumClasses, [](uint32_t x) { return atlas::neighbours(x).count; }),
              klass(1), "degree"));
      return;
    case isa::AtlasOpcode::NbrGet:
      set(inst, 0, Type::U32, neighbour(klass(1), opnds[2].imm));
      return;
    case isa::AtlasOpcode::NbrLd:
    case isa::AtlasOpcode::NbrSt: {
      const bool is_ld = inst.op == Opcode::NbrLd;
      const Type t = inst.type;
      const uint64_t size = isa::type_size(t);
      Value *n = neighbour(klass(is_ld ? 1 : 0), opnds[is_ld ? 2 : 1].imm);
      Value *off = get(opnds[is_ld ? 3 : 2].index, Type::U64);
      // The neighbour's class window: bounds are the window; the offset is from its start.
      Value *window = b_.CreateMul(b_.CreateZExt(n, i64()), b_.getInt64(atlas::kClassBytes));
      Place place{b_.CreateGEP(b_.getInt8Ty(), boundary_, b_.CreateAdd(window, off)),
                  llvm::Align(1)};
      if (o_.bounds_check) {
        Value *bad = b_.CreateICmpUGT(off, b_.getInt64(atlas::kClassBytes - size));
        record_if(bad, spirv_status::OutOfBounds, spirv_status::kBoundaryPool, off,
                  static_cast<uint32_t>(size));
        place.ok = b_.CreateNot(bad);
      }
      if (is_ld)
        set(inst, 0, t, load(t, place));
      else
        store(place, src(inst, 3, t));
      return;
    }
    case isa::AtlasOpcode::ResAccum: {
      Value *c = klass(0);
      b_.CreateAtomicRMW(llvm::AtomicRMWInst::FAdd,
                         b_.CreateGEP(b_.getDoubleTy(), atlas_, {b_.CreateZExt(c, i64())}),
                         src(inst, 1, Type::F64), llvm::MaybeAlign(8),
                         llvm::AtomicOrdering::Monotonic);
      return;
    }
    case isa::AtlasOpcode::PhaseGet: set(inst, 0, Type::U32, phase_); return;
    case isa::AtlasOpcode::PhaseAdv:
      // Every thread adds its amount (SPEC §4); the runtime applies the sum at the end.
      b_.CreateAtomicRMW(
          llvm::AtomicRMWInst::Add, b_.CreateConstGEP1_32(i64(), atlas_, atlas::kNumClasses),
          b_.getInt64(opnds[0].imm), llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic);
      return;
    case isa::AtlasOpcode::BoundMap: {
      Value *c = klass(1);
      Value *page = in_range(src(inst, 2, Type::U32), atlas::kPagesPerClass, 1);
      Value *byte = in_range(src(inst, 3, Type::U32), atlas::kBytesPerPage, 2);
      set(inst, 0, Type::U64,
          b_.CreateAdd(b_.CreateAdd(b_.CreateMul(z64(c), b_.getInt64(atlas::kClassBytes)),
                                    b_.CreateMul(z64(page), b_.getInt64(atlas::kBytesPerPage))),
                       z64(byte)));
      return;
    }
    }
    unreachable_enum("AtlasOpcode");
  }

  // Control -----------------------------------------------------------------------------------

  BasicBlock *block_of_label(const isa::Operand &label) {
    const uint32_t target = k_.labels.at(label.index).target;
    if (target >= k_.insts.size()) return exit_;
    return bbs_.at(cfg_.block_of.at(target));
  }

  BasicBlock *fallthrough(uint32_t block) {
    const uint32_t next = cfg_.blocks[block].end;
    return next >= k_.insts.size() ? exit_ : bbs_.at(cfg_.block_of.at(next));
  }

  void emit_block(uint32_t i) {
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

  // Subroutines -------------------------------------------------------------------------------
  // `call` and `ret` share the kernel's registers, as on every backend: a subroutine is blocks
  // of the one function, and each thread keeps a stack of the return sites it is to go back
  // to (the verifier bounds the nesting by kMaxCallDepth and rejects recursion).

  static constexpr uint32_t kMaxCallDepth = 64;

  llvm::AllocaInst *entry_alloca(llvm::Type *t) {
    llvm::IRBuilder<> entry(entry_, entry_->getFirstInsertionPt());
    return entry.CreateAlloca(t);
  }

  void make_stack() {
    if (stack_) return;
    stack_ = entry_alloca(llvm::ArrayType::get(i32(), kMaxCallDepth));
    sp_ = entry_alloca(i32());
    llvm::IRBuilder<> entry(entry_->getTerminator());
    entry.CreateStore(entry.getInt32(0), sp_);
  }

  /// The number of block `b` among the return sites.
  uint32_t return_site(uint32_t b) {
    auto it = std::find(cfg_.return_sites.begin(), cfg_.return_sites.end(), b);
    if (it == cfg_.return_sites.end()) throw detail::LoweringError("a call without a return site");
    return static_cast<uint32_t>(it - cfg_.return_sites.begin());
  }

  void emit_call(const isa::Instruction &inst, uint32_t block) {
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

  /// Back to the top return site; with none (a `ret` of the kernel itself) the thread exits.
  void emit_ret() {
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

  // Instructions ------------------------------------------------------------------------------

  void binary(const isa::Instruction &inst, detail::ValueOps::BinaryOp op) {
    const Type t = inst.type;
    Value *x = src(inst, 1, t), *y = src(inst, 2, t);
    using B = detail::ValueOps::BinaryOp;
    if (o_.check_div && (op == B::Div || op == B::Rem) && isa::is_int(t))
      record_if(b_.CreateICmpEQ(y, llvm::Constant::getNullValue(y->getType())),
                spirv_status::DivisionByZero, 0, b_.getInt64(0), 0);
    set(inst, 0, t, ops_.binary(op, t, x, y));
  }

  void emit(const isa::Instruction &inst, uint32_t block) {
    using BinaryOp = detail::ValueOps::BinaryOp;
    const Type t = inst.type;
    const auto &opnds = inst.operands;
    switch (inst.op) {
    case Opcode::Ld:
    case Opcode::Lds:
    case Opcode::PoolLd:
      set(inst, 0, t, load(t, address(opnds[1].addr, isa::type_size(t))));
      return;
    case Opcode::St:
    case Opcode::Sts:
    case Opcode::PoolSt: store(address(opnds[0].addr, isa::type_size(t)), src(inst, 1, t)); return;
    case Opcode::Mov: set(inst, 0, t, src(inst, 1, t)); return;
    case Opcode::MovImm: set(inst, 0, t, ops_.constant(t, opnds[1].imm)); return;
    case Opcode::Cvt:
      set(inst, 0, t,
          ops_.convert(
              src(inst, 1, inst.type2), t, inst.type2, [&](Value *, Type d, Type s) -> Value * {
                unsupported(inst, std::string("conversion from ") + std::string(isa::type_name(s)) +
                                      " to " + std::string(isa::type_name(d)));
              }));
      return;
    case Opcode::Param: {
      const Arg &a = args_.at(opnds[1].index);
      llvm::Type *want = ops_.scalar_type(t);
      Value *v = a.value;
      if (v->getType() != want) {
        if (v->getType()->getPrimitiveSizeInBits() != want->getPrimitiveSizeInBits())
          unsupported(inst, "reading a parameter with a type of another size");
        v = b_.CreateBitCast(v, want);
      }
      set(inst, 0, t, v);
      return;
    }
    case Opcode::Add: binary(inst, BinaryOp::Add); return;
    case Opcode::Sub: binary(inst, BinaryOp::Sub); return;
    case Opcode::Mul: binary(inst, BinaryOp::Mul); return;
    case Opcode::Div: binary(inst, BinaryOp::Div); return;
    case Opcode::Rem:
      // NVPTX computes a float remainder as x - y trunc(x/y), which is not fmod's exact one.
      if (t == Type::F32 || t == Type::F64) unsupported(inst, "a floating-point remainder");
      binary(inst, BinaryOp::Rem);
      return;
    case Opcode::And: binary(inst, BinaryOp::And); return;
    case Opcode::Or: binary(inst, BinaryOp::Or); return;
    case Opcode::Xor: binary(inst, BinaryOp::Xor); return;
    case Opcode::Min:
    case Opcode::Max:
      set(inst, 0, t, ops_.min_max(inst.op == Opcode::Min, t, src(inst, 1, t), src(inst, 2, t)));
      return;
    case Opcode::Shl:
    case Opcode::Shr:
      set(inst, 0, t,
          ops_.shift(inst.op == Opcode::Shl, t, src(inst, 1, t), src(inst, 2, Type::U32)));
      return;
    case Opcode::Not: set(inst, 0, t, b_.CreateNot(src(inst, 1, t))); return;
    case Opcode::Mad:
      set(inst, 0, t, ops_.mad(t, src(inst, 1, t), src(inst, 2, t), src(inst, 3, t)));
      return;
    case Opcode::Fma:
    case Opcode::Fms:
      set(inst, 0, t,
          ops_.fma(inst.op == Opcode::Fms, src(inst, 1, t), src(inst, 2, t), src(inst, 3, t)));
      return;
    case Opcode::Clamp: {
      Value *lo = ops_.min_max(false, t, src(inst, 1, t), src(inst, 2, t));
      set(inst, 0, t, ops_.min_max(true, t, lo, src(inst, 3, t)));
      return;
    }
    case Opcode::Lerp:
      set(inst, 0, t, ops_.lerp(src(inst, 1, t), src(inst, 2, t), src(inst, 3, t)));
      return;
    case Opcode::Abs: set(inst, 0, t, ops_.abs(t, src(inst, 1, t))); return;
    case Opcode::Neg: set(inst, 0, t, ops_.neg(t, src(inst, 1, t))); return;
    case Opcode::Rcp: set(inst, 0, t, ops_.rcp(src(inst, 1, t))); return;
    case Opcode::Sign: set(inst, 0, t, ops_.sign(t, src(inst, 1, t))); return;
    case Opcode::Floor:
    case Opcode::Ceil:
    case Opcode::Round:
    case Opcode::Trunc: {
      auto id = inst.op == Opcode::Floor   ? llvm::Intrinsic::floor
                : inst.op == Opcode::Ceil  ? llvm::Intrinsic::ceil
                : inst.op == Opcode::Round ? llvm::Intrinsic::round
                                           : llvm::Intrinsic::trunc;
      set(inst, 0, t, b_.CreateUnaryIntrinsic(id, src(inst, 1, t)));
      return;
    }
    case Opcode::Set:
      set_pred(opnds[0].index, ops_.compare(static_cast<isa::CmpCode>(inst.sub), t, src(inst, 1, t),
                                            src(inst, 2, t)));
      return;
    case Opcode::Sel:
      set(inst, 0, t, b_.CreateSelect(get_pred(opnds[1].index), src(inst, 2, t), src(inst, 3, t)));
      return;
    case Opcode::PAnd:
    case Opcode::POr: {
      Value *x = get_pred(opnds[1].index), *y = get_pred(opnds[2].index);
      set_pred(opnds[0].index, inst.op == Opcode::PAnd ? b_.CreateAnd(x, y) : b_.CreateOr(x, y));
      return;
    }
    case Opcode::PNot: set_pred(opnds[0].index, b_.CreateNot(get_pred(opnds[1].index))); return;

    case Opcode::Exp:
    case Opcode::Exp2:
    case Opcode::Log:
    case Opcode::Log2:
    case Opcode::Log10:
    case Opcode::Sqrt:
    case Opcode::Rsqrt:
    case Opcode::Tanh:
    case Opcode::Sigmoid:
    case Opcode::Erf:
      set(inst, 0, t,
          detail::emit_math(b_, math_, isa::as_family<isa::MathOpcode>(inst.op),
                            {src(inst, 1, t)}));
      return;
    case Opcode::Pow:
    case Opcode::Atan2:
      set(inst, 0, t,
          detail::emit_math(b_, math_, isa::as_family<isa::MathOpcode>(inst.op),
                            {src(inst, 1, t), src(inst, 2, t)}));
      return;
    case Opcode::Sin:
    case Opcode::Cos:
    case Opcode::Tan: {
      // Inline at every argument: no library to call for large ones (math_trig.cpp).
      detail::MathIR m(b_, math_, ops_.scalar_type(t));
      const detail::Trig fn = inst.op == Opcode::Sin   ? detail::Trig::Sin
                              : inst.op == Opcode::Cos ? detail::Trig::Cos
                                                       : detail::Trig::Tan;
      set(inst, 0, t, detail::emit_trig_any(m, src(inst, 1, t), fn));
      return;
    }

    case Opcode::Bra: {
      BasicBlock *taken = block_of_label(opnds[0]);
      if (!inst.guard.present) {
        b_.CreateBr(taken);
        return;
      }
      Value *p = get_pred(inst.guard.pred);
      if (inst.guard.negate) p = b_.CreateNot(p);
      b_.CreateCondBr(p, taken, fallthrough(block));
      return;
    }
    case Opcode::Loop: {
      Value *c = src(inst, 0, Type::U32);
      Value *more = b_.CreateICmpUGT(c, b_.getInt32(0));
      set(inst, 0, Type::U32, b_.CreateSelect(more, b_.CreateSub(c, b_.getInt32(1)), c));
      b_.CreateCondBr(more, block_of_label(opnds[1]), fallthrough(block));
      return;
    }
    case Opcode::Exit: b_.CreateBr(exit_); return;
    case Opcode::BarSync: // barriers 0..15, as PTX's
      b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier_sync, {},
                         {b_.getInt32(static_cast<uint32_t>(opnds[0].imm))});
      return;
    case Opcode::MemFence: {
      switch (static_cast<isa::FenceScope>(inst.sub)) {
      case isa::FenceScope::Thread: return; // program order already holds within a thread
      case isa::FenceScope::Block:
        b_.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_cta, {}, {});
        return;
      case isa::FenceScope::Device:
        b_.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {});
        return;
      case isa::FenceScope::System:
        b_.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_sys, {}, {});
        return;
      }
      unreachable_enum("FenceScope");
    }

    case Opcode::Addr: // the buffer's generic address
      set(inst, 0, Type::U64,
          b_.CreatePtrToInt(b_.CreateAddrSpaceCast(args_.at(opnds[1].index).value, b_.getPtrTy()),
                            i64()));
      return;
    case Opcode::Call: emit_call(inst, block); return;
    case Opcode::Ret: emit_ret(); return;
    case Opcode::Atom:
    case Opcode::AtomCas: {
      // An atomic is naturally aligned; where -fbounds-check finds it outside its region it
      // is not made and yields 0.
      const Place place = address(opnds[1].addr, isa::type_size(t));
      const bool cas = inst.op == Opcode::AtomCas;
      set(inst, 0, t, guarded(place.ok, ops_.scalar_type(t), [&] {
            return ops_.atomic(cas, static_cast<isa::AtomicOp>(inst.sub), t, place.ptr,
                               src(inst, 2, t), cas ? src(inst, 3, t) : nullptr);
          }));
      return;
    }
    case Opcode::ClsGet:
    case Opcode::Mirror:
    case Opcode::UnityTest:
    case Opcode::NbrCount:
    case Opcode::NbrGet:
    case Opcode::NbrLd:
    case Opcode::NbrSt:
    case Opcode::ResAccum:
    case Opcode::PhaseGet:
    case Opcode::PhaseAdv:
    case Opcode::BoundMap: emit_atlas(inst); return;
    case Opcode::ReduceReg: {
      // Folds from the identity in register order, exactly as the interpreter does.
      const auto rop = static_cast<isa::ReduceOp>(inst.sub);
      Value *acc = ops_.constant(t, isa::reduce_identity(rop, t));
      for (uint64_t j = 0; j < opnds[2].imm; ++j) {
        Value *x = get(static_cast<isa::Reg>(opnds[1].index + j), t);
        switch (rop) {
        case isa::ReduceOp::Add: acc = ops_.binary(BinaryOp::Add, t, acc, x); break;
        case isa::ReduceOp::Mul: acc = ops_.binary(BinaryOp::Mul, t, acc, x); break;
        case isa::ReduceOp::Min: acc = ops_.min_max(true, t, acc, x); break;
        case isa::ReduceOp::Max: acc = ops_.min_max(false, t, acc, x); break;
        }
      }
      set(inst, 0, t, acc);
      return;
    }
    case Opcode::ReduceMem: unsupported(inst, "reduce over memory");
    case Opcode::PoolAlloc: {
      // Each thread's scratch is local memory: every allocation site has a fixed place in it
      // (the verifier frees an allocation before its site allocates again), zeroed here.
      const uint64_t size = opnds[1].imm;
      if (!scratch_) scratch_ = entry_alloca(llvm::ArrayType::get(b_.getInt8Ty(), scratch_bytes_));
      scratch_->setAlignment(llvm::Align(kBaseAlign));
      Value *p = b_.CreateConstGEP1_64(b_.getInt8Ty(), scratch_, pool_sites_.at(cur_));
      b_.CreateMemSet(p, b_.getInt8(0), size, llvm::MaybeAlign(kBaseAlign));
      set(inst, 0, Type::U64, b_.CreatePtrToInt(p, i64()));
      return;
    }
    case Opcode::PoolFree: return; // the verifier pairs it with its pool.alloc
    case Opcode::Map:
    case Opcode::Map2:
    case Opcode::ReduceAll:
    case Opcode::Gemm:
    case Opcode::Gemv:
    case Opcode::BatchedGemm:
    case Opcode::Softmax:
    case Opcode::LogSoftmax:
    case Opcode::LayerNorm:
    case Opcode::RmsNorm:
    case Opcode::Silu:
    case Opcode::Gelu:
    case Opcode::GeluTanh:
    case Opcode::Rope:
    case Opcode::Attention:
    case Opcode::Conv2d:
    case Opcode::Dot:
    case Opcode::Axpy: unsupported(inst, "whole-launch operations");
    }
    unreachable_enum("Opcode");
  }

  llvm::Module &m_;
  llvm::LLVMContext &c_;
  const isa::Kernel &k_;
  const PtxOptions &o_;
  LibraryLaunchBounds bounds_;
  llvm::IRBuilder<> b_;
  detail::ValueOps ops_;
  isa::Cfg cfg_;
  CpuTarget math_;
  llvm::Function *fn_ = nullptr;
  std::vector<Arg> args_;
  BasicBlock *entry_ = nullptr, *exit_ = nullptr;
  std::vector<BasicBlock *> bbs_;
  std::map<std::tuple<bool, isa::Reg, Type>, llvm::AllocaInst *> slots_;
  llvm::GlobalVariable *shared_ = nullptr;
  llvm::AllocaInst *stack_ = nullptr, *sp_ = nullptr;
  PtxKernelInfo info_;
  Value *status_ = nullptr, *boundary_ = nullptr, *atlas_ = nullptr, *phase_ = nullptr;
  std::map<std::string, llvm::GlobalVariable *> tables_;
  uint32_t cur_ = 0;                        ///< the instruction being lowered
  std::map<uint32_t, uint64_t> pool_sites_; ///< pool.alloc: its place in the scratch
  uint64_t scratch_bytes_ = 0;
  llvm::AllocaInst *scratch_ = nullptr;
};

} // namespace

Expected<PtxModule> compile_ptx(const isa::Module &module, const PtxOptions &options) {
  initialise_nvptx();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(kPtxTriple, error);
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
      kPtxTriple, cpu, features, to, std::nullopt, std::nullopt, level));
  llvm::LLVMContext ctx;
  auto m = std::make_unique<llvm::Module>(
      module.source_name.empty() ? "module" : module.source_name, ctx);
  m->setTargetTriple(kPtxTriple);
  m->setDataLayout(tm->createDataLayout());
  // Whole-launch kernels run on the host beside the device library kernels their
  // instructions need (spirv_library.h: kernels in the ISA, shared with the SPIR-V backends).
  auto library = spirv_library_kernels(module);
  if (!library) return library.status();
  PtxModule out;
  auto lower = [&](const isa::Kernel &k, const std::string &source,
                   const LibraryLaunchBounds &bounds = {}) -> Status {
    try {
      out.kernels.push_back(SimtLowering(*m, k, options, bounds).run());
    } catch (const Unsupported &e) {
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
