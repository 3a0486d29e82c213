// One Atlas kernel as a SPIR-V entry point (SPEC §9): what both flavours share.
//
// Registers are variables, one per (register, type) slot (Vulkan: Private, so the subroutines
// of a kernel, `call`/`ret`, become SPIR-V functions that share them; OpenCL: Function
// variables of the kernel handed to its subroutines). A Vulkan kernel without subroutines
// never loads or stores them: the builder turns their reads and writes into SSA values and
// phis (Builder::set_ssa_locals); elsewhere a block loads each register it reads once and
// stores the ones it writes once, at its end. Control flow is the flavour's
// (structurizer.cpp for Vulkan, the ISA's own blocks for OpenCL); `exit` and `ret` are
// OpReturn, which SPIR-V allows anywhere.
//
// Arithmetic follows SPEC §3.4 exactly: integer division by zero yields 0, MIN / -1 = MIN,
// shift amounts are reduced modulo the width, float->int conversions saturate, min/max are
// IEEE minNum/maxNum with -0 < +0, float results carry NoContraction so a driver cannot fuse
// a multiply and an add the ISA rounds separately. 8- and 16-bit integers and f16/bf16 bits
// live in 32-bit registers (normalised after every operation), so no Int8/Int16 arithmetic
// capability is needed; buffers keep their element width in memory.
#include "flavours.h"

namespace hologram::codegen::spirv {

auto KernelLowering::run() -> SpirvKernelInfo {
  info_.name = k_.name;
  info_.params = k_.params;
  info_.static_shared_bytes = k_.shared_bytes;
  // Every entry point reads the block size from specialisation constants 0-2 (through the
  // module's one WorkgroupSize built-in) and its shared memory size from constant 3; each
  // pipeline specialises its own entry point.
  for (uint32_t d = 0; d < 3; ++d) info_.local_size_spec_ids[d] = d;
  info_.shared_words_spec_id = 3;
  check_supported();
  addressed_params_ = handle::addressed_params(k_);
  b_.capability(spv::Capability::Int64);
  declare_interface();

  // Every function first, so calls can name any of them.
  for (uint32_t f : cfg_.function_entries) fn_ids_[f] = b_.fresh();
  Id entry = fn_ids_.at(cfg_.function_entries[0]);
  for (uint32_t f : cfg_.function_entries) emit_function(f, f == cfg_.function_entries[0]);

  declare_entry_point(entry);
  if (fixed_block_) info_.block = o_.block;
  info_.requires_features.assign(features_.begin(), features_.end());
  return info_;
}

auto KernelLowering::check_supported() -> void {
  for (const auto &inst : k_.insts) {
    switch (inst.info().family) {
    case OpFamily::HigherOrder:
    case OpFamily::Library:
      throw Unsupported("'" + std::string(inst.info().mnemonic) +
                            "' is not supported by the SPIR-V back end yet",
                        inst.loc);
    case OpFamily::Arith:
    case OpFamily::Atlas:
    case OpFamily::Atomic:
    case OpFamily::Control:
    case OpFamily::Logic:
    case OpFamily::Math:
    case OpFamily::Move:
    case OpFamily::Pool:
    case OpFamily::Reduce:
    case OpFamily::Sync: break;
    }
  }
}

auto KernelLowering::f64t() -> Id {
  use_f64();
  return b_.t_float(64);
}

auto KernelLowering::use_f64() -> void {
  if (!f64_used_) {
    f64_used_ = true;
    b_.capability(spv::Capability::Float64);
    features_.insert("float64");
  }
}

auto KernelLowering::rep(Type t) -> Id {
  switch (t) {
  case Type::Pred: return boolt();
  case Type::I64:
  case Type::U64: return u64t();
  case Type::F32: return f32t();
  case Type::F64: return f64t();
  case Type::BF16:
  case Type::F16:
  case Type::I16:
  case Type::I32:
  case Type::I8:
  case Type::None:
  case Type::U16:
  case Type::U32:
  case Type::U8: return u32t();
  }
  unreachable_enum("Type");
}

auto KernelLowering::mem_int(Type t) -> Id {
  unsigned bits = type_bits(t);
  if (bits == 8 || bits == 16) declare_storage_width(bits);
  return b_.t_int(bits);
}

auto KernelLowering::constant(Type t, uint64_t bits) -> Id {
  switch (t) {
  case Type::F32: return b_.c_float(32, bits & 0xffffffffu);
  case Type::F64: use_f64(); return b_.c_float(64, bits);
  case Type::I64:
  case Type::U64: return cu64(bits);
  case Type::BF16:
  case Type::F16:
  case Type::I16:
  case Type::I32:
  case Type::I8:
  case Type::None:
  case Type::Pred:
  case Type::U16:
  case Type::U32:
  case Type::U8: return cu32(static_cast<uint32_t>(normalize_const(t, bits)));
  }
  unreachable_enum("Type");
}

auto KernelLowering::normalize_const(Type t, uint64_t bits) -> uint64_t {
  switch (t) {
  case Type::I8: return static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(bits)));
  case Type::I16: return static_cast<uint32_t>(static_cast<int32_t>(static_cast<int16_t>(bits)));
  case Type::U8: return bits & 0xff;
  case Type::U16:
  case Type::F16:
  case Type::BF16: return bits & 0xffff;
  case Type::F32:
  case Type::F64:
  case Type::I32:
  case Type::I64:
  case Type::None:
  case Type::Pred:
  case Type::U32:
  case Type::U64: return bits & 0xffffffffu;
  }
  unreachable_enum("Type");
}

