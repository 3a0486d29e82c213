// The x86 lowering's memory: parameters, addresses and their bounds checks, vector loads and
// stores (consecutive, gathered, masked, streaming), lane loops, atomics, reductions to memory
// and pool allocation (kernel_lowering.h).
#include "kernel_lowering.h"

#include <algorithm>
#include <bit>
#include <string>

#include <llvm/Support/raw_ostream.h>

namespace hologram::codegen::detail {

// ---------------------------------------------------------------------------------------------
// Memory

auto KernelLowering::param_pointer(unsigned p) -> Value * {
  auto [it, fresh] = param_pointers_.try_emplace(p, nullptr);
  if (fresh)
    it->second = in_entry_block([&] {
      Value *args = load_field(abi_.launch, launch_, LArgs, ptr());
      return invariant(
          b_.CreateLoad(ptr(), b_.CreateConstGEP1_32(ptr(), args, p), "arg." + k_.params[p].name));
    });
  return it->second;
}

auto KernelLowering::param_value(unsigned p, Type t) -> Value * {
  auto [it, fresh] = param_values_.try_emplace({p, t}, nullptr);
  if (fresh) {
    Value *pointer = param_pointer(p);
    it->second = in_entry_block([&] { return invariant(b_.CreateLoad(scalar_type(t), pointer)); });
  }
  return it->second;
}

auto KernelLowering::param_size(unsigned p) -> Value * {
  Value *sizes = load_field(abi_.launch, launch_, LSizes, ptr());
  return invariant(b_.CreateLoad(i64(), b_.CreateConstGEP1_32(i64(), sizes, p)));
}

auto KernelLowering::resolve(const Address &a) -> Access {
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
    if (opts_.bounds_check) return resolve_handle(base, off);
    off = lift({base, off}, [&](auto &v) { return b_.CreateAdd(v[0], v[1]); });
    break; // a raw address
  }
  }
  acc.off = off;
  if (a.base != AddrBase::Reg) acc.step = affinity_.offset_step(a);
  return acc;
}

auto KernelLowering::resolve_handle(const V &h, const V &disp) -> Access {
  const bool pool_op = k_.insts[cur_].info().pool_access();
  // A uniform register holds no allocation's handle (pool.alloc's result varies by lane, so
  // the uniformity analysis never makes a slot that holds one uniform), and stays a scalar; an
  // allocation site's region starts at a different place in each lane.
  const bool uni = h.uni;
  auto shape = [&](Value *s) { return uni ? s : splat(s); };
  Value *tag = b_.CreateLShr(uni ? h.v : splat(h), shape(u64c(handle::kTagShift)));
  Value *start = shape(u64c(0)), *bytes = shape(u64c(0));
  Value *region = shape(u32c(static_cast<uint32_t>(HG_CPU_REGION_HANDLE)));
  auto name = [&](uint64_t bits, Value *at, Value *n, int32_t id) {
    Value *is = b_.CreateICmpEQ(tag, shape(u64c(bits >> handle::kTagShift)));
    start = b_.CreateSelect(is, at, start);
    bytes = b_.CreateSelect(is, n, bytes);
    region = b_.CreateSelect(is, shape(u32c(static_cast<uint32_t>(id))), region);
  };
  for (uint32_t p : addressed_)
    if (!pool_op || k_.params[p].kind == ParamKind::Pool)
      name(handle::param(p), shape(b_.CreatePtrToInt(param_pointer(p), i64())),
           shape(param_size(p)), static_cast<int32_t>(p));
  if (!uni && !pool_offsets_.empty()) {
    Value *own = lane_scratch();
    int32_t site = 0; // numbered from 1, in instruction order
    for (const auto &[index, offset] : pool_offsets_) {
      ++site;
      name(handle::scratch(static_cast<uint64_t>(site)), b_.CreateAdd(own, splat(u64c(offset))),
           splat(u64c(k_.insts[index].operands[1].imm)), HG_CPU_REGION_SCRATCH_BASE - site);
    }
  }
  Access acc;
  V bits{uni ? h.v : splat(h), uni};
  V in = lift({bits, disp}, [&](auto &v) {
    return b_.CreateAdd(
        b_.CreateAnd(v[0], llvm::ConstantInt::get(v[0]->getType(), handle::kOffsetMask)), v[1]);
  });
  acc.off = lift({V{start, uni}, in}, [&](auto &v) { return b_.CreateAdd(v[0], v[1]); });
  acc.handle = Handle{{start, uni}, {bytes, uni}, {region, uni}, bits};
  return acc;
}

