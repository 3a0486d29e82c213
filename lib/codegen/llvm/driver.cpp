// The x86 block driver: runs blocks [first, end), every chunk of each, in phases for barrier
// kernels, deciding per block whether its chunks are full (kernel_lowering.h). A kernel that
// cannot tell its blocks apart runs them as spans of consecutive blocks, each one block to the
// chunk function: one loop of chunks over the span, with no per-block cost.
#include "kernel_lowering.h"

#include <tuple>

namespace hologram::codegen::detail {

bool KernelLowering::spans_blocks() const {
  if (a_.has_barriers || k_.shared_bytes > 0 || uses_shared() || pool_bytes_ > 0) return false;
  std::vector<isa::RegAccess> uses;
  for (const Instruction &inst : k_.insts) {
    if (inst.info().launch_level()) return false;
    uses.clear();
    isa::instruction_uses(inst, uses);
    for (const isa::RegAccess &u : uses)
      if (!u.pred && isa::is_special(u.reg) && isa::special_tells_block(isa::reg_special(u.reg)))
        return false;
  }
  return true;
}

bool KernelLowering::has_math() const {
  for (const Instruction &inst : k_.insts)
    if (isa::family_of(inst.op) == isa::OpFamily::Math) return true;
  return false;
}

llvm::Function *KernelLowering::emit_driver(const std::string &symbol, llvm::Function *chunk,
                                            const StreamingChunk &narrow,
                                            llvm::Function *probe_chunk) {
  llvm::Function *streaming = narrow.fn;
  auto *fty = llvm::FunctionType::get(i32(), {ptr(), ptr(), i64(), i64()}, false);
  auto *f = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage, symbol, m_);
  f->addParamAttr(0, llvm::Attribute::NoAlias);
  f->addParamAttr(1, llvm::Attribute::NoAlias);
  auto arg = f->arg_begin();
  Value *launch = arg++, *worker = arg++, *first = arg++, *end = arg++;
  b_.SetInsertPoint(BasicBlock::Create(c_, "entry", f));
  // A function of the driver (itself, its loops of whole chunks) under the kernel's line.
  auto describe = [&](llvm::Function *fn) {
    if (!di_) return;
    auto *type = di_->createSubroutineType(di_->getOrCreateTypeArray({}));
    auto *sp = di_->createFunction(di_cu_, k_.name, fn->getName(), di_file_, k_.loc.line, type,
                                   k_.loc.line, llvm::DINode::FlagZero,
                                   llvm::DISubprogram::SPFlagDefinition);
    fn->setSubprogram(sp);
    b_.SetCurrentDebugLocation(llvm::DILocation::get(c_, k_.loc.line, k_.loc.col, sp));
  };
  describe(f);
  auto dim = [&](unsigned field, unsigned d) -> Value * {
    if (field == LBlock && opts_.block[0] != 0) return u64c(opts_.block[d]); // --block
    Value *p = b_.CreateConstGEP2_32(abi_.launch, launch, 0, field);
    return b_.CreateZExt(b_.CreateLoad(i32(), b_.CreateConstGEP1_32(i32(), p, d)), i64());
  };
  Value *gx = dim(LGrid, 0), *gy = dim(LGrid, 1);
  Value *lanes = b_.CreateMul(b_.CreateMul(dim(LBlock, 0), dim(LBlock, 1)), dim(LBlock, 2));
  // Blocks per span: as many as keep it within 2^30 lanes (a block has at most that many:
  // the runtime refuses bigger ones; at least one all the same, so that no caller can make
  // the loop stand still), or one where the kernel tells blocks apart.
  const bool spans = spans_blocks();
  Value *span_max = u64c(1);
  if (spans) {
    // All the blocks of the call when their lanes fit (no division: a small launch's call is
    // one span); else 2^30 / lanes. (end - first) * lanes does not wrap: the runtime's
    // launches have fewer than 2^62 lanes.
    const uint64_t most = uint64_t{1} << 30;
    Value *blocks = b_.CreateSub(end, first);
    Value *fits = b_.CreateICmpULE(b_.CreateMul(blocks, lanes), u64c(most));
    BasicBlock *from = b_.GetInsertBlock();
    BasicBlock *divide = BasicBlock::Create(c_, "span.divide", f);
    BasicBlock *known = BasicBlock::Create(c_, "span.known", f);
    b_.CreateCondBr(fits, known, divide);
    b_.SetInsertPoint(divide);
    Value *per_span =
        b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, b_.CreateUDiv(u64c(most), lanes), u64c(1));
    b_.CreateBr(known);
    b_.SetInsertPoint(known);
    auto *phi = b_.CreatePHI(i64(), 2, "span.max");
    phi->addIncoming(blocks, from);
    phi->addIncoming(per_span, divide);
    span_max = phi;
  }
  Value *shared = b_.CreateLoad(ptr(), b_.CreateStructGEP(abi_.worker, worker, WShared));
  Value *shared_size = b_.CreateLoad(i64(), b_.CreateStructGEP(abi_.worker, worker, WSharedSize));
  Value *scratch = b_.CreateLoad(ptr(), b_.CreateStructGEP(abi_.worker, worker, WScratch));
  const uint64_t state_size = a_.has_barriers ? state_type_bytes() : 0;
  // The chunk's answer: from which chunk of the span on every lane leaves at the bound check
  // (a static alloca, in the entry block: a chunk function that is not inlined keeps it).
  Value *leaves_from = llvm::IRBuilder<>(&f->getEntryBlock(), f->getEntryBlock().begin())
                           .CreateAlloca(i32(), nullptr, "leaves.from");

  // Whether this launch is big enough for a store to stream (its largest element size decides):
  // a constant in the loops of blocks that go on, so that a smaller launch does not test the
  // alignment of each chunk's store.
  Value *streams = b_.getFalse();
  if (stream_size_) {
    Value *limit = b_.CreateLoad(i64(), b_.CreateStructGEP(abi_.launch, launch, LStreamBytes));
    Value *launch_lanes = b_.CreateMul(b_.CreateMul(gx, gy), b_.CreateMul(dim(LGrid, 2), lanes));
    streams = launch_streams(limit, launch_lanes, *stream_size_);
  }

  BasicBlock *entry = b_.GetInsertBlock();
  BasicBlock *block_head = BasicBlock::Create(c_, "block", f);
  BasicBlock *block_body = BasicBlock::Create(c_, "block.body", f);
  BasicBlock *done = BasicBlock::Create(c_, "done", f);
  // The block's coordinates, tracked only where the kernel may read them (a kernel run in
  // spans reads none: they are 0 there). The first block's come from its linear number; later
  // blocks count on from them (no division per block).
  Value *bx0 = nullptr, *by0 = nullptr, *bz0 = nullptr;
  if (!spans) {
    Value *first_row = b_.CreateUDiv(first, gx);
    bx0 = b_.CreateURem(first, gx);
    by0 = b_.CreateURem(first_row, gy);
    bz0 = b_.CreateUDiv(first_row, gy);
  }
  b_.CreateBr(block_head);
  b_.SetInsertPoint(block_head);
  auto *b = b_.CreatePHI(i64(), 2, "block.linear");
  b->addIncoming(first, entry);
  auto coordinate = [&](Value *start, const char *name) {
    auto *phi = b_.CreatePHI(i64(), 2, name);
    phi->addIncoming(start, entry);
    return phi;
  };
  llvm::PHINode *bx64 = nullptr, *by64 = nullptr, *bz64 = nullptr;
  if (!spans) {
    bx64 = coordinate(bx0, "block.x");
    by64 = coordinate(by0, "block.y");
    bz64 = coordinate(bz0, "block.z");
  }
  b_.CreateCondBr(b_.CreateICmpULT(b, end), block_body, done);

  b_.SetInsertPoint(block_body);
  Value *bx = b_.getInt32(0), *by = b_.getInt32(0), *bz = b_.getInt32(0);
  if (!spans) {
    bx = b_.CreateTrunc(bx64, i32());
    by = b_.CreateTrunc(by64, i32());
    bz = b_.CreateTrunc(bz64, i32());
  }
  if (k_.shared_bytes > 0 || a_.has_barriers || uses_shared()) {
    b_.CreateMemSet(shared, b_.getInt8(0), shared_size, llvm::MaybeAlign(1));
  }
  // This span: blocks [b, b + span), whose lanes have the ids first_gid .. + span_lanes - 1.
  Value *span = spans ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b_.CreateSub(end, b),
                                                 span_max, nullptr, "span")
                      : u64c(1);
  Value *span_lanes = b_.CreateMul(span, lanes, "span.lanes", true, true);
  Value *span_lanes32 = b_.CreateTrunc(span_lanes, i32(), "", true, true);
  Value *first_gid = b_.CreateMul(b, lanes, "first.gid", true, true);
  Value *chunks = b_.CreateUDiv(b_.CreateAdd(span_lanes, u64c(w_ - 1)), u64c(w_), "chunks");
  Value *next_block = b_.CreateAdd(b, span);
  b_.CreateStore(b_.getInt32(UINT32_MAX), leaves_from);
  // The next block's coordinates: x + 1, carried into y at the grid's width, and y into z.
  Value *next_x = nullptr, *next_y = nullptr, *next_z = nullptr;
  if (!spans) {
    auto step = [&](Value *v, Value *carry, Value *size) {
      Value *n = b_.CreateAdd(v, b_.CreateZExt(carry, i64()));
      Value *wraps = b_.CreateICmpEQ(n, size);
      return std::pair{b_.CreateSelect(wraps, u64c(0), n), wraps};
    };
    Value *carry_x = nullptr, *carry_y = nullptr;
    std::tie(next_x, carry_x) = step(bx64, b_.getTrue(), gx);
    std::tie(next_y, carry_y) = step(by64, carry_x, gy);
    next_z = b_.CreateAdd(bz64, b_.CreateZExt(carry_y, i64()));
  }
  auto next_coordinates = [&](BasicBlock *from) {
    if (spans) return;
    bx64->addIncoming(next_x, from);
    by64->addIncoming(next_y, from);
    bz64->addIncoming(next_z, from);
  };

  // A span of whole chunks has only full chunks (the chunk function's block_whole_).
  Value *whole = b_.CreateICmpEQ(b_.CreateURem(span_lanes, u64c(w_)), u64c(0), "block.whole");
  // What a loop of chunks passes to each: the driver's values, or those of a function of whole
  // chunks (whole_function below).
  struct Frame {
    llvm::Function *fn;
    Value *launch, *worker, *first_gid, *span_lanes32, *bx, *by, *bz, *leaves_from;
    Value *lined = nullptr; ///< the chunk function's reporting_lined_; null: false
  };
  const Frame driver{f, launch, worker, first_gid, span_lanes32, bx, by, bz, leaves_from};
  const Frame *frame = &driver;
  // The chunk function that the loops call: `chunk`, or `streaming` in a loop of whole chunks
  // that streams, and where its chunks tell from which chunk on every lane leaves.
  llvm::Function *running = chunk;
  Value *const no_state = llvm::ConstantPointerNull::get(ptr());
  Value *running_leaves = nullptr; // null: the frame's leaves_from
  Value *running_state = no_state;
  auto call_chunk = [&](Value *c, Value *state, Value *is_whole, Value *goes_on, Value *may) {
    const Frame &w = *frame;
    return b_.CreateCall(running,
                         {w.launch, w.worker, w.first_gid, w.span_lanes32, w.bx, w.by, w.bz, c,
                          state, is_whole, goes_on, may, w.lined ? w.lined : b_.getFalse(),
                          running_leaves ? running_leaves : w.leaves_from, b_.getFalse()});
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
    // Every chunk of the block runs to completion in turn. In a small kernel, blocks of whole
    // chunks take loops of their own, in which the inlined chunk knows that every chunk is
    // full, and, where the kernel's first block has a bound check whose answer a chunk returns
    // for the block (how many of its chunks go on past it), that the chunk goes on past it and
    // whether the launch streams: no test per chunk for any of them.
    BasicBlock *next = BasicBlock::Create(c_, "block.next", f);
    // Chunks [from, to), then `after`. A chunk that returns r > c + 1 (the span's first r
    // chunks go on past the bound check) sends chunks [c + 1, r) to `goes_on_from` and
    // `goes_on_to` (phis at the start of a block), if given; then, if every lane of the
    // chunks from c + 1 leaves at the bound check, the loop ends.
    auto leaving = [&] { return b_.CreateZExt(b_.CreateLoad(i32(), leaves_from), i64()); };
    auto plain_loop = [&](Value *from, Value *to, Value *is_whole, Value *goes_on, Value *may,
                          llvm::PHINode *goes_on_from, llvm::PHINode *goes_on_to,
                          BasicBlock *after) {
      llvm::Function *fn = frame->fn;
      BasicBlock *pre = b_.GetInsertBlock();
      BasicBlock *head = BasicBlock::Create(c_, "chunk", fn);
      BasicBlock *run = BasicBlock::Create(c_, "chunk.run", fn);
      BasicBlock *ok = BasicBlock::Create(c_, "chunk.ok", fn);
      BasicBlock *bad = BasicBlock::Create(c_, "chunk.failed", fn);
      // Counted from 0 to the number of chunks left, so that LLVM knows the trip count (and
      // unrolls a small body) when `from` is not a constant.
      Value *left = b_.CreateSub(to, from, "chunks.left");
      b_.CreateBr(head);
      b_.SetInsertPoint(head);
      auto *i = b_.CreatePHI(i64(), 2, "chunk.count");
      i->addIncoming(u64c(0), pre);
      b_.CreateCondBr(b_.CreateICmpULT(i, left), run, after);
      b_.SetInsertPoint(run);
      Value *c = b_.CreateAdd(from, i, "chunk", true, true);
      Value *r = call_chunk(c, running_state, is_whole, goes_on, may);
      b_.CreateCondBr(b_.CreateICmpSLT(r, b_.getInt32(0)), bad, ok);
      b_.SetInsertPoint(bad);
      b_.CreateRet(r);
      b_.SetInsertPoint(ok);
      if (goes_on_from) {
        Value *c1 = b_.CreateAdd(c, u64c(1), "", true, true);
        Value *r64 = b_.CreateZExt(r, i64());
        goes_on_from->addIncoming(c1, ok);
        goes_on_to->addIncoming(r64, ok);
        BasicBlock *same = BasicBlock::Create(c_, "chunk.same", fn);
        b_.CreateCondBr(b_.CreateICmpUGT(r64, c1), goes_on_from->getParent(), same);
        b_.SetInsertPoint(same);
        BasicBlock *more = BasicBlock::Create(c_, "chunk.more", fn);
        b_.CreateCondBr(b_.CreateICmpUGE(c1, leaving()), after, more);
        b_.SetInsertPoint(more);
      }
      i->addIncoming(b_.CreateAdd(i, u64c(1), "", true, true), b_.GetInsertBlock());
      // Not unrolled where a chunk is several registers of each value (chunk_width): an
      // unrolled loop's remainder and its set-up are paid by every small launch, and the
      // chunk is as long as clang's unrolled loop of the same operations already (saxpy of
      // 1024 floats at v4: 52 to 49 ns a call). The streaming width's chunks (one register,
      // in launches larger than the cache) are left to LLVM.
      llvm::BranchInst *back = b_.CreateBr(head);
      if (running != streaming) back->setMetadata(llvm::LLVMContext::MD_loop, no_unroll());
    };
    // One chunk, returning to `after` unless it fails.
    auto one_chunk = [&](Value *c, Value *is_whole, Value *goes_on, Value *may, BasicBlock *after) {
      Value *r = call_chunk(c, running_state, is_whole, goes_on, may);
      BasicBlock *bad = BasicBlock::Create(c_, "chunk.failed", frame->fn);
      b_.CreateCondBr(b_.CreateICmpSLT(r, b_.getInt32(0)), bad, after);
      b_.SetInsertPoint(bad);
      b_.CreateRet(r);
    };
    // plain_loop, and where `running` is the streaming chunk function, its chunks: w_ /
    // widths_.streaming for each of the driver's. Their answers to the bound check count their
    // own chunks: they go to a variable of their own (the span's first chunk, of the driver's
    // width, has answered already). In a span (where lanes are told apart by %gid alone), once
    // the first chunk has said where its store begins, the others are moved by the lanes up
    // to the next line, so that its stores (and loads of arrays aligned alike) are whole
    // lines: the lanes skipped and those left at the end run in two partial chunks.
    auto chunk_loop = [&](Value *from, Value *to, Value *is_whole, Value *goes_on, Value *may,
                          llvm::PHINode *goes_on_from, llvm::PHINode *goes_on_to,
                          BasicBlock *after) {
      if (running != streaming) { // `chunk` or its outlined copy (`running` is never null)
        plain_loop(from, to, is_whole, goes_on, may, goes_on_from, goes_on_to, after);
        return;
      }
      llvm::Function *fn = frame->fn;
      const uint64_t wn = widths_.streaming;
      const uint64_t per = w_ / wn;
      from = b_.CreateMul(from, u64c(per), "narrow.from", true, true);
      to = b_.CreateMul(to, u64c(per), "narrow.to", true, true);
      llvm::IRBuilder<> at_entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
      running_leaves = at_entry.CreateAlloca(i32(), nullptr, "narrow.leaves.from");
      running_state = at_entry.CreateAlloca(ptr(), nullptr, "narrow.address");
      const uint64_t element = narrow.element;
      if (!spans || element == 0 || element > kLine / wn || !std::has_single_bit(element)) {
        plain_loop(from, to, is_whole, goes_on, may, nullptr, nullptr, after);
        return;
      }
      BasicBlock *probe = BasicBlock::Create(c_, "narrow.probe", fn);
      BasicBlock *probed = BasicBlock::Create(c_, "narrow.probed", fn);
      BasicBlock *moved = BasicBlock::Create(c_, "narrow.moved", fn);
      BasicBlock *unmoved = BasicBlock::Create(c_, "narrow.unmoved", fn);
      b_.CreateCondBr(b_.CreateICmpULT(from, to), probe, after);
      b_.SetInsertPoint(probe);
      b_.CreateStore(llvm::ConstantPointerNull::get(ptr()), running_state);
      one_chunk(from, is_whole, goes_on, may, probed);
      b_.SetInsertPoint(probed);
      Value *address = b_.CreatePtrToInt(b_.CreateLoad(ptr(), running_state), i64());
      // Lanes up to the next line: 0 when the element is there already or misaligned.
      Value *past = b_.CreateAnd(address, u64c(kLine - 1));
      Value *shift = b_.CreateLShr(b_.CreateAnd(b_.CreateSub(u64c(kLine), past), u64c(kLine - 1)),
                                   u64c(std::countr_zero(element)), "narrow.shift");
      Value *second = b_.CreateAdd(from, u64c(1), "", true, true);
      Value *moves =
          b_.CreateAnd(b_.CreateICmpEQ(b_.CreateAnd(address, u64c(element - 1)), u64c(0)),
                       b_.CreateAnd(b_.CreateICmpNE(shift, u64c(0)), b_.CreateICmpULT(second, to)));
      b_.CreateCondBr(moves, moved, unmoved);
      b_.SetInsertPoint(unmoved);
      plain_loop(second, to, is_whole, goes_on, may, nullptr, nullptr, after);
      b_.SetInsertPoint(moved);
      const Frame *outer = frame;
      auto partial = [&](Frame &pf, Value *c, Value *until, BasicBlock *then) {
        pf.span_lanes32 = b_.CreateTrunc(until, i32(), "", true, true);
        frame = &pf;
        one_chunk(c, b_.getFalse(), b_.getFalse(), may, then);
        frame = outer;
      };
      // The lanes of chunk `second` before the line, then chunks [second, to - 1) moved, then the
      // lanes of chunk to - 1 past the last of them.
      Frame head = *outer, body = *outer, tail = *outer;
      // The moved chunks' reporting store writes whole lines, and streams where `may` is
      // constant true (the loops of a launch that streams) and its element is the largest
      // that streams (so that the launch's decision is its own).
      auto *may_constant = llvm::dyn_cast<llvm::Constant>(may);
      body.lined = b_.getInt1(may_constant && may_constant->isOneValue() &&
                              element == stream_size_.value_or(0));
      BasicBlock *loop = BasicBlock::Create(c_, "narrow.moved.loop", fn);
      BasicBlock *last = BasicBlock::Create(c_, "narrow.moved.last", fn);
      partial(head, second, b_.CreateAdd(b_.CreateMul(second, u64c(wn)), shift), loop);
      b_.SetInsertPoint(loop);
      body.first_gid = b_.CreateAdd(outer->first_gid, shift, "narrow.first.gid", true, true);
      tail.first_gid = body.first_gid;
      Value *last_chunk = b_.CreateSub(to, u64c(1));
      frame = &body;
      plain_loop(second, last_chunk, is_whole, goes_on, may, nullptr, nullptr, last);
      frame = outer;
      b_.SetInsertPoint(last);
      partial(tail, last_chunk, b_.CreateSub(b_.CreateMul(to, u64c(wn)), shift), after);
    };
    // The loops that `emit` emits, with the streaming chunk function.
    auto streaming_chunks = [&](auto emit) {
      running = streaming;
      emit();
      running = chunk;
      running_leaves = nullptr;
      running_state = no_state;
    };
    // Chunks [from, to) of a span of whole chunks that go on past the bound check, whose
    // stores stream or not (`may`, a constant), then `after`: the kernel's hottest loop. In a
    // kernel of math functions, a function of its own (never inlined), called once a span:
    // the register allocator then gives that loop registers of its own. In the driver, the
    // constants LLVM hoists to its entry are live across all its loops, the partial chunks'
    // too, and where they did not all fit it reloaded them in every chunk (exp at v3: 7
    // broadcasts a chunk of 16 lanes; docs/design.md). A kernel without math keeps the loop
    // inline: the call cost vector_add of 1024 floats 5 ns of 140.
    const bool own_functions = has_math();
    auto whole_chunks = [&](Value *from, Value *to, llvm::Constant *may, BasicBlock *after) {
      if (!own_functions)
        return chunk_loop(from, to, b_.getTrue(), b_.getTrue(), may, nullptr, nullptr, after);
      auto *wty = llvm::FunctionType::get(
          i32(), {ptr(), ptr(), i64(), i32(), i32(), i32(), i32(), i64(), i64(), ptr()}, false);
      auto *wf = llvm::Function::Create(wty, llvm::GlobalValue::InternalLinkage,
                                        symbol + (may->isOneValue() ? ".stream" : ".whole"), m_);
      wf->addFnAttr(llvm::Attribute::NoInline);
      // As the driver's launch and worker; the last is the driver's own variable.
      for (unsigned i : {0u, 1u, 9u}) wf->addParamAttr(i, llvm::Attribute::NoAlias);
      auto a = wf->arg_begin();
      Frame whole_frame{wf, a, a + 1, a + 2, a + 3, a + 4, a + 5, a + 6, a + 9};
      {
        llvm::IRBuilderBase::InsertPointGuard guard(b_); // and the debug location
        b_.SetInsertPoint(BasicBlock::Create(c_, "entry", wf));
        describe(wf);
        BasicBlock *chunks_done = BasicBlock::Create(c_, "chunks.done", wf);
        frame = &whole_frame;
        chunk_loop(a + 7, a + 8, b_.getTrue(), b_.getTrue(), may, nullptr, nullptr, chunks_done);
        frame = &driver;
        b_.SetInsertPoint(chunks_done);
        b_.CreateRet(b_.getInt32(0));
      }
      Value *r = b_.CreateCall(
          wf, {launch, worker, first_gid, span_lanes32, bx, by, bz, from, to, leaves_from});
      BasicBlock *failed = BasicBlock::Create(c_, "whole.failed", f);
      b_.CreateCondBr(b_.CreateICmpSLT(r, b_.getInt32(0)), failed, after);
      b_.SetInsertPoint(failed);
      b_.CreateRet(r);
    };
    // The same with the chunk function of the streaming width where the loop streams.
    auto whole_function = [&](Value *from, Value *to, llvm::Constant *may, BasicBlock *after) {
      if (streaming && may->isOneValue())
        streaming_chunks([&] { whole_chunks(from, to, may, after); });
      else
        whole_chunks(from, to, may, after);
    };
    // The same with a function per streaming decision.
    auto whole_functions = [&](Value *from, Value *to, BasicBlock *after) {
      if (!stream_size_) return whole_function(from, to, b_.getFalse(), after);
      BasicBlock *cached = BasicBlock::Create(c_, "whole.cached", f);
      BasicBlock *streamed = BasicBlock::Create(c_, "whole.streamed", f);
      b_.CreateCondBr(streams, streamed, cached);
      b_.SetInsertPoint(cached);
      whole_function(from, to, b_.getFalse(), after);
      b_.SetInsertPoint(streamed);
      whole_function(from, to, b_.getTrue(), after);
    };
    if (k_.insts.size() <= kMaxWholeBlockLoop && has_goes_on_check_) {
      // Every block starts in one loop; the chunks of a block of whole chunks that its first
      // chunk finds go on past the bound check run in the loops of whole chunks that go on,
      // and the rest (the chunks of the launch's last lanes) in the first loop again. Where
      // nothing comes before the check, the probe (emit_probe_chunk) answers for the first
      // chunk without running it, and the loops of chunks that go on start with it: a small
      // launch's chunks then all run in the tight loop (vector_add of 64 floats at v4: 246
      // instructions in the kernel's function to 198).
      BasicBlock *goes_on = BasicBlock::Create(c_, "block.goes.on", f);
      BasicBlock *goes_on_end = BasicBlock::Create(c_, "block.goes.on.end", f);
      BasicBlock *resume = BasicBlock::Create(c_, "block.resume", f);
      BasicBlock *start = b_.GetInsertBlock();
      b_.SetInsertPoint(goes_on);
      auto *from = b_.CreatePHI(i64(), 2, "chunk.from");
      auto *to = b_.CreatePHI(i64(), 2, "chunk.to");
      whole_functions(from, to, goes_on_end);
      b_.SetInsertPoint(goes_on_end);
      b_.CreateCondBr(
          b_.CreateICmpULT(to, b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, chunks, leaving())),
          resume, next);
      b_.SetInsertPoint(start);
      if (probe_chunk) {
        // The probe's answer for the span's first chunk: the chunks that go on, from it, run in
        // the loops of whole chunks, the rest in the first loop; where none goes on, all of
        // them (the probe has no failure to return: nothing before its check can fail).
        llvm::Function *chunk_fn = running;
        running = probe_chunk;
        Value *r = call_chunk(u64c(0), no_state, whole, b_.getFalse(), streams);
        running = chunk_fn;
        start = b_.GetInsertBlock();
        from->addIncoming(u64c(0), start);
        to->addIncoming(b_.CreateZExt(r, i64()), start);
        b_.CreateCondBr(b_.CreateICmpSGT(r, b_.getInt32(0)), goes_on, resume);
      } else {
        b_.CreateBr(resume);
      }
      b_.SetInsertPoint(resume);
      auto *first_chunk = b_.CreatePHI(i64(), 2, "chunk.resume");
      first_chunk->addIncoming(u64c(0), start);
      first_chunk->addIncoming(to, goes_on_end);
      if (probe_chunk) {
        // After the probe, this loop runs only the chunks that do not go on (the one that
        // straddles the bound, those of a span that does not start below it): rare, so they
        // call the chunk function, never inlined, and the driver does not keep what they need
        // (their lanes' ids, the page-end paths' values) live across all of its loops. vector_add
        // of 64 floats at v4: 198 instructions in the kernel's function to 176.
        auto *rest = llvm::Function::Create(
            chunk->getFunctionType(), llvm::GlobalValue::InternalLinkage, symbol + ".rest", m_);
        rest->addFnAttr(llvm::Attribute::NoInline);
        {
          llvm::IRBuilderBase::InsertPointGuard guard(b_); // and the debug location
          b_.SetInsertPoint(BasicBlock::Create(c_, "entry", rest));
          describe(rest);
          // The probe has answered for the span: the chunk's own answers are not worked out
          // again (the last argument).
          std::vector<Value *> args;
          for (llvm::Argument &a : rest->args()) args.push_back(&a);
          args.back() = b_.getTrue();
          b_.CreateRet(b_.CreateCall(chunk, args));
        }
        running = rest;
      }
      chunk_loop(first_chunk, chunks, whole, b_.getFalse(), streams, from, to, next);
      running = chunk;
    } else if (k_.insts.size() <= kMaxWholeBlockLoop) {
      BasicBlock *whole_loop = BasicBlock::Create(c_, "block.whole", f);
      BasicBlock *part_loop = BasicBlock::Create(c_, "block.part", f);
      b_.CreateCondBr(whole, whole_loop, part_loop);
      b_.SetInsertPoint(whole_loop);
      if (streaming) {
        // A loop for each streaming decision, the streaming one of the streaming width.
        BasicBlock *cached = BasicBlock::Create(c_, "block.whole.cached", f);
        BasicBlock *streamed = BasicBlock::Create(c_, "block.whole.streamed", f);
        b_.CreateCondBr(streams, streamed, cached);
        b_.SetInsertPoint(streamed);
        streaming_chunks([&] {
          chunk_loop(u64c(0), chunks, b_.getTrue(), b_.getFalse(), b_.getTrue(), nullptr, nullptr,
                     next);
        });
        b_.SetInsertPoint(cached);
        chunk_loop(u64c(0), chunks, b_.getTrue(), b_.getFalse(), b_.getFalse(), nullptr, nullptr,
                   next);
      } else {
        chunk_loop(u64c(0), chunks, b_.getTrue(), b_.getFalse(), streams, nullptr, nullptr, next);
      }
      b_.SetInsertPoint(part_loop);
      chunk_loop(u64c(0), chunks, b_.getFalse(), b_.getFalse(), streams, nullptr, nullptr, next);
    } else {
      chunk_loop(u64c(0), chunks, whole, b_.getFalse(), streams, nullptr, nullptr, next);
    }
    b_.SetInsertPoint(next);
    b->addIncoming(next_block, next);
    next_coordinates(next);
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
    Value *r0 = call_chunk(u64c(0), scratch, whole, b_.getFalse(), streams);
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
    Value *state = b_.CreateGEP(i8(), scratch, {b_.CreateMul(c, u64c(state_size))});
    Value *r = call_chunk(c, state, whole, b_.getFalse(), streams);
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
    next_coordinates(next);
    b_.CreateBr(block_head);
  }
  b_.SetInsertPoint(done);
  if (stream_size_) {
    // Non-temporal stores are weakly ordered: fence them before the runtime learns that these
    // blocks are done, when this launch is big enough for any store to have streamed.
    BasicBlock *fence = BasicBlock::Create(c_, "sfence", f);
    BasicBlock *ret = BasicBlock::Create(c_, "return", f);
    b_.CreateCondBr(streams, fence, ret);
    b_.SetInsertPoint(fence);
    b_.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
    b_.CreateBr(ret);
    b_.SetInsertPoint(ret);
  }
  b_.CreateRet(b_.getInt32(0));
  return f;
}

} // namespace hologram::codegen::detail
