// The SPIR-V lowering's instructions: dispatch over the instruction table, and integer and
// float arithmetic with SPEC §3.4's exact semantics (kernel_lowering.h).
#include "flavours.h"

namespace hologram::codegen::spirv {

auto KernelLowering::emit_instruction(const Instruction &inst) -> void {
  Type t = inst.type;
  switch (inst.op) {
  case Opcode::Mov:
  case Opcode::MovImm: dst(inst, src(inst, 1)); return;
  case Opcode::Param: {
    dst(inst, normalize(t, scalar_param(inst.operands[1].index, t)));
    return;
  }
  case Opcode::Cvt: dst(inst, convert(t, inst.type2, src(inst, 1))); return;
  case Opcode::Ld:
  case Opcode::Lds: dst(inst, load_mem(inst, inst.operands[1].addr, t)); return;
  case Opcode::St:
  case Opcode::Sts: store_mem(inst, inst.operands[0].addr, t, src(inst, 1)); return;
  case Opcode::Set:
    dst(inst, compare(static_cast<CmpCode>(inst.sub), t, src(inst, 1), src(inst, 2)));
    return;
  case Opcode::Sel: dst(inst, sel(rep(t), src(inst, 1), src(inst, 2), src(inst, 3))); return;
  case Opcode::PAnd: dst(inst, land(src(inst, 1), src(inst, 2))); return;
  case Opcode::POr: dst(inst, lor(src(inst, 1), src(inst, 2))); return;
  case Opcode::PNot: dst(inst, lnot(src(inst, 1))); return;
  case Opcode::BarSync:
    b_.op_void(Op::OpControlBarrier,
               {cu32(static_cast<uint32_t>(spv::Scope::Workgroup)),
                cu32(static_cast<uint32_t>(spv::Scope::Workgroup)),
                cu32(static_cast<uint32_t>(spv::MemorySemanticsMask::AcquireRelease |
                                           spv::MemorySemanticsMask::WorkgroupMemory |
                                           device_memory(false)))});
    return;
  case Opcode::MemFence: {
    auto scope = static_cast<FenceScope>(inst.sub);
    if (scope == FenceScope::Thread) return; // a lane's own accesses are already ordered
    spv::Scope s = scope == FenceScope::Block ? spv::Scope::Workgroup : spv::Scope::Device;
    auto sem = spv::MemorySemanticsMask::AcquireRelease |
               spv::MemorySemanticsMask::WorkgroupMemory | device_memory(true);
    b_.op_void(Op::OpMemoryBarrier,
               {cu32(static_cast<uint32_t>(s)), cu32(static_cast<uint32_t>(sem))});
    return;
  }
  case Opcode::Atom:
  case Opcode::AtomCas: dst(inst, atomic(inst)); return;
  case Opcode::ReduceReg: {
    auto rop = static_cast<ReduceOp>(inst.sub);
    Id acc = constant(t, reduce_identity(rop, t));
    for (uint64_t k = 0; k < inst.operands[2].imm; ++k)
      acc = fold(rop, t, acc, read_reg(static_cast<Reg>(inst.operands[1].index + k), t));
    dst(inst, acc);
    return;
  }
  case Opcode::ReduceMem: dst(inst, reduce_memory(inst)); return;
  case Opcode::Addr: dst(inst, cu64(handle::param(inst.operands[1].index))); return;
  case Opcode::PoolAlloc: {
    // The site's handle (hologram/isa/handles.h); its region, zero-filled.
    const auto &site = scratch_sites_.at(inst_index_);
    Id first =
        to32(op(Op::OpShiftRightLogical, u64t(), {scratch_base(cu64(site.offset)), cu32(2)}));
    Id w_var = b_.local_variable(u32t());
    store(w_var, cu32(0));
    Id w = 0;
    Address scratch{AddrBase::Reg, 0, kNoReg, 1, 0};
    auto words = static_cast<uint32_t>((site.size + 3) / 4);
    structured_loop(
        [&] {
          w = load(u32t(), w_var);
          return op(Op::OpULessThan, boolt(), {w, cu32(words)});
        },
        [&] {
          store(word_ptr(scratch, op(Op::OpIAdd, u32t(), {first, w})), cu32(0));
          store(w_var, op(Op::OpIAdd, u32t(), {w, cu32(1)}));
        });
    dst(inst, cu64(handle::scratch(site.site)));
    return;
  }
  case Opcode::PoolFree: return; // the region is the site's again; the verifier pairs them
  case Opcode::PoolLd: dst(inst, load_mem(inst, inst.operands[1].addr, t)); return;
  case Opcode::PoolSt: store_mem(inst, inst.operands[0].addr, t, src(inst, 1)); return;
  case Opcode::Add:
  case Opcode::Sub:
  case Opcode::Mul:
  case Opcode::Div:
  case Opcode::Rem:
  case Opcode::Mad:
  case Opcode::Fma:
  case Opcode::Fms:
  case Opcode::Min:
  case Opcode::Max:
  case Opcode::Abs:
  case Opcode::Neg:
  case Opcode::Rcp:
  case Opcode::Clamp:
  case Opcode::Lerp:
  case Opcode::Sign:
  case Opcode::Floor:
  case Opcode::Ceil:
  case Opcode::Round:
  case Opcode::Trunc:
  case Opcode::And:
  case Opcode::Or:
  case Opcode::Xor:
  case Opcode::Not:
  case Opcode::Shl:
  case Opcode::Shr:
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
  case Opcode::Pow:
  case Opcode::Atan2: dst(inst, arith(inst)); return;
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
  case Opcode::BoundMap: return atlas_op(as_family<AtlasOpcode>(inst.op), inst);
  case Opcode::Bra:
  case Opcode::Call:
  case Opcode::Ret:
  case Opcode::Loop:
  case Opcode::Exit:
    throw std::logic_error("spirv: control instructions end their block (emit_control)");
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
  case Opcode::Axpy:
    throw Unsupported("'" + std::string(inst.info().mnemonic) +
                          "' runs as a whole launch (the device library), not in a kernel",
                      inst.loc);
  }
}

auto KernelLowering::fold(ReduceOp rop, Type t, Id acc, Id v) -> Id {
  switch (rop) {
  case ReduceOp::Add: return binary(BinaryOp::Add, t, acc, v);
  case ReduceOp::Mul: return binary(BinaryOp::Mul, t, acc, v);
  case ReduceOp::Min: return binary(BinaryOp::Min, t, acc, v);
  case ReduceOp::Max: return binary(BinaryOp::Max, t, acc, v);
  }
  return acc;
}

auto KernelLowering::arith(const Instruction &inst) -> Id {
  const Type t = inst.type;
  auto un = [&](UnaryOp o) { return unary(o, t, src(inst, 1)); };
  auto bin = [&](BinaryOp o) { return binary(o, t, src(inst, 1), src(inst, 2)); };
  auto ter = [&](TernaryOp o) { return ternary(o, t, src(inst, 1), src(inst, 2), src(inst, 3)); };
  switch (family_of(inst.op)) {
  case OpFamily::Arith:
    switch (as_family<ArithOpcode>(inst.op)) {
    case ArithOpcode::Add: return bin(BinaryOp::Add);
    case ArithOpcode::Sub: return bin(BinaryOp::Sub);
    case ArithOpcode::Mul: return bin(BinaryOp::Mul);
    case ArithOpcode::Div: return bin(BinaryOp::Div);
    case ArithOpcode::Rem: return bin(BinaryOp::Rem);
    case ArithOpcode::Min: return bin(BinaryOp::Min);
    case ArithOpcode::Max: return bin(BinaryOp::Max);
    case ArithOpcode::Mad: return ter(TernaryOp::Mad);
    case ArithOpcode::Fma: return ter(TernaryOp::Fma);
    case ArithOpcode::Fms: return ter(TernaryOp::Fms);
    case ArithOpcode::Clamp: return ter(TernaryOp::Clamp);
    case ArithOpcode::Lerp: return ter(TernaryOp::Lerp);
    case ArithOpcode::Abs: return un(UnaryOp::Abs);
    case ArithOpcode::Neg: return un(UnaryOp::Neg);
    case ArithOpcode::Rcp: return un(UnaryOp::Rcp);
    case ArithOpcode::Sign: return un(UnaryOp::Sign);
    case ArithOpcode::Floor: return un(UnaryOp::Floor);
    case ArithOpcode::Ceil: return un(UnaryOp::Ceil);
    case ArithOpcode::Round: return un(UnaryOp::Round);
    case ArithOpcode::Trunc: return un(UnaryOp::Trunc);
    }
    break;
  case OpFamily::Logic:
    switch (as_family<LogicOpcode>(inst.op)) {
    case LogicOpcode::And: return bin(BinaryOp::And);
    case LogicOpcode::Or: return bin(BinaryOp::Or);
    case LogicOpcode::Xor: return bin(BinaryOp::Xor);
    case LogicOpcode::Shl: return bin(BinaryOp::Shl);
    case LogicOpcode::Shr: return bin(BinaryOp::Shr);
    case LogicOpcode::Not: return un(UnaryOp::Not);
    case LogicOpcode::Set:
    case LogicOpcode::Sel:
    case LogicOpcode::PAnd:
    case LogicOpcode::POr:
    case LogicOpcode::PNot: break; // predicates and selection: emit_logic
    }
    break;
  case OpFamily::Math: {
    const auto o = as_family<MathOpcode>(inst.op);
    if (o == MathOpcode::Pow) return bin(BinaryOp::Pow);
    if (o == MathOpcode::Atan2) return bin(BinaryOp::Atan2);
    return math(o, t, src(inst, 1));
  }
  case OpFamily::Move:
  case OpFamily::Control:
  case OpFamily::Sync:
  case OpFamily::Atomic:
  case OpFamily::Atlas:
  case OpFamily::Reduce:
  case OpFamily::Pool:
  case OpFamily::HigherOrder:
  case OpFamily::Library: break;
  }
  throw std::logic_error("spirv: arith() on '" + std::string(inst.info().mnemonic) + "'");
}

auto KernelLowering::signbit(Type t, Id x) -> Id {
  if (t == Type::F64) return op(Op::OpSLessThan, boolt(), {bitcast(u64t(), x), cu64(0)});
  return op(Op::OpSLessThan, boolt(), {bitcast(u32t(), x), cu32(0)});
}

auto KernelLowering::trunc(Type t, Id x) -> Id {
  if (t != Type::F64) return glsl(rep(t), GLSLstd450Trunc, {x});
  // The fraction bits below the exponent cleared: none from 2^52 up (and infinities and
  // NaNs), all below 1 (leaving x's sign).
  Id bits = bitcast(u64t(), x);
  Id e = op(Op::OpISub, u64t(),
            {op(Op::OpBitwiseAnd, u64t(),
                {op(Op::OpShiftRightLogical, u64t(), {bits, cu64(52)}), cu64(0x7ff)}),
             cu64(1023)});
  Id below_one = op(Op::OpSLessThan, boolt(), {e, cu64(0)});
  Id whole = op(Op::OpSGreaterThanEqual, boolt(), {e, cu64(52)});
  Id frac = op(Op::OpISub, u64t(),
               {op(Op::OpShiftLeftLogical, u64t(),
                   {cu64(1), op(Op::OpISub, u64t(),
                                {cu64(52), sel(u64t(), lor(below_one, whole), cu64(0), e)})}),
                cu64(1)});
  Id kept = op(Op::OpBitwiseAnd, u64t(), {bits, op(Op::OpNot, u64t(), {frac})});
  kept = sel(
      u64t(), whole, bits,
      sel(u64t(), below_one, op(Op::OpBitwiseAnd, u64t(), {bits, cu64(uint64_t{1} << 63)}), kept));
  return bitcast(f64t(), kept);
}

auto KernelLowering::fminmax(bool is_min, Type t, Id a, Id c) -> Id {
  Id ft = rep(t);
  Id better = op(is_min ? Op::OpFOrdLessThan : Op::OpFOrdGreaterThan, boolt(), {a, c});
  Id r = sel(ft, better, a, c);
  Id zero = cfloat(t, 0.0);
  Id both_zero =
      land(op(Op::OpFOrdEqual, boolt(), {a, zero}), op(Op::OpFOrdEqual, boolt(), {c, zero}));
  Id a_neg = signbit(t, a);
  Id pick_a = is_min ? a_neg : lnot(a_neg);
  r = sel(ft, land(both_zero, pick_a), a, r);
  r = sel(ft, isnan(a), c, r);
  return sel(ft, isnan(c), a, r);
}

auto KernelLowering::binary(BinaryOp o, Type t, Id a, Id c) -> Id {
  Id ty = rep(t);
  bool f = is_float(t), s = is_signed_int(t);
  auto wrap = [&](Id v) { return normalize(t, v); };
  switch (o) {
  case BinaryOp::Add:
    return f ? exact(op(Op::OpFAdd, ty, {a, c})) : wrap(op(Op::OpIAdd, ty, {a, c}));
  case BinaryOp::Sub:
    return f ? exact(op(Op::OpFSub, ty, {a, c})) : wrap(op(Op::OpISub, ty, {a, c}));
  case BinaryOp::Mul:
    return f ? exact(op(Op::OpFMul, ty, {a, c})) : wrap(op(Op::OpIMul, ty, {a, c}));
  case BinaryOp::Div:
  case BinaryOp::Rem: {
    if (f) return o == BinaryOp::Div ? exact(op(Op::OpFDiv, ty, {a, c})) : frem(t, a, c);
    Id zero = b_.c_null(ty);
    Id by_zero = ieq(c, zero);
    if (o_.check_div) record_if(by_zero, spirv_status::DivisionByZero, 0, zero_u64(), 0);
    Id unsafe = by_zero;
    if (s && type_size(t) >= 4) {
      Id min = is64(t) ? cu64(uint64_t{1} << 63) : cu32(0x80000000u);
      Id minus1 = is64(t) ? cu64(~uint64_t{0}) : cu32(0xffffffffu);
      unsafe = lor(unsafe, land(ieq(a, min), ieq(c, minus1)));
    }
    Id one = is64(t) ? cu64(1) : cu32(1);
    Id divisor = sel(ty, unsafe, one, c);
    Id r = 0;
    if (o == BinaryOp::Rem && s) {
      r = signed_rem(ty, a, divisor);
    } else {
      Op dop = o == BinaryOp::Div ? (s ? Op::OpSDiv : Op::OpUDiv) : Op::OpUMod;
      r = op(dop, ty, {a, divisor});
    }
    // MIN / -1 = MIN (the division by one above keeps a); MIN rem -1 = 0 (a rem 1 is 0).
    return wrap(sel(ty, by_zero, zero, r));
  }
  case BinaryOp::Min:
  case BinaryOp::Max: {
    bool is_min = o == BinaryOp::Min;
    if (f) return fminmax(is_min, t, a, c);
    Op lt = s ? Op::OpSLessThan : Op::OpULessThan;
    Id a_first = op(lt, boolt(), is_min ? Words{a, c} : Words{c, a});
    return sel(ty, a_first, a, c);
  }
  case BinaryOp::And: return op(Op::OpBitwiseAnd, ty, {a, c});
  case BinaryOp::Or: return op(Op::OpBitwiseOr, ty, {a, c});
  case BinaryOp::Xor: return op(Op::OpBitwiseXor, ty, {a, c});
  case BinaryOp::Shl:
  case BinaryOp::Shr: {
    Id amount = op(Op::OpBitwiseAnd, u32t(), {c, cu32(type_bits(t) - 1)});
    if (o == BinaryOp::Shl) return wrap(op(Op::OpShiftLeftLogical, ty, {a, amount}));
    return op(s ? Op::OpShiftRightArithmetic : Op::OpShiftRightLogical, ty, {a, amount});
  }
  case BinaryOp::Pow:
  case BinaryOp::Atan2: {
    if (t == Type::F64 && !f32_library_)
      return f64_math(o == BinaryOp::Pow ? MathOpcode::Pow : MathOpcode::Atan2, a, c);
    if (o_.fast_math && t != Type::F64)
      return glsl(ty, o == BinaryOp::Pow ? GLSLstd450Pow : GLSLstd450Atan2, {a, c});
    // In f64 and rounded once (f32), like the other transcendentals.
    Id va = t == Type::F64 ? a : op(Op::OpFConvert, f64t(), {a});
    Id vc = t == Type::F64 ? c : op(Op::OpFConvert, f64t(), {c});
    Id r = o == BinaryOp::Pow ? pow64(va, vc) : atan2_64(va, vc);
    return t == Type::F64 ? r : op(Op::OpFConvert, f32t(), {r});
  }
  }
  unreachable_enum("BinaryOp");
}

auto KernelLowering::unary(UnaryOp o, Type t, Id x) -> Id {
  Id ty = rep(t);
  bool f = is_float(t), s = is_signed_int(t);
  switch (o) {
  case UnaryOp::Abs:
    if (f) return glsl(ty, GLSLstd450FAbs, {x});
    if (!s) return x;
    return normalize(t, sel(ty, op(Op::OpSLessThan, boolt(), {x, b_.c_null(ty)}),
                            op(Op::OpSNegate, ty, {x}), x));
  case UnaryOp::Neg:
    return f ? op(Op::OpFNegate, ty, {x}) : normalize(t, op(Op::OpSNegate, ty, {x}));
  case UnaryOp::Not: return normalize(t, op(Op::OpNot, ty, {x}));
  case UnaryOp::Sign: {
    if (f) {
      Id one = cfloat(t, 1.0), minus = cfloat(t, -1.0), zero = cfloat(t, 0.0);
      return sel(ty, op(Op::OpFOrdGreaterThan, boolt(), {x, zero}), one,
                 sel(ty, op(Op::OpFOrdLessThan, boolt(), {x, zero}), minus, x));
    }
    Id zero = b_.c_null(ty);
    Id one = is64(t) ? cu64(1) : cu32(1);
    Id pos = op(s ? Op::OpSGreaterThan : Op::OpUGreaterThan, boolt(), {x, zero});
    if (!s) return sel(ty, pos, one, zero);
    Id minus = is64(t) ? cu64(~uint64_t{0}) : cu32(0xffffffffu);
    return sel(ty, pos, one, sel(ty, op(Op::OpSLessThan, boolt(), {x, zero}), minus, zero));
  }
  case UnaryOp::Rcp: return exact(op(Op::OpFDiv, ty, {cfloat(t, 1.0), x}));
  case UnaryOp::Floor:
  case UnaryOp::Ceil: {
    if (t != Type::F64)
      return glsl(ty, o == UnaryOp::Floor ? GLSLstd450Floor : GLSLstd450Ceil, {x});
    // trunc(x), one step down (floor) or up (ceil) where x is not an integer: exact.
    Id tr = trunc(t, x);
    Id past =
        op(o == UnaryOp::Floor ? Op::OpFOrdLessThan : Op::OpFOrdGreaterThan, boolt(), {x, tr});
    Id stepped = exact(op(Op::OpFAdd, ty, {tr, cfloat(t, o == UnaryOp::Floor ? -1.0 : 1.0)}));
    return sel(ty, past, stepped, tr);
  }
  case UnaryOp::Trunc: return trunc(t, x);
  case UnaryOp::Round: {
    // Half away from zero: x - trunc(x) is exact, so compare it with 0.5.
    Id tr = trunc(t, x);
    Id frac = glsl(ty, GLSLstd450FAbs, {exact(op(Op::OpFSub, ty, {x, tr}))});
    Id up = op(Op::OpFOrdGreaterThanEqual, boolt(), {frac, cfloat(t, 0.5)});
    Id step = glsl(ty, GLSLstd450FSign, {x});
    return sel(ty, up, exact(op(Op::OpFAdd, ty, {tr, step})), tr);
  }
  }
  unreachable_enum("UnaryOp");
}

auto KernelLowering::ternary(TernaryOp o, Type t, Id a, Id c, Id d) -> Id {
  Id ty = rep(t);
  switch (o) {
  case TernaryOp::Mad:
    if (is_float(t)) return exact(op(Op::OpFAdd, ty, {exact(op(Op::OpFMul, ty, {a, c})), d}));
    return normalize(t, op(Op::OpIAdd, ty, {op(Op::OpIMul, ty, {a, c}), d}));
  case TernaryOp::Fma: return fma(t, a, c, d);
  case TernaryOp::Fms: return fma(t, a, c, op(Op::OpFNegate, ty, {d}));
  case TernaryOp::Clamp: return binary(BinaryOp::Min, t, binary(BinaryOp::Max, t, a, c), d);
  case TernaryOp::Lerp: {
    Id diff = exact(op(Op::OpFSub, ty, {c, a}));
    return exact(op(Op::OpFAdd, ty, {a, exact(op(Op::OpFMul, ty, {diff, d}))}));
  }
  }
  unreachable_enum("TernaryOp");
}

auto KernelLowering::compare(CmpCode cc, Type t, Id a, Id c) -> Id {
  if (is_float(t)) {
    static constexpr Op kOps[] = {
        Op::OpFOrdEqual,           Op::OpFOrdNotEqual,      Op::OpFOrdLessThan,
        Op::OpFOrdLessThanEqual,   Op::OpFOrdGreaterThan,   Op::OpFOrdGreaterThanEqual,
        Op::OpFUnordEqual,         Op::OpFUnordNotEqual,    Op::OpFUnordLessThan,
        Op::OpFUnordLessThanEqual, Op::OpFUnordGreaterThan, Op::OpFUnordGreaterThanEqual};
    return op(kOps[static_cast<int>(cc)], boolt(), {a, c});
  }
  bool s = is_signed_int(t);
  switch (cc) {
  case CmpCode::Eq: return ieq(a, c);
  case CmpCode::Ne: return ine(a, c);
  case CmpCode::Lt: return op(s ? Op::OpSLessThan : Op::OpULessThan, boolt(), {a, c});
  case CmpCode::Le: return op(s ? Op::OpSLessThanEqual : Op::OpULessThanEqual, boolt(), {a, c});
  case CmpCode::Gt: return op(s ? Op::OpSGreaterThan : Op::OpUGreaterThan, boolt(), {a, c});
  case CmpCode::Ge:
    return op(s ? Op::OpSGreaterThanEqual : Op::OpUGreaterThanEqual, boolt(), {a, c});
  case CmpCode::Equ:
  case CmpCode::Geu:
  case CmpCode::Gtu:
  case CmpCode::Leu:
  case CmpCode::Ltu:
  case CmpCode::Neu: break;
  }
  throw Unsupported("unordered comparison on integers");
}

} // namespace hologram::codegen::spirv
