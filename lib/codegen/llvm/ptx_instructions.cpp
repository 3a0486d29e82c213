// The PTX back end (ptx_lowering.h): the instruction switch, one case per opcode. The
// whole-launch instructions run on the host beside the device library's kernels, so this
// back end names them as not lowered here (compile_ptx never passes them).
#include "ptx_lowering.h"

#include "hologram/codegen/spirv_abi.h"
#include "hologram/isa/type_dispatch.h"
#include "hologram/support/unreachable.h"
#include "math_ir.h"

namespace hologram::codegen::ptx {

void SimtLowering::binary(const isa::Instruction &inst, detail::ValueOps::BinaryOp op) {
  const Type t = inst.type;
  Value *x = src(inst, 1, t), *y = src(inst, 2, t);
  using B = detail::ValueOps::BinaryOp;
  if (o_.check_div && (op == B::Div || op == B::Rem) && isa::is_int(t))
    record_if(b_.CreateICmpEQ(y, llvm::Constant::getNullValue(y->getType())),
              spirv_status::DivisionByZero, 0, b_.getInt64(0), 0);
  set(inst, 0, t, ops_.binary(op, t, x, y));
}

void SimtLowering::emit(const isa::Instruction &inst, uint32_t block) {
  using BinaryOp = detail::ValueOps::BinaryOp;
  const Type t = inst.type;
  const auto &opnds = inst.operands;
  switch (inst.op) {
  case Opcode::Ld:
  case Opcode::Lds:
  case Opcode::PoolLd: set(inst, 0, t, load(t, address(opnds[1].addr, isa::type_size(t)))); return;
  case Opcode::St:
  case Opcode::Sts:
  case Opcode::PoolSt: store(address(opnds[0].addr, isa::type_size(t)), src(inst, 1, t)); return;
  case Opcode::Mov: set(inst, 0, t, src(inst, 1, t)); return;
  case Opcode::MovImm: set(inst, 0, t, ops_.constant(t, opnds[1].imm)); return;
  case Opcode::Cvt: set(inst, 0, t, ops_.convert(src(inst, 1, inst.type2), t, inst.type2)); return;
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
  case Opcode::Rem: binary(inst, BinaryOp::Rem); return;
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
        detail::emit_math(b_, math_, isa::as_family<isa::MathOpcode>(inst.op), {src(inst, 1, t)}));
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

  case Opcode::Addr: // a handle under -fbounds-check (address()), else the generic address
    set(inst, 0, Type::U64,
        o_.bounds_check
            ? b_.getInt64(isa::handle::param(opnds[1].index))
            : b_.CreatePtrToInt(
                  b_.CreateAddrSpaceCast(args_.at(opnds[1].index).value, b_.getPtrTy()), i64()));
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
    for (uint64_t j = 0; j < opnds[2].imm; ++j)
      acc = ops_.fold(rop, t, acc, get(static_cast<isa::Reg>(opnds[1].index + j), t));
    set(inst, 0, t, acc);
    return;
  }
  case Opcode::ReduceMem: emit_reduce_mem(inst); return;
  case Opcode::PoolAlloc: {
    // Each thread's scratch is local memory: every allocation site has a fixed place in it
    // (the verifier frees an allocation before its site allocates again), zeroed here.
    // Under -fbounds-check the handle is the site's (address(); sites are numbered from 1 in
    // instruction order).
    const uint64_t size = opnds[1].imm;
    auto site = pool_sites_.find(cur_);
    Value *p = b_.CreateConstGEP1_64(b_.getInt8Ty(), scratch(), site->second);
    b_.CreateMemSet(p, b_.getInt8(0), size, llvm::MaybeAlign(kBaseAlign));
    set(inst, 0, Type::U64,
        o_.bounds_check
            ? b_.getInt64(isa::handle::scratch(std::distance(pool_sites_.begin(), site) + 1))
            : b_.CreatePtrToInt(p, i64()));
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

} // namespace hologram::codegen::ptx
