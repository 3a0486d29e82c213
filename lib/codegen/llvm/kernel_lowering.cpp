// SPMD on SIMD (SPEC §7): one kernel becomes a function that runs a range of blocks; inside a
// block, lanes run in chunks of the target's SIMD width. A chunk executes the kernel's blocks
// under a lane mask, scheduled by the smallest per-lane program counter in the reconvergence
// order of opt::LaneAnalysis (lanes waiting at a later block run when the earlier ones get
// there). Uniform values and branches stay scalar; a block that all live lanes run together
// branches directly, and a lane-varying branch whose lanes all agree does too, so the
// scheduler only runs where lanes really diverge. A barrier parks its lanes; when a chunk has
// no runnable lane left it saves its state and the block driver runs the next chunk, so every
// chunk reaches the barrier before any passes it (the kernel splits into phases).
#include "hologram/codegen/cpu_abi.h"
#include "hologram/isa/accesses.h"
#include "hologram/isa/atlas.h"
#include "hologram/isa/type_dispatch.h"
#include "hologram/opt/lane_affinity.h"
#include "hologram/opt/lane_analysis.h"
#include "hologram/support/unreachable.h"
#include "lowering.h"

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>

#include <bit>
#include <map>
#include <optional>

namespace hologram::codegen::detail {

using namespace isa;
using llvm::BasicBlock;
using llvm::Value;

AbiTypes::AbiTypes(llvm::LLVMContext &c) {
  auto *ptr = llvm::PointerType::get(c, 0);
  auto *i32 = llvm::Type::getInt32Ty(c);
  auto *i64 = llvm::Type::getInt64Ty(c);
  auto *dim = llvm::ArrayType::get(i32, 3);
  launch = llvm::StructType::create(
      c, {ptr, ptr, dim, dim, ptr, ptr, ptr, i32, i32, ptr, ptr, ptr, ptr, i64}, "hg_cpu_launch");
  error = llvm::StructType::create(c, {i32, i32, i64, i64, i64, i32, i32}, "hg_cpu_error");
  worker = llvm::StructType::create(c, {ptr, i64, ptr, i64, error}, "hg_cpu_worker");
}

namespace {

// Field indices of the ABI structs.
enum LaunchField {
  LArgs,
  LSizes,
  LGrid,
  LBlock,
  LBoundary,
  LResonance,
  LPhaseAdv,
  LPhase,
  LKernel,
  LLaunchOp,
  LConvert,
  LRuntime,
  LCheckAddress,
  LStreamBytes
};
enum WorkerField { WShared, WSharedSize, WScratch, WScratchSize, WError };

constexpr uint32_t kExitPc = 0x7fffffff;  // a lane that has finished
constexpr uint32_t kParkBit = 0x40000000; // a lane waiting at a barrier
constexpr uint32_t kMaxCallDepth = 64;

/// A value that is either uniform (a scalar) or one element per lane (a vector).
struct V {
  Value *v = nullptr;
  bool uni = true;
};

class KernelLowering {
public:
  KernelLowering(llvm::Module &m, const AbiTypes &abi, const Kernel &k, uint32_t kernel_index,
                 const CpuTarget &target, const CpuOptions &opts)
      : m_(m), c_(m.getContext()), abi_(abi), k_(k), kernel_index_(kernel_index), target_(target),
        opts_(opts), b_(c_), w_(target.width), a_(opt::analyse_lanes(k)),
        affinity_(k, a_.cfg, a_.uniformity) {}

  LoweredKernel run(const std::string &symbol) {
    if (opts_.debug_info) begin_debug_info();
    plan_pools();
    llvm::Function *chunk = emit_chunk(symbol + ".chunk");
    LoweredKernel out;
    out.blocks = emit_driver(symbol, chunk);
    out.state_bytes = state_bytes_;
    out.pool_bytes = pool_bytes_;
    if (di_) di_->finalize();
    return out;
  }

private:
  // ------------------------------------------------------------------------------------------
  // Types and constants

  llvm::Type *i1() { return b_.getInt1Ty(); }
  llvm::Type *i8() { return b_.getInt8Ty(); }
  llvm::Type *i32() { return b_.getInt32Ty(); }
  llvm::Type *i64() { return b_.getInt64Ty(); }
  llvm::PointerType *ptr() { return b_.getPtrTy(); }
  llvm::VectorType *vec(llvm::Type *t) { return llvm::FixedVectorType::get(t, w_); }

  /// Registers of f16/bf16 hold their 16 storage bits.
  llvm::Type *scalar_type(Type t) {
    switch (t) {
    case Type::I8:
    case Type::U8: return i8();
    case Type::I16:
    case Type::U16:
    case Type::F16:
    case Type::BF16: return b_.getInt16Ty();
    case Type::I32:
    case Type::U32: return i32();
    case Type::I64:
    case Type::U64: return i64();
    case Type::F32: return b_.getFloatTy();
    case Type::F64: return b_.getDoubleTy();
    case Type::Pred: return i1();
    case Type::None: throw LoweringError("no LLVM type for ISA type " + std::string(type_name(t)));
    }
    unreachable_enum("Type");
  }
  static bool is_fp(Type t) { return t == Type::F32 || t == Type::F64; }

  Value *constant(Type t, uint64_t bits) {
    llvm::Type *ty = scalar_type(t);
    if (t == Type::F32)
      return llvm::ConstantFP::get(
          c_, llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(32, bits & 0xffffffffu)));
    if (t == Type::F64)
      return llvm::ConstantFP::get(
          c_, llvm::APFloat(llvm::APFloat::IEEEdouble(), llvm::APInt(64, bits)));
    return llvm::ConstantInt::get(ty, bits);
  }
  Value *u32c(uint64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }
  Value *u64c(uint64_t v) { return b_.getInt64(v); }
  Value *splat(Value *s) { return b_.CreateVectorSplat(w_, s); }
  Value *splat(const V &x) { return x.uni ? splat(x.v) : x.v; }
  Value *iota32() {
    std::vector<llvm::Constant *> c;
    for (unsigned i = 0; i < w_; ++i) c.push_back(b_.getInt32(i));
    return llvm::ConstantVector::get(c);
  }
  Value *iota64(uint64_t step) {
    std::vector<llvm::Constant *> c;
    for (unsigned i = 0; i < w_; ++i) c.push_back(b_.getInt64(i * step));
    return llvm::ConstantVector::get(c);
  }

  /// Applies f to scalars when every operand is uniform, to vectors otherwise.
  template <typename F> V lift(std::initializer_list<V> xs, F &&f) {
    bool uni = true;
    for (const V &x : xs) uni = uni && x.uni;
    std::vector<Value *> vals;
    for (const V &x : xs) vals.push_back(uni ? x.v : splat(x));
    return {f(vals), uni};
  }

  // ------------------------------------------------------------------------------------------
  // Pools and state layout

  void plan_pools() {
    for (const auto &inst : k_.insts)
      if (inst.op == Opcode::PoolAlloc) {
        pool_offsets_[&inst - k_.insts.data()] = pool_bytes_;
        pool_bytes_ += (inst.operands[1].imm + 15) & ~uint64_t{15};
      }
  }

  // ------------------------------------------------------------------------------------------
  // Debug info

  void begin_debug_info() {
    di_ = std::make_unique<llvm::DIBuilder>(m_);
    std::string path = opts_.source_name.empty() ? "<stdin>" : opts_.source_name;
    auto slash = path.rfind('/');
    di_file_ = di_->createFile(slash == std::string::npos ? path : path.substr(slash + 1),
                               slash == std::string::npos ? "." : path.substr(0, slash));
    di_cu_ =
        di_->createCompileUnit(llvm::dwarf::DW_LANG_C, di_file_, "hologram-cc", opts_.opt_level > 0,
                               "", 0, "", llvm::DICompileUnit::LineTablesOnly);
  }
  void attach_subprogram(llvm::Function *f) {
    if (!di_) return;
    auto *type = di_->createSubroutineType(di_->getOrCreateTypeArray({}));
    auto *sp =
        di_->createFunction(di_cu_, k_.name, f->getName(), di_file_, k_.loc.line, type, k_.loc.line,
                            llvm::DINode::FlagZero, llvm::DISubprogram::SPFlagDefinition);
    f->setSubprogram(sp);
    b_.SetCurrentDebugLocation(llvm::DILocation::get(c_, k_.loc.line, k_.loc.col, sp));
  }
  void set_location(const Instruction &inst) {
    if (!di_) return;
    auto *sp = b_.GetInsertBlock()->getParent()->getSubprogram();
    b_.SetCurrentDebugLocation(llvm::DILocation::get(c_, inst.loc.line, inst.loc.col, sp));
  }

  // ------------------------------------------------------------------------------------------
  // The chunk function: runs one chunk of lanes of one block until it finishes or parks at a
  // barrier. (launch, worker, block_linear, bx, by, bz, chunk, state) -> status.

  llvm::Function *emit_chunk(const std::string &name) {
    auto *fty = llvm::FunctionType::get(
        i32(), {ptr(), ptr(), i64(), i32(), i32(), i32(), i32(), ptr()}, false);
    fn_ = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage, name, m_);
    if (!a_.has_barriers) fn_->addFnAttr(llvm::Attribute::AlwaysInline);
    fn_->addParamAttr(0, llvm::Attribute::NoAlias);
    fn_->addParamAttr(1, llvm::Attribute::NoAlias);
    auto arg = fn_->arg_begin();
    launch_ = arg++;
    worker_ = arg++;
    block_linear_ = arg++;
    bx_ = arg++;
    by_ = arg++;
    bz_ = arg++;
    chunk_ = arg++;
    state_ = arg++;

    entry_ = BasicBlock::Create(c_, "entry", fn_);
    b_.SetInsertPoint(entry_);
    attach_subprogram(fn_);
    create_allocas();
    emit_specials();

    dispatch_ = BasicBlock::Create(c_, "dispatch", fn_);
    exit_all_ = BasicBlock::Create(c_, "exit.lanes", fn_);
    for (uint32_t r = 0; r < a_.order.size(); ++r)
      bbs_.push_back(BasicBlock::Create(c_, "b" + std::to_string(a_.order[r]), fn_));
    bb_of_.resize(a_.blocks.size());
    for (uint32_t r = 0; r < a_.order.size(); ++r) bb_of_[a_.order[r]] = bbs_[r];
    full_bb_.assign(a_.blocks.size(), nullptr);
    for (uint32_t r = 0; r < a_.order.size(); ++r)
      if (version_for_full_chunks(a_.blocks[a_.order[r]]))
        full_bb_[a_.order[r]] = BasicBlock::Create(c_, "full", fn_);

    emit_entry_state();
    emit_dispatcher();
    emit_exit_lanes();
    for (uint32_t r = 0; r < a_.order.size(); ++r) emit_block(a_.order[r]);
    return fn_;
  }

  void create_allocas() {
    for (const auto &s : a_.slots) {
      bool uni = !a_.is_varying(s);
      llvm::Type *t = scalar_type(s.type);
      auto *slot = b_.CreateAlloca(uni ? t : vec(t), nullptr, slot_name(s));
      slots_[s] = {slot, uni};
    }
    pc_ = b_.CreateAlloca(vec(i32()), nullptr, "pc");
    mask_ = b_.CreateAlloca(vec(i1()), nullptr, "mask");
    if (a_.has_calls) {
      stack_ = b_.CreateAlloca(llvm::ArrayType::get(i32(), kMaxCallDepth * w_), nullptr, "stack");
      sp_ = b_.CreateAlloca(vec(i32()), nullptr, "sp");
    }
  }
  static std::string slot_name(const opt::Slot &s) {
    return s.pred ? "p" + std::to_string(s.reg)
                  : "r" + std::to_string(s.reg) + "." + std::string(type_name(s.type));
  }

