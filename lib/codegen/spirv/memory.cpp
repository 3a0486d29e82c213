// The SPIR-V lowering's memory: buffers, register addresses, shared memory and the boundary
// pool as u32 words, launch scratch, bounds checks into the status buffer, atomics
// (kernel_lowering.h).
#include "flavours.h"

namespace hologram::codegen::spirv {

auto KernelLowering::byte_offset(const Address &a) -> Id {
  Id off = cu64(static_cast<uint64_t>(a.disp));
  if (a.index == kNoReg) return off;
  Id idx = read_reg(a.index, Type::U64);
  Id scaled = a.scale == 1 ? idx : op(Op::OpIMul, u64t(), {idx, cu64(a.scale)});
  return a.disp == 0 ? scaled : op(Op::OpIAdd, u64t(), {scaled, off});
}

auto KernelLowering::record_if(Id cond, uint32_t code, uint32_t param, Id offset64, uint32_t size)
    -> void {
  if (status_) record_region_if(cond, code, cu32(param), offset64, size);
}

auto KernelLowering::record_region_if(Id cond, uint32_t code, Id param, Id offset64, uint32_t size)
    -> void {
  if (!status_) return;
  if_then(cond, [&] {
    Id ptr0 = status_word(0);
    Id prev = op(Op::OpAtomicCompareExchange, u32t(),
                 {ptr0, cu32(static_cast<uint32_t>(spv::Scope::Device)), cu32(0), cu32(0),
                  cu32(code), cu32(0)});
    if_then(ieq(prev, cu32(0)), [&] {
      Id gid = specials_.gid;
      store(status_word(1), to32(gid));
      store(status_word(2), to32(op(Op::OpShiftRightLogical, u64t(), {gid, cu32(32)})));
      store(status_word(3), param);
      store(status_word(4), to32(offset64));
      store(status_word(5), to32(op(Op::OpShiftRightLogical, u64t(), {offset64, cu32(32)})));
      store(status_word(6), cu32(size));
      store(status_word(7), cu32(inst_index_));
    });
  });
}

auto KernelLowering::through_reg(const Address &a) -> bool {
  return a.base == AddrBase::Reg && a.base_id != kHandleReg;
}

auto KernelLowering::through_register(const Instruction &inst, const Address &a, Id type,
                                      const std::function<Id(const Address &)> &body) -> Id {
  bool pool_op = inst.info().pool_access();
  Id v = read_reg(a.base_id, Type::U64);
  Id tag = to32(op(Op::OpShiftRightLogical, u64t(), {v, cu32(handle::kTagShift)}));
  Id disp = byte_offset(a);
  Id off =
      op(Op::OpIAdd, u64t(), {op(Op::OpBitwiseAnd, u64t(), {v, cu64(handle::kOffsetMask)}), disp});
  Id result = type ? b_.local_variable(type) : 0;
  if (type) store(result, b_.c_null(type));
  Id named = 0;
  auto region = [&](Id is, const Address &r, Id offset, Id handle) {
    named = named ? lor(named, is) : is;
    if_then(is, [&] {
      Id saved_offset = pending_offset_, saved_handle = pending_handle_;
      pending_offset_ = offset;
      pending_handle_ = handle;
      Id x = body(r);
      if (type) store(result, x);
      pending_offset_ = saved_offset;
      pending_handle_ = saved_handle;
    });
  };
  for (uint32_t p : addressed_params_) {
    bool pool = k_.params[p].kind == ParamKind::Pool;
    if (pool_op && !pool) continue;
    region(ieq(tag, cu32(static_cast<uint32_t>(handle::param(p) >> handle::kTagShift))),
           {pool ? AddrBase::Pool : AddrBase::Param, static_cast<uint16_t>(p), kPendingReg, 1, 0},
           off, 0);
  }
  if (!scratch_sites_.empty()) {
    Id is =
        land(op(Op::OpUGreaterThan, boolt(), {tag, cu32(handle::kScratchTag)}),
             op(Op::OpULessThanEqual, boolt(),
                {tag, cu32(static_cast<uint32_t>(handle::kScratchTag + scratch_sites_.size()))}));
    region(is, {AddrBase::Reg, kHandleReg, kPendingReg, 1, 0}, disp, v);
  }
  record_if(named ? lnot(named) : ctrue(), spirv_status::InvalidAddress,
            a.base_id | (pool_op ? spirv_status::kPoolHandle : 0), v, access_size(inst));
  return type ? load(type, result) : 0;
}

auto KernelLowering::buffer_as(uint32_t p, Type t) -> Buffer {
  const Buffer &buf = buffers_.at(p);
  Id elem = mem_int(t);
  if (elem == buf.elem) return buf;
  return {buffer_view(buf, elem, type_size(t)), elem};
}

auto KernelLowering::buffer_place(const Instruction &inst, const Address &a, Type t) -> Place {
  uint32_t p = a.base_id;
  const Buffer buf = buffer_as(p, t);
  unsigned size = type_size(t);
  Id index;
  Id ok = 0;
  if (aligned_by_form(a, size)) {
    // Whole elements by the address's form: the element index without a byte offset.
    Id idx = a.index == kNoReg ? cu64(0) : read_reg(a.index, Type::U64);
    uint64_t step = a.scale / size;
    index =
        a.index == kNoReg ? cu64(0) : (step == 1 ? idx : op(Op::OpIMul, u64t(), {idx, cu64(step)}));
    if (a.disp != 0)
      index = op(Op::OpIAdd, u64t(),
                 {index, cu64(static_cast<uint64_t>(a.disp / static_cast<int64_t>(size)))});
  } else {
    // A byte offset, tested for alignment unless its index register's zero bits prove it.
    Id off = byte_offset(a);
    if (!statically_aligned(a, inst)) {
      Id aligned = ieq(op(Op::OpBitwiseAnd, u64t(), {off, cu64(size - 1)}), cu64(0));
      record_if(lnot(aligned), spirv_status::Misaligned, p, off, size);
      ok = aligned;
    }
    index = op(Op::OpShiftRightLogical, u64t(),
               {off, cu32(static_cast<uint32_t>(std::countr_zero(size)))});
  }
  if (o_.bounds_check) {
    Id len = buffer_elements(p, buf, size);
    Id inside = op(Op::OpULessThan, boolt(), {index, len});
    Id off = op(Op::OpIMul, u64t(), {index, cu64(size)});
    record_if(lnot(inside), spirv_status::OutOfBounds, p, off, size);
    ok = ok ? land(ok, inside) : inside;
  }
  return {buffer_element(buf, index), ok};
}

auto KernelLowering::from_memory(Type t, Id bits) -> Id {
  switch (type_bits(t)) {
  case 8:
  case 16:
    return normalize(t, op(is_signed_int(t) ? Op::OpSConvert : Op::OpUConvert, u32t(), {bits}));
  default: return is_float(t) ? bitcast(rep(t), bits) : bits;
  }
}

auto KernelLowering::to_memory(Type t, Id v) -> Id {
  switch (type_bits(t)) {
  case 8:
  case 16: return op(Op::OpUConvert, b_.t_int(type_bits(t)), {v});
  default: return is_float(t) ? bitcast(b_.t_int(type_bits(t)), v) : v;
  }
}

auto KernelLowering::guarded(Id ok, Id type, const std::function<Id()> &body) -> Id {
  if (!ok) return body();
  Id var = b_.local_variable(type);
  store(var, b_.c_null(type));
  if_then(ok, [&] { store(var, body()); });
  return load(type, var);
}

auto KernelLowering::guarded_void(Id ok, const std::function<void()> &body) -> void {
  if (!ok) return body();
  if_then(ok, body);
}

auto KernelLowering::load_mem(const Instruction &inst, const Address &a, Type t) -> Id {
  if (through_reg(a))
    return through_register(inst, a, rep(t),
                            [&](const Address &r) { return load_mem(inst, r, t); });
  if (in_words(a)) return load_shared(inst, a, t);
  Place pl = buffer_place(inst, a, t);
  return guarded(pl.ok, rep(t), [&] { return from_memory(t, load(mem_int(t), pl.ptr)); });
}

auto KernelLowering::store_mem(const Instruction &inst, const Address &a, Type t, Id v) -> void {
  if (through_reg(a)) {
    through_register(inst, a, 0, [&](const Address &r) {
      store_mem(inst, r, t, v);
      return Id{0};
    });
    return;
  }
  if (in_words(a)) return store_shared(inst, a, t, v);
  Place pl = buffer_place(inst, a, t);
  guarded_void(pl.ok, [&] { store(pl.ptr, to_memory(t, v)); });
}

auto KernelLowering::shared_place(const Instruction &inst, const Address &a, Type t, unsigned align)
    -> Place {
  unsigned size = type_size(t);
  Id off = byte_offset(a);
  Id ok = 0;
  if (!align) align = std::min(size, 4u);
  Id what = cu32(word_region(a));
  if (a.base == AddrBase::Reg) { // the offset in the scratch allocation, and its site's word
    Id h = read_reg(a.base_id, Type::U64);
    Id tag = to32(op(Op::OpShiftRightLogical, u64t(), {h, cu32(handle::kTagShift)}));
    what =
        op(Op::OpIAdd, u32t(),
           {op(Op::OpISub, u32t(), {tag, cu32(static_cast<uint32_t>(handle::kScratchTag))}), what});
    off =
        op(Op::OpIAdd, u64t(), {off, op(Op::OpBitwiseAnd, u64t(), {h, cu64(handle::kOffsetMask)})});
  }
  if ((a.base == AddrBase::Reg && align > 1) || !statically_aligned(a, inst, align)) {
    Id aligned = ieq(op(Op::OpBitwiseAnd, u64t(), {off, cu64(align - 1)}), cu64(0));
    record_region_if(lnot(aligned), spirv_status::Misaligned, what, off, size);
    ok = aligned;
  }
  if (o_.bounds_check) {
    Id limit = a.base == AddrBase::Shared  ? op(Op::OpIMul, u64t(), {to64(shared_words_), cu64(4)})
               : a.base == AddrBase::Class ? cu64(atlas::kClassBytes)
               : a.base == AddrBase::Pool  ? pool_bytes(a.base_id)
               : a.base == AddrBase::Reg   ? scratch_size(read_reg(a.base_id, Type::U64))
                                           : cu64(atlas::kBoundaryPoolBytes);
    Id end = op(Op::OpIAdd, u64t(), {off, cu64(size)});
    Id inside = op(Op::OpULessThanEqual, boolt(), {end, limit});
    record_region_if(lnot(inside), spirv_status::OutOfBounds, what, off, size);
    ok = ok ? land(ok, inside) : inside;
  }
  if (a.base == AddrBase::Class)
    off = op(Op::OpIAdd, u64t(), {off, cu64(uint64_t{a.base_id} * atlas::kClassBytes)});
  if (a.base == AddrBase::Reg) // in the lane's region of the launch scratch
    off = op(
        Op::OpIAdd, u64t(),
        {off, scratch_base(scratch_field(read_reg(a.base_id, Type::U64), &ScratchSite::offset))});
  return {off, ok};
}

auto KernelLowering::scratch_field(Id h, uint64_t ScratchSite::*field) -> Id {
  Id tag = to32(op(Op::OpShiftRightLogical, u64t(), {h, cu32(handle::kTagShift)}));
  Id v = cu64(0);
  for (const auto &[inst, s] : scratch_sites_)
    v = sel(u64t(), ieq(tag, cu32(static_cast<uint32_t>(handle::kScratchTag + s.site))),
            cu64(s.*field), v);
  return v;
}

auto KernelLowering::scratch_base(Id site_offset) -> Id {
  return op(
      Op::OpIAdd, u64t(),
      {op(Op::OpIMul, u64t(), {specials_.gid, cu64(info_.scratch_bytes_per_lane)}), site_offset});
}

auto KernelLowering::word_base(const Address &a) -> Id {
  return a.base == AddrBase::Shared ? shared_
         : a.base == AddrBase::Pool ? buffers_.at(a.base_id).var
         : a.base == AddrBase::Reg  ? scratch_
                                    : boundary_;
}

auto KernelLowering::word_region(const Address &a) -> uint32_t {
  return a.base == AddrBase::Shared  ? spirv_status::kSharedMemory
         : a.base == AddrBase::Pool  ? uint32_t{a.base_id}
         : a.base == AddrBase::Reg   ? spirv_status::kScratchSites // + the site (shared_place)
         : a.base == AddrBase::Class ? spirv_status::kClassWindows + a.base_id
                                     : spirv_status::kBoundaryPool;
}

auto KernelLowering::load_shared(const Instruction &inst, const Address &a, Type t) -> Id {
  Place pl = shared_place(inst, a, t);
  unsigned size = type_size(t);
  return guarded(pl.ok, rep(t), [&]() -> Id {
    Id word = to32(op(Op::OpShiftRightLogical, u64t(), {pl.ptr, cu32(2)}));
    Id w0 = load_word(a, word);
    if (size == 4) return is_float(t) ? bitcast(f32t(), w0) : w0;
    if (size == 8) {
      Id w1 = load_word(a, op(Op::OpIAdd, u32t(), {word, cu32(1)}));
      Id v = op(Op::OpBitwiseOr, u64t(),
                {to64(w0), op(Op::OpShiftLeftLogical, u64t(), {to64(w1), cu32(32)})});
      return is_float(t) ? bitcast(f64t(), v) : v;
    }
    Id shift = op(Op::OpShiftLeftLogical, u32t(),
                  {op(Op::OpBitwiseAnd, u32t(), {to32(pl.ptr), cu32(3)}), cu32(3)});
    Id part = op(Op::OpShiftRightLogical, u32t(), {w0, shift});
    if (is_signed_int(t)) return normalize(t, part);
    return op(Op::OpBitwiseAnd, u32t(), {part, cu32(size == 1 ? 0xff : 0xffff)});
  });
}

auto KernelLowering::store_shared(const Instruction &inst, const Address &a, Type t, Id v) -> void {
  Place pl = shared_place(inst, a, t);
  unsigned size = type_size(t);
  guarded_void(pl.ok, [&] {
    Id word = to32(op(Op::OpShiftRightLogical, u64t(), {pl.ptr, cu32(2)}));
    if (size == 4) return store_word(a, word, is_float(t) ? bitcast(u32t(), v) : v);
    if (size == 8) {
      Id bits = is_float(t) ? bitcast(u64t(), v) : v;
      store_word(a, word, to32(bits));
      store_word(a, op(Op::OpIAdd, u32t(), {word, cu32(1)}),
                 to32(op(Op::OpShiftRightLogical, u64t(), {bits, cu32(32)})));
      return;
    }
    Id shift = op(Op::OpShiftLeftLogical, u32t(),
                  {op(Op::OpBitwiseAnd, u32t(), {to32(pl.ptr), cu32(3)}), cu32(3)});
    Id mask = op(Op::OpShiftLeftLogical, u32t(), {cu32(size == 1 ? 0xff : 0xffff), shift});
    Id part = op(Op::OpBitwiseAnd, u32t(), {op(Op::OpShiftLeftLogical, u32t(), {v, shift}), mask});
    store_word_part(a, word, mask, part);
  });
}

auto KernelLowering::shared_u64(Id index32) -> Id {
  return op(Op::OpAccessChain, b_.t_pointer(SC::Workgroup, u64t()), {shared_, index32});
}

auto KernelLowering::wide_half(Id word) -> std::pair<Id, Id> {
  Id ptr = shared_u64(op(Op::OpShiftRightLogical, u32t(), {word, cu32(1)}));
  return {ptr, op(Op::OpShiftLeftLogical, u32t(),
                  {op(Op::OpBitwiseAnd, u32t(), {word, cu32(1)}), cu32(5)})};
}

auto KernelLowering::load_word(const Address &a, Id word) -> Id {
  if (!in_wide_words(a)) return load(u32t(), word_ptr(a, word));
  auto [ptr, shift] = wide_half(word);
  return to32(op(Op::OpShiftRightLogical, u64t(), {load(u64t(), ptr), shift}));
}

auto KernelLowering::store_word(const Address &a, Id word, Id v) -> void {
  if (!in_wide_words(a)) return store(word_ptr(a, word), v);
  store_word_part(a, word, cu32(~0u), v);
}

auto KernelLowering::store_word_part(const Address &a, Id word, Id mask, Id part) -> void {
  Id scope = cu32(static_cast<uint32_t>(a.base == AddrBase::Shared ? spv::Scope::Workgroup
                                                                   : spv::Scope::Device));
  Id ptr = 0, t = u32t();
  if (in_wide_words(a)) {
    Id shift = 0;
    std::tie(ptr, shift) = wide_half(word);
    mask = op(Op::OpShiftLeftLogical, u64t(), {to64(mask), shift});
    part = op(Op::OpShiftLeftLogical, u64t(), {to64(part), shift});
    t = u64t();
  } else {
    ptr = word_ptr(a, word);
  }
  op(Op::OpAtomicAnd, t, {ptr, scope, cu32(0), op(Op::OpNot, t, {mask})});
  op(Op::OpAtomicOr, t, {ptr, scope, cu32(0), part});
}

auto KernelLowering::reduce_memory(const Instruction &inst) -> Id {
  Type t = inst.type;
  auto rop = static_cast<ReduceOp>(inst.sub);
  Id n = src(inst, 2);
  Id acc_var = b_.local_variable(rep(t));
  Id k_var = b_.local_variable(u64t());
  store(acc_var, constant(t, reduce_identity(rop, t)));
  store(k_var, cu64(0));
  Id k = 0;
  structured_loop(
      [&] {
        k = load(u64t(), k_var);
        return op(Op::OpULessThan, boolt(), {k, n});
      },
      [&] {
        Address a = inst.operands[1].addr;
        // Element k: the address advanced by k elements.
        Id base = byte_offset(a);
        Id off = op(Op::OpIAdd, u64t(), {base, op(Op::OpIMul, u64t(), {k, cu64(type_size(t))})});
        Address dyn{a.base, a.base_id, kNoReg, 1, 0};
        Id v = load_at(inst, dyn, t, off);
        store(acc_var, fold(rop, t, load(rep(t), acc_var), v));
        store(k_var, op(Op::OpIAdd, u64t(), {k, cu64(1)}));
      });
  return load(rep(t), acc_var);
}

auto KernelLowering::load_at(const Instruction &inst, const Address &a, Type t, Id off) -> Id {
  // Route through a scratch register-free path: treat the offset as the index register.
  pending_offset_ = off;
  Address dyn = a;
  dyn.index = kPendingReg;
  Id v = load_mem(inst, dyn, t);
  pending_offset_ = 0;
  return v;
}

auto KernelLowering::atomic(const Instruction &inst) -> Id {
  const Address &a = inst.operands[1].addr;
  if (through_reg(a))
    return through_register(inst, a, rep(inst.type),
                            [&](const Address &r) { return atomic_at(inst, r); });
  return atomic_at(inst, a);
}

auto KernelLowering::atomic_at(const Instruction &inst, const Address &a) -> Id {
  Type t = inst.type;
  Id scope = cu32(static_cast<uint32_t>(a.base == AddrBase::Shared ? spv::Scope::Workgroup
                                                                   : spv::Scope::Device));
  Id ptr, ok, half_shift = 0;
  Id it = is64(t) ? u64t() : u32t();
  if (is64(t)) {
    b_.capability(spv::Capability::Int64Atomics);
    features_.insert("int64_atomics");
  }
  if (in_words(a)) {
    Place pl = shared_place(inst, a, t, alignment_needed(inst, a));
    ok = pl.ok;
    if (is64(t)) {
      if (a.base == AddrBase::Shared) require_shared_int64_atomics();
      ptr = wide_ptr(a, pl.ptr);
    } else {
      Id word = to32(op(Op::OpShiftRightLogical, u64t(), {pl.ptr, cu32(2)}));
      if (in_wide_words(a))
        std::tie(ptr, half_shift) = wide_half(word);
      else
        ptr = word_ptr(a, word);
    }
  } else {
    Place pl = buffer_place(inst, a, t);
    ptr = pl.ptr;
    ok = pl.ok;
  }
  Id v = src(inst, 2);
  Id result = guarded(ok, it, [&]() -> Id {
    if (half_shift) { // a u32 half of a u64 word: a compare-exchange loop on the word
      Id keep = op(Op::OpNot, u64t(),
                   {op(Op::OpShiftLeftLogical, u64t(), {cu64(0xffffffffu), half_shift})});
      Id old = cas_loop(ptr, scope, u64t(), [&](Id w) {
        Id half = to32(op(Op::OpShiftRightLogical, u64t(), {w, half_shift}));
        return op(Op::OpBitwiseOr, u64t(),
                  {op(Op::OpBitwiseAnd, u64t(), {w, keep}),
                   op(Op::OpShiftLeftLogical, u64t(),
                      {to64(atomic_update(inst, it, half)), half_shift})});
      });
      return to32(op(Op::OpShiftRightLogical, u64t(), {old, half_shift}));
    }
    if (inst.op == Opcode::AtomCas) {
      Id cmp = is_float(t) ? bitcast(it, v) : v;
      Id nv = src(inst, 3);
      if (is_float(t)) nv = bitcast(it, nv);
      return op(Op::OpAtomicCompareExchange, it, {ptr, scope, cu32(0), cu32(0), nv, cmp});
    }
    auto aop = static_cast<AtomicOp>(inst.sub);
    bool s = is_signed_int(t);
    if (!is_float(t)) {
      Op o = Op::OpAtomicIAdd;
      switch (aop) {
      case AtomicOp::Add: o = Op::OpAtomicIAdd; break;
      case AtomicOp::Min: o = s ? Op::OpAtomicSMin : Op::OpAtomicUMin; break;
      case AtomicOp::Max: o = s ? Op::OpAtomicSMax : Op::OpAtomicUMax; break;
      case AtomicOp::And: o = Op::OpAtomicAnd; break;
      case AtomicOp::Or: o = Op::OpAtomicOr; break;
      case AtomicOp::Xor: o = Op::OpAtomicXor; break;
      case AtomicOp::Xchg: o = Op::OpAtomicExchange; break;
      }
      return op(o, it, {ptr, scope, cu32(0), v});
    }
    if (aop == AtomicOp::Xchg)
      return op(Op::OpAtomicExchange, it, {ptr, scope, cu32(0), bitcast(it, v)});
    // Float add/min/max: a compare-exchange loop on the bits.
    return cas_loop(ptr, scope, it, [&](Id old_bits) { return atomic_update(inst, it, old_bits); });
  });
  return is_float(t) ? bitcast(rep(t), result) : result;
}

auto KernelLowering::atomic_update(const Instruction &inst, Id it, Id old_bits) -> Id {
  Type t = inst.type;
  auto bits = [&](Id x) { return is_float(t) ? bitcast(it, x) : x; };
  Id v = src(inst, 2);
  if (inst.op == Opcode::AtomCas)
    return sel(it, ieq(old_bits, bits(v)), bits(src(inst, 3)), old_bits);
  BinaryOp combine = BinaryOp::Add;
  switch (static_cast<AtomicOp>(inst.sub)) {
  case AtomicOp::Add: combine = BinaryOp::Add; break;
  case AtomicOp::Min: combine = BinaryOp::Min; break;
  case AtomicOp::Max: combine = BinaryOp::Max; break;
  case AtomicOp::And: combine = BinaryOp::And; break;
  case AtomicOp::Or: combine = BinaryOp::Or; break;
  case AtomicOp::Xor: combine = BinaryOp::Xor; break;
  case AtomicOp::Xchg: return bits(v);
  }
  return bits(binary(combine, t, is_float(t) ? bitcast(rep(t), old_bits) : old_bits, v));
}

auto KernelLowering::cas_loop(Id ptr, Id scope, Id it, const std::function<Id(Id)> &update) -> Id {
  Id first = op(Op::OpAtomicLoad, it, {ptr, scope, cu32(0)});
  Id pre = b_.current_block();
  Id head = b_.fresh(), body = b_.fresh(), cont = b_.fresh(), merge = b_.fresh();
  b_.terminate(Op::OpBranch, {head});
  b_.begin_block(head);
  Id old = b_.fresh();
  Id prev = b_.fresh();
  // OpPhi written by hand: its operands name a value defined later in the loop.
  b_.op_void(Op::OpPhi, {it, old, first, pre, prev, cont});
  b_.op_void(Op::OpLoopMerge, {merge, cont, 0});
  b_.terminate(Op::OpBranch, {body});
  b_.begin_block(body);
  Id nv = update(old);
  b_.op_void(Op::OpAtomicCompareExchange, {it, prev, ptr, scope, cu32(0), cu32(0), nv, old});
  b_.terminate(Op::OpBranchConditional, {ieq(prev, old), merge, cont});
  b_.begin_block(cont);
  b_.terminate(Op::OpBranch, {head});
  b_.begin_block(merge);
  return old;
}

} // namespace hologram::codegen::spirv