auto KernelLowering::check_bounds(const Access &acc, uint64_t size) -> void {
  if (!opts_.bounds_check) return;
  if (acc.handle) {
    // As below, in the handle's region; a register that names none reports its bits.
    const Handle &h = *acc.handle;
    V rel = lift({acc.off, h.start}, [&](auto &v) { return b_.CreateSub(v[0], v[1]); });
    V bad = lift({h.bytes, rel}, [&](auto &v) {
      Value *n = llvm::ConstantInt::get(v[0]->getType(), size);
      return b_.CreateOr(b_.CreateICmpULT(v[0], n), b_.CreateICmpUGT(v[1], b_.CreateSub(v[0], n)));
    });
    V value = lift({h.region, h.bits, rel}, [&](auto &v) {
      Value *none =
          llvm::ConstantInt::get(v[0]->getType(), static_cast<uint32_t>(HG_CPU_REGION_HANDLE));
      return b_.CreateSelect(b_.CreateICmpEQ(v[0], none), v[1], v[2]);
    });
    V region = bad.uni ? h.region : V{splat(h.region), false};
    fail_if(active(bad.v), HG_CPU_ERR_OUT_OF_BOUNDS, u32c(cur_), value.v, size, region.v);
    return;
  }
  // off + size > limit, without overflow: limit < size || off > limit - size.
  Value *small = b_.CreateICmpULT(acc.limit, u64c(size));
  Value *room = b_.CreateSub(acc.limit, u64c(size));
  Value *bad = acc.off.uni ? b_.CreateOr(small, b_.CreateICmpUGT(acc.off.v, room))
                           : b_.CreateOr(splat(small), b_.CreateICmpUGT(acc.off.v, splat(room)));
  if (acc.regions.v)
    fail_if(active(bad), HG_CPU_ERR_OUT_OF_BOUNDS, u32c(cur_), acc.off.v, size, acc.regions.v);
  else
    fail_if(active(bad), HG_CPU_ERR_OUT_OF_BOUNDS, cur_, acc.off.v, size, acc.region);
}

auto KernelLowering::pointer(const Access &acc, Value *off) -> Value * {
  if (!acc.base)
    return b_.CreateIntToPtr(
        off, off->getType()->isVectorTy() ? static_cast<llvm::Type *>(vec(ptr())) : ptr());
  return b_.CreateGEP(i8(), acc.base, off);
}

auto KernelLowering::always_consecutive(const Access &acc, uint64_t size) -> bool {
  return acc.step && acc.step->id == opt::LaneId::Gid &&
         acc.step->stride == static_cast<int64_t>(size);
}

auto KernelLowering::consecutive(const Access &acc, uint64_t size) -> Value * {
  if (acc.step && acc.step->id && acc.step->stride == static_cast<int64_t>(size))
    return rows_whole_;
  return consecutive_lanes(acc.off.v, size);
}

auto KernelLowering::consecutive_lanes(Value *off, uint64_t size) -> Value * {
  Value *first = b_.CreateExtractElement(off, uint64_t{0});
  Value *expect = b_.CreateAdd(splat(first), iota64(size));
  Value *mask = lane_mask();
  return b_.CreateAndReduce(b_.CreateOr(b_.CreateNot(mask), b_.CreateICmpEQ(off, expect)));
}

auto KernelLowering::load(Type t, const Access &acc) -> V {
  llvm::Type *ty = scalar_type(t);
  const uint64_t size = type_size(t);
  check_bounds(acc, size);
  if (acc.off.uni) return {b_.CreateAlignedLoad(ty, pointer(acc, acc.off.v), llvm::Align(1)), true};
  Value *mask = lane_mask();
  Value *zero = llvm::Constant::getNullValue(vec(ty));
  if (always_consecutive(acc, size)) { // known when compiled: no check, no gather
    Value *p0 = pointer(acc, b_.CreateExtractElement(acc.off.v, uint64_t{0}));
    return {masked_access(p0, mask, size, nullptr, ty), false};
  }
  BasicBlock *contiguous = BasicBlock::Create(c_, "ld.vector", fn_);
  BasicBlock *gather = BasicBlock::Create(c_, "ld.gather", fn_);
  BasicBlock *done = BasicBlock::Create(c_, "ld.done", fn_);
  b_.CreateCondBr(consecutive(acc, size), contiguous, gather);
  b_.SetInsertPoint(contiguous);
  Value *p0 = pointer(acc, b_.CreateExtractElement(acc.off.v, uint64_t{0}));
  Value *v1 = masked_access(p0, mask, size, nullptr, ty);
  BasicBlock *contiguous_end = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(gather);
  Value *v2 = b_.CreateMaskedGather(vec(ty), pointer(acc, acc.off.v), llvm::Align(1), mask, zero);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  auto *phi = b_.CreatePHI(vec(ty), 2);
  phi->addIncoming(v1, contiguous_end);
  phi->addIncoming(v2, gather);
  return {phi, false};
}