  Value *load_field(llvm::StructType *st, Value *base, unsigned field, llvm::Type *t,
                    const char *name = "") {
    return invariant(b_.CreateLoad(t, b_.CreateStructGEP(st, base, field), name));
  }
  /// Marks a load of launch data that no store of the kernel can change (the launch and
  /// worker descriptions, argument pointers, scalar arguments), so LLVM may hoist it out of
  /// the lane loops.
  Value *invariant(llvm::LoadInst *load) {
    load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(c_, {}));
    return load;
  }
  Value *launch_dim(unsigned field, unsigned d) {
    Value *p = b_.CreateConstGEP2_32(abi_.launch, launch_, 0, field);
    return invariant(b_.CreateLoad(i32(), b_.CreateConstGEP1_32(i32(), p, d)));
  }

  void emit_specials() {
    gx_ = launch_dim(LGrid, 0);
    gy_ = launch_dim(LGrid, 1);
    gz_ = launch_dim(LGrid, 2);
    bdx_ = launch_dim(LBlock, 0);
    bdy_ = launch_dim(LBlock, 1);
    bdz_ = launch_dim(LBlock, 2);
    lanes_ = b_.CreateMul(b_.CreateMul(bdx_, bdy_), bdz_, "lanes");
    stream_bytes_ = load_field(abi_.launch, launch_, LStreamBytes, i64(), "stream.bytes");
    // Runs of w lanes start at multiples of w, so they stay in one row of the block when the
    // block is one row or its rows are whole runs.
    rows_whole_ =
        b_.CreateOr(b_.CreateICmpEQ(b_.CreateMul(bdy_, bdz_), u32c(1)),
                    b_.CreateICmpEQ(b_.CreateURem(bdx_, u32c(w_)), u32c(0)), "rows.whole");
    lane_lin_ = b_.CreateAdd(splat(b_.CreateMul(chunk_, u32c(w_))), iota32(), "lane.linear");
    valid_ = b_.CreateICmpULT(lane_lin_, splat(lanes_), "valid");
    // A block of whole chunks has only full chunks: a test that does not change from chunk to
    // chunk, which LLVM hoists out of the driver's chunk loop (and unswitches it on).
    block_whole_ = b_.CreateICmpEQ(b_.CreateURem(lanes_, u32c(w_)), u32c(0), "block.whole");
    chunk_full_ =
        b_.CreateOr(block_whole_,
                    b_.CreateICmpULE(b_.CreateMul(b_.CreateAdd(chunk_, u32c(1)), u32c(w_)), lanes_),
                    "chunk.full");
    // Lane coordinates: a one-dimensional block needs no division.
    BasicBlock *one_d = BasicBlock::Create(c_, "lanes.1d", fn_);
    BasicBlock *multi = BasicBlock::Create(c_, "lanes.3d", fn_);
    BasicBlock *done = BasicBlock::Create(c_, "lanes.done", fn_);
    b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateMul(bdy_, bdz_), u32c(1)), one_d, multi);
    b_.SetInsertPoint(multi);
    Value *bx = splat(bdx_);
    Value *lx3 = b_.CreateURem(lane_lin_, bx);
    Value *ly3 = b_.CreateURem(b_.CreateUDiv(lane_lin_, bx), splat(bdy_));
    Value *lz3 = b_.CreateUDiv(lane_lin_, splat(b_.CreateMul(bdx_, bdy_)));
    b_.CreateBr(done);
    b_.SetInsertPoint(one_d);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    auto phi = [&](Value *a, Value *m, const char *n) {
      auto *p = b_.CreatePHI(vec(i32()), 2, n);
      p->addIncoming(a, one_d);
      p->addIncoming(m, multi);
      return p;
    };
    Value *zero = llvm::Constant::getNullValue(vec(i32()));
    lx_ = phi(lane_lin_, lx3, "lane.x");
    ly_ = phi(zero, ly3, "lane.y");
    lz_ = phi(zero, lz3, "lane.z");
    body_entry_ = done;
  }

  /// The value of a special register.
  V special(Special s) {
    auto z64 = [&](Value *v) {
      return b_.CreateZExt(v, v->getType()->isVectorTy() ? vec(i64()) : i64());
    };
    switch (s) {
    case Special::LaneX: return {lx_, false};
    case Special::LaneY: return {ly_, false};
    case Special::LaneZ: return {lz_, false};
    case Special::BlockX: return {bx_, true};
    case Special::BlockY: return {by_, true};
    case Special::BlockZ: return {bz_, true};
    case Special::BdimX: return {bdx_, true};
    case Special::BdimY: return {bdy_, true};
    case Special::BdimZ: return {bdz_, true};
    case Special::GdimX: return {gx_, true};
    case Special::GdimY: return {gy_, true};
    case Special::GdimZ: return {gz_, true};
    case Special::Gid: { // the chunk's first id in scalar arithmetic, then one vector add
      Value *first = b_.CreateAdd(block_first_gid(), z64(b_.CreateMul(chunk_, u32c(w_))));
      return {b_.CreateAdd(splat(first), iota64(1)), false};
    }
    case Special::GidX: return {gid_axis(bx_, bdx_, lx_), false};
    case Special::GidY: return {gid_axis(by_, bdy_, ly_), false};
    case Special::GidZ: return {gid_axis(bz_, bdz_, lz_), false};
    case Special::Gsize: {
      Value *blocks = b_.CreateMul(b_.CreateMul(z64(gx_), z64(gy_)), z64(gz_));
      return {b_.CreateMul(blocks, z64(lanes_)), true};
    }
    }
    throw LoweringError("unknown special register");
  }
  Value *gid_axis(Value *block, Value *dim, Value *lane) {
    Value *base = b_.CreateMul(b_.CreateZExt(block, i64()), b_.CreateZExt(dim, i64()));
    return b_.CreateAdd(splat(base), b_.CreateZExt(lane, vec(i64())));
  }

  /// The %gid of this block's first lane: the block's lanes have ids first .. first + lanes - 1.
  Value *block_first_gid() { return b_.CreateMul(block_linear_, b_.CreateZExt(lanes_, i64())); }

  /// Global linear id of lane `index` (i32) of this chunk.
  Value *global_lane(Value *index) {
    Value *ll = b_.CreateExtractElement(lane_lin_, index);
    return b_.CreateAdd(block_first_gid(), b_.CreateZExt(ll, i64()));
  }

  // ------------------------------------------------------------------------------------------
  // Entry, saved state, scheduler

  /// The layout of a barrier kernel's saved state: pc, then every slot, then the call stack.
  llvm::StructType *state_type() {
    if (state_ty_) return state_ty_;
    std::vector<llvm::Type *> fields{vec(i32())};
    for (const auto &[s, info] : slots_) {
      llvm::Type *t = info.alloca->getAllocatedType();
      // Predicates are saved as bytes: vectors of i1 have no portable memory layout.
      if (t->getScalarType()->isIntegerTy(1)) t = t->isVectorTy() ? vec(i8()) : i8();
      fields.push_back(t);
    }
    if (a_.has_calls) {
      fields.push_back(stack_->getAllocatedType());
      fields.push_back(vec(i32()));
    }
    state_ty_ = llvm::StructType::create(c_, fields, k_.name + ".state");
    state_bytes_ = static_cast<uint32_t>(
        (m_.getDataLayout().getTypeAllocSize(state_ty_).getFixedValue() + 63) & ~uint64_t{63});
    return state_ty_;
  }

  void save_state() {
    llvm::StructType *st = state_type();
    b_.CreateStore(b_.CreateLoad(vec(i32()), pc_), b_.CreateStructGEP(st, state_, 0));
    unsigned f = 1;
    for (const auto &[s, info] : slots_) {
      Value *v = b_.CreateLoad(info.alloca->getAllocatedType(), info.alloca);
      if (v->getType()->getScalarType()->isIntegerTy(1))
        v = b_.CreateZExt(v, v->getType()->isVectorTy() ? vec(i8()) : i8());
      b_.CreateStore(v, b_.CreateStructGEP(st, state_, f++));
    }
    if (a_.has_calls) {
      b_.CreateStore(b_.CreateLoad(stack_->getAllocatedType(), stack_),
                     b_.CreateStructGEP(st, state_, f++));
      b_.CreateStore(b_.CreateLoad(vec(i32()), sp_), b_.CreateStructGEP(st, state_, f++));
    }
  }

  void restore_state() {
    llvm::StructType *st = state_type();
    Value *pc = b_.CreateLoad(vec(i32()), b_.CreateStructGEP(st, state_, 0));
    b_.CreateStore(b_.CreateAnd(pc, splat(u32c(~kParkBit))), pc_); // every lane resumes
    unsigned f = 1;
    for (const auto &[s, info] : slots_) {
      llvm::Type *t = info.alloca->getAllocatedType();
      llvm::Type *saved = st->getElementType(f);
      Value *v = b_.CreateLoad(saved, b_.CreateStructGEP(st, state_, f++));
      if (t != saved) v = b_.CreateTrunc(v, t);
      b_.CreateStore(v, info.alloca);
    }
    if (a_.has_calls) {
      b_.CreateStore(b_.CreateLoad(stack_->getAllocatedType(), b_.CreateStructGEP(st, state_, f++)),
                     stack_);
      b_.CreateStore(b_.CreateLoad(vec(i32()), b_.CreateStructGEP(st, state_, f++)), sp_);
    }
  }

  void emit_entry_state() {
    b_.SetInsertPoint(body_entry_);
    // Zero every slot: inactive lanes then hold defined values that never trap.
    for (const auto &[s, info] : slots_)
      b_.CreateStore(llvm::Constant::getNullValue(info.alloca->getAllocatedType()), info.alloca);
    Value *start_pc = b_.CreateSelect(valid_, splat(u32c(0)), splat(u32c(kExitPc)));
    b_.CreateStore(start_pc, pc_);
    b_.CreateStore(valid_, mask_);
    if (a_.has_calls) {
      b_.CreateStore(llvm::Constant::getNullValue(vec(i32())), sp_);
      b_.CreateStore(llvm::Constant::getNullValue(stack_->getAllocatedType()), stack_);
    }
    if (!a_.has_barriers) {
      b_.CreateBr(bbs_[0]);
      return;
    }
    // A barrier kernel resumes from its saved state after the first phase. pc == 0 in a
    // saved state cannot happen (every saved lane is parked or finished), so a zero pc of
    // lane 0 marks a state that was never saved (the driver zero-fills it).
    BasicBlock *resume = BasicBlock::Create(c_, "resume", fn_);
    Value *saved_pc = b_.CreateLoad(i32(), b_.CreateStructGEP(state_type(), state_, 0));
    b_.CreateCondBr(b_.CreateICmpNE(saved_pc, u32c(0)), resume, dispatch_);
    b_.SetInsertPoint(resume);
    restore_state();
    b_.CreateBr(dispatch_);
  }

  void emit_dispatcher() {
    b_.SetInsertPoint(dispatch_);
    Value *pc = b_.CreateLoad(vec(i32()), pc_, "pcs");
    Value *next = b_.CreateIntrinsic(llvm::Intrinsic::vector_reduce_umin, {vec(i32())}, {pc});
    BasicBlock *finished = BasicBlock::Create(c_, "finished", fn_);
    BasicBlock *pick = BasicBlock::Create(c_, "pick", fn_);
    b_.CreateCondBr(b_.CreateICmpEQ(next, u32c(kExitPc)), finished, pick);
    b_.SetInsertPoint(finished);
    b_.CreateRet(u32c(0));
    b_.SetInsertPoint(pick);
    if (a_.has_barriers) {
      BasicBlock *suspend = BasicBlock::Create(c_, "suspend", fn_);
      BasicBlock *run = BasicBlock::Create(c_, "run", fn_);
      b_.CreateCondBr(b_.CreateICmpNE(b_.CreateAnd(next, u32c(kParkBit)), u32c(0)), suspend, run);
      b_.SetInsertPoint(suspend);
      emit_suspend(pc, next);
      b_.SetInsertPoint(run);
    }
    b_.CreateStore(b_.CreateICmpEQ(pc, splat(next)), mask_);
    BasicBlock *bad = BasicBlock::Create(c_, "bad.pc", fn_);
    auto *sw = b_.CreateSwitch(next, bad, static_cast<unsigned>(bbs_.size()) + 1);
    for (uint32_t r = 0; r < bbs_.size(); ++r) sw->addCase(b_.getInt32(r), bbs_[r]);
    sw->addCase(b_.getInt32(static_cast<uint32_t>(bbs_.size())), exit_all_);
    b_.SetInsertPoint(bad);
    b_.CreateUnreachable();
  }

  /// No lane can run and some wait at a barrier: every valid lane must wait at the same one.
  void emit_suspend(Value *pc, Value *parked) {
    Value *exited = b_.CreateAnd(valid_, b_.CreateICmpEQ(pc, splat(u32c(kExitPc))));
    Value *elsewhere = b_.CreateAnd(valid_, b_.CreateICmpNE(pc, splat(parked)));
    fail_if(exited, HG_CPU_ERR_BARRIER_EXITED, inst_of_parked(parked), nullptr, 0, 0);
    fail_if(elsewhere, HG_CPU_ERR_BARRIER_MISMATCH, inst_of_parked(parked), nullptr, 0, 0);
    save_state();
    b_.CreateRet(b_.CreateAdd(b_.CreateAnd(parked, u32c(~kParkBit)), u32c(1)));
  }

  /// The index of the bar.sync instruction a parked pc resumes after.
  Value *inst_of_parked(Value *parked) {
    if (!barrier_table_) {
      std::vector<llvm::Constant *> table;
      for (uint32_t r = 0; r <= a_.order.size(); ++r) {
        uint32_t begin = r < a_.order.size() ? a_.blocks[a_.order[r]].begin
                                             : static_cast<uint32_t>(k_.insts.size());
        table.push_back(b_.getInt32(begin ? begin - 1 : 0));
      }
      auto *ty = llvm::ArrayType::get(i32(), table.size());
      barrier_table_ = new llvm::GlobalVariable(m_, ty, true, llvm::GlobalValue::PrivateLinkage,
                                                llvm::ConstantArray::get(ty, table),
                                                fn_->getName() + ".barriers");
    }
    Value *r = b_.CreateZExt(b_.CreateAnd(parked, u32c(~kParkBit)), i64());
    return b_.CreateLoad(i32(), b_.CreateGEP(i32(), barrier_table_, {r}));
  }

  void emit_exit_lanes() {
    b_.SetInsertPoint(exit_all_);
    Value *mask = lane_mask();
    set_pc(mask, splat(u32c(kExitPc)));
    b_.CreateBr(dispatch_);
  }

  void set_pc(Value *mask, Value *target) {
    Value *pc = b_.CreateLoad(vec(i32()), pc_);
    b_.CreateStore(b_.CreateSelect(mask, target, pc), pc_);
  }

  uint32_t pc_of(uint32_t block) const {
    return block == opt::kExitBlock ? kExitPc : a_.rank[block];
  }
  BasicBlock *bb_of(uint32_t block) { return block == opt::kExitBlock ? exit_all_ : bb_of_[block]; }

  // ------------------------------------------------------------------------------------------
  // Errors

  /// Fails the launch when any lane of `bad` (a vector of i1, or a scalar for a uniform
  /// condition) is set: records the first such lane and returns -1 from the chunk.
  void fail_if(Value *bad, int32_t kind, Value *inst, Value *value, uint64_t size, int32_t region) {
    Value *lane_bits;
    Value *any;
    if (bad->getType()->isVectorTy()) {
      any = b_.CreateOrReduce(bad);
      lane_bits = bad;
    } else {
      any = bad;
      lane_bits = lane_mask();
    }
    BasicBlock *fail = BasicBlock::Create(c_, "fail", fn_);
    BasicBlock *ok = BasicBlock::Create(c_, "ok", fn_);
    llvm::MDBuilder md(c_);
    b_.CreateCondBr(any, fail, ok, md.createBranchWeights(1, 1 << 20));
    b_.SetInsertPoint(fail);
    Value *bits = b_.CreateBitCast(lane_bits, b_.getIntNTy(w_));
    Value *lane =
        b_.CreateTrunc(b_.CreateZExt(b_.CreateIntrinsic(llvm::Intrinsic::cttz, {bits->getType()},
                                                        {bits, b_.getTrue()}),
                                     i64()),
                       i32());
    Value *err = b_.CreateStructGEP(abi_.worker, worker_, WError);
    auto store = [&](unsigned f, Value *v) {
      b_.CreateStore(v, b_.CreateStructGEP(abi_.error, err, f));
    };
    store(0, b_.getInt32(static_cast<uint32_t>(kind)));
    store(1, inst);
    store(2, global_lane(lane));
    Value *val = u64c(0);
    if (value) val = value->getType()->isVectorTy() ? b_.CreateExtractElement(value, lane) : value;
    store(3, b_.CreateZExtOrTrunc(val, i64()));
    store(4, u64c(size));
    store(5, b_.getInt32(static_cast<uint32_t>(region)));
    b_.CreateRet(b_.getInt32(-1));
    b_.SetInsertPoint(ok);
  }
  void fail_if(Value *bad, int32_t kind, uint32_t inst, Value *value, uint64_t size = 0,
               int32_t region = 0) {
    fail_if(bad, kind, u32c(inst), value, size, region);
  }

  /// A local variable of the chunk function: allocas belong in the entry block, where
  /// mem2reg turns them into registers.
  llvm::AllocaInst *entry_alloca(llvm::Type *t) {
    llvm::IRBuilder<> entry(entry_, entry_->getFirstInsertionPt());
    return entry.CreateAlloca(t);
  }

  /// Restricts a lane condition to the active lanes (scalars stay scalars).
  Value *active(Value *cond) {
    if (!cond->getType()->isVectorTy()) return cond;
    return b_.CreateAnd(cond, lane_mask());
  }

  // ------------------------------------------------------------------------------------------
  // Registers

  struct SlotInfo {
    llvm::AllocaInst *alloca;
    bool uni;
  };

  V get(Reg r, Type t) {
    if (is_special(r)) {
      V s = special(reg_special(r));
      Type st = special_type(reg_special(r));
      if (st != t) throw LoweringError("special register read with the wrong type");
      return s;
    }
    auto it = slots_.find({false, r, t});
    if (it == slots_.end()) { // never written: the verifier rejects such reads
      return {llvm::Constant::getNullValue(scalar_type(t)), true};
    }
    return {b_.CreateLoad(it->second.alloca->getAllocatedType(), it->second.alloca),
            it->second.uni};
  }
  V get_pred(unsigned p) {
    auto it = slots_.find({true, static_cast<Reg>(p), Type::Pred});
    if (it == slots_.end()) return {b_.getFalse(), true};
    return {b_.CreateLoad(it->second.alloca->getAllocatedType(), it->second.alloca),
            it->second.uni};
  }
  V src(const Instruction &inst, size_t i, Type t) { return get(inst.operands[i].index, t); }

  void put(const opt::Slot &s, V v) {
    const SlotInfo &info = slots_.at(s);
    if (info.uni) {
      if (!v.uni)
        throw LoweringError("a lane-varying value written to uniform slot " + slot_name(s));
      b_.CreateStore(v.v, info.alloca);
      return;
    }
    Value *nv = splat(v);
    if (divergent_) {
      Value *old = b_.CreateLoad(info.alloca->getAllocatedType(), info.alloca);
      nv = b_.CreateSelect(lane_mask(), nv, old);
    }
    b_.CreateStore(nv, info.alloca);
  }
  void set(const Instruction &inst, size_t i, Type t, V v) {
    put({false, inst.operands[i].index, t}, v);
  }
  void set_pred(unsigned p, V v) {
    ends_of_pred_.erase(p);
    put({true, static_cast<Reg>(p), Type::Pred}, v);
  }

  // ------------------------------------------------------------------------------------------
  // Blocks

  /// The mask of live lanes: a constant while emitting the copy of a block for full chunks.
  Value *lane_mask() {
    if (full_chunk_) return llvm::Constant::getAllOnesValue(vec(i1()));
    return b_.CreateLoad(vec(i1()), mask_);
  }

  /// Whether a block gets a second copy for chunks whose lanes are all live, in which masked
  /// loads and stores become plain ones and a bound check on a growing id is decided by two
  /// lanes: a block every live lane runs, with memory accesses or such a check, and nothing
  /// that keeps state across copies (barriers, calls, whole-launch operations). Capped per
  /// kernel, since each copy is compiled again.
  bool version_for_full_chunks(const opt::LaneBlock &bb) {
    if (a_.divergent[bb_index(bb)] || a_.has_calls) return false;
    bool memory = false;
    for (uint32_t i = bb.begin; i < bb.end; ++i) {
      const Instruction &inst = k_.insts[i];
      const OpcodeInfo &row = inst.info();
      if (row.flags & (kFlagBarrier | kFlagLaunchLevel)) return false;
      if (inst.op == Opcode::Call || inst.op == Opcode::Ret) return false;
      memory = memory || inst.op == Opcode::Ld || inst.op == Opcode::St;
      // A bound check on a growing id: the full copy decides the branch from two lanes.
      memory = memory || (inst.op == Opcode::Set && monotone_in_chunk(inst));
    }
    if (!memory || versioned_ + (bb.end - bb.begin) > kMaxVersioned) return false;
    versioned_ += bb.end - bb.begin;
    return true;
  }
  uint32_t bb_index(const opt::LaneBlock &bb) const {
    return static_cast<uint32_t>(&bb - a_.blocks.data());
  }

  void emit_block(uint32_t block) {
    const opt::LaneBlock &bb = a_.blocks[block];
    b_.SetInsertPoint(bb_of_[block]);
    divergent_ = a_.divergent[block];
    if (BasicBlock *full = full_bb_[block]) {
      BasicBlock *part = BasicBlock::Create(c_, "part", fn_);
      // The kernel's first block, when no branch returns to it, starts with the chunk's valid
      // lanes: whether all are valid is a scalar comparison.
      bool reentered = false;
      for (const auto &other : a_.blocks)
        for (uint32_t s : other.succs) reentered = reentered || s == block;
      Value *all_live = block == 0 && !reentered ? chunk_full_ : b_.CreateAndReduce(lane_mask());
      b_.CreateCondBr(all_live, full, part);
      b_.SetInsertPoint(full);
      full_chunk_ = true;
      emit_block_body(bb);
      full_chunk_ = false;
      b_.SetInsertPoint(part);
    }
    emit_block_body(bb);
  }

  void emit_block_body(const opt::LaneBlock &bb) {
    ends_of_pred_.clear();
    for (uint32_t i = bb.begin; i < bb.end; ++i) {
      cur_ = i;
      set_location(k_.insts[i]);
      emit_instruction(k_.insts[i]);
      if (b_.GetInsertBlock()->getTerminator()) return; // the instruction ended the block
    }
    // Falls through to the next block (or off the end of the kernel).
    jump(bb.fallthrough);
  }

  /// An unconditional transfer to `target` of every active lane.
  void jump(uint32_t target) {
    if (!divergent_ && !a_.has_barriers && !a_.has_calls && a_.exits_at(k_, target)) {
      b_.CreateRet(u32c(0)); // every live lane of the chunk is here, and all finish
      return;
    }
    // From a full chunk's copy, with every lane still live: straight to the target's copy.
    if (full_chunk_ && target != opt::kExitBlock && full_bb_[target]) {
      b_.CreateBr(full_bb_[target]);
      return;
    }
    if (!divergent_) {
      b_.CreateBr(bb_of(target));
      return;
    }
    set_pc(lane_mask(), splat(u32c(pc_of(target))));
    b_.CreateBr(dispatch_);
  }

  /// The condition in the first and the last lane of a full chunk, when those two decide for
  /// every lane (a comparison that is monotone across the chunk).
  struct Ends {
    Value *first, *last;
    Value *ordered; ///< the compared values do not wrap within the chunk
    /// For a comparison of %gid itself: whether the block's first and last lanes agree (so
    /// every lane of the block does, in every chunk), and the condition there. Neither
    /// changes from chunk to chunk: LLVM hoists them out of the chunk loop.
    Value *block_agrees = nullptr, *block_value = nullptr;

    /// The ends of the negated condition.
    Ends negated(llvm::IRBuilder<> &b) const {
      return {b.CreateNot(first), b.CreateNot(last), ordered, block_agrees,
              block_value ? b.CreateNot(block_value) : nullptr};
    }
  };

  /// Whether `set` compares a value that grows with %gid across a chunk against a uniform
  /// one by an ordering, so that its lanes' results change at most once along the chunk.
  bool monotone_in_chunk(const Instruction &set) const {
    const Type t = set.type;
    if (!is_int(t) || type_size(t) != 8) return false;
    const auto cc = static_cast<CmpCode>(set.sub);
    if (cc == CmpCode::Eq || cc == CmpCode::Ne) return false;
    auto step = [&](size_t i) { return affinity_.step_of(set.operands[i].index, t); };
    auto grows = [](const std::optional<opt::LaneStep> &s) {
      return s && s->id == opt::LaneId::Gid && s->stride > 0;
    };
    auto uniform = [](const std::optional<opt::LaneStep> &s) { return s && !s->id; };
    return (grows(step(1)) && uniform(step(2))) || (uniform(step(1)) && grows(step(2)));
  }

  /// Active lanes with `cond` go to `taken`, the others to `other`. `ends` (in a full chunk):
  /// the condition in the first and last lanes, which decide whether the lanes agree.
  void branch(V cond, uint32_t taken, uint32_t other, std::optional<Ends> ends = std::nullopt) {
    if (cond.uni && !divergent_) {
      b_.CreateCondBr(cond.v, bb_of(taken), bb_of(other));
      return;
    }
    if (ends && !divergent_) {
      // Every lane of the chunk is live: when the ends agree, so do all, with no vector test.
      BasicBlock *all_taken = BasicBlock::Create(c_, "ends.taken", fn_);
      BasicBlock *all_other = BasicBlock::Create(c_, "ends.other", fn_);
      if (ends->block_agrees) {
        // When the whole block agrees, the chunk's ends need not be looked at.
        BasicBlock *whole = BasicBlock::Create(c_, "ends.block", fn_);
        BasicBlock *by_chunk = BasicBlock::Create(c_, "ends.chunk", fn_);
        b_.CreateCondBr(ends->block_agrees, whole, by_chunk);
        b_.SetInsertPoint(whole);
        b_.CreateCondBr(ends->block_value, all_taken, all_other);
        b_.SetInsertPoint(by_chunk);
      }
      BasicBlock *mixed = BasicBlock::Create(c_, "ends.differ", fn_);
      b_.CreateCondBr(b_.CreateAnd(ends->ordered, b_.CreateAnd(ends->first, ends->last)), all_taken,
                      mixed);
      b_.SetInsertPoint(all_taken);
      jump(taken);
      b_.SetInsertPoint(mixed);
      BasicBlock *split = BasicBlock::Create(c_, "ends.split", fn_);
      Value *none = b_.CreateNot(b_.CreateOr(ends->first, ends->last));
      b_.CreateCondBr(b_.CreateAnd(ends->ordered, none), all_other, split);
      b_.SetInsertPoint(all_other);
      jump(other);
      b_.SetInsertPoint(split);
    }
    const bool exit_taken = a_.exits_at(k_, taken), exit_other = a_.exits_at(k_, other);
    if (exit_taken != exit_other) {
      // The lanes that go to the exit finish here; the rest continue together.
      Value *mask = lane_mask();
      Value *c = splat(cond);
      Value *leaving = b_.CreateAnd(mask, exit_taken ? c : b_.CreateNot(c));
      set_pc(leaving, splat(u32c(kExitPc)));
      Value *staying = b_.CreateAnd(mask, b_.CreateNot(leaving));
      b_.CreateStore(staying, mask_);
      const uint32_t next = exit_taken ? other : taken;
      if (divergent_) {
        set_pc(staying, splat(u32c(pc_of(next))));
        b_.CreateBr(dispatch_);
        return;
      }
      BasicBlock *none = BasicBlock::Create(c_, "all.left", fn_);
      b_.CreateCondBr(b_.CreateOrReduce(staying), bb_of(next), none);
      b_.SetInsertPoint(none);
      if (!a_.has_barriers && !a_.has_calls)
        b_.CreateRet(u32c(0));
      else
        b_.CreateBr(dispatch_);
      return;
    }
    Value *mask = lane_mask();
    Value *c = splat(cond);
    if (!divergent_) {
      // Every live lane is here: when they agree, no rescheduling is needed.
      BasicBlock *split = BasicBlock::Create(c_, "split", fn_);
      BasicBlock *not_all = BasicBlock::Create(c_, "not.all", fn_);
      Value *all = b_.CreateAndReduce(b_.CreateOr(b_.CreateNot(mask), c));
      b_.CreateCondBr(all, bb_of(taken), not_all);
      b_.SetInsertPoint(not_all);
      Value *none = b_.CreateAndReduce(b_.CreateOr(b_.CreateNot(mask), b_.CreateNot(c)));
      b_.CreateCondBr(none, bb_of(other), split);
      b_.SetInsertPoint(split);
    }
    Value *target = b_.CreateSelect(c, splat(u32c(pc_of(taken))), splat(u32c(pc_of(other))));
    set_pc(mask, target);
    b_.CreateBr(dispatch_);
  }

  // ------------------------------------------------------------------------------------------
  // Memory

  /// A resolved address: a uniform base pointer and a byte offset per lane (or a raw address
  /// per lane for register bases), the region's size and its id for error messages.
  struct Access {
    Value *base = nullptr; ///< null for raw addresses
    V off;
    Value *limit = nullptr; ///< region size in bytes; null when unchecked
    int32_t region = 0;
    /// How the offset steps from one lane to the next on a base that is the same for every
    /// lane (opt::LaneAffinity; nullopt: unknown). Consecutive SIMD lanes have consecutive
    /// %gid, and consecutive %gid.x and %lane.x while the run stays in one row of the block.
    std::optional<opt::LaneStep> step;
  };

  /// A parameter's pointer, loaded once in the entry block: it dominates every use, and once
  /// chunks are inlined into the driver's loop the load is hoisted out of it.
  Value *param_pointer(unsigned p) {
    auto [it, fresh] = param_pointers_.try_emplace(p, nullptr);
    if (fresh)
      it->second = in_entry_block([&] {
        Value *args = load_field(abi_.launch, launch_, LArgs, ptr());
        return invariant(b_.CreateLoad(ptr(), b_.CreateConstGEP1_32(ptr(), args, p),
                                       "arg." + k_.params[p].name));
      });
    return it->second;
  }
  /// A scalar parameter's value, loaded once in the entry block like its pointer.
  Value *param_value(unsigned p, Type t) {
    auto [it, fresh] = param_values_.try_emplace({p, t}, nullptr);
    if (fresh) {
      Value *pointer = param_pointer(p);
      it->second =
          in_entry_block([&] { return invariant(b_.CreateLoad(scalar_type(t), pointer)); });
    }
    return it->second;
  }
  /// Emits `emit()` at the end of the entry block (before its branch), whatever the insertion
  /// point: what it computes dominates every use and is hoisted out of the driver's chunk loop.
  template <typename F> Value *in_entry_block(F emit) {
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    if (auto *term = entry_->getTerminator())
      b_.SetInsertPoint(term);
    else
      b_.SetInsertPoint(entry_);
    return emit();
  }
  Value *param_size(unsigned p) {
    Value *sizes = load_field(abi_.launch, launch_, LSizes, ptr());
    return invariant(b_.CreateLoad(i64(), b_.CreateConstGEP1_32(i64(), sizes, p)));
  }
  Value *boundary() { return load_field(abi_.launch, launch_, LBoundary, ptr()); }

  Access resolve(const Address &a) {
    Access acc;
    V off{u64c(static_cast<uint64_t>(a.disp)), true};
    if (a.index != kNoReg) {
      V idx = get(a.index, Type::U64);
      off = lift({idx, off}, [&](auto &v) {
        return b_.CreateAdd(b_.CreateMul(v[0], llvm::ConstantInt::get(v[0]->getType(), a.scale)),
                            v[1]);
      });
    }
    switch (a.base) {
    case AddrBase::Param:
    case AddrBase::Pool:
      acc.base = param_pointer(a.base_id);
      acc.limit = param_size(a.base_id);
      acc.region = a.base_id;
      break;
    case AddrBase::Shared:
      acc.base = load_field(abi_.worker, worker_, WShared, ptr());
      acc.limit = load_field(abi_.worker, worker_, WSharedSize, i64());
      acc.region = HG_CPU_REGION_SHARED;
      break;
    case AddrBase::Class:
      acc.base = b_.CreateConstGEP1_64(i8(), boundary(), uint64_t{a.base_id} * atlas::kClassBytes);
      acc.limit = u64c(atlas::kClassBytes);
      acc.region = HG_CPU_REGION_CLASS_BASE - a.base_id;
      break;
    case AddrBase::Boundary:
      acc.base = boundary();
      acc.limit = u64c(atlas::kBoundaryPoolBytes);
      acc.region = HG_CPU_REGION_BOUNDARY;
      break;
    case AddrBase::Reg: {
      V base = get(a.base_id, Type::U64);
      off = lift({base, off}, [&](auto &v) { return b_.CreateAdd(v[0], v[1]); });
      break; // a raw address: not bounds-checked
    }
    }
    acc.off = off;
    if (a.base != AddrBase::Reg) acc.step = affinity_.offset_step(a);
    return acc;
  }

  void check_bounds(const Access &acc, uint64_t size) {
    if (!opts_.bounds_check) return;
    if (!acc.limit) {
      check_raw_addresses(acc.off, size);
      return;
    }
    // off + size > limit, without overflow: limit < size || off > limit - size.
    Value *small = b_.CreateICmpULT(acc.limit, u64c(size));
    Value *room = b_.CreateSub(acc.limit, u64c(size));
    Value *bad = acc.off.uni ? b_.CreateOr(small, b_.CreateICmpUGT(acc.off.v, room))
                             : b_.CreateOr(splat(small), b_.CreateICmpUGT(acc.off.v, splat(room)));
    fail_if(active(bad), HG_CPU_ERR_OUT_OF_BOUNDS, cur_, acc.off.v, size, acc.region);
  }

  /// Register-indirect addresses: the runtime says whether each active lane's range lies in
  /// a region of the launch.
  void check_raw_addresses(const V &addr, uint64_t size) {
    Value *fn = load_field(abi_.launch, launch_, LCheckAddress, ptr());
    auto *fty = llvm::FunctionType::get(i32(), {ptr(), ptr(), i64(), i64()}, false);
    auto ok = [&](Value *a) {
      return b_.CreateICmpNE(b_.CreateCall(fty, fn, {launch_, worker_, a, u64c(size)}), u32c(0));
    };
    if (addr.uni) {
      fail_if(b_.CreateNot(ok(addr.v)), HG_CPU_ERR_OUT_OF_BOUNDS, cur_, addr.v, size,
              HG_CPU_REGION_RAW);
      return;
    }
    auto *bad = entry_alloca(vec(i1()));
    b_.CreateStore(llvm::Constant::getNullValue(vec(i1())), bad);
    for_each_active_lane([&](unsigned j) {
      Value *lane_bad = b_.CreateNot(ok(b_.CreateExtractElement(addr.v, uint64_t{j})));
      b_.CreateStore(b_.CreateInsertElement(b_.CreateLoad(vec(i1()), bad), lane_bad, uint64_t{j}),
                     bad);
    });
    fail_if(b_.CreateLoad(vec(i1()), bad), HG_CPU_ERR_OUT_OF_BOUNDS, cur_, addr.v, size,
            HG_CPU_REGION_RAW);
  }

  Value *pointer(const Access &acc, Value *off) {
    if (!acc.base)
      return b_.CreateIntToPtr(
          off, off->getType()->isVectorTy() ? static_cast<llvm::Type *>(vec(ptr())) : ptr());
    return b_.CreateGEP(i8(), acc.base, off);
  }

  /// Whether a lane-varying access touches consecutive elements of `size` bytes in every run.
  [[nodiscard]] static bool always_consecutive(const Access &acc, uint64_t size) {
    return acc.step && acc.step->id == opt::LaneId::Gid &&
           acc.step->stride == static_cast<int64_t>(size);
  }

  /// Whether the active lanes of this run touch consecutive elements of `size` bytes: for a
  /// row-wise lane id, whether runs stay in one row of the block (once per launch); otherwise
  /// compared lane by lane.
  Value *consecutive(const Access &acc, uint64_t size) {
    if (acc.step && acc.step->id && acc.step->stride == static_cast<int64_t>(size))
      return rows_whole_;
    return consecutive_lanes(acc.off.v, size);
  }

  Value *consecutive_lanes(Value *off, uint64_t size) {
    Value *first = b_.CreateExtractElement(off, uint64_t{0});
    Value *expect = b_.CreateAdd(splat(first), iota64(size));
    Value *mask = lane_mask();
    return b_.CreateAndReduce(b_.CreateOr(b_.CreateNot(mask), b_.CreateICmpEQ(off, expect)));
  }

  V load(Type t, const Access &acc) {
    llvm::Type *ty = scalar_type(t);
    const uint64_t size = type_size(t);
    check_bounds(acc, size);
    if (acc.off.uni)
      return {b_.CreateAlignedLoad(ty, pointer(acc, acc.off.v), llvm::Align(1)), true};
    Value *mask = lane_mask();
    Value *zero = llvm::Constant::getNullValue(vec(ty));
    if (always_consecutive(acc, size)) { // known when compiled: no check, no gather
      Value *p0 = pointer(acc, b_.CreateExtractElement(acc.off.v, uint64_t{0}));
      return {b_.CreateMaskedLoad(vec(ty), p0, llvm::Align(1), mask, zero), false};
    }
    BasicBlock *contiguous = BasicBlock::Create(c_, "ld.vector", fn_);
    BasicBlock *gather = BasicBlock::Create(c_, "ld.gather", fn_);
    BasicBlock *done = BasicBlock::Create(c_, "ld.done", fn_);
    b_.CreateCondBr(consecutive(acc, size), contiguous, gather);
    b_.SetInsertPoint(contiguous);
    Value *p0 = pointer(acc, b_.CreateExtractElement(acc.off.v, uint64_t{0}));
    Value *v1 = b_.CreateMaskedLoad(vec(ty), p0, llvm::Align(1), mask, zero);
    b_.CreateBr(done);
    b_.SetInsertPoint(gather);
    Value *v2 = b_.CreateMaskedGather(vec(ty), pointer(acc, acc.off.v), llvm::Align(1), mask, zero);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    auto *phi = b_.CreatePHI(vec(ty), 2);
    phi->addIncoming(v1, contiguous);
    phi->addIncoming(v2, gather);
    return {phi, false};
  }

  /// `streams`: the address is of an output that the kernel only writes (write_only).
  void store(Type t, const Access &acc, V v, bool streams = false) {
    const uint64_t size = type_size(t);
    check_bounds(acc, size);
    if (acc.off.uni && v.uni) {
      b_.CreateAlignedStore(v.v, pointer(acc, acc.off.v), llvm::Align(1));
      return;
    }
    Value *mask = lane_mask();
    Value *val = splat(v);
    if (acc.off.uni) { // lanes race for one location: the highest active lane wins
      b_.CreateMaskedScatter(val, splat(pointer(acc, acc.off.v)), llvm::Align(1), mask);
      return;
    }
    if (always_consecutive(acc, size)) { // known when compiled: no check, no scatter
      Value *p0 = pointer(acc, b_.CreateExtractElement(acc.off.v, uint64_t{0}));
      if (full_chunk_ && streams && (w_ * size) % kStreamAlign == 0)
        store_maybe_streaming(val, p0, size);
      else
        b_.CreateMaskedStore(val, p0, llvm::Align(1), mask);
      return;
    }
    BasicBlock *contiguous = BasicBlock::Create(c_, "st.vector", fn_);
    BasicBlock *scatter = BasicBlock::Create(c_, "st.scatter", fn_);
    BasicBlock *done = BasicBlock::Create(c_, "st.done", fn_);
    b_.CreateCondBr(consecutive(acc, size), contiguous, scatter);
    b_.SetInsertPoint(contiguous);
    b_.CreateMaskedStore(val, pointer(acc, b_.CreateExtractElement(acc.off.v, uint64_t{0})),
                         llvm::Align(1), mask);
    b_.CreateBr(done);
    b_.SetInsertPoint(scatter);
    b_.CreateMaskedScatter(val, pointer(acc, acc.off.v), llvm::Align(1), mask);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  /// A full chunk's contiguous store: non-temporal when the launch's stores of this
  /// instruction write at least hg_cpu_launch.stream_bytes (an output larger than the cache,
  /// which normal stores would first read in) and the address is 16-byte aligned (movntps
  /// needs it; LLVM splits a wider vector into aligned 16-byte stores); a plain store otherwise.
  void store_maybe_streaming(Value *val, Value *p0, uint64_t size) {
    Value *big = launch_streams(stream_bytes_, launch_lanes(), size);
    Value *aligned = b_.CreateICmpEQ(
        b_.CreateAnd(b_.CreatePtrToInt(p0, i64()), u64c(kStreamAlign - 1)), u64c(0));
    BasicBlock *stream = BasicBlock::Create(c_, "st.stream", fn_);
    BasicBlock *cached = BasicBlock::Create(c_, "st.cached", fn_);
    BasicBlock *done = BasicBlock::Create(c_, "st.done", fn_);
    b_.CreateCondBr(b_.CreateAnd(big, aligned), stream, cached);
    b_.SetInsertPoint(stream);
    llvm::StoreInst *nt = b_.CreateAlignedStore(val, p0, llvm::Align(kStreamAlign));
    nt->setMetadata(llvm::LLVMContext::MD_nontemporal,
                    llvm::MDNode::get(c_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
    b_.CreateBr(done);
    b_.SetInsertPoint(cached);
    b_.CreateAlignedStore(val, p0, llvm::Align(1));
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    stream_size_ = std::min(stream_size_.value_or(size), size);
  }

  /// Whether a launch of `lanes` lanes writes at least `limit` bytes (hg_cpu_launch's
  /// stream_bytes; 0: never) through a store of `size`-byte elements. The chunk's stores and
  /// the driver's sfence decide with this one test.
  Value *launch_streams(Value *limit, Value *lanes, uint64_t size) {
    return b_.CreateAnd(b_.CreateICmpNE(limit, u64c(0)),
                        b_.CreateICmpUGE(lanes, b_.CreateLShr(limit, u64c(std::countr_zero(size)))),
                        "stream.big");
  }

  /// Lanes of the whole launch (grid times block), below 2^62 (the runtime refuses more).
  Value *launch_lanes() {
    auto z = [&](Value *v) { return b_.CreateZExt(v, i64()); };
    return b_.CreateMul(b_.CreateMul(b_.CreateMul(z(gx_), z(gy_)), z(gz_)), z(lanes_),
                        "launch.lanes");
  }

  // ------------------------------------------------------------------------------------------
  // Lane loops for what has no vector form (atomics, conversion helpers)

  /// Calls body(lane) for every active lane, lane by lane in order.
  template <typename F> void for_each_active_lane(F &&body) {
    Value *mask = lane_mask();
    for (unsigned j = 0; j < w_; ++j) {
      BasicBlock *run = BasicBlock::Create(c_, "lane", fn_);
      BasicBlock *next = BasicBlock::Create(c_, "lane.next", fn_);
      b_.CreateCondBr(b_.CreateExtractElement(mask, uint64_t{j}), run, next);
      b_.SetInsertPoint(run);
      body(j);
      b_.CreateBr(next);
      b_.SetInsertPoint(next);
    }
  }

  Value *lane_of(const V &v, unsigned j) {
    return v.uni ? v.v : b_.CreateExtractElement(v.v, uint64_t{j});
  }

  // ------------------------------------------------------------------------------------------
  // Instructions

  void emit_instruction(const Instruction &inst);
  /// The two-operand instructions that map onto one LLVM binary operator.
  enum class BinaryOp { Add, Sub, Mul, Div, Rem, And, Or, Xor };
  V binary(BinaryOp op, Type t, V x, V y);
  void set_binary(const Instruction &inst, BinaryOp op) {
    set(inst, 0, inst.type,
        binary(op, inst.type, src(inst, 1, inst.type), src(inst, 2, inst.type)));
  }
  V fold(ReduceOp op, Type t, V acc, V x) {
    switch (op) {
    case ReduceOp::Add: return binary(BinaryOp::Add, t, acc, x);
    case ReduceOp::Mul: return binary(BinaryOp::Mul, t, acc, x);
    case ReduceOp::Min: return min_max(true, t, acc, x);
    case ReduceOp::Max: return min_max(false, t, acc, x);
    }
    unreachable_enum("ReduceOp");
  }
  /// Whether any instruction addresses shared memory (only then is it cleared per block).
  bool uses_shared() const {
    for (const auto &inst : k_.insts)
      for (const auto &op : inst.operands)
        if (op.kind == OperandKind::Addr && op.addr.base == AddrBase::Shared) return true;
    return false;
  }
  uint32_t state_type_bytes() {
    state_type();
    return state_bytes_;
  }
  V min_max(bool is_min, Type t, V x, V y);
  V convert(V x, Type dst, Type src);
  V convert_scalar_helper(V x, Type dst, Type src);
  V compare(CmpCode cc, Type t, V x, V y);
  void emit_atomic(const Instruction &inst);
  void emit_atlas(const Instruction &inst);
  void emit_reduce_mem(const Instruction &inst);
  void emit_launch_op(const Instruction &inst);
  void emit_pool_alloc(const Instruction &inst);
  void emit_call(const Instruction &inst);
  void emit_ret();
  V table_lookup(const std::vector<uint32_t> &table, V index, const std::string &name);
  void check_class(V c);
  /// f(class) of the class in source operand 1, checked, from a constant table.
  V class_lookup(const Instruction &inst, const std::string &name, uint32_t (*f)(uint32_t));
  Value *bits64(Value *scalar, Type t);
  Value *from_bits64(Value *bits, Type t);

  // ------------------------------------------------------------------------------------------
  // The driver: runs blocks [first, end), every chunk of each, in phases for barrier kernels.

  llvm::Function *emit_driver(const std::string &symbol, llvm::Function *chunk);

  friend class DriverEmitter;

  llvm::Module &m_;
  llvm::LLVMContext &c_;
  const AbiTypes &abi_;
  const Kernel &k_;
  uint32_t kernel_index_;
  const CpuTarget &target_;
  const CpuOptions &opts_;
  llvm::IRBuilder<> b_;
  unsigned w_;
  opt::LaneAnalysis a_;
  opt::LaneAffinity affinity_;

  std::unique_ptr<llvm::DIBuilder> di_;
  llvm::DIFile *di_file_ = nullptr;
  llvm::DICompileUnit *di_cu_ = nullptr;

  llvm::Function *fn_ = nullptr;
  Value *launch_ = nullptr, *worker_ = nullptr, *block_linear_ = nullptr;
  Value *bx_ = nullptr, *by_ = nullptr, *bz_ = nullptr, *chunk_ = nullptr, *state_ = nullptr;
  Value *gx_ = nullptr, *gy_ = nullptr, *gz_ = nullptr, *bdx_ = nullptr, *bdy_ = nullptr,
        *bdz_ = nullptr, *lanes_ = nullptr;
  Value *rows_whole_ = nullptr;
  Value *stream_bytes_ = nullptr; ///< hg_cpu_launch.stream_bytes
  /// The smallest element size of a store that may stream (for the driver's sfence).
  std::optional<uint64_t> stream_size_;
  static constexpr uint64_t kStreamAlign = 16;
  Value *chunk_full_ = nullptr;  ///< every lane of this chunk is in the block
  Value *block_whole_ = nullptr; ///< the block's lanes are a whole number of chunks
  Value *lane_lin_ = nullptr, *valid_ = nullptr, *lx_ = nullptr, *ly_ = nullptr, *lz_ = nullptr;
  BasicBlock *entry_ = nullptr, *body_entry_ = nullptr, *dispatch_ = nullptr, *exit_all_ = nullptr;
  std::vector<BasicBlock *> bbs_, bb_of_;
  std::map<opt::Slot, SlotInfo> slots_;
  std::map<unsigned, Value *> param_pointers_;
  std::map<std::pair<unsigned, Type>, Value *> param_values_;
  llvm::AllocaInst *pc_ = nullptr, *mask_ = nullptr, *stack_ = nullptr, *sp_ = nullptr;
  llvm::StructType *state_ty_ = nullptr;
  llvm::GlobalVariable *barrier_table_ = nullptr;
  std::map<std::string, llvm::GlobalVariable *> tables_;
  std::map<size_t, uint64_t> pool_offsets_;
  uint64_t pool_bytes_ = 0;
  uint32_t state_bytes_ = 0;
  bool divergent_ = false;
  bool full_chunk_ = false; ///< emitting a block's copy for chunks whose lanes are all live
  std::map<unsigned, Ends> ends_of_pred_; ///< full chunk: predicates whose ends decide
  uint32_t versioned_ = 0;                ///< instructions emitted twice so far
  std::vector<BasicBlock *> full_bb_;     ///< per block: the entry of its full-chunk copy, if any
  static constexpr uint32_t kMaxVersioned = 2048;
  uint32_t cur_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Instruction lowering

void KernelLowering::emit_instruction(const Instruction &inst) {
  const Type t = inst.type;
  const auto &ops = inst.operands;
  switch (inst.op) {
  // Data movement ------------------------------------------------------------------------------
  case Opcode::Ld:
  case Opcode::Lds:
  case Opcode::PoolLd: set(inst, 0, t, load(t, resolve(ops[1].addr))); return;
  case Opcode::St:
  case Opcode::Sts:
  case Opcode::PoolSt:
    store(t, resolve(ops[0].addr), src(inst, 1, t), affinity_.write_only(ops[0].addr));
    return;
  case Opcode::Mov: set(inst, 0, t, src(inst, 1, t)); return;
  case Opcode::MovImm: set(inst, 0, t, {constant(t, ops[1].imm), true}); return;
  case Opcode::Cvt: set(inst, 0, t, convert(src(inst, 1, inst.type2), t, inst.type2)); return;
  case Opcode::Param: set(inst, 0, t, {param_value(ops[1].index, t), true}); return;
  case Opcode::Addr:
    set(inst, 0, Type::U64, {b_.CreatePtrToInt(param_pointer(ops[1].index), i64()), true});
    return;

  // Arithmetic and logic ----------------------------------------------------------------------
  case Opcode::Add: set_binary(inst, BinaryOp::Add); return;
  case Opcode::Sub: set_binary(inst, BinaryOp::Sub); return;
  case Opcode::Mul: set_binary(inst, BinaryOp::Mul); return;
  case Opcode::Div: set_binary(inst, BinaryOp::Div); return;
  case Opcode::Rem: set_binary(inst, BinaryOp::Rem); return;
  case Opcode::And: set_binary(inst, BinaryOp::And); return;
  case Opcode::Or: set_binary(inst, BinaryOp::Or); return;
  case Opcode::Xor: set_binary(inst, BinaryOp::Xor); return;
  case Opcode::Min:
  case Opcode::Max:
    set(inst, 0, t, min_max(inst.op == Opcode::Min, t, src(inst, 1, t), src(inst, 2, t)));
    return;
  case Opcode::Shl:
  case Opcode::Shr: {
    const unsigned bits = type_size(t) * 8;
    V amount = src(inst, 2, Type::U32);
    V r = lift({src(inst, 1, t), amount}, [&](auto &v) {
      Value *s = b_.CreateAnd(v[1], llvm::ConstantInt::get(v[1]->getType(), bits - 1));
      s = b_.CreateZExtOrTrunc(s, v[0]->getType());
      if (inst.op == Opcode::Shl) return b_.CreateShl(v[0], s);
      return is_signed_int(t) ? b_.CreateAShr(v[0], s) : b_.CreateLShr(v[0], s);
    });
    set(inst, 0, t, r);
    return;
  }
  case Opcode::Not:
    set(inst, 0, t, lift({src(inst, 1, t)}, [&](auto &v) { return b_.CreateNot(v[0]); }));
    return;
  case Opcode::Mad: {
    V r = lift({src(inst, 1, t), src(inst, 2, t), src(inst, 3, t)}, [&](auto &v) -> Value * {
      if (is_fp(t)) return b_.CreateFAdd(b_.CreateFMul(v[0], v[1]), v[2]); // two roundings
      return b_.CreateAdd(b_.CreateMul(v[0], v[1]), v[2]);
    });
    set(inst, 0, t, r);
    return;
  }
  case Opcode::Fma:
  case Opcode::Fms: {
    V r = lift({src(inst, 1, t), src(inst, 2, t), src(inst, 3, t)}, [&](auto &v) -> Value * {
      Value *c = inst.op == Opcode::Fms ? b_.CreateFNeg(v[2]) : v[2];
      return b_.CreateIntrinsic(llvm::Intrinsic::fma, {v[0]->getType()}, {v[0], v[1], c});
    });
    set(inst, 0, t, r);
    return;
  }
  case Opcode::Clamp: {
    V lo = min_max(false, t, src(inst, 1, t), src(inst, 2, t));
    set(inst, 0, t, min_max(true, t, lo, src(inst, 3, t)));
    return;
  }
  case Opcode::Lerp: {
    V r = lift({src(inst, 1, t), src(inst, 2, t), src(inst, 3, t)}, [&](auto &v) {
      return b_.CreateFAdd(v[0], b_.CreateFMul(b_.CreateFSub(v[1], v[0]), v[2]));
    });
    set(inst, 0, t, r);
    return;
  }
  case Opcode::Abs: {
    V r = lift({src(inst, 1, t)}, [&](auto &v) -> Value * {
      if (is_fp(t)) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v[0]);
      if (!is_signed_int(t)) return v[0];
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, v[0], b_.getFalse());
    });
    set(inst, 0, t, r);
    return;
  }
  case Opcode::Neg:
    set(inst, 0, t, lift({src(inst, 1, t)}, [&](auto &v) -> Value * {
          return is_fp(t) ? b_.CreateFNeg(v[0]) : b_.CreateNeg(v[0]);
        }));
    return;
  case Opcode::Rcp:
    set(inst, 0, t, lift({src(inst, 1, t)}, [&](auto &v) {
          return b_.CreateFDiv(llvm::ConstantFP::get(v[0]->getType(), 1.0), v[0]);
        }));
    return;
  case Opcode::Sign: {
    V r = lift({src(inst, 1, t)}, [&](auto &v) -> Value * {
      llvm::Type *ty = v[0]->getType();
      Value *zero = llvm::Constant::getNullValue(ty);
      if (is_fp(t)) {
        Value *pos = b_.CreateFCmpOGT(v[0], zero), *neg = b_.CreateFCmpOLT(v[0], zero);
        return b_.CreateSelect(pos, llvm::ConstantFP::get(ty, 1.0),
                               b_.CreateSelect(neg, llvm::ConstantFP::get(ty, -1.0), v[0]));
      }
      Value *one = llvm::ConstantInt::get(ty, 1);
      if (!is_signed_int(t)) return b_.CreateSelect(b_.CreateICmpNE(v[0], zero), one, zero);
      return b_.CreateSelect(b_.CreateICmpSGT(v[0], zero), one,
                             b_.CreateSelect(b_.CreateICmpSLT(v[0], zero),
                                             llvm::ConstantInt::getSigned(ty, -1), zero));
    });
    set(inst, 0, t, r);
    return;
  }
  case Opcode::Floor:
  case Opcode::Ceil:
  case Opcode::Round:
  case Opcode::Trunc: {
    auto id = inst.op == Opcode::Floor   ? llvm::Intrinsic::floor
              : inst.op == Opcode::Ceil  ? llvm::Intrinsic::ceil
              : inst.op == Opcode::Round ? llvm::Intrinsic::round
                                         : llvm::Intrinsic::trunc;
    set(inst, 0, t,
        lift({src(inst, 1, t)}, [&](auto &v) { return b_.CreateUnaryIntrinsic(id, v[0]); }));
    return;
  }
  case Opcode::Set: {
    const V c = compare(static_cast<CmpCode>(inst.sub), t, src(inst, 1, t), src(inst, 2, t));
    set_pred(ops[0].index, c);
    if (full_chunk_ && !inst.guard.present && monotone_in_chunk(inst)) {
      // The first and last lanes decide for all, if the growing operand does not wrap
      // within the chunk (checked: its first lane is at most its last).
      // In scalar arithmetic: lane 0 of the growing operand, its last lane by its step.
      const size_t grows = src(inst, 1, t).uni ? 2 : 1;
      const int64_t stride = affinity_.step_of(ops[grows].index, t)->stride;
      Value *x0 = b_.CreateExtractElement(src(inst, grows, t).v, uint64_t{0});
      // %gid itself cannot wrap: the runtime refuses launches of 2^62 lanes or more
      // (cpu_module.cpp), so its last lane is its first plus w - 1, with no overflow, and
      // LLVM may fold the two ends' tests into one.
      const isa::Operand &g = ops[grows];
      const bool gid = g.kind == isa::OperandKind::Reg && g.index == special_reg(Special::Gid);
      Value *xw = b_.CreateAdd(x0, u64c(static_cast<uint64_t>(stride) * (w_ - 1)), "", gid, gid);
      Value *ordered = gid                ? b_.getTrue()
                       : is_signed_int(t) ? b_.CreateICmpSLE(x0, xw)
                                          : b_.CreateICmpULE(x0, xw);
      const V y = src(inst, 3 - grows, t);
      const auto cc = static_cast<CmpCode>(inst.sub);
      auto at = [&](Value *x) {
        return grows == 1 ? compare(cc, t, {x, true}, y).v : compare(cc, t, y, {x, true}).v;
      };
      Ends ends{at(x0), at(xw), ordered};
      if (gid) {
        Value *first = block_first_gid();
        Value *last = b_.CreateAdd(first, b_.CreateZExt(b_.CreateSub(lanes_, u32c(1)), i64()));
        ends.block_value = at(first);
        ends.block_agrees =
            b_.CreateAnd(block_whole_, b_.CreateICmpEQ(ends.block_value, at(last)), "block.agrees");
      }
      ends_of_pred_[ops[0].index] = ends;
    }
    return;
  }
  case Opcode::Sel: {
    V r = lift({get_pred(ops[1].index), src(inst, 2, t), src(inst, 3, t)},
               [&](auto &v) { return b_.CreateSelect(v[0], v[1], v[2]); });
    set(inst, 0, t, r);
    return;
  }
  case Opcode::PAnd:
  case Opcode::POr: {
    V r = lift({get_pred(ops[1].index), get_pred(ops[2].index)}, [&](auto &v) {
      return inst.op == Opcode::PAnd ? b_.CreateAnd(v[0], v[1]) : b_.CreateOr(v[0], v[1]);
    });
    set_pred(ops[0].index, r);
    return;
  }
  case Opcode::PNot:
    set_pred(ops[0].index,
             lift({get_pred(ops[1].index)}, [&](auto &v) { return b_.CreateNot(v[0]); }));
    return;

  // Transcendentals ----------------------------------------------------------------------------
  case Opcode::Exp:
  case Opcode::Exp2:
  case Opcode::Log:
  case Opcode::Log2:
  case Opcode::Log10:
  case Opcode::Sqrt:
  case Opcode::Rsqrt:
  case Opcode::Sin:
  case Opcode::Cos:
  case Opcode::Tan:
  case Opcode::Tanh:
  case Opcode::Sigmoid:
  case Opcode::Erf:
    set(inst, 0, t, lift({src(inst, 1, t)}, [&](auto &v) {
          return emit_math(b_, target_, as_family<MathOpcode>(inst.op), {v[0]});
        }));
    return;
  case Opcode::Pow:
  case Opcode::Atan2:
    set(inst, 0, t, lift({src(inst, 1, t), src(inst, 2, t)}, [&](auto &v) {
          return emit_math(b_, target_, as_family<MathOpcode>(inst.op), {v[0], v[1]});
        }));
    return;

  // Control ------------------------------------------------------------------------------------
  case Opcode::Bra: {
    uint32_t target = a_.target_block(k_, ops[0]);
    if (!inst.guard.present) {
      jump(target);
      return;
    }
    V p = get_pred(inst.guard.pred);
    if (inst.guard.negate) p = lift({p}, [&](auto &v) { return b_.CreateNot(v[0]); });
    std::optional<Ends> ends;
    if (auto it = ends_of_pred_.find(inst.guard.pred); full_chunk_ && it != ends_of_pred_.end()) {
      ends = it->second;
      if (inst.guard.negate) ends = ends->negated(b_);
    }
    branch(p, target, a_.blocks[a_.block_of[cur_]].fallthrough, ends);
    return;
  }
  case Opcode::Loop: {
    V c = src(inst, 0, Type::U32);
    V more = lift({c}, [&](auto &v) {
      return b_.CreateICmpUGT(v[0], llvm::Constant::getNullValue(v[0]->getType()));
    });
    V dec = lift({c, more}, [&](auto &v) {
      return b_.CreateSelect(v[1], b_.CreateSub(v[0], llvm::ConstantInt::get(v[0]->getType(), 1)),
                             v[0]);
    });
    set(inst, 0, Type::U32, dec);
    branch(more, a_.target_block(k_, ops[1]), a_.blocks[a_.block_of[cur_]].fallthrough);
    return;
  }
  case Opcode::Call: emit_call(inst); return;
  case Opcode::Ret: emit_ret(); return;
  case Opcode::Exit: jump(opt::kExitBlock); return;

  // Synchronisation ----------------------------------------------------------------------------
  case Opcode::BarSync: {
    uint32_t next = a_.blocks[a_.block_of[cur_]].fallthrough;
    uint32_t resume =
        next == opt::kExitBlock ? static_cast<uint32_t>(a_.order.size()) : a_.rank[next];
    set_pc(lane_mask(), splat(u32c(kParkBit | resume)));
    b_.CreateBr(dispatch_);
    return;
  }
  case Opcode::MemFence: {
    auto scope = static_cast<FenceScope>(inst.sub);
    if (scope == FenceScope::Thread)
      b_.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent, llvm::SyncScope::SingleThread);
    else
      b_.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
    return;
  }

  // Atomics, Atlas, reductions, pools ------------------------------------------------------------
  case Opcode::Atom:
  case Opcode::AtomCas: emit_atomic(inst); return;
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
    auto rop = static_cast<ReduceOp>(inst.sub);
    V acc = {constant(t, reduce_identity(rop, t)), true};
    for (uint64_t j = 0; j < ops[2].imm; ++j)
      acc = fold(rop, t, acc, get(static_cast<Reg>(ops[1].index + j), t));
    set(inst, 0, t, acc);
    return;
  }
  case Opcode::ReduceMem: emit_reduce_mem(inst); return;
  case Opcode::PoolAlloc: emit_pool_alloc(inst); return;
  case Opcode::PoolFree:
    return; // the verifier pairs it with its pool.alloc

  // Whole-launch operations
  // ------------------------------------------------------------------------
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
  case Opcode::Axpy: emit_launch_op(inst); return;
  }
  throw LoweringError("unhandled opcode");
}