auto KernelLowering::op(Op o, Id t, const Words &w) -> Id {
  if (w.size() == 2 && (o == Op::OpShiftLeftLogical || o == Op::OpShiftRightLogical ||
                        o == Op::OpShiftRightArithmetic))
    return shift(o, t, w[0], w[1]);
  return b_.op(o, t, w);
}

auto KernelLowering::normalize(Type t, Id v) -> Id {
  switch (t) {
  case Type::I8: return sign_extend(v, 8);
  case Type::I16: return sign_extend(v, 16);
  case Type::U8: return op(Op::OpBitwiseAnd, u32t(), {v, cu32(0xff)});
  case Type::U16:
  case Type::F16:
  case Type::BF16: return op(Op::OpBitwiseAnd, u32t(), {v, cu32(0xffff)});
  case Type::F32:
  case Type::F64:
  case Type::I32:
  case Type::I64:
  case Type::None:
  case Type::Pred:
  case Type::U32:
  case Type::U64: return v;
  }
  unreachable_enum("Type");
}

auto KernelLowering::structured_loop(const std::function<Id()> &condition,
                                     const std::function<void()> &body) -> void {
  Id head = b_.fresh(), test = b_.fresh(), block = b_.fresh(), cont = b_.fresh(),
     merge = b_.fresh();
  b_.terminate(Op::OpBranch, {head});
  b_.begin_block(head);
  b_.op_void(Op::OpLoopMerge, {merge, cont, 0});
  b_.terminate(Op::OpBranch, {test});
  b_.begin_block(test);
  b_.terminate(Op::OpBranchConditional, {condition(), block, merge});
  b_.begin_block(block);
  body();
  b_.terminate(Op::OpBranch, {cont});
  b_.begin_block(cont);
  b_.terminate(Op::OpBranch, {head});
  b_.begin_block(merge);
}

auto KernelLowering::if_then(Id c, const std::function<void()> &then) -> void {
  if (c == b_.c_bool(true)) { // known to hold (ieq of a value and itself): no construct
    then();
    return;
  }
  Id t = b_.fresh(), m = b_.fresh();
  b_.op_void(Op::OpSelectionMerge, {m, 0});
  b_.terminate(Op::OpBranchConditional, {c, t, m});
  b_.begin_block(t);
  then();
  if (b_.in_block()) b_.terminate(Op::OpBranch, {m});
  b_.begin_block(m);
}

auto KernelLowering::read_reg(Reg r, Type t) -> Id {
  if (r == kPendingReg) return pending_offset_;
  if (r == kHandleReg) return pending_handle_;
  if (is_special(r)) return special(reg_special(r));
  auto it = regs_.find(opt::Slot{false, r, t});
  if (it == regs_.end()) return b_.c_null(rep(t));
  return b_.load_local(rep(t), it->second);
}

auto KernelLowering::read_pred(unsigned p) -> Id {
  auto it = regs_.find(opt::Slot{true, static_cast<Reg>(p), Type::Pred});
  if (it == regs_.end()) return b_.c_bool(false);
  return b_.load_local(boolt(), it->second);
}