auto KernelLowering::store(Type t, const Access &acc, V v, bool streams) -> void {
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
      masked_access(p0, mask, size, val, nullptr);
    return;
  }
  BasicBlock *contiguous = BasicBlock::Create(c_, "st.vector", fn_);
  BasicBlock *scatter = BasicBlock::Create(c_, "st.scatter", fn_);
  BasicBlock *done = BasicBlock::Create(c_, "st.done", fn_);
  b_.CreateCondBr(consecutive(acc, size), contiguous, scatter);
  b_.SetInsertPoint(contiguous);
  masked_access(pointer(acc, b_.CreateExtractElement(acc.off.v, uint64_t{0})), mask, size, val,
                nullptr);
  b_.CreateBr(done);
  b_.SetInsertPoint(scatter);
  b_.CreateMaskedScatter(val, pointer(acc, acc.off.v), llvm::Align(1), mask);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

auto KernelLowering::masked_in_pages(Value *mask) -> bool {
  auto *known = llvm::dyn_cast<llvm::Constant>(mask);
  return target_.width >= 8 && !(known && known->isAllOnesValue());
}

auto KernelLowering::reaches_past_page(Value *p, uint64_t bytes) -> Value * {
  Value *in_page = b_.CreateAnd(b_.CreatePtrToInt(p, i64()), u64c(kPage - 1));
  return b_.CreateICmpUGT(in_page, u64c(kPage - bytes));
}

auto KernelLowering::masked_access(Value *p0, Value *mask, uint64_t size, Value *val,
                                   llvm::Type *ty) -> Value * {
  Value *zero = val ? nullptr : llvm::Constant::getNullValue(vec(ty));
  auto access = [&](Value *p) -> Value * {
    if (val) {
      b_.CreateMaskedStore(val, p, llvm::Align(1), mask);
      return nullptr;
    }
    return b_.CreateMaskedLoad(vec(ty), p, llvm::Align(1), mask, zero);
  };
  if (!masked_in_pages(mask)) return access(p0);
  // A masked load or store whose bytes reach into a page that is not present (one the process
  // has not touched yet, or not mapped) makes the processor suppress the fault of its
  // masked-off lanes, at every launch: an AVX-512 one about 180 ns on Zen 5, an AVX2
  // vmaskmovps load about 115 ns on Zen 3 even with no lane in its mask (a store 8): the
  // partial chunk at the end of an array at the top of the heap, or at the end of an mmap
  // (docs/design.md). So an access that reaches past the end of its page goes by registers
  // (AVX-512) or by lanes (AVX2), in a function of its own (rare: a chunk of 64 floats
  // reaches past a page at one address in 16), which keeps every register of the chunk's
  // (the preserve_all convention, as math's rare paths).
  BasicBlock *one_page = BasicBlock::Create(c_, "mem.page", fn_);
  BasicBlock *pages = BasicBlock::Create(c_, "mem.pages", fn_);
  BasicBlock *done = BasicBlock::Create(c_, "mem.done", fn_);
  b_.CreateCondBr(reaches_past_page(p0, w_ * size), pages, one_page,
                  llvm::MDBuilder(c_).createUnlikelyBranchWeights());
  b_.SetInsertPoint(one_page);
  Value *usual = access(p0);
  b_.CreateBr(done);
  b_.SetInsertPoint(pages);
  llvm::Type *vty = val ? val->getType() : vec(ty);
  llvm::Type *bits_ty = b_.getIntNTy(w_);
  llvm::Function *f = pages_function(vty, size, val != nullptr);
  llvm::IRBuilder<> at_entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  // Aligned as the stack is: a vector's own alignment (up to 512 bytes) would make the
  // driver realign its frame.
  llvm::AllocaInst *slot = at_entry.CreateAlloca(vty, nullptr, "mem.pages.value");
  slot->setAlignment(llvm::Align(kSlotAlign));
  // Live only here, so that the slots of a chunk's accesses share their bytes.
  b_.CreateLifetimeStart(slot);
  if (val) b_.CreateAlignedStore(val, slot, llvm::Align(kSlotAlign));
  llvm::CallInst *call = b_.CreateCall(f, {p0, b_.CreateBitCast(mask, bits_ty), slot});
  call->setCallingConv(llvm::CallingConv::PreserveAll);
  Value *rare = val ? nullptr : b_.CreateAlignedLoad(vty, slot, llvm::Align(kSlotAlign));
  b_.CreateLifetimeEnd(slot);
  BasicBlock *pages_end = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  if (val) return nullptr;
  auto *phi = b_.CreatePHI(vty, 2);
  phi->addIncoming(usual, one_page);
  phi->addIncoming(rare, pages_end);
  return phi;
}