V KernelLowering::binary(BinaryOp op, Type t, V x, V y) {
  if ((op == BinaryOp::Div || op == BinaryOp::Rem) && !is_fp(t)) {
    // Division by zero gives 0 and MIN / -1 gives MIN (MIN rem -1 gives 0): the divisor is
    // replaced by 1 where the hardware would trap, and the quotient by 0 where it was zero.
    if (opts_.check_div) {
      V zero = lift({y}, [&](auto &v) {
        return b_.CreateICmpEQ(v[0], llvm::Constant::getNullValue(v[0]->getType()));
      });
      fail_if(active(zero.v), HG_CPU_ERR_DIV_ZERO, cur_, nullptr);
    }
    return lift({x, y}, [&](auto &v) -> Value * {
      llvm::Type *ty = v[0]->getType();
      Value *zero = llvm::Constant::getNullValue(ty), *one = llvm::ConstantInt::get(ty, 1);
      Value *by_zero = b_.CreateICmpEQ(v[1], zero);
      Value *d = b_.CreateSelect(by_zero, one, v[1]);
      if (is_signed_int(t)) {
        unsigned bits = ty->getScalarSizeInBits();
        Value *min = llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(bits));
        Value *overflow = b_.CreateAnd(b_.CreateICmpEQ(v[0], min),
                                       b_.CreateICmpEQ(d, llvm::Constant::getAllOnesValue(ty)));
        d = b_.CreateSelect(overflow, one, d);
      }
      Value *q = op == BinaryOp::Div
                     ? (is_signed_int(t) ? b_.CreateSDiv(v[0], d) : b_.CreateUDiv(v[0], d))
                     : (is_signed_int(t) ? b_.CreateSRem(v[0], d) : b_.CreateURem(v[0], d));
      return b_.CreateSelect(by_zero, zero, q);
    });
  }
  return lift({x, y}, [&](auto &v) -> Value * {
    const bool fp = is_fp(t);
    switch (op) {
    case BinaryOp::Add: return fp ? b_.CreateFAdd(v[0], v[1]) : b_.CreateAdd(v[0], v[1]);
    case BinaryOp::Sub: return fp ? b_.CreateFSub(v[0], v[1]) : b_.CreateSub(v[0], v[1]);
    case BinaryOp::Mul: return fp ? b_.CreateFMul(v[0], v[1]) : b_.CreateMul(v[0], v[1]);
    case BinaryOp::Div: return b_.CreateFDiv(v[0], v[1]);
    case BinaryOp::Rem: return b_.CreateFRem(v[0], v[1]);
    case BinaryOp::And: return b_.CreateAnd(v[0], v[1]);
    case BinaryOp::Or: return b_.CreateOr(v[0], v[1]);
    case BinaryOp::Xor: return b_.CreateXor(v[0], v[1]);
    }
    unreachable_enum("BinaryOp");
  });
}