auto KernelLowering::write_pred(unsigned p, Id v) -> void {
  b_.store_local(regs_.at(opt::Slot{true, static_cast<Reg>(p), Type::Pred}), v);
}

auto KernelLowering::compute_specials() -> void {
  Specials &s = specials_;
  for (uint32_t d = 0; d < 3; ++d) {
    s.lane[d] = builtin(local_id_, d);
    block_geometry(d);
  }
  if (fixed_block_)
    for (uint32_t d = 0; d < 3; ++d) bdim_[d] = cu32(o_.block[d]);
  const LaneIds wide = lane_ids(u64t(), true);
  s.gid = wide.gid;
  for (uint32_t d = 0; d < 3; ++d) s.gid_axis[d] = wide.axis[d];
  s.gsize = wide.gsize;
  narrow_lane_ids();
}

auto KernelLowering::lane_ids(Id t, bool wide) -> LaneIds {
  const Specials &s = specials_;
  auto mul = [&](Id a, Id c) { return op(Op::OpIMul, t, {a, c}); };
  auto add = [&](Id a, Id c) { return op(Op::OpIAdd, t, {a, c}); };
  auto w = [&](Id v) { return wide ? to64(v) : v; };
  LaneIds ids;
  Id lanes = mul(mul(w(bdim_[0]), w(bdim_[1])), w(bdim_[2]));
  Id lane_linear =
      add(mul(add(mul(w(s.lane[2]), w(bdim_[1])), w(s.lane[1])), w(bdim_[0])), w(s.lane[0]));
  Id block_linear =
      add(mul(add(mul(w(s.block[2]), w(s.grid[1])), w(s.block[1])), w(s.grid[0])), w(s.block[0]));
  // A grid of one row of blocks (the usual 1-D launch) needs none of that: a driver that
  // computes it per lane, as lavapipe does, spent a tenth of vector_add's time on it.
  if (Id flat = flat_grid()) block_linear = sel(t, flat, w(s.block[0]), block_linear);
  ids.gid = add(mul(block_linear, lanes), lane_linear);
  for (uint32_t d = 0; d < 3; ++d) ids.axis[d] = add(mul(w(s.block[d]), w(bdim_[d])), w(s.lane[d]));
  ids.gsize = mul(mul(mul(w(s.grid[0]), w(s.grid[1])), w(s.grid[2])), lanes);
  return ids;
}

auto KernelLowering::special(Special sp) -> Id {
  const Specials &s = specials_;
  switch (sp) {
  case Special::LaneX: return s.lane[0];
  case Special::LaneY: return s.lane[1];
  case Special::LaneZ: return s.lane[2];
  case Special::BlockX: return s.block[0];
  case Special::BlockY: return s.block[1];
  case Special::BlockZ: return s.block[2];
  case Special::BdimX: return bdim_[0];
  case Special::BdimY: return bdim_[1];
  case Special::BdimZ: return bdim_[2];
  case Special::GdimX: return s.grid[0];
  case Special::GdimY: return s.grid[1];
  case Special::GdimZ: return s.grid[2];
  case Special::Gid: return s.gid;
  case Special::GidX: return s.gid_axis[0];
  case Special::GidY: return s.gid_axis[1];
  case Special::GidZ: return s.gid_axis[2];
  case Special::Gsize: return s.gsize;
  }
  return s.gid;
}

auto KernelLowering::src(const Instruction &inst, size_t i) -> Id {
  const Operand &opnd = inst.operands[i];
  const OperandRole role = inst.info().role(i);
  if (role == OperandRole::SrcPred) return read_pred(opnd.index);
  if (role == OperandRole::LiteralT) return constant(inst.type, opnd.imm);
  const Type t = read_type(inst, role);
  return read_reg(opnd.index, t == Type::None ? inst.type : t);
}

auto KernelLowering::dst(const Instruction &inst, Id v) -> void {
  const Operand &opnd = inst.operands[0];
  const Type t = write_type(inst, inst.info().role(0));
  if (t == Type::Pred) return write_pred(opnd.index, v);
  write_reg(opnd.index, t == Type::None ? inst.type : t, v);
}

SpirvKernelInfo lower_kernel(Builder &builder, const Kernel &kernel, const SpirvOptions &options,
                             bool library) {
  if (options.target.is_vulkan()) return VulkanLowering(builder, kernel, options, library).run();
  return OpenClLowering(builder, kernel, options, library).run();
}

} // namespace hologram::codegen::spirv
