// SPMD on SIMD (SPEC §7): one kernel becomes a function that runs a range of blocks; inside a
// block, lanes run in chunks of the target's SIMD width. A chunk executes the kernel's blocks
// under a lane mask, scheduled by the smallest per-lane program counter in the reconvergence
// order of opt::LaneAnalysis (lanes waiting at a later block run when the earlier ones get
// there). Uniform values and branches stay scalar; a block that all live lanes run together
// branches directly, and a lane-varying branch whose lanes all agree does too, so the
// scheduler only runs where lanes really diverge. A barrier parks its lanes; when a chunk has
// no runnable lane left it saves its state and the block driver runs the next chunk, so every
// chunk reaches the barrier before any passes it (the kernel splits into phases).
#include "kernel_lowering.h"

namespace hologram::codegen::detail {

AbiTypes::AbiTypes(llvm::LLVMContext &c) {
  auto *ptr = llvm::PointerType::get(c, 0);
  auto *i32 = llvm::Type::getInt32Ty(c);
  auto *i64 = llvm::Type::getInt64Ty(c);
  auto *dim = llvm::ArrayType::get(i32, 3);
  launch = llvm::StructType::create(
      c, {ptr, ptr, dim, dim, ptr, ptr, ptr, i32, i32, ptr, ptr, ptr, i64}, "hg_cpu_launch");
  error = llvm::StructType::create(c, {i32, i32, i64, i64, i64, i32, i32}, "hg_cpu_error");
  worker = llvm::StructType::create(c, {ptr, i64, ptr, i64, error}, "hg_cpu_worker");
}

// ---------------------------------------------------------------------------------------------
// Types and constants

auto KernelLowering::iota32() -> Value * {
  std::vector<llvm::Constant *> c;
  for (unsigned i = 0; i < w_; ++i) c.push_back(b_.getInt32(i));
  return llvm::ConstantVector::get(c);
}

auto KernelLowering::iota64(uint64_t step) -> Value * {
  std::vector<llvm::Constant *> c;
  for (unsigned i = 0; i < w_; ++i) c.push_back(b_.getInt64(i * step));
  return llvm::ConstantVector::get(c);
}

// ---------------------------------------------------------------------------------------------
// Pools and state layout

auto KernelLowering::plan_pools() -> void {
  addressed_ = handle::addressed_params(k_);
  for (const auto &inst : k_.insts)
    if (inst.op == Opcode::PoolAlloc) {
      pool_offsets_[&inst - k_.insts.data()] = pool_bytes_;
      pool_bytes_ += (inst.operands[1].imm + 15) & ~uint64_t{15};
    }
}

// ---------------------------------------------------------------------------------------------
// Debug info

auto KernelLowering::begin_debug_info() -> void {
  di_ = std::make_unique<llvm::DIBuilder>(m_);
  std::string path = opts_.source_name.empty() ? "<stdin>" : opts_.source_name;
  auto slash = path.rfind('/');
  di_file_ = di_->createFile(slash == std::string::npos ? path : path.substr(slash + 1),
                             slash == std::string::npos ? "." : path.substr(0, slash));
  di_cu_ =
      di_->createCompileUnit(llvm::dwarf::DW_LANG_C, di_file_, "hologram-cc", opts_.opt_level > 0,
                             "", 0, "", llvm::DICompileUnit::LineTablesOnly);
}

auto KernelLowering::attach_subprogram(llvm::Function *f) -> void {
  if (!di_) return;
  auto *type = di_->createSubroutineType(di_->getOrCreateTypeArray({}));
  auto *sp =
      di_->createFunction(di_cu_, k_.name, f->getName(), di_file_, k_.loc.line, type, k_.loc.line,
                          llvm::DINode::FlagZero, llvm::DISubprogram::SPFlagDefinition);
  f->setSubprogram(sp);
  b_.SetCurrentDebugLocation(llvm::DILocation::get(c_, k_.loc.line, k_.loc.col, sp));
}

auto KernelLowering::set_location(const Instruction &inst) -> void {
  if (!di_) return;
  auto *sp = b_.GetInsertBlock()->getParent()->getSubprogram();
  b_.SetCurrentDebugLocation(llvm::DILocation::get(c_, inst.loc.line, inst.loc.col, sp));
}

// ---------------------------------------------------------------------------------------------
// The chunk function

auto KernelLowering::emit_chunk(const std::string &name) -> llvm::Function * {
  auto *fty = llvm::FunctionType::get(i32(),
                                      {ptr(), ptr(), i64(), i32(), i32(), i32(), i32(), i64(),
                                       ptr(), i1(), i1(), i1(), i1(), ptr(), i1()},
                                      false);
  fn_ = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage, name, m_);
  if (!a_.has_barriers) fn_->addFnAttr(llvm::Attribute::AlwaysInline);
  fn_->addParamAttr(0, llvm::Attribute::NoAlias);
  fn_->addParamAttr(1, llvm::Attribute::NoAlias);
  auto arg = fn_->arg_begin();
  launch_ = arg++;
  worker_ = arg++;
  first_gid_ = arg++;
  span_lanes_ = arg++;
  bx_ = arg++;
  by_ = arg++;
  bz_ = arg++;
  chunk64_ = arg++;
  state_ = arg++;
  block_whole_ = arg++;
  block_goes_on_ = arg++;
  may_stream_ = arg++;
  reporting_lined_ = arg++;
  leaves_from_ = arg++;
  answered_ = arg++;

