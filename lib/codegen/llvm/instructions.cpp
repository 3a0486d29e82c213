// The x86 lowering's instructions: dispatch over the instruction table, arithmetic,
// comparisons, conversions, calls and returns, and whole-launch instructions (kernel_lowering.h).
#include "kernel_lowering.h"

namespace hologram::codegen::detail {

// ---------------------------------------------------------------------------------------------
// Instructions

auto KernelLowering::set_binary(const Instruction &inst, BinaryOp op) -> void {
  set(inst, 0, inst.type, binary(op, inst.type, src(inst, 1, inst.type), src(inst, 2, inst.type)));
}

auto KernelLowering::fold(ReduceOp op, Type t, V acc, V x) -> V {
  switch (op) {
  case ReduceOp::Add: return binary(BinaryOp::Add, t, acc, x);
  case ReduceOp::Mul: return binary(BinaryOp::Mul, t, acc, x);
  case ReduceOp::Min: return min_max(true, t, acc, x);
  case ReduceOp::Max: return min_max(false, t, acc, x);
  }
  unreachable_enum("ReduceOp");
}

auto KernelLowering::uses_shared() const -> bool {
  for (const auto &inst : k_.insts)
    for (const auto &op : inst.operands)
      if (op.kind == OperandKind::Addr && op.addr.base == AddrBase::Shared) return true;
  return false;
}

auto KernelLowering::state_type_bytes() -> uint32_t {
  state_type();
  return state_bytes_;
}

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
      // A value that stays below 2^63 - stride (w - 1) cannot wrap within the chunk (the value
      // ranges: %gid among them, as the runtime refuses launches of 2^62 lanes or more), so
      // its last lane is its first plus stride (w - 1) with no overflow, and LLVM may fold the
      // two ends' tests into one.
      const isa::Operand &g = ops[grows];
      const bool gid = g.kind == isa::OperandKind::Reg && g.index == special_reg(Special::Gid);
      const uint64_t span = static_cast<uint64_t>(stride) * (w_ - 1);
      const bool no_wrap = stride > 0 && g.kind == isa::OperandKind::Reg &&
                           ranges_.adds_without_wrap(g.index, t, span);
      Value *xw = b_.CreateAdd(x0, u64c(span), "", no_wrap, no_wrap);
      Value *ordered = no_wrap            ? b_.getTrue()
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
  case Opcode::Axpy: emit_launch_ops(cur_, 1); return;
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

void KernelLowering::emit_launch_ops(uint32_t first, uint32_t count) {
  // Whole-launch kernels run as one lane; the runtime's library runs the operations with
  // every thread and the best vector code for the machine. The operands of the instructions
  // follow each other in one array.
  size_t total = 0;
  for (uint32_t i = first; i < first + count; ++i) total += k_.insts[i].operands.size();
  auto *regs = entry_alloca(llvm::ArrayType::get(i64(), std::max<size_t>(1, total)));
  size_t slot = 0;
  for (uint32_t i = first; i < first + count; ++i) {
    const Instruction &inst = k_.insts[i];
    const auto &row = inst.info();
    for (size_t j = 0; j < inst.operands.size(); ++j, ++slot) {
      const Operand &op = inst.operands[j];
      Value *bits = u64c(0);
      if (op.kind == OperandKind::Reg && j < row.num_operands()) {
        const Type t = read_type(inst, row.role(j));
        if (t != Type::None) bits = bits64(lane_of(get(op.index, t), 0), t);
      }
      b_.CreateStore(bits, b_.CreateConstGEP2_64(regs->getAllocatedType(), regs, 0, slot));
    }
  }
  auto *result = entry_alloca(i64());
  b_.CreateStore(u64c(0), result);
  Value *fn = load_field(abi_.launch, launch_, LLaunchOp, ptr());
  auto *fty = llvm::FunctionType::get(i32(), {ptr(), i32(), i32(), i32(), ptr(), ptr()}, false);
  Value *st = b_.CreateCall(fty, fn,
                            {launch_, u32c(kernel_index_), u32c(first), u32c(count), regs, result});
  // A nonzero status is one more than the position in the run of the instruction that failed.
  fail_if(b_.CreateICmpNE(st, u32c(0)), HG_CPU_ERR_LAUNCH_OP,
          b_.CreateAdd(u32c(first), b_.CreateSub(st, u32c(1))), nullptr, 0, 0);
  const Instruction &last = k_.insts[first + count - 1];
  if (last.info().reduces())
    set(last, 0, last.type, {from_bits64(b_.CreateLoad(i64(), result), last.type), true});
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

} // namespace hologram::codegen::detail