auto KernelLowering::pages_function(llvm::Type *vty, uint64_t size, bool store)
    -> llvm::Function * {
  // One in the module for each target, vector type and direction, which every kernel's chunk
  // functions share: made while the first of them is lowered, it has that variant's
  // attributes, which are the target's (module_lowering.cpp).
  std::string elem;
  llvm::raw_string_ostream(elem) << *llvm::cast<llvm::FixedVectorType>(vty)->getElementType();
  const std::string name = "hg.pages." + c_identifier(target_.name) + "." + std::to_string(w_) +
                           "x" + elem + "." + std::to_string(size) + (store ? ".store" : ".load");
  if (llvm::Function *f = m_.getFunction(name)) return f;
  llvm::Type *bits_ty = b_.getIntNTy(w_);
  auto *fty = llvm::FunctionType::get(b_.getVoidTy(), {ptr(), bits_ty, ptr()}, false);
  return cold_function(b_, m_, name, fty, [&](llvm::Function *pages) {
    if (target_.width >= 16)
      by_registers(pages, vty, size, store);
    else
      by_lanes(pages, vty, size, store);
    b_.CreateRetVoid();
  });
}

auto KernelLowering::by_lanes(llvm::Function *f, llvm::Type *vty, uint64_t size, bool store)
    -> void {
  // Where AVX-512 goes register by register (by_registers), AVX2 copies each lane of the mask
  // between memory and the slot, in a loop over the mask's set bits. AVX2 has no scatter and
  // no permute of 8-byte lanes by a register, and LLVM makes its gathers a branch a lane;
  // register by register, saxpy's compile at v3 took 1.54x the instructions it took without
  // the pages' functions, with this loop 1.14x, and a lane's load and store hardly count on
  // this rare way (a partial chunk whose bytes reach past a page).
  Value *base = f->getArg(0), *bits = f->getArg(1), *slot = f->getArg(2);
  // A load's lanes outside the mask are zero.
  if (!store)
    b_.CreateAlignedStore(llvm::Constant::getNullValue(vty), slot, llvm::Align(kSlotAlign));
  // Each element copied as an integer of its size.
  llvm::Type *unit = b_.getIntNTy(static_cast<unsigned>(size * 8));
  BasicBlock *entry = b_.GetInsertBlock();
  BasicBlock *loop = BasicBlock::Create(c_, "mem.lane", f);
  BasicBlock *done = BasicBlock::Create(c_, "mem.lanes.done", f);
  b_.CreateCondBr(b_.CreateIsNotNull(bits), loop, done);
  b_.SetInsertPoint(loop);
  llvm::PHINode *rest = b_.CreatePHI(bits->getType(), 2, "mem.lanes.rest");
  rest->addIncoming(bits, entry);
  Value *lane = b_.CreateZExt(
      b_.CreateIntrinsic(llvm::Intrinsic::cttz, {bits->getType()}, {rest, b_.getTrue()}), i64());
  Value *offset = b_.CreateMul(lane, u64c(size));
  Value *element = b_.CreateGEP(i8(), base, offset), *in_slot = b_.CreateGEP(i8(), slot, offset);
  Value *from = store ? in_slot : element, *to = store ? element : in_slot;
  b_.CreateAlignedStore(b_.CreateAlignedLoad(unit, from, llvm::Align(1)), to, llvm::Align(1));
  // The lowest set bit cleared.
  Value *after = b_.CreateAnd(rest, b_.CreateSub(rest, llvm::ConstantInt::get(bits->getType(), 1)));
  rest->addIncoming(after, loop);
  b_.CreateCondBr(b_.CreateIsNotNull(after), loop, done)
      ->setMetadata(llvm::LLVMContext::MD_loop, no_unroll());
  b_.SetInsertPoint(done);
}