V KernelLowering::min_max(bool is_min, Type t, V x, V y) {
  return lift({x, y}, [&](auto &v) -> Value * {
    if (!is_fp(t)) {
      auto id = is_signed_int(t) ? (is_min ? llvm::Intrinsic::smin : llvm::Intrinsic::smax)
                                 : (is_min ? llvm::Intrinsic::umin : llvm::Intrinsic::umax);
      return b_.CreateBinaryIntrinsic(id, v[0], v[1]);
    }
    // IEEE minNum/maxNum, with -0 below +0: for equal operands combine the sign bits.
    Value *r = b_.CreateBinaryIntrinsic(is_min ? llvm::Intrinsic::minnum : llvm::Intrinsic::maxnum,
                                        v[0], v[1]);
    llvm::Type *ty = v[0]->getType();
    llvm::Type *ity =
        ty->isVectorTy()
            ? static_cast<llvm::Type *>(llvm::VectorType::get(
                  b_.getIntNTy(ty->getScalarSizeInBits()), llvm::cast<llvm::VectorType>(ty)))
            : b_.getIntNTy(ty->getScalarSizeInBits());
    Value *xa = b_.CreateBitCast(v[0], ity), *xb = b_.CreateBitCast(v[1], ity);
    Value *both = b_.CreateBitCast(is_min ? b_.CreateOr(xa, xb) : b_.CreateAnd(xa, xb), ty);
    return b_.CreateSelect(b_.CreateFCmpOEQ(v[0], v[1]), both, r);
  });
}