  entry_ = BasicBlock::Create(c_, "entry", fn_);
  b_.SetInsertPoint(entry_);
  attach_subprogram(fn_);
  create_allocas();
  // A span has at most 2^30 lanes (the runtime refuses bigger blocks, the driver bigger
  // spans): the chunk number fits in 32 bits.
  chunk_ = b_.CreateTrunc(chunk64_, i32(), "chunk", /*IsNUW=*/true, /*IsNSW=*/true);
  emit_specials();

  dispatch_ = BasicBlock::Create(c_, "dispatch", fn_);
  exit_all_ = BasicBlock::Create(c_, "exit.lanes", fn_);
  for (uint32_t r = 0; r < a_.order.size(); ++r)
    bbs_.push_back(BasicBlock::Create(c_, "b" + std::to_string(a_.order[r]), fn_));
  bb_of_.resize(a_.blocks.size());
  for (uint32_t r = 0; r < a_.order.size(); ++r) bb_of_[a_.order[r]] = bbs_[r];
  first_block_once_ = std::ranges::none_of(a_.blocks, [](const opt::LaneBlock &bb) {
    return std::ranges::find(bb.succs, 0u) != bb.succs.end();
  });
  plan_predication();
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

auto KernelLowering::emit_streaming_chunk(const std::string &name) -> StreamingChunk {
  if (opts_.debug_info) begin_debug_info();
  plan_pools();
  reports_address_ = true;
  llvm::Function *f = emit_chunk(name);
  if (di_) di_->finalize();
  return {f, reporting_element_};
}

auto KernelLowering::emit_probe_chunk(const std::string &name) -> llvm::Function * {
  if (opts_.debug_info) begin_debug_info();
  plan_pools();
  probe_ = true;
  llvm::Function *f = emit_chunk(name);
  if (di_) di_->finalize();
  return f;
}

auto KernelLowering::create_allocas() -> void {
  for (const auto &s : a_.slots) {
    bool uni = !a_.is_varying(s);
    llvm::Type *t = scalar_type(s.type);
    auto *slot = b_.CreateAlloca(uni ? t : vec(t), nullptr, slot_name(s));
    slots_[s] = {slot, uni};
  }
  pc_ = b_.CreateAlloca(vec(i32()), nullptr, "pc");
  goes_on_ = b_.CreateAlloca(i32(), nullptr, "block.goes.on");
  b_.CreateStore(u32c(0), goes_on_);
  mask_ = b_.CreateAlloca(vec(i1()), nullptr, "mask");
  branch_mask_ = b_.CreateAlloca(vec(i1()), nullptr, "branch.mask");
  if (a_.has_calls) {
    stack_ = b_.CreateAlloca(llvm::ArrayType::get(i32(), kMaxCallDepth * w_), nullptr, "stack");
    sp_ = b_.CreateAlloca(vec(i32()), nullptr, "sp");
  }
}

auto KernelLowering::slot_name(const opt::Slot &s) -> std::string {
  return s.pred ? "p" + std::to_string(s.reg)
                : "r" + std::to_string(s.reg) + "." + std::string(type_name(s.type));
}

auto KernelLowering::load_field(llvm::StructType *st, Value *base, unsigned field, llvm::Type *t,
                                const char *name) -> Value * {
  return invariant(b_.CreateLoad(t, b_.CreateStructGEP(st, base, field), name));
}

auto KernelLowering::invariant(llvm::LoadInst *load) -> Value * {
  load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(c_, {}));
  return load;
}