auto KernelLowering::by_registers(llvm::Function *f, llvm::Type *vty, uint64_t size, bool store)
    -> void {
  // Each register of lanes: none for one with no lane to touch, a masked access for one in a
  // page, and for the one that reaches past its page either two masked accesses that each
  // stay in one page (split_register) or, where an element straddles the pages' boundary,
  // lane by lane (a gather or scatter, whose masked-off lanes touch nothing). The registers
  // go by a loop that is not unrolled: one copy of these paths instead of one a register
  // (four for a chunk of 64 floats) halves the code LLVM compiles for a small kernel at
  // x86-64-v4, and the loop's few instructions a register hardly count on this rare way.
  Value *base = f->getArg(0), *bits = f->getArg(1), *slot = f->getArg(2);
  llvm::Type *elem = llvm::cast<llvm::FixedVectorType>(vty)->getElementType();
  const unsigned per = static_cast<unsigned>(std::clamp<uint64_t>(kVectorBytes / size, 1, w_));
  const uint64_t bytes = per * size;
  auto *part_ty = llvm::FixedVectorType::get(elem, per);
  Value *part_zero = llvm::Constant::getNullValue(part_ty);
  llvm::Type *part_bits_ty = b_.getIntNTy(per);
  const llvm::Align part_align = llvm::commonAlignment(llvm::Align(kSlotAlign), bytes);
  std::vector<llvm::Constant *> offsets;
  for (unsigned l = 0; l < per; ++l) offsets.push_back(b_.getInt64(l * size));
  Value *lane_offsets = llvm::ConstantVector::get(offsets);
  // Registers of 4- or 8-byte elements, whose lanes a vpermd/vpermq rotates.
  const bool splits = bytes == kVectorBytes && (size == 4 || size == 8);
  // A load's lanes that no register touches are zero.
  if (!store)
    b_.CreateAlignedStore(llvm::Constant::getNullValue(vty), slot, llvm::Align(kSlotAlign));
  BasicBlock *entry = b_.GetInsertBlock();
  BasicBlock *loop = BasicBlock::Create(c_, "mem.register", f);
  BasicBlock *some = BasicBlock::Create(c_, "mem.register.some", f);
  BasicBlock *within = BasicBlock::Create(c_, "mem.register.page", f);
  BasicBlock *across = BasicBlock::Create(c_, "mem.register.pages", f);
  BasicBlock *lanewise = BasicBlock::Create(c_, "mem.register.lanes", f);
  BasicBlock *next = BasicBlock::Create(c_, "mem.register.next", f);
  BasicBlock *done = BasicBlock::Create(c_, "mem.registers.done", f);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode *r = b_.CreatePHI(i64(), 2, "mem.register.index");
  r->addIncoming(u64c(0), entry);
  Value *offset = b_.CreateMul(r, u64c(bytes));
  Value *p = b_.CreateGEP(i8(), base, offset);
  Value *at_slot = b_.CreateGEP(i8(), slot, offset);
  Value *shift = b_.CreateZExtOrTrunc(b_.CreateMul(r, u64c(per)), bits->getType());
  Value *part_bits = b_.CreateTrunc(b_.CreateLShr(bits, shift), part_bits_ty);
  Value *part_mask = b_.CreateBitCast(part_bits, llvm::FixedVectorType::get(i1(), per));
  b_.CreateCondBr(b_.CreateIsNotNull(part_bits), some, next);
  b_.SetInsertPoint(some);
  Value *part = store ? b_.CreateAlignedLoad(part_ty, at_slot, part_align) : nullptr;
  b_.CreateCondBr(reaches_past_page(p, bytes), across, within);
  // The register's access in `bb`: masked at p, or lane by lane; a load's lanes into the slot.
  auto access = [&](BasicBlock *bb, bool by_lane) {
    b_.SetInsertPoint(bb);
    Value *at = by_lane ? b_.CreateGEP(i8(), p, lane_offsets) : p;
    if (store && by_lane)
      b_.CreateMaskedScatter(part, at, llvm::Align(1), part_mask);
    else if (store)
      b_.CreateMaskedStore(part, at, llvm::Align(1), part_mask);
    else
      b_.CreateAlignedStore(
          by_lane ? b_.CreateMaskedGather(part_ty, at, llvm::Align(1), part_mask, part_zero)
                  : b_.CreateMaskedLoad(part_ty, at, llvm::Align(1), part_mask, part_zero),
          at_slot, part_align);
    b_.CreateBr(next);
  };
  access(within, false);
  access(lanewise, true);
  b_.SetInsertPoint(across);
  if (splits) {
    // The bytes of the register in its own page: a whole number of elements, or an element
    // straddles the boundary.
    Value *in_page = b_.CreateAnd(b_.CreatePtrToInt(p, i64()), u64c(kPage - 1));
    Value *head = b_.CreateSub(u64c(kPage), in_page, "mem.head.bytes");
    BasicBlock *halves = BasicBlock::Create(c_, "mem.register.split", f);
    b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateAnd(head, u64c(size - 1)), u64c(0)), halves, lanewise);
    b_.SetInsertPoint(halves);
    Value *split = split_register(f, p, head, part_mask, part, part_ty, size);
    if (!store) b_.CreateAlignedStore(split, at_slot, part_align);
    b_.CreateBr(next);
  } else {
    b_.CreateBr(lanewise);
  }
  b_.SetInsertPoint(next);
  Value *following = b_.CreateAdd(r, u64c(1));
  r->addIncoming(following, next);
  llvm::BranchInst *back = b_.CreateCondBr(b_.CreateICmpULT(following, u64c(w_ / per)), loop, done);
  // Not unrolled: the point of the loop (above).
  back->setMetadata(llvm::LLVMContext::MD_loop, no_unroll());
  b_.SetInsertPoint(done);
}