V KernelLowering::compare(CmpCode cc, Type t, V x, V y) {
  using P = llvm::CmpInst::Predicate;
  P p;
  if (is_fp(t)) {
    static constexpr P kFloat[] = {P::FCMP_OEQ, P::FCMP_ONE, P::FCMP_OLT, P::FCMP_OLE,
                                   P::FCMP_OGT, P::FCMP_OGE, P::FCMP_UEQ, P::FCMP_UNE,
                                   P::FCMP_ULT, P::FCMP_ULE, P::FCMP_UGT, P::FCMP_UGE};
    p = kFloat[static_cast<int>(cc)];
  } else {
    const bool s = is_signed_int(t);
    static constexpr P kInt[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_ULT,
                                 P::ICMP_ULE, P::ICMP_UGT, P::ICMP_UGE};
    static constexpr P kSigned[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_SLT,
                                    P::ICMP_SLE, P::ICMP_SGT, P::ICMP_SGE};
    p = (s ? kSigned : kInt)[static_cast<int>(cc) % 6];
  }
  return lift({x, y}, [&](auto &v) { return b_.CreateCmp(p, v[0], v[1]); });
}

V KernelLowering::convert(V x, Type dst, Type src) {
  if (dst == src) return x;
  auto shape = [&](llvm::Type *elem, const V &like) -> llvm::Type * {
    return like.uni ? elem : vec(elem);
  };
  auto fmt = [&](Type t) -> llvm::Type * { return scalar_type(t); };
  // Widen f16/bf16 sources to f32 exactly.
  if (src == Type::F16) {
    V h{b_.CreateBitCast(x.v, shape(b_.getHalfTy(), x)), x.uni};
    return convert({b_.CreateFPExt(h.v, shape(b_.getFloatTy(), x)), x.uni}, dst, Type::F32);
  }
  if (src == Type::BF16) {
    Value *w = b_.CreateShl(b_.CreateZExt(x.v, shape(i32(), x)), 16);
    return convert({b_.CreateBitCast(w, shape(b_.getFloatTy(), x)), x.uni}, dst, Type::F32);
  }
  if (dst == Type::F16 || dst == Type::BF16) {
    // Narrow sources that f32 holds exactly convert through f32; the others through the
    // runtime's exact conversion (one rounding, as the SPEC requires).
    const bool exact_in_f32 = src == Type::F32 || (!is_fp(src) && type_size(src) <= 2);
    if (!exact_in_f32) return convert_scalar_helper(x, dst, src);
    V f = convert(x, Type::F32, src);
    Value *bits = b_.CreateBitCast(f.v, shape(i32(), f));
    Value *isnan = b_.CreateFCmpUNO(f.v, f.v);
    Value *sign = b_.CreateTrunc(b_.CreateLShr(b_.CreateAnd(bits, 0x80000000u), 16),
                                 shape(b_.getInt16Ty(), f));
    Value *out;
    if (dst == Type::F16) {
      out = b_.CreateBitCast(b_.CreateFPTrunc(f.v, shape(b_.getHalfTy(), f)),
                             shape(b_.getInt16Ty(), f));
      out = b_.CreateSelect(isnan, b_.CreateOr(sign, 0x7e00), out);
    } else { // round to nearest even on the bits
      Value *lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), 1);
      Value *rounded = b_.CreateLShr(
          b_.CreateAdd(bits, b_.CreateAdd(lsb, llvm::ConstantInt::get(bits->getType(), 0x7fff))),
          16);
      out = b_.CreateTrunc(rounded, shape(b_.getInt16Ty(), f));
      out = b_.CreateSelect(isnan, b_.CreateOr(sign, 0x7fc0), out);
    }
    return {out, f.uni};
  }
  llvm::Type *to = shape(fmt(dst), x);
  const bool from_fp = is_fp(src), to_fp = is_fp(dst);
  if (from_fp && to_fp)
    return {type_size(dst) > type_size(src) ? b_.CreateFPExt(x.v, to) : b_.CreateFPTrunc(x.v, to),
            x.uni};
  if (from_fp) { // truncate toward zero, saturate, NaN -> 0
    auto id = is_signed_int(dst) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return {b_.CreateIntrinsic(id, {to, x.v->getType()}, {x.v}), x.uni};
  }
  if (to_fp)
    return {is_signed_int(src) ? b_.CreateSIToFP(x.v, to) : b_.CreateUIToFP(x.v, to), x.uni};
  if (type_size(dst) < type_size(src)) return {b_.CreateTrunc(x.v, to), x.uni};
  return {is_signed_int(src) ? b_.CreateSExt(x.v, to) : b_.CreateZExt(x.v, to), x.uni};
}

