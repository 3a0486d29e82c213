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
  return lift({acc, x}, [&](auto &v) { return ops_.fold(op, t, v[0], v[1]); });
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
  case Opcode::Addr: // a handle under -fbounds-check (resolve_handle), else the address
    set(inst, 0, Type::U64,
        {opts_.bounds_check ? u64c(handle::param(ops[1].index))
                            : b_.CreatePtrToInt(param_pointer(ops[1].index), i64()),
         true});
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
  case Opcode::Shr:
    set(inst, 0, t, lift({src(inst, 1, t), src(inst, 2, Type::U32)}, [&](auto &v) {
          return ops_.shift(inst.op == Opcode::Shl, t, v[0], v[1]);
        }));
    return;
  case Opcode::Not:
    set(inst, 0, t, lift({src(inst, 1, t)}, [&](auto &v) { return b_.CreateNot(v[0]); }));
    return;
  case Opcode::Mad:
    set(inst, 0, t, lift({src(inst, 1, t), src(inst, 2, t), src(inst, 3, t)}, [&](auto &v) {
          return ops_.mad(t, v[0], v[1], v[2]);
        }));
    return;
  case Opcode::Fma:
  case Opcode::Fms:
    set(inst, 0, t, lift({src(inst, 1, t), src(inst, 2, t), src(inst, 3, t)}, [&](auto &v) {
          return ops_.fma(inst.op == Opcode::Fms, v[0], v[1], v[2]);
        }));
    return;
  case Opcode::Clamp: {
    V lo = min_max(false, t, src(inst, 1, t), src(inst, 2, t));
    set(inst, 0, t, min_max(true, t, lo, src(inst, 3, t)));
    return;
  }
  case Opcode::Lerp:
    set(inst, 0, t, lift({src(inst, 1, t), src(inst, 2, t), src(inst, 3, t)}, [&](auto &v) {
          return ops_.lerp(v[0], v[1], v[2]);
        }));
    return;
  case Opcode::Abs:
    set(inst, 0, t, lift({src(inst, 1, t)}, [&](auto &v) { return ops_.abs(t, v[0]); }));
    return;
  case Opcode::Neg:
    set(inst, 0, t, lift({src(inst, 1, t)}, [&](auto &v) { return ops_.neg(t, v[0]); }));
    return;
  case Opcode::Rcp:
    set(inst, 0, t, lift({src(inst, 1, t)}, [&](auto &v) { return ops_.rcp(v[0]); }));
    return;
  case Opcode::Sign:
    set(inst, 0, t, lift({src(inst, 1, t)}, [&](auto &v) { return ops_.sign(t, v[0]); }));
    return;
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
    Value *prefix = gid_prefix(inst);
    const V c = prefix
                    ? V{prefix, false}
                    : compare(static_cast<CmpCode>(inst.sub), t, src(inst, 1, t), src(inst, 2, t));
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
        Value *first = first_gid_;
        Value *last = b_.CreateAdd(first, b_.CreateZExt(b_.CreateSub(span_lanes_, u32c(1)), i64()));
        ends.block_value = at(first);
        ends.block_agrees =
            b_.CreateAnd(block_whole_, b_.CreateICmpEQ(ends.block_value, at(last)), "block.agrees");
        Value *run = first_run(cc, grows, first, y);
        ends.agreeing_chunks = agreeing_chunks(run, ends.block_agrees);
        if (run) // ceil(run / w)
          ends.first_run_chunks = b_.CreateTrunc(
              b_.CreateUDiv(b_.CreateAdd(run, u64c(w_ - 1)), u64c(w_)), i32(), "first.run.chunks");
        const isa::Operand &other = ops[3 - grows];
        ends.once_per_chunk = first_block_once_ && !a_.has_barriers && a_.block_of[cur_] == 0 &&
                              (other.kind == isa::OperandKind::Imm ||
                               (other.kind == isa::OperandKind::Reg &&
                                same_in_every_chunk({false, other.index, t}, cur_)));
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
  if ((op == BinaryOp::Div || op == BinaryOp::Rem) && !is_fp(t) && opts_.check_div) {
    V zero = lift({y}, [&](auto &v) {
      return b_.CreateICmpEQ(v[0], llvm::Constant::getNullValue(v[0]->getType()));
    });
    fail_if(active(zero.v), HG_CPU_ERR_DIV_ZERO, cur_, nullptr);
  }
  return lift({x, y}, [&](auto &v) { return ops_.binary(op, t, v[0], v[1]); });
}

V KernelLowering::min_max(bool is_min, Type t, V x, V y) {
  return lift({x, y}, [&](auto &v) { return ops_.min_max(is_min, t, v[0], v[1]); });
}

V KernelLowering::compare(CmpCode cc, Type t, V x, V y) {
  return lift({x, y}, [&](auto &v) { return ops_.compare(cc, t, v[0], v[1]); });
}

V KernelLowering::convert(V x, Type dst, Type src) {
  return {ops_.convert(x.v, dst, src), x.uni};
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