auto KernelLowering::split_register(llvm::Function *f, Value *p, Value *head, Value *mask,
                                    Value *part, llvm::FixedVectorType *part_ty, uint64_t size)
    -> Value * {
  // The register's first s lanes lie in p's page and the others in the next one, which begins
  // at q = p + head. Lane i before q is the element at q - 64 + (per - s + i) * size, and lane
  // i from q on the element at q + (i - s) * size: two masked accesses, of the last 64 bytes
  // of p's page and the first 64 of the next, each in one page (a masked load or store
  // reaching into a page that is not present takes the fault-suppression assist; on Zen 5 a
  // gather of the register took 11 ns, a masked load within a page 4), each made only when a
  // lane needs it, with the lanes rotated by s into place.
  const unsigned per = static_cast<unsigned>(part_ty->getNumElements());
  llvm::Type *word = b_.getIntNTy(static_cast<unsigned>(size * 8));
  auto *words_ty = llvm::FixedVectorType::get(word, per);
  llvm::Type *bits_ty = b_.getIntNTy(per);
  Value *s = b_.CreateLShr(head, u64c(std::countr_zero(size)), "mem.head.lanes");
  Value *q = b_.CreateGEP(i8(), p, head);
  Value *last = b_.CreateConstGEP1_64(i8(), q, -static_cast<int64_t>(kVectorBytes));
  Value *bits = b_.CreateBitCast(mask, bits_ty);
  Value *s_bits = b_.CreateTrunc(s, bits_ty);
  Value *head_mask = b_.CreateBitCast(
      b_.CreateShl(bits, b_.CreateSub(llvm::ConstantInt::get(bits_ty, per), s_bits)),
      mask->getType());
  Value *tail_mask = b_.CreateBitCast(b_.CreateLShr(bits, s_bits), mask->getType());
  // Lane j of the rotation by r takes lane (j + r) mod per.
  auto rotate = [&](Value *v, Value *r) {
    std::vector<llvm::Constant *> iota;
    for (unsigned l = 0; l < per; ++l) iota.push_back(llvm::ConstantInt::get(word, l));
    Value *r_words = b_.CreateVectorSplat(per, b_.CreateZExtOrTrunc(r, word));
    Value *index = b_.CreateAnd(b_.CreateAdd(llvm::ConstantVector::get(iota), r_words),
                                b_.CreateVectorSplat(per, llvm::ConstantInt::get(word, per - 1)));
    const auto id = size == 4 ? llvm::Intrinsic::x86_avx512_permvar_si_512
                              : llvm::Intrinsic::x86_avx512_permvar_di_512;
    return b_.CreateIntrinsic(id, {}, {b_.CreateBitCast(v, words_ty), index});
  };
  // Each access made only where one of its lanes is in the mask (a load: zero elsewhere).
  auto half = [&](Value *lanes, llvm::Type *ty, auto access) {
    return guarded(b_, f, b_.CreateOrReduce(lanes), ty, access, "mem.half");
  };
  if (part) {
    Value *rotated = b_.CreateBitCast(rotate(part, s), part_ty);
    half(head_mask, nullptr,
         [&] { return b_.CreateMaskedStore(rotated, last, llvm::Align(1), head_mask); });
    half(tail_mask, nullptr,
         [&] { return b_.CreateMaskedStore(rotated, q, llvm::Align(1), tail_mask); });
    return nullptr;
  }
  Value *zero = llvm::Constant::getNullValue(words_ty);
  Value *before = half(head_mask, words_ty, [&] {
    return b_.CreateMaskedLoad(words_ty, last, llvm::Align(1), head_mask, zero);
  });
  Value *after = half(tail_mask, words_ty, [&] {
    return b_.CreateMaskedLoad(words_ty, q, llvm::Align(1), tail_mask, zero);
  });
  // Each lane of the two is zero where the other holds an element.
  Value *both = b_.CreateOr(before, after);
  return b_.CreateBitCast(rotate(both, b_.CreateSub(u64c(per), s)), part_ty);
}