Value *KernelLowering::bits64(Value *v, Type t) {
  if (t == Type::F32) return b_.CreateZExt(b_.CreateBitCast(v, i32()), i64());
  if (t == Type::F64) return b_.CreateBitCast(v, i64());
  if (t == Type::Pred) return b_.CreateZExt(v, i64());
  return b_.CreateZExtOrTrunc(v, i64());
}
Value *KernelLowering::from_bits64(Value *bits, Type t) {
  if (t == Type::F32) return b_.CreateBitCast(b_.CreateTrunc(bits, i32()), b_.getFloatTy());
  if (t == Type::F64) return b_.CreateBitCast(bits, b_.getDoubleTy());
  return b_.CreateZExtOrTrunc(bits, scalar_type(t));
}

V KernelLowering::convert_scalar_helper(V x, Type dst, Type src) {
  Value *fn = load_field(abi_.launch, launch_, LConvert, ptr());
  auto *fty = llvm::FunctionType::get(i64(), {i64(), i32(), i32()}, false);
  auto call = [&](Value *s) {
    Value *r = b_.CreateCall(
        fty, fn,
        {bits64(s, src), u32c(static_cast<uint32_t>(dst)), u32c(static_cast<uint32_t>(src))});
    return b_.CreateTrunc(r, b_.getInt16Ty());
  };
  if (x.uni) return {call(x.v), true};
  Value *out = llvm::Constant::getNullValue(vec(b_.getInt16Ty()));
  for (unsigned j = 0; j < w_; ++j)
    out = b_.CreateInsertElement(out, call(b_.CreateExtractElement(x.v, uint64_t{j})), uint64_t{j});
  return {out, false};
}