auto KernelLowering::launch_dim(unsigned field, unsigned d) -> Value * {
  // --block: the block's size is a constant of the code (the runtime refuses other launches).
  if (field == LBlock && opts_.block[0] != 0) return u32c(opts_.block[d]);
  Value *p = b_.CreateConstGEP2_32(abi_.launch, launch_, 0, field);
  return invariant(b_.CreateLoad(i32(), b_.CreateConstGEP1_32(i32(), p, d)));
}

auto KernelLowering::emit_specials() -> void {
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
  rows_whole_ = b_.CreateOr(b_.CreateICmpEQ(b_.CreateMul(bdy_, bdz_), u32c(1)),
                            b_.CreateICmpEQ(b_.CreateURem(bdx_, u32c(w_)), u32c(0)), "rows.whole");
  // A span has at most 2^30 lanes, so no lane's number wraps. In a span of several blocks the
  // lane's number counts across them (no lane coordinate is read there).
  lane_lin_ = b_.CreateAdd(splat(chunk_first_lane()), iota32(), "lane.linear", true, true);
  // The chunk's lanes in the span: a prefix, made from its count (prefix_mask).
  valid_ = prefix_mask(b_.CreateZExt(lanes_below(chunk_first_lane(), span_lanes_), i64()), "valid");
  // A span of whole chunks (block_whole_, from the driver, which runs such spans in a loop
  // of its own where it is a constant) has only full chunks.
  chunk_full_ = b_.CreateOr(
      block_whole_,
      b_.CreateICmpULE(b_.CreateMul(b_.CreateAdd(chunk_, u32c(1)), u32c(w_)), span_lanes_),
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

auto KernelLowering::special(Special s) -> V {
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
  case Special::Gid: // the chunk's first id in scalar arithmetic, then one vector add
    return {b_.CreateAdd(splat(chunk_first_gid()), iota64(1)), false};
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

auto KernelLowering::chunk_first_lane() -> Value * {
  return b_.CreateMul(chunk_, u32c(w_), "chunk.first", true, true);
}

auto KernelLowering::chunk_first_gid() -> Value * {
  return b_.CreateAdd(first_gid_, b_.CreateMul(chunk64_, u64c(w_), "chunk.first", true, true));
}

auto KernelLowering::lanes_below(Value *first, Value *bound) -> Value * {
  llvm::Type *t = first->getType();
  Value *gap = b_.CreateSub(bound, first);
  return b_.CreateSelect(
      b_.CreateICmpULT(first, bound),
      b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, gap, llvm::ConstantInt::get(t, w_)),
      llvm::ConstantInt::get(t, 0));
}

auto KernelLowering::gid_axis(Value *block, Value *dim, Value *lane) -> Value * {
  Value *base = b_.CreateMul(b_.CreateZExt(block, i64()), b_.CreateZExt(dim, i64()));
  return b_.CreateAdd(splat(base), b_.CreateZExt(lane, vec(i64())));
}

auto KernelLowering::global_lane(Value *index) -> Value * {
  Value *ll = b_.CreateExtractElement(lane_lin_, index);
  return b_.CreateAdd(first_gid_, b_.CreateZExt(ll, i64()));
}

// ---------------------------------------------------------------------------------------------
// Entry, saved state, scheduler

auto KernelLowering::state_type() -> llvm::StructType * {
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

auto KernelLowering::save_state() -> void {
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

auto KernelLowering::restore_state() -> void {
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

auto KernelLowering::emit_entry_state() -> void {
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

auto KernelLowering::emit_dispatcher() -> void {
  b_.SetInsertPoint(dispatch_);
  Value *pc = b_.CreateLoad(vec(i32()), pc_, "pcs");
  Value *next = b_.CreateIntrinsic(llvm::Intrinsic::vector_reduce_umin, {vec(i32())}, {pc});
  BasicBlock *finished = BasicBlock::Create(c_, "finished", fn_);
  BasicBlock *pick = BasicBlock::Create(c_, "pick", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(next, u32c(kExitPc)), finished, pick);
  b_.SetInsertPoint(finished);
  finish();
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

auto KernelLowering::emit_suspend(Value *pc, Value *parked) -> void {
  Value *exited = b_.CreateAnd(valid_, b_.CreateICmpEQ(pc, splat(u32c(kExitPc))));
  Value *elsewhere = b_.CreateAnd(valid_, b_.CreateICmpNE(pc, splat(parked)));
  fail_if(exited, HG_CPU_ERR_BARRIER_EXITED, inst_of_parked(parked), nullptr, 0, 0);
  fail_if(elsewhere, HG_CPU_ERR_BARRIER_MISMATCH, inst_of_parked(parked), nullptr, 0, 0);
  save_state();
  b_.CreateRet(b_.CreateAdd(b_.CreateAnd(parked, u32c(~kParkBit)), u32c(1)));
}

auto KernelLowering::inst_of_parked(Value *parked) -> Value * {
  if (!barrier_table_) {
    std::vector<llvm::Constant *> table;
    for (uint32_t r = 0; r <= a_.order.size(); ++r) {
      uint32_t begin = r < a_.order.size() ? a_.blocks[a_.order[r]].begin
                                           : static_cast<uint32_t>(k_.insts.size());
      table.push_back(b_.getInt32(begin ? begin - 1 : 0));
    }
    auto *ty = llvm::ArrayType::get(i32(), table.size());
    barrier_table_ =
        new llvm::GlobalVariable(m_, ty, true, llvm::GlobalValue::PrivateLinkage,
                                 llvm::ConstantArray::get(ty, table), fn_->getName() + ".barriers");
  }
  Value *r = b_.CreateZExt(b_.CreateAnd(parked, u32c(~kParkBit)), i64());
  return b_.CreateLoad(i32(), b_.CreateGEP(i32(), barrier_table_, {r}));
}

auto KernelLowering::emit_exit_lanes() -> void {
  b_.SetInsertPoint(exit_all_);
  Value *mask = lane_mask();
  set_pc(mask, splat(u32c(kExitPc)));
  b_.CreateBr(dispatch_);
}

auto KernelLowering::set_pc(Value *mask, Value *target) -> void {
  Value *pc = b_.CreateLoad(vec(i32()), pc_);
  b_.CreateStore(b_.CreateSelect(mask, target, pc), pc_);
}

auto KernelLowering::pc_of(uint32_t block) const -> uint32_t {
  return block == opt::kExitBlock ? kExitPc : a_.rank[block];
}

// ---------------------------------------------------------------------------------------------
// Errors

auto KernelLowering::fail_if(Value *bad, int32_t kind, Value *inst, Value *value, uint64_t size,
                             int32_t region) -> void {
  fail_if(bad, kind, inst, value, size, b_.getInt32(static_cast<uint32_t>(region)));
}

auto KernelLowering::fail_if(Value *bad, int32_t kind, Value *inst, Value *value, uint64_t size,
                             Value *region) -> void {
  effects_ = true;
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
  store(5, region->getType()->isVectorTy() ? b_.CreateExtractElement(region, lane) : region);
  b_.CreateRet(b_.getInt32(-1));
  b_.SetInsertPoint(ok);
}

auto KernelLowering::fail_if(Value *bad, int32_t kind, uint32_t inst, Value *value, uint64_t size,
                             int32_t region) -> void {
  fail_if(bad, kind, u32c(inst), value, size, region);
}

auto KernelLowering::entry_alloca(llvm::Type *t) -> llvm::AllocaInst * {
  llvm::IRBuilder<> entry(entry_, entry_->getFirstInsertionPt());
  return entry.CreateAlloca(t);
}

auto KernelLowering::active(Value *cond) -> Value * {
  if (!cond->getType()->isVectorTy()) return cond;
  return b_.CreateAnd(cond, lane_mask());
}

// ---------------------------------------------------------------------------------------------
// Registers

auto KernelLowering::get(Reg r, Type t) -> V {
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
  return {b_.CreateLoad(it->second.alloca->getAllocatedType(), it->second.alloca), it->second.uni};
}

auto KernelLowering::get_pred(unsigned p) -> V {
  auto it = slots_.find({true, static_cast<Reg>(p), Type::Pred});
  if (it == slots_.end()) return {b_.getFalse(), true};
  return {b_.CreateLoad(it->second.alloca->getAllocatedType(), it->second.alloca), it->second.uni};
}

auto KernelLowering::put(const opt::Slot &s, V v) -> void {
  const SlotInfo &info = slots_.at(s);
  if (info.uni) {
    if (!v.uni) throw LoweringError("a lane-varying value written to uniform slot " + slot_name(s));
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

auto KernelLowering::set(const Instruction &inst, size_t i, Type t, V v) -> void {
  put({false, inst.operands[i].index, t}, v);
}

auto KernelLowering::set_pred(unsigned p, V v) -> void {
  ends_of_pred_.erase(p);
  put({true, static_cast<Reg>(p), Type::Pred}, v);
}

// ---------------------------------------------------------------------------------------------
// Blocks

auto KernelLowering::lane_mask() -> Value * {
  if (full_chunk_) return llvm::Constant::getAllOnesValue(vec(i1()));
  return b_.CreateLoad(vec(i1()), mask_);
}

auto KernelLowering::version_for_full_chunks(const opt::LaneBlock &bb) -> bool {
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

auto KernelLowering::bb_index(const opt::LaneBlock &bb) const -> uint32_t {
  return static_cast<uint32_t>(&bb - a_.blocks.data());
}

auto KernelLowering::emit_block(uint32_t block) -> void {
  const opt::LaneBlock &bb = a_.blocks[block];
  cur_block_ = block;
  b_.SetInsertPoint(bb_of_[block]);
  divergent_ = a_.divergent[block];
  if (probe_ && block != 0) {
    // The probe has returned at the first block's check, or found none: nothing more runs.
    finish();
    if (BasicBlock *full = full_bb_[block]) {
      b_.SetInsertPoint(full);
      finish();
    }
    return;
  }
  if (BasicBlock *full = full_bb_[block]) {
    BasicBlock *part = BasicBlock::Create(c_, "part", fn_);
    // The kernel's first block, when no branch returns to it, starts with the chunk's valid
    // lanes: whether all are valid is a scalar comparison.
    Value *all_live =
        block == 0 && first_block_once_ ? chunk_full_ : b_.CreateAndReduce(lane_mask());
    b_.CreateCondBr(all_live, full, part);
    b_.SetInsertPoint(full);
    full_chunk_ = true;
    emit_block_body(bb);
    full_chunk_ = false;
    b_.SetInsertPoint(part);
  }
  emit_block_body(bb);
}

auto KernelLowering::emit_block_body(const opt::LaneBlock &bb) -> void {
  ends_of_pred_.clear();
  effects_ = false;
  for (uint32_t i = bb.begin; i < bb.end; ++i) {
    cur_ = i;
    set_location(k_.insts[i]);
    try {
      if (const uint32_t chain = chain_length_[i]; chain > 1) {
        emit_launch_ops(i, chain);
        i += chain - 1;
      } else {
        emit_instruction(k_.insts[i]);
      }
      effects_ = effects_ || !k_.insts[i].info().pure();
    } catch (const LoweringError &e) {
      if (e.loc.line != 0) throw;
      throw LoweringError(e.what(), k_.insts[i].loc);
    }
    if (b_.GetInsertBlock()->getTerminator()) return; // the instruction ended the block
  }
  // Falls through to the next block (or off the end of the kernel).
  jump(bb.fallthrough);
}

auto KernelLowering::plan_predication() -> void {
  predicated_.assign(a_.blocks.size(), false);
  if (a_.has_calls) return;
  std::vector<uint32_t> preds(a_.blocks.size(), 0);
  for (const opt::LaneBlock &bb : a_.blocks)
    for (uint32_t s : bb.succs)
      if (s != opt::kExitBlock) ++preds[s];
  for (uint32_t b = 0; b < a_.blocks.size(); ++b) {
    const opt::LaneBlock &bb = a_.blocks[b];
    if (a_.divergent[b] || bb.end == bb.begin) continue;
    const Instruction &last = k_.insts[bb.end - 1];
    if (last.op != Opcode::Bra || !last.guard.present) continue;
    const uint32_t f = bb.fallthrough, t = a_.target_block(k_, last.operands[0]);
    if (f == opt::kExitBlock || t == opt::kExitBlock || f == t || preds[f] != 1) continue;
    const opt::LaneBlock &fb = a_.blocks[f];
    if (fb.fallthrough != t || fb.end == fb.begin || a_.exits_at(k_, t)) continue;
    bool maskable = true;
    for (uint32_t i = fb.begin; i < fb.end && maskable; ++i) {
      const OpcodeInfo &row = k_.insts[i].info();
      maskable = !row.ends_lane_block() && !row.launch_level();
    }
    predicated_[f] = maskable;
  }
}

auto KernelLowering::jump(uint32_t target) -> void {
  if (predicated_[cur_block_]) {
    // The end of a predicated block: every lane of the branch in front of it goes on.
    b_.CreateStore(b_.CreateLoad(vec(i1()), branch_mask_), mask_);
    b_.CreateBr(bb_of(target));
    return;
  }
  if (!divergent_ && !a_.has_barriers && !a_.has_calls && a_.exits_at(k_, target)) {
    finish(); // every live lane of the chunk is here, and all finish
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

namespace {

/// For an ordering of %gid against a bound (`%gid cc bound`, or `bound cc %gid` where `grows`
/// is 2): whether the point where its lanes' answer changes is just past the bound (%gid <=
/// bound, %gid > bound) rather than at it (%gid < bound, %gid >= bound). None for a
/// comparison that is not an ordering.
std::optional<bool> changes_past_bound(CmpCode cc, size_t grows) {
  switch (cc) {
  case CmpCode::Lt:
  case CmpCode::Ge: return grows == 2;
  case CmpCode::Le:
  case CmpCode::Gt: return grows != 2;
  case CmpCode::Eq:
  case CmpCode::Ne:
  case CmpCode::Equ:
  case CmpCode::Neu:
  case CmpCode::Ltu:
  case CmpCode::Leu:
  case CmpCode::Gtu:
  case CmpCode::Geu: return std::nullopt;
  }
  return std::nullopt;
}

} // namespace

auto KernelLowering::first_run(CmpCode cc, size_t grows, Value *first, V y) -> Value * {
  // %gid < y (and its negation >=) changes at y, %gid <= y (and >) just past it; `y cc %gid`
  // is %gid compared the other way round. A span whose first lane is at or past that point
  // agrees in every lane (%gid does not wrap: the runtime's lanes stay below 2^62); one before
  // it agrees up to it.
  const std::optional<bool> past = changes_past_bound(cc, grows);
  if (!past || !y.uni) return nullptr;
  const bool after = *past;
  // %gid is u64 (a special register is read in its own type only): t is unsigned.
  Value *before = after ? b_.CreateICmpULE(first, y.v) : b_.CreateICmpULT(first, y.v);
  Value *lanes = b_.CreateSub(y.v, first);
  if (after) // y - first + 1, saturated (y may be the type's largest value)
    lanes = b_.CreateAdd(lanes, b_.CreateZExt(b_.CreateICmpNE(lanes, u64c(UINT64_MAX)), i64()));
  Value *span = b_.CreateZExt(span_lanes_, i64());
  return b_.CreateSelect(before, b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, lanes, span), span,
                         "first.run");
}

auto KernelLowering::gid_prefix(const Instruction &set) -> Value * {
  if (set.type != isa::Type::U64) return nullptr;
  const isa::Operand &x = set.operands[1], &y = set.operands[2];
  auto is_gid = [&](const isa::Operand &o) {
    return o.kind == isa::OperandKind::Reg && o.index == special_reg(Special::Gid);
  };
  const size_t grows = is_gid(x) ? 1 : is_gid(y) ? 2 : 0;
  if (grows == 0) return nullptr;
  const V bound = src(set, 3 - grows, set.type);
  if (!bound.uni) return nullptr;
  // Whether the point where the comparison changes is just past the bound (<=, >) or at it
  // (<, >=), and whether it holds below that point (%gid < or <= bound, read with %gid
  // first) or at and past it.
  const auto cc = static_cast<CmpCode>(set.sub);
  const std::optional<bool> past = changes_past_bound(cc, grows);
  if (!past) return nullptr;
  const bool inclusive = *past;
  const bool below = (cc == CmpCode::Lt || cc == CmpCode::Le) == (grows == 1);
  // The lanes below the point: those below the bound, or where it is just past the bound,
  // none where the chunk's first is past it, else bound - g0 + 1, at most w (which would wrap
  // for a bound of 2^64 - 1 and g0 = 0).
  Value *g0 = chunk_first_gid();
  Value *lanes =
      inclusive ? b_.CreateSelect(b_.CreateICmpULE(g0, bound.v),
                                  b_.CreateAdd(b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin,
                                                                        b_.CreateSub(bound.v, g0),
                                                                        u64c(w_ - 1)),
                                               u64c(1)),
                                  u64c(0))
                : lanes_below(g0, bound.v);
  Value *mask = prefix_mask(lanes, "gid.below");
  return below ? mask : b_.CreateNot(mask);
}

auto KernelLowering::masks_in_registers() const -> bool {
  // Every AVX-512 CPU LLVM knows has BMI2's bzhi; a target without it keeps the compares.
  const bool bzhi = std::ranges::find(target_.features, "bmi2") != target_.features.end();
  return target_.width >= 16 && w_ <= 64 && bzhi;
}

auto KernelLowering::prefix_mask(Value *lanes, const llvm::Twine &name) -> Value * {
  if (!masks_in_registers())
    return b_.CreateICmpULT(iota32(), splat(b_.CreateTrunc(lanes, i32())), name);
  Value *bits = b_.CreateIntrinsic(llvm::Intrinsic::x86_bmi_bzhi_64, {}, {u64c(UINT64_MAX), lanes});
  return b_.CreateBitCast(b_.CreateTrunc(bits, b_.getIntNTy(w_)),
                          llvm::FixedVectorType::get(i1(), w_), name);
}

auto KernelLowering::agreeing_chunks(Value *run, Value *agrees) -> Value * {
  if (!run) return b_.CreateSelect(agrees, b_.CreateUDiv(span_lanes_, u32c(w_)), u32c(0));
  Value *chunks = b_.CreateTrunc(b_.CreateUDiv(run, u64c(w_)), i32());
  return b_.CreateSelect(block_whole_, chunks, u32c(0), "agreeing.chunks");
}

auto KernelLowering::monotone_in_chunk(const Instruction &set) const -> bool {
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

auto KernelLowering::same_in_every_chunk(const isa::RegAccess &use, uint32_t at) -> bool {
  if (!use.pred && isa::is_special(use.reg))
    return !isa::special_varies_in_block(isa::reg_special(use.reg));
  std::vector<isa::RegAccess> found;
  for (uint32_t i = at; i-- > a_.blocks[0].begin;) {
    found.clear();
    isa::instruction_defs(k_.insts[i], found);
    if (std::ranges::any_of(
            found, [&](const isa::RegAccess &d) { return isa::slot_of(d) == isa::slot_of(use); }))
      return defines_same_in_every_chunk(i);
  }
  return false; // read before the first block writes it
}

auto KernelLowering::defines_same_in_every_chunk(uint32_t i) -> bool {
  // Each definition is looked at once (a chain of definitions that each read the one before
  // twice would otherwise be walked once per path).
  if (auto it = same_in_every_chunk_.find(i); it != same_in_every_chunk_.end()) return it->second;
  const Instruction &def = k_.insts[i];
  bool same = def.info().pure();
  std::vector<isa::RegAccess> uses;
  isa::instruction_uses(def, uses);
  for (const isa::RegAccess &u : uses) same = same && same_in_every_chunk(u, i);
  same_in_every_chunk_[i] = same;
  return same;
}

auto KernelLowering::finish() -> void {
  b_.CreateRet(a_.has_barriers ? u32c(0) : b_.CreateLoad(i32(), goes_on_));
}

auto KernelLowering::branch(V cond, uint32_t taken, uint32_t other, std::optional<Ends> ends)
    -> void {
  if (taken == other) { // a branch to the next instruction: every lane goes on there
    jump(taken);
    return;
  }
  if (cond.uni && !divergent_) {
    b_.CreateCondBr(cond.v, bb_of(taken), bb_of(other));
    return;
  }
  if (other != opt::kExitBlock && predicated_[other]) {
    // If-conversion (plan_predication): the lanes that do not branch run `other` under their
    // own mask; all go on to `taken` after it.
    // A short region runs without a test (under a mask that may have no lane left: its
    // loads and stores then touch nothing), which costs less than a branch; a longer one only
    // when some lane runs it.
    Value *mask = lane_mask();
    b_.CreateStore(mask, branch_mask_);
    Value *c = splat(cond);
    Value *run = b_.CreateAnd(mask, b_.CreateNot(c));
    const opt::LaneBlock &region = a_.blocks[other];
    if (region.end - region.begin > kMaxUntested) {
      BasicBlock *some = BasicBlock::Create(c_, "predicated", fn_);
      b_.CreateCondBr(b_.CreateOrReduce(run), some, bb_of(taken));
      b_.SetInsertPoint(some);
    }
    b_.CreateStore(run, mask_);
    b_.CreateBr(bb_of(other));
    return;
  }
  if (ends && !divergent_) {
    // Every lane of the chunk is live: when the ends agree, so do all, with no vector test.
    BasicBlock *all_taken = BasicBlock::Create(c_, "ends.taken", fn_);
    BasicBlock *all_other = BasicBlock::Create(c_, "ends.other", fn_);
    if (ends->once_per_chunk && a_.exits_at(k_, taken) != a_.exits_at(k_, other)) {
      // The bound check of the kernel's first block (driver.cpp): when the whole block goes
      // on past it, the chunk says so, and the driver runs the block's other chunks with
      // block_goes_on_, which takes the way on with no test.
      // The answers are the span's, the same from every chunk: a chunk that the driver runs
      // as one that goes on gives none (so that LLVM need not work them out again after a
      // loop of such chunks to know what the driver's variable holds).
      const bool on_taken = !a_.exits_at(k_, taken);
      BasicBlock *test = BasicBlock::Create(c_, "ends.test", fn_);
      b_.CreateCondBr(block_goes_on_, on_taken ? all_taken : all_other, test);
      b_.SetInsertPoint(test);
      BasicBlock *tested = nullptr;
      if (!probe_) {
        BasicBlock *answer = BasicBlock::Create(c_, "ends.answer", fn_);
        tested = BasicBlock::Create(c_, "ends.tested", fn_);
        b_.CreateCondBr(answered_, tested, answer);
        b_.SetInsertPoint(answer);
      }
      Value *value = on_taken ? ends->block_value : b_.CreateNot(ends->block_value);
      b_.CreateStore(b_.CreateSelect(value, ends->agreeing_chunks, u32c(0)), goes_on_);
      has_goes_on_check_ = true;
      goes_on_pure_ = goes_on_pure_ && !effects_;
      if (ends->first_run_chunks && !effects_) {
        // When the span's first lane goes on, every lane past its first run leaves here,
        // having done nothing before: the driver runs no chunk that holds only such lanes.
        b_.CreateStore(b_.CreateSelect(value, ends->first_run_chunks, u32c(UINT32_MAX)),
                       leaves_from_);
      }
      if (probe_) {
        // The probe's answer (the rest of the branch goes to a block that nothing reaches;
        // it would find every other block returning: emit_block).
        finish();
        b_.SetInsertPoint(BasicBlock::Create(c_, "probe.unreached", fn_));
      } else {
        b_.CreateBr(tested);
        b_.SetInsertPoint(tested);
      }
    }
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
      finish();
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

ChunkWidths chunk_widths(const Kernel &k, const opt::LaneAnalysis &lanes,
                         const opt::LaneAffinity &affinity, const CpuTarget &target) {
  const unsigned one = target.width;
  const bool avx512 = one >= 16; // 16 f32 lanes to a register already
  bool f32_math = false, stores = false, may_stream = false;
  for (const Instruction &inst : k.insts) {
    if (inst.type == isa::Type::F64 || inst.type2 == isa::Type::F64) return {one, one};
    switch (isa::family_of(inst.op)) {
    case isa::OpFamily::Math: f32_math |= inst.type == isa::Type::F32; break;
    case isa::OpFamily::Sync:
    case isa::OpFamily::Atomic:
    case isa::OpFamily::Atlas:
    case isa::OpFamily::Reduce:
    case isa::OpFamily::Pool: return {one, one};
    case isa::OpFamily::Move:
    case isa::OpFamily::Arith:
    case isa::OpFamily::Logic:
    case isa::OpFamily::Control:
    case isa::OpFamily::HigherOrder:
    case isa::OpFamily::Library: break;
    }
    if ((inst.info().flags & isa::kFlagWritesMemory) == 0) continue;
    stores = true;
    for (const isa::Operand &o : inst.operands)
      if (o.kind == isa::OperandKind::Addr) may_stream |= affinity.write_only(o.addr);
  }
  if (f32_math) return avx512 ? ChunkWidths{one, one} : ChunkWidths{2 * one, 2 * one};
  // A stream stores, and it is straight-line code: a loop whose lanes leave it at different
  // times would keep four times as many lanes waiting for the last one. (A kernel that stores
  // nothing, such as an empty one, gains nothing from wider chunks: only more lanes to mask.)
  if (!stores || lanes.has_calls) return {one, one};
  for (uint32_t b = 0; b < lanes.blocks.size(); ++b)
    for (uint32_t succ : lanes.blocks[b].succs)
      if (succ <= b) return {one, one};
  // Four registers a value: a few values fit the 16 vector registers without spills.
  constexpr size_t kStreamValues = 6;
  if (lanes.varying.size() > kStreamValues) return {one, one};
  // Non-temporal stores of four registers at a time ran slower than one at a time at v4 in
  // the benchmark's 2^24-element streams (docs/design.md), so there the loop that streams
  // keeps one register a chunk.
  return {4 * one, avx512 && may_stream ? one : 4 * one};
}

LoweredKernel lower_kernel(llvm::Module &module, const AbiTypes &abi, const Kernel &kernel,
                           uint32_t kernel_index, const CpuTarget &target,
                           const CpuOptions &options, const std::string &symbol) {
  return KernelLowering(module, abi, kernel, kernel_index, target, options).run(symbol);
}

} // namespace hologram::codegen::detail
