// The PTX back end (ptx_lowering.h): addresses and their bounds checks, loads and stores,
// shared memory, and the Atlas instructions (SPEC §4) on constant tables.
#include "ptx_lowering.h"

#include "hologram/codegen/spirv_abi.h"
#include "hologram/isa/atlas.h"
#include "hologram/isa/type_dispatch.h"
#include "hologram/support/unreachable.h"

#include <llvm/IR/InlineAsm.h>

#include <algorithm>
#include <bit>

namespace hologram::codegen::ptx {

Value *SimtLowering::shared() {
  if (!shared_) {
    auto *ty = llvm::ArrayType::get(b_.getInt8Ty(), 0);
    shared_ =
        new llvm::GlobalVariable(m_, ty, false, llvm::GlobalValue::ExternalLinkage, nullptr,
                                 "hg_shared", nullptr, llvm::GlobalValue::NotThreadLocal, kShared);
    shared_->setAlignment(llvm::Align(kBaseAlign));
  }
  return shared_;
}

Value *SimtLowering::shared_bytes() {
  auto *fty = llvm::FunctionType::get(i32(), false);
  auto *asm_ = llvm::InlineAsm::get(fty, "mov.u32 $0, %dynamic_smem_size;", "=r", false);
  return b_.CreateZExt(b_.CreateCall(fty, asm_), i64());
}

llvm::AllocaInst *SimtLowering::scratch() {
  if (!scratch_) {
    scratch_ = entry_alloca(llvm::ArrayType::get(b_.getInt8Ty(), scratch_bytes_));
    scratch_->setAlignment(llvm::Align(kBaseAlign));
  }
  return scratch_;
}

auto SimtLowering::address(const isa::Address &a, uint64_t size, Value *extra) -> Place {
  Value *base = nullptr, *limit = nullptr, *handle = nullptr, *named = nullptr;
  Value *region = b_.getInt32(a.base_id);
  const bool pool_op = k_.insts[cur_].info().pool_access();
  switch (a.base) {
  case isa::AddrBase::Param:
  case isa::AddrBase::Pool:
    base = args_.at(a.base_id).value;
    limit = args_.at(a.base_id).bytes;
    break;
  case isa::AddrBase::Shared:
    base = shared();
    limit = o_.bounds_check ? shared_bytes() : nullptr;
    region = b_.getInt32(spirv_status::kSharedMemory);
    break;
  case isa::AddrBase::Class:
    base =
        b_.CreateConstGEP1_64(b_.getInt8Ty(), boundary_, uint64_t{a.base_id} * atlas::kClassBytes);
    limit = b_.getInt64(atlas::kClassBytes);
    region = b_.getInt32(spirv_status::kClassWindows + a.base_id);
    break;
  case isa::AddrBase::Boundary:
    base = boundary_;
    limit = b_.getInt64(atlas::kBoundaryPoolBytes);
    region = b_.getInt32(spirv_status::kBoundaryPool);
    break;
  case isa::AddrBase::Reg: {
    // An address `addr` or pool.alloc made: a generic address (of global memory, or of the
    // thread's scratch in local memory), 16-byte aligned. Under -fbounds-check a handle
    // (hologram/isa/handles.h): the region its tag names among the parameters `addr` takes
    // (pools only for pool.ld and pool.st) and the allocation sites, as on every backend.
    Value *v = get(a.base_id, Type::U64);
    if (!o_.bounds_check) {
      base = b_.CreateIntToPtr(v, b_.getPtrTy());
      break;
    }
    Value *tag = b_.CreateLShr(v, isa::handle::kTagShift);
    base = llvm::ConstantPointerNull::get(b_.getPtrTy());
    limit = b_.getInt64(0);
    named = b_.getFalse();
    auto name = [&](uint64_t bits, Value *start, Value *bytes, Value *id) {
      Value *is = b_.CreateICmpEQ(tag, b_.getInt64(bits >> isa::handle::kTagShift));
      base = b_.CreateSelect(is, start, base);
      limit = b_.CreateSelect(is, bytes, limit);
      region = b_.CreateSelect(is, id, region);
      named = b_.CreateOr(named, is);
    };
    for (uint32_t p : addressed_)
      if (!pool_op || k_.params[p].kind == isa::ParamKind::Pool)
        name(isa::handle::param(p), b_.CreateAddrSpaceCast(args_.at(p).value, b_.getPtrTy()),
             args_.at(p).bytes, b_.getInt32(p));
    uint32_t site = 0; // numbered from 1, in instruction order
    for (const auto &[index, offset] : pool_sites_) {
      ++site;
      name(isa::handle::scratch(site), b_.CreateConstGEP1_64(b_.getInt8Ty(), scratch(), offset),
           b_.getInt64(k_.insts[index].operands[1].imm),
           b_.getInt32(spirv_status::kScratchSites + site));
    }
    handle = v;
    extra = b_.CreateAdd(b_.CreateAnd(v, isa::handle::kOffsetMask), extra ? extra : b_.getInt64(0));
    break;
  }
  }
  Value *off = b_.getInt64(static_cast<uint64_t>(a.disp));
  uint64_t align = kBaseAlign;
  auto proven = [](uint64_t v) { return v == 0 ? kBaseAlign : uint64_t{1} << std::countr_zero(v); };
  align = std::min(align, proven(static_cast<uint64_t>(a.disp)));
  if (a.index != isa::kNoReg) {
    off = b_.CreateAdd(b_.CreateMul(get(a.index, Type::U64), b_.getInt64(a.scale)), off);
    align = std::min(align, proven(a.scale));
  }
  if (extra) off = b_.CreateAdd(off, extra);
  Place place{b_.CreateGEP(b_.getInt8Ty(), base, off), llvm::Align(std::min(align, size))};
  if (o_.bounds_check && limit) {
    // off + size > limit, without overflow: limit < size || off > limit - size.
    Value *bad = b_.CreateOr(b_.CreateICmpULT(limit, b_.getInt64(size)),
                             b_.CreateICmpUGT(off, b_.CreateSub(limit, b_.getInt64(size))));
    if (handle) {
      // A register that names no region (whose limit is 0) reports its bits. The handle's
      // offset is known only now: an access that its alignment would make misaligned on the
      // GPU (a fault that ends the context) is reported as on Vulkan and OpenCL instead.
      record_if(b_.CreateNot(named), spirv_status::InvalidAddress,
                a.base_id | (pool_op ? spirv_status::kPoolHandle : 0), handle,
                static_cast<uint32_t>(size));
      record_region_if(b_.CreateAnd(bad, named), spirv_status::OutOfBounds, region, off,
                       static_cast<uint32_t>(size));
      const uint64_t claimed = std::min(align, size);
      if (claimed > 1) {
        Value *misaligned =
            b_.CreateICmpNE(b_.CreateAnd(off, b_.getInt64(claimed - 1)), b_.getInt64(0));
        record_region_if(b_.CreateAnd(misaligned, b_.CreateNot(bad)), spirv_status::Misaligned,
                         region, off, static_cast<uint32_t>(size));
        bad = b_.CreateOr(bad, misaligned);
      }
    } else {
      record_region_if(bad, spirv_status::OutOfBounds, region, off, static_cast<uint32_t>(size));
    }
    place.ok = b_.CreateNot(bad);
  }
  return place;
}

void SimtLowering::emit_reduce_mem(const isa::Instruction &inst) {
  const Type t = inst.type;
  const auto rop = static_cast<isa::ReduceOp>(inst.sub);
  const uint64_t size = isa::type_size(t);
  Value *n = src(inst, 2, Type::U64);
  BasicBlock *pre = b_.GetInsertBlock();
  BasicBlock *head = BasicBlock::Create(c_, "fold", fn_);
  BasicBlock *body = BasicBlock::Create(c_, "fold.body", fn_);
  BasicBlock *done = BasicBlock::Create(c_, "fold.done", fn_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode *k = b_.CreatePHI(i64(), 2, "fold.k");
  llvm::PHINode *acc = b_.CreatePHI(ops_.scalar_type(t), 2, "fold.acc");
  b_.CreateCondBr(b_.CreateICmpULT(k, n), body, done);
  b_.SetInsertPoint(body);
  Value *x = load(t, address(inst.operands[1].addr, size, b_.CreateMul(k, b_.getInt64(size))));
  Value *next = ops_.fold(rop, t, acc, x);
  Value *k1 = b_.CreateAdd(k, b_.getInt64(1));
  BasicBlock *end = b_.GetInsertBlock();
  b_.CreateBr(head);
  k->addIncoming(b_.getInt64(0), pre);
  k->addIncoming(k1, end);
  acc->addIncoming(ops_.constant(t, isa::reduce_identity(rop, t)), pre);
  acc->addIncoming(next, end);
  b_.SetInsertPoint(done);
  set(inst, 0, t, acc);
}

Value *SimtLowering::load(Type t, const Place &p) {
  llvm::Type *ty = ops_.scalar_type(t);
  return guarded(p.ok, ty, [&] { return b_.CreateAlignedLoad(ty, p.ptr, p.align); });
}

void SimtLowering::store(const Place &p, Value *v) {
  guarded(p.ok, nullptr, [&] { return b_.CreateAlignedStore(v, p.ptr, p.align); });
}

Value *SimtLowering::table_lookup(const std::vector<uint32_t> &table, Value *index,
                                  const std::string &name) {
  auto &g = tables_[name];
  if (!g) g = detail::constant_table(m_, table, name, kConstant);
  return b_.CreateLoad(i32(), b_.CreateGEP(i32(), g, {b_.CreateZExt(index, i64())}));
}

Value *SimtLowering::neighbour(Value *c, uint64_t k) {
  return table_lookup(tabulate(atlas::kNumClasses,
                               [k](uint32_t x) {
                                 auto n = atlas::neighbours(x);
                                 return n.items[k % n.count];
                               }),
                      c, "neighbour" + std::to_string(k));
}

void SimtLowering::emit_atlas(const isa::Instruction &inst) {
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
  case isa::AtlasOpcode::NbrGet: set(inst, 0, Type::U32, neighbour(klass(1), opnds[2].imm)); return;
  case isa::AtlasOpcode::NbrLd:
  case isa::AtlasOpcode::NbrSt: {
    const bool is_ld = inst.op == Opcode::NbrLd;
    const Type t = inst.type;
    const uint64_t size = isa::type_size(t);
    Value *n = neighbour(klass(is_ld ? 1 : 0), opnds[is_ld ? 2 : 1].imm);
    Value *off = get(opnds[is_ld ? 3 : 2].index, Type::U64);
    // The neighbour's class window: bounds are the window; the offset is from its start.
    Value *window = b_.CreateMul(b_.CreateZExt(n, i64()), b_.getInt64(atlas::kClassBytes));
    Place place{b_.CreateGEP(b_.getInt8Ty(), boundary_, b_.CreateAdd(window, off)), llvm::Align(1)};
    if (o_.bounds_check) {
      Value *bad = b_.CreateICmpUGT(off, b_.getInt64(atlas::kClassBytes - size));
      record_region_if(bad, spirv_status::OutOfBounds,
                       b_.CreateAdd(n, b_.getInt32(spirv_status::kClassWindows)), off,
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

} // namespace hologram::codegen::ptx