void KernelLowering::emit_atomic(const Instruction &inst) {
  const Type t = inst.type;
  llvm::Type *ty = scalar_type(t);
  llvm::Type *ity = b_.getIntNTy(type_size(t) * 8);
  Access acc = resolve(inst.operands[1].addr);
  check_bounds(acc, type_size(t));
  V val = src(inst, 2, t);
  V cmp = inst.op == Opcode::AtomCas ? src(inst, 3, t) : V{};
  auto *result = entry_alloca(vec(ty));
  b_.CreateStore(llvm::Constant::getNullValue(vec(ty)), result);
  auto op = static_cast<AtomicOp>(inst.sub);
  for_each_active_lane([&](unsigned j) {
    Value *off = lane_of(acc.off, j);
    Value *p = pointer(acc, off);
    Value *old;
    if (inst.op == Opcode::AtomCas) {
      auto *x =
          b_.CreateAtomicCmpXchg(p, lane_of(val, j), lane_of(cmp, j), llvm::MaybeAlign(),
                                 llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
      old = b_.CreateExtractValue(x, 0);
    } else if (is_fp(t) && (op == AtomicOp::Min || op == AtomicOp::Max)) {
      // No hardware form with minNum semantics: a compare-exchange loop.
      BasicBlock *pre = b_.GetInsertBlock();
      BasicBlock *loop = BasicBlock::Create(c_, "atom.loop", fn_);
      BasicBlock *done = BasicBlock::Create(c_, "atom.done", fn_);
      Value *init = b_.CreateAlignedLoad(ity, p, llvm::Align(type_size(t)));
      llvm::cast<llvm::LoadInst>(init)->setAtomic(llvm::AtomicOrdering::Monotonic);
      b_.CreateBr(loop);
      b_.SetInsertPoint(loop);
      auto *cur = b_.CreatePHI(ity, 2);
      cur->addIncoming(init, pre);
      V now{b_.CreateBitCast(cur, ty), true};
      V next = min_max(op == AtomicOp::Min, t, now, {lane_of(val, j), true});
      auto *x =
          b_.CreateAtomicCmpXchg(p, cur, b_.CreateBitCast(next.v, ity), llvm::MaybeAlign(),
                                 llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
      cur->addIncoming(b_.CreateExtractValue(x, 0), loop);
      b_.CreateCondBr(b_.CreateExtractValue(x, 1), done, loop);
      b_.SetInsertPoint(done);
      old = b_.CreateBitCast(cur, ty);
    } else {
      using B = llvm::AtomicRMWInst::BinOp;
      B bop = B::Xchg;
      switch (op) {
      case AtomicOp::Add: bop = is_fp(t) ? B::FAdd : B::Add; break;
      case AtomicOp::Min: bop = is_signed_int(t) ? B::Min : B::UMin; break;
      case AtomicOp::Max: bop = is_signed_int(t) ? B::Max : B::UMax; break;
      case AtomicOp::And: bop = B::And; break;
      case AtomicOp::Or: bop = B::Or; break;
      case AtomicOp::Xor: bop = B::Xor; break;
      case AtomicOp::Xchg: bop = B::Xchg; break;
      }
      old = b_.CreateAtomicRMW(bop, p, lane_of(val, j), llvm::MaybeAlign(),
                               llvm::AtomicOrdering::Monotonic);
    }
    Value *r = b_.CreateLoad(vec(ty), result);
    b_.CreateStore(b_.CreateInsertElement(r, old, uint64_t{j}), result);
  });
  set(inst, 0, t, {b_.CreateLoad(vec(ty), result), false});
}

V KernelLowering::table_lookup(const std::vector<uint32_t> &table, V index,
                               const std::string &name) {
  auto &g = tables_[name];
  if (!g) {
    std::vector<llvm::Constant *> c;
    for (uint32_t v : table) c.push_back(b_.getInt32(v));
    auto *ty = llvm::ArrayType::get(i32(), c.size());
    g = new llvm::GlobalVariable(m_, ty, true, llvm::GlobalValue::PrivateLinkage,
                                 llvm::ConstantArray::get(ty, c), "atlas." + name);
  }
  // Clamp the index so inactive lanes never read outside the table.
  const auto last = static_cast<uint32_t>(table.size() - 1);
  return lift({index}, [&](auto &v) -> Value * {
    Value *i = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, v[0],
                                        llvm::ConstantInt::get(v[0]->getType(), last));
    Value *p = b_.CreateGEP(i32(), g,
                            {b_.CreateZExt(i, v[0]->getType()->isVectorTy() ? vec(i64()) : i64())});
    if (!v[0]->getType()->isVectorTy()) return b_.CreateLoad(i32(), p);
    return b_.CreateMaskedGather(vec(i32()), p, llvm::Align(4), splat(b_.getTrue()));
  });
}

void KernelLowering::check_class(V c) {
  V bad = lift({c}, [&](auto &v) {
    return b_.CreateICmpUGE(v[0], llvm::ConstantInt::get(v[0]->getType(), atlas::kNumClasses));
  });
  fail_if(active(bad.v), HG_CPU_ERR_CLASS_RANGE, cur_, c.v);
}

V KernelLowering::class_lookup(const Instruction &inst, const std::string &name,
                               uint32_t (*f)(uint32_t)) {
  V c = src(inst, 1, Type::U32);
  check_class(c);
  std::vector<uint32_t> table(atlas::kNumClasses);
  for (uint32_t x = 0; x < atlas::kNumClasses; ++x) table[x] = f(x);
  return table_lookup(table, c, name);
}

void KernelLowering::emit_atlas(const Instruction &inst) {
  const auto &ops = inst.operands;
  auto table = [](auto f, uint32_t n) {
    std::vector<uint32_t> t(n);
    for (uint32_t i = 0; i < n; ++i) t[i] = f(i);
    return t;
  };
  auto neighbour_k = [&](uint64_t k) {
    return table(
        [k](uint32_t c) {
          auto n = atlas::neighbours(c);
          return n.items[k % n.count];
        },
        atlas::kNumClasses);
  };
  switch (as_family<AtlasOpcode>(inst.op)) {
  case AtlasOpcode::ClsGet: {
    V x = src(inst, 1, Type::U32);
    V bad = lift({x}, [&](auto &v) {
      return b_.CreateICmpUGT(v[0], llvm::ConstantInt::get(v[0]->getType(), 255));
    });
    fail_if(active(bad.v), HG_CPU_ERR_CLS_BYTE, cur_, x.v);
    set(inst, 0, Type::U32,
        table_lookup(table([](uint32_t b) { return atlas::byte_to_class(b); }, 256), x,
                     "class_of_byte"));
    return;
  }
  case AtlasOpcode::Mirror:
    set(inst, 0, Type::U32, class_lookup(inst, "mirror", atlas::mirror));
    return;
  case AtlasOpcode::UnityTest: {
    V u = class_lookup(inst, "unity", [](uint32_t x) { return uint32_t{atlas::is_unity(x)}; });
    set_pred(ops[0].index, lift({u}, [&](auto &v) {
               return b_.CreateICmpNE(v[0], llvm::Constant::getNullValue(v[0]->getType()));
             }));
    return;
  }
  case AtlasOpcode::NbrCount:
    set(inst, 0, Type::U32,
        class_lookup(inst, "degree", [](uint32_t x) { return atlas::neighbours(x).count; }));
    return;
  case AtlasOpcode::NbrGet: {
    V c = src(inst, 1, Type::U32);
    check_class(c);
    set(inst, 0, Type::U32,
        table_lookup(neighbour_k(ops[2].imm), c, "neighbour" + std::to_string(ops[2].imm)));
    return;
  }
  case AtlasOpcode::NbrLd:
  case AtlasOpcode::NbrSt: {
    const bool is_ld = inst.op == Opcode::NbrLd;
    const Type t = inst.type;
    V c = src(inst, is_ld ? 1 : 0, Type::U32);
    check_class(c);
    uint64_t k = ops[is_ld ? 2 : 1].imm;
    V n = table_lookup(neighbour_k(k), c, "neighbour" + std::to_string(k));
    V off = get(ops[is_ld ? 3 : 2].index, Type::U64);
    // The neighbour's class window: bounds are the window; the offset is from the pool start.
    Access acc;
    acc.base = boundary();
    V window = lift({n}, [&](auto &v) {
      return b_.CreateMul(b_.CreateZExt(v[0], v[0]->getType()->isVectorTy() ? vec(i64()) : i64()),
                          llvm::ConstantInt::get(v[0]->getType()->isVectorTy() ? vec(i64()) : i64(),
                                                 atlas::kClassBytes));
    });
    if (opts_.bounds_check) {
      Access in_window{nullptr, off, u64c(atlas::kClassBytes), HG_CPU_REGION_CLASS_BASE, {}};
      check_bounds(in_window, type_size(t));
    }
    acc.off = lift({window, off}, [&](auto &v) { return b_.CreateAdd(v[0], v[1]); });
    if (is_ld)
      set(inst, 0, t, load(t, acc));
    else
      store(t, acc, src(inst, 3, t));
    return;
  }
  case AtlasOpcode::ResAccum: {
    V c = src(inst, 0, Type::U32);
    check_class(c);
    V v = src(inst, 1, Type::F64);
    Value *res = load_field(abi_.launch, launch_, LResonance, ptr());
    for_each_active_lane([&](unsigned j) {
      Value *p = b_.CreateGEP(b_.getDoubleTy(), res, {b_.CreateZExt(lane_of(c, j), i64())});
      b_.CreateAtomicRMW(llvm::AtomicRMWInst::FAdd, p, lane_of(v, j), llvm::MaybeAlign(8),
                         llvm::AtomicOrdering::Monotonic);
    });
    return;
  }
  case AtlasOpcode::PhaseGet:
    set(inst, 0, Type::U32, {load_field(abi_.launch, launch_, LPhase, i32()), true});
    return;
  case AtlasOpcode::PhaseAdv: {
    // Every active lane adds its amount (SPEC §4); the runtime applies the sum at the end.
    Value *mask = lane_mask();
    Value *lanes = b_.CreateZExt(
        b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, b_.CreateBitCast(mask, b_.getIntNTy(w_))),
        i64());
    Value *p = load_field(abi_.launch, launch_, LPhaseAdv, ptr());
    b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, p, b_.CreateMul(lanes, u64c(ops[0].imm)),
                       llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic);
    return;
  }
  case AtlasOpcode::BoundMap: {
    V c = src(inst, 1, Type::U32), p = src(inst, 2, Type::U32), by = src(inst, 3, Type::U32);
    check_class(c);
    auto ge = [&](V x, uint32_t n) {
      return lift({x}, [&](auto &v) {
        return b_.CreateICmpUGE(v[0], llvm::ConstantInt::get(v[0]->getType(), n));
      });
    };
    fail_if(active(ge(p, atlas::kPagesPerClass).v), HG_CPU_ERR_PAGE_RANGE, cur_, p.v);
    fail_if(active(ge(by, atlas::kBytesPerPage).v), HG_CPU_ERR_BYTE_RANGE, cur_, by.v);
    V r = lift({c, p, by}, [&](auto &v) {
      llvm::Type *t64 =
          v[0]->getType()->isVectorTy() ? static_cast<llvm::Type *>(vec(i64())) : i64();
      auto z = [&](Value *x) { return b_.CreateZExt(x, t64); };
      return b_.CreateAdd(
          b_.CreateAdd(b_.CreateMul(z(v[0]), llvm::ConstantInt::get(t64, atlas::kClassBytes)),
                       b_.CreateMul(z(v[1]), llvm::ConstantInt::get(t64, atlas::kBytesPerPage))),
          z(v[2]));
    });
    set(inst, 0, Type::U64, r);
    return;
  }
  }
}

void KernelLowering::emit_reduce_mem(const Instruction &inst) {
  // The fold narrows the mask per step, so it reads the mask from memory even in a full chunk.
  const bool full = std::exchange(full_chunk_, false);
  const Type t = inst.type;
  const uint64_t size = type_size(t);
  auto rop = static_cast<ReduceOp>(inst.sub);
  Access base = resolve(inst.operands[1].addr);
  V n = src(inst, 2, Type::U64);
  const uint64_t id = reduce_identity(rop, t);
  const bool uni = n.uni && base.off.uni && !divergent_;
  llvm::Type *ty = scalar_type(t);
  llvm::Type *acc_ty = uni ? ty : vec(ty);
  auto *acc = entry_alloca(acc_ty);
  b_.CreateStore(uni ? constant(t, id) : splat(constant(t, id)), acc);
  auto *counter = entry_alloca(i64());
  b_.CreateStore(u64c(0), counter);
  Value *mask0 = lane_mask();
  Value *limit = n.uni ? n.v
                       : b_.CreateIntrinsic(llvm::Intrinsic::vector_reduce_umax, {vec(i64())},
                                            {b_.CreateSelect(mask0, n.v, splat(u64c(0)))});
  BasicBlock *head = BasicBlock::Create(c_, "fold", fn_);
  BasicBlock *body = BasicBlock::Create(c_, "fold.body", fn_);
  BasicBlock *done = BasicBlock::Create(c_, "fold.done", fn_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  Value *k = b_.CreateLoad(i64(), counter);
  b_.CreateCondBr(b_.CreateICmpULT(k, limit), body, done);
  b_.SetInsertPoint(body);
  Access at = base;
  V step{b_.CreateMul(k, u64c(size)), true};
  at.off = lift({base.off, step}, [&](auto &v) { return b_.CreateAdd(v[0], v[1]); });
  // Lanes whose count is exhausted take no part in this step.
  Value *step_mask = n.uni ? mask0 : b_.CreateAnd(mask0, b_.CreateICmpULT(splat(k), n.v));
  b_.CreateStore(step_mask, mask_);
  V x = load(t, at);
  V cur{b_.CreateLoad(acc_ty, acc), uni};
  V next = fold(rop, t, cur, x);
  Value *nv = uni ? next.v : b_.CreateSelect(step_mask, splat(next), cur.v);
  b_.CreateStore(nv, acc);
  b_.CreateStore(mask0, mask_);
  b_.CreateStore(b_.CreateAdd(k, u64c(1)), counter);
  b_.CreateBr(head);
  b_.SetInsertPoint(done);
  set(inst, 0, t, {b_.CreateLoad(acc_ty, acc), uni});
  full_chunk_ = full;
}

void KernelLowering::emit_pool_alloc(const Instruction &inst) {
  // Per-lane launch scratch: lane l of the block owns [l * pool_bytes, (l+1) * pool_bytes)
  // after the chunks' saved states; every allocation site has a fixed place in it.
  const uint64_t size = inst.operands[1].imm;
  const uint64_t site = pool_offsets_.at(static_cast<size_t>(&inst - k_.insts.data()));
  Value *scratch = load_field(abi_.worker, worker_, WScratch, ptr());
  Value *chunks = b_.CreateUDiv(b_.CreateAdd(b_.CreateZExt(lanes_, i64()), u64c(w_ - 1)), u64c(w_));
  Value *states = b_.CreateMul(chunks, u64c(a_.has_barriers ? state_type_bytes() : 0));
  Value *lane_base =
      b_.CreateAdd(b_.CreateMul(b_.CreateZExt(lane_lin_, vec(i64())), splat(u64c(pool_bytes_))),
                   splat(b_.CreateAdd(states, u64c(site))));
  Value *addr = b_.CreateAdd(splat(b_.CreatePtrToInt(scratch, i64())), lane_base);
  for_each_active_lane([&](unsigned j) {
    Value *p = b_.CreateIntToPtr(b_.CreateExtractElement(addr, uint64_t{j}), ptr());
    b_.CreateMemSet(p, b_.getInt8(0), size, llvm::MaybeAlign(16));
  });
  set(inst, 0, Type::U64, {addr, false});
}

void KernelLowering::emit_launch_op(const Instruction &inst) {
  // Whole-launch kernels run as one lane; the runtime's library runs the operation with
  // every thread and the best vector code for the machine.
  const auto &row = inst.info();
  auto *regs = entry_alloca(llvm::ArrayType::get(i64(), std::max<size_t>(1, inst.operands.size())));
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    const Operand &op = inst.operands[i];
    Value *bits = u64c(0);
    if (op.kind == OperandKind::Reg && i < row.num_operands()) {
      const Type t = read_type(inst, row.role(i));
      if (t != Type::None) {
        V v = get(op.index, t);
        bits = bits64(lane_of(v, 0), t);
      }
    }
    b_.CreateStore(bits, b_.CreateConstGEP2_64(regs->getAllocatedType(), regs, 0, i));
  }
  auto *result = entry_alloca(i64());
  b_.CreateStore(u64c(0), result);
  Value *fn = load_field(abi_.launch, launch_, LLaunchOp, ptr());
  auto *fty = llvm::FunctionType::get(i32(), {ptr(), i32(), i32(), ptr(), ptr()}, false);
  Value *st = b_.CreateCall(fty, fn, {launch_, u32c(kernel_index_), u32c(cur_), regs, result});
  fail_if(b_.CreateICmpNE(st, u32c(0)), HG_CPU_ERR_LAUNCH_OP, cur_, nullptr);
  if (inst.op == Opcode::ReduceAll || inst.op == Opcode::Dot)
    set(inst, 0, inst.type, {from_bits64(b_.CreateLoad(i64(), result), inst.type), true});
}