auto KernelLowering::store_maybe_streaming(Value *val, Value *p0, uint64_t size) -> void {
  if (reports_address_ && !reporting_inst_) {
    reporting_inst_ = cur_;
    reporting_element_ = size;
  }
  if (reports_address_ && reporting_inst_ == cur_) b_.CreateStore(p0, state_);
  Value *big = b_.CreateAnd(may_stream_, launch_streams(stream_bytes_, launch_lanes(), size));
  Value *lined = reporting_inst_ == cur_ ? reporting_lined_ : b_.getFalse();
  // Aligned to the whole vector (up to a cache line), one movntps writes it; aligned to 16
  // bytes only, it goes out as 16-byte movntps. malloc returns large blocks 16 bytes past a
  // page, so most big arrays are aligned to 16 bytes and no more.
  const uint64_t bytes = w_ * size, align = std::min<uint64_t>(std::bit_floor(bytes), 64);
  Value *address = b_.CreatePtrToInt(p0, i64());
  auto aligned_to = [&](uint64_t a) {
    return b_.CreateICmpEQ(b_.CreateAnd(address, u64c(a - 1)), u64c(0));
  };
  auto stream = [&](Value *v, Value *p, uint64_t a) {
    llvm::StoreInst *nt = b_.CreateAlignedStore(v, p, llvm::Align(a));
    nt->setMetadata(llvm::LLVMContext::MD_nontemporal,
                    llvm::MDNode::get(c_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
  };
  BasicBlock *streams = BasicBlock::Create(c_, "st.stream", fn_);
  BasicBlock *cached = BasicBlock::Create(c_, "st.cached", fn_);
  BasicBlock *done = BasicBlock::Create(c_, "st.done", fn_);
  // Where the driver has moved the chunks to lines, the launch streams this store (its
  // decision) and only the address is checked: its offset's form is known to step by the
  // chunk, but its uniform part may differ between chunks, and movntps faults off alignment.
  b_.CreateCondBr(
      b_.CreateSelect(lined, aligned_to(align), b_.CreateAnd(big, aligned_to(kStreamAlign))),
      streams, cached);
  b_.SetInsertPoint(streams);
  if (align > kStreamAlign) {
    BasicBlock *whole = BasicBlock::Create(c_, "st.stream.whole", fn_);
    BasicBlock *pieces = BasicBlock::Create(c_, "st.stream.pieces", fn_);
    b_.CreateCondBr(b_.CreateOr(lined, aligned_to(align)), whole, pieces);
    b_.SetInsertPoint(whole);
    stream(val, p0, align);
    b_.CreateBr(done);
    b_.SetInsertPoint(pieces);
    const unsigned per = static_cast<unsigned>(kStreamAlign / size);
    for (unsigned first = 0; first < w_; first += per) {
      llvm::SmallVector<int, 16> lanes;
      for (unsigned l = first; l < first + per; ++l) lanes.push_back(static_cast<int>(l));
      stream(b_.CreateShuffleVector(val, lanes), b_.CreateConstGEP1_64(i8(), p0, first * size),
             kStreamAlign);
    }
  } else {
    stream(val, p0, align);
  }
  b_.CreateBr(done);
  b_.SetInsertPoint(cached);
  b_.CreateAlignedStore(val, p0, llvm::Align(1));
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  stream_size_ = std::max(stream_size_.value_or(size), size);
}

auto KernelLowering::launch_streams(Value *limit, Value *lanes, uint64_t size) -> Value * {
  return b_.CreateAnd(b_.CreateICmpNE(limit, u64c(0)),
                      b_.CreateICmpUGE(lanes, b_.CreateLShr(limit, u64c(std::countr_zero(size)))),
                      "stream.big");
}

auto KernelLowering::launch_lanes() -> Value * {
  auto z = [&](Value *v) { return b_.CreateZExt(v, i64()); };
  return b_.CreateMul(b_.CreateMul(b_.CreateMul(z(gx_), z(gy_)), z(gz_)), z(lanes_),
                      "launch.lanes");
}

// ---------------------------------------------------------------------------------------------
// Lane loops for what has no vector form (atomics, conversion helpers)

auto KernelLowering::lane_of(const V &v, unsigned j) -> Value * {
  return v.uni ? v.v : b_.CreateExtractElement(v.v, uint64_t{j});
}

void KernelLowering::emit_atomic(const Instruction &inst) {
  const Type t = inst.type;
  llvm::Type *ty = scalar_type(t);
  Access acc = resolve(inst.operands[1].addr);
  check_bounds(acc, type_size(t));
  V val = src(inst, 2, t);
  V cmp = inst.op == Opcode::AtomCas ? src(inst, 3, t) : V{};
  auto *result = entry_alloca(vec(ty));
  b_.CreateStore(llvm::Constant::getNullValue(vec(ty)), result);
  auto op = static_cast<AtomicOp>(inst.sub);
  for_each_active_lane([&](unsigned j) {
    Value *p = pointer(acc, lane_of(acc.off, j));
    Value *old = ops_.atomic(inst.op == Opcode::AtomCas, op, t, p, lane_of(val, j),
                             inst.op == Opcode::AtomCas ? lane_of(cmp, j) : nullptr);
    Value *r = b_.CreateLoad(vec(ty), result);
    b_.CreateStore(b_.CreateInsertElement(r, old, uint64_t{j}), result);
  });
  set(inst, 0, t, {b_.CreateLoad(vec(ty), result), false});
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

auto KernelLowering::lane_scratch() -> Value * {
  Value *scratch = load_field(abi_.worker, worker_, WScratch, ptr());
  Value *chunks = b_.CreateUDiv(b_.CreateAdd(b_.CreateZExt(lanes_, i64()), u64c(w_ - 1)), u64c(w_));
  Value *states = b_.CreateMul(chunks, u64c(a_.has_barriers ? state_type_bytes() : 0));
  Value *lane_base = b_.CreateAdd(
      b_.CreateMul(b_.CreateZExt(lane_lin_, vec(i64())), splat(u64c(pool_bytes_))), splat(states));
  return b_.CreateAdd(splat(b_.CreatePtrToInt(scratch, i64())), lane_base);
}

void KernelLowering::emit_pool_alloc(const Instruction &inst) {
  // Per-lane launch scratch (lane_scratch); every allocation site has a fixed place in it.
  const uint64_t size = inst.operands[1].imm;
  const uint64_t site = pool_offsets_.at(static_cast<size_t>(&inst - k_.insts.data()));
  Value *addr = b_.CreateAdd(lane_scratch(), splat(u64c(site)));
  for_each_active_lane([&](unsigned j) {
    Value *p = b_.CreateIntToPtr(b_.CreateExtractElement(addr, uint64_t{j}), ptr());
    b_.CreateMemSet(p, b_.getInt8(0), size, llvm::MaybeAlign(16));
  });
  if (opts_.bounds_check) {
    // The site's handle (resolve_handle): sites are numbered from 1 in instruction order.
    auto it = pool_offsets_.find(static_cast<size_t>(&inst - k_.insts.data()));
    addr = splat(u64c(handle::scratch(std::distance(pool_offsets_.begin(), it) + 1)));
  }
  set(inst, 0, Type::U64, {addr, false});
}

} // namespace hologram::codegen::detail