void KernelLowering::emit_call(const Instruction &inst) {
  Value *mask = lane_mask();
  Value *sp = b_.CreateLoad(vec(i32()), sp_);
  fail_if(b_.CreateAnd(mask, b_.CreateICmpUGE(sp, splat(u32c(kMaxCallDepth)))),
          HG_CPU_ERR_CALL_DEPTH, cur_, nullptr);
  uint32_t ret = pc_of(a_.blocks[a_.block_of[cur_]].fallthrough);
  Value *slot = b_.CreateAdd(b_.CreateMul(sp, splat(u32c(w_))), iota32());
  Value *ptrs = b_.CreateGEP(i32(), stack_, {b_.CreateZExt(slot, vec(i64()))});
  b_.CreateMaskedScatter(splat(u32c(ret)), ptrs, llvm::Align(4), mask);
  b_.CreateStore(b_.CreateSelect(mask, b_.CreateAdd(sp, splat(u32c(1))), sp), sp_);
  set_pc(mask, splat(u32c(pc_of(a_.target_block(k_, inst.operands[0])))));
  b_.CreateBr(dispatch_);
}

void KernelLowering::emit_ret() {
  Value *mask = lane_mask();
  Value *sp = b_.CreateLoad(vec(i32()), sp_);
  fail_if(b_.CreateAnd(mask, b_.CreateICmpEQ(sp, splat(u32c(0)))), HG_CPU_ERR_RET_EMPTY, cur_,
          nullptr);
  Value *top = b_.CreateSelect(mask, b_.CreateSub(sp, splat(u32c(1))), sp);
  b_.CreateStore(top, sp_);
  Value *slot = b_.CreateAdd(b_.CreateMul(top, splat(u32c(w_))), iota32());
  Value *ptrs = b_.CreateGEP(i32(), stack_, {b_.CreateZExt(slot, vec(i64()))});
  Value *ret = b_.CreateMaskedGather(vec(i32()), ptrs, llvm::Align(4), mask,
                                     llvm::Constant::getNullValue(vec(i32())));
  set_pc(mask, ret);
  b_.CreateBr(dispatch_);
}

llvm::Function *KernelLowering::emit_driver(const std::string &symbol, llvm::Function *chunk) {
  auto *fty = llvm::FunctionType::get(i32(), {ptr(), ptr(), i64(), i64()}, false);
  auto *f = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage, symbol, m_);
  f->addParamAttr(0, llvm::Attribute::NoAlias);
  f->addParamAttr(1, llvm::Attribute::NoAlias);
  auto arg = f->arg_begin();
  Value *launch = arg++, *worker = arg++, *first = arg++, *end = arg++;
  b_.SetInsertPoint(BasicBlock::Create(c_, "entry", f));
  if (di_) {
    auto *type = di_->createSubroutineType(di_->getOrCreateTypeArray({}));
    auto *sp =
        di_->createFunction(di_cu_, k_.name, symbol, di_file_, k_.loc.line, type, k_.loc.line,
                            llvm::DINode::FlagZero, llvm::DISubprogram::SPFlagDefinition);
    f->setSubprogram(sp);
    b_.SetCurrentDebugLocation(llvm::DILocation::get(c_, k_.loc.line, k_.loc.col, sp));
  }
  auto dim = [&](unsigned field, unsigned d) {
    Value *p = b_.CreateConstGEP2_32(abi_.launch, launch, 0, field);
    return b_.CreateZExt(b_.CreateLoad(i32(), b_.CreateConstGEP1_32(i32(), p, d)), i64());
  };
  Value *gx = dim(LGrid, 0), *gy = dim(LGrid, 1);
  Value *lanes = b_.CreateMul(b_.CreateMul(dim(LBlock, 0), dim(LBlock, 1)), dim(LBlock, 2));
  Value *chunks = b_.CreateUDiv(b_.CreateAdd(lanes, u64c(w_ - 1)), u64c(w_));
  Value *shared = b_.CreateLoad(ptr(), b_.CreateStructGEP(abi_.worker, worker, WShared));
  Value *shared_size = b_.CreateLoad(i64(), b_.CreateStructGEP(abi_.worker, worker, WSharedSize));
  Value *scratch = b_.CreateLoad(ptr(), b_.CreateStructGEP(abi_.worker, worker, WScratch));
  const uint64_t state_size = a_.has_barriers ? state_type_bytes() : 0;

  BasicBlock *entry = b_.GetInsertBlock();
  BasicBlock *block_head = BasicBlock::Create(c_, "block", f);
  BasicBlock *block_body = BasicBlock::Create(c_, "block.body", f);
  BasicBlock *done = BasicBlock::Create(c_, "done", f);
  b_.CreateBr(block_head);
  b_.SetInsertPoint(block_head);
  auto *b = b_.CreatePHI(i64(), 2, "block.linear");
  b->addIncoming(first, entry);
  b_.CreateCondBr(b_.CreateICmpULT(b, end), block_body, done);

  b_.SetInsertPoint(block_body);
  Value *bx = b_.CreateTrunc(b_.CreateURem(b, gx), i32());
  Value *by = b_.CreateTrunc(b_.CreateURem(b_.CreateUDiv(b, gx), gy), i32());
  Value *bz = b_.CreateTrunc(b_.CreateUDiv(b, b_.CreateMul(gx, gy)), i32());
  if (k_.shared_bytes > 0 || a_.has_barriers || uses_shared()) {
    b_.CreateMemSet(shared, b_.getInt8(0), shared_size, llvm::MaybeAlign(1));
  }
  Value *next_block = b_.CreateAdd(b, u64c(1));

  auto call_chunk = [&](Value *c, Value *state) {
    return b_.CreateCall(chunk, {launch, worker, b, bx, by, bz, b_.CreateTrunc(c, i32()), state});
  };
  auto fail = [&](Value *kind, Value *inst, Value *lane) {
    Value *err = b_.CreateStructGEP(abi_.worker, worker, WError);
    auto store = [&](unsigned fld, Value *v) {
      b_.CreateStore(v, b_.CreateStructGEP(abi_.error, err, fld));
    };
    store(0, kind);
    store(1, inst);
    store(2, lane);
    store(3, u64c(0));
    store(4, u64c(0));
    store(5, b_.getInt32(0));
    b_.CreateRet(b_.getInt32(-1));
  };

  if (!a_.has_barriers) {
    // Every chunk of the block runs to completion in turn.
    BasicBlock *body = b_.GetInsertBlock();
    BasicBlock *head = BasicBlock::Create(c_, "chunk", f);
    BasicBlock *run = BasicBlock::Create(c_, "chunk.run", f);
    BasicBlock *ok = BasicBlock::Create(c_, "chunk.ok", f);
    BasicBlock *bad = BasicBlock::Create(c_, "chunk.failed", f);
    BasicBlock *next = BasicBlock::Create(c_, "block.next", f);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    auto *c = b_.CreatePHI(i64(), 2, "chunk");
    c->addIncoming(u64c(0), body);
    b_.CreateCondBr(b_.CreateICmpULT(c, chunks), run, next);
    b_.SetInsertPoint(run);
    Value *r = call_chunk(c, llvm::ConstantPointerNull::get(ptr()));
    b_.CreateCondBr(b_.CreateICmpEQ(r, b_.getInt32(0)), ok, bad);
    b_.SetInsertPoint(bad);
    b_.CreateRet(r);
    b_.SetInsertPoint(ok);
    c->addIncoming(b_.CreateAdd(c, u64c(1)), ok);
    b_.CreateBr(head);
    b_.SetInsertPoint(next);
    b->addIncoming(next_block, next);
    b_.CreateBr(block_head);
  } else {
    // Phases: every chunk runs until it parks at the barrier (or finishes); all must agree.
    b_.CreateMemSet(scratch, b_.getInt8(0), b_.CreateMul(chunks, u64c(state_size)),
                    llvm::MaybeAlign(16));
    BasicBlock *phase = BasicBlock::Create(c_, "phase", f);
    BasicBlock *first_ok = BasicBlock::Create(c_, "phase.first", f);
    BasicBlock *bad = BasicBlock::Create(c_, "phase.failed", f);
    BasicBlock *head = BasicBlock::Create(c_, "phase.chunk", f);
    BasicBlock *run = BasicBlock::Create(c_, "phase.run", f);
    BasicBlock *agree = BasicBlock::Create(c_, "phase.agree", f);
    BasicBlock *differ = BasicBlock::Create(c_, "phase.differ", f);
    BasicBlock *end_phase = BasicBlock::Create(c_, "phase.end", f);
    BasicBlock *next = BasicBlock::Create(c_, "block.next", f);
    b_.CreateBr(phase);
    b_.SetInsertPoint(phase);
    Value *r0 = call_chunk(u64c(0), scratch);
    b_.CreateCondBr(b_.CreateICmpSLT(r0, b_.getInt32(0)), bad, first_ok);
    b_.SetInsertPoint(bad);
    auto *failed = b_.CreatePHI(i32(), 2);
    failed->addIncoming(r0, phase);
    b_.CreateRet(failed);
    b_.SetInsertPoint(first_ok);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    auto *c = b_.CreatePHI(i64(), 2, "chunk");
    c->addIncoming(u64c(1), first_ok);
    b_.CreateCondBr(b_.CreateICmpULT(c, chunks), run, end_phase);
    b_.SetInsertPoint(run);
    Value *r = call_chunk(c, b_.CreateGEP(i8(), scratch, {b_.CreateMul(c, u64c(state_size))}));
    BasicBlock *run_tail = b_.GetInsertBlock();
    BasicBlock *check = BasicBlock::Create(c_, "phase.check", f);
    b_.CreateCondBr(b_.CreateICmpSLT(r, b_.getInt32(0)), bad, check);
    failed->addIncoming(r, run_tail);
    b_.SetInsertPoint(check);
    b_.CreateCondBr(b_.CreateICmpEQ(r, r0), agree, differ);
    b_.SetInsertPoint(differ);
    {
      // One chunk finished while another waits, or they wait at different barriers.
      Value *exited =
          b_.CreateOr(b_.CreateICmpEQ(r, b_.getInt32(0)), b_.CreateICmpEQ(r0, b_.getInt32(0)));
      Value *kind = b_.CreateSelect(exited, b_.getInt32(HG_CPU_ERR_BARRIER_EXITED),
                                    b_.getInt32(HG_CPU_ERR_BARRIER_MISMATCH));
      Value *waiting = b_.CreateSelect(b_.CreateICmpEQ(r0, b_.getInt32(0)), r, r0);
      Value *rank = b_.CreateZExt(b_.CreateSub(waiting, b_.getInt32(1)), i64());
      Value *inst = b_.CreateLoad(i32(), b_.CreateGEP(i32(), barrier_table_, {rank}));
      Value *lane_chunk = b_.CreateSelect(b_.CreateICmpEQ(r0, b_.getInt32(0)), u64c(0), c);
      Value *lane = b_.CreateAdd(b_.CreateMul(b, lanes), b_.CreateMul(lane_chunk, u64c(w_)));
      fail(kind, inst, lane);
    }
    b_.SetInsertPoint(agree);
    c->addIncoming(b_.CreateAdd(c, u64c(1)), agree);
    b_.CreateBr(head);
    b_.SetInsertPoint(end_phase);
    b_.CreateCondBr(b_.CreateICmpEQ(r0, b_.getInt32(0)), next, phase);
    b_.SetInsertPoint(next);
    b->addIncoming(next_block, next);
    b_.CreateBr(block_head);
  }
  b_.SetInsertPoint(done);
  if (stream_size_) {
    // Non-temporal stores are weakly ordered: fence them before the runtime learns that these
    // blocks are done, when this launch is big enough for any store to have streamed.
    Value *limit = b_.CreateLoad(i64(), b_.CreateStructGEP(abi_.launch, launch, LStreamBytes));
    Value *launch_lanes = b_.CreateMul(b_.CreateMul(gx, gy), b_.CreateMul(dim(LGrid, 2), lanes));
    Value *streamed = launch_streams(limit, launch_lanes, *stream_size_);
    BasicBlock *fence = BasicBlock::Create(c_, "sfence", f);
    BasicBlock *ret = BasicBlock::Create(c_, "return", f);
    b_.CreateCondBr(streamed, fence, ret);
    b_.SetInsertPoint(fence);
    b_.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
    b_.CreateBr(ret);
    b_.SetInsertPoint(ret);
  }
  b_.CreateRet(b_.getInt32(0));
  return f;
}

} // namespace

LoweredKernel lower_kernel(llvm::Module &module, const AbiTypes &abi, const Kernel &kernel,
                           uint32_t kernel_index, const CpuTarget &target,
                           const CpuOptions &options, const std::string &symbol) {
  return KernelLowering(module, abi, kernel, kernel_index, target, options).run(symbol);
}

} // namespace hologram::codegen::detail
