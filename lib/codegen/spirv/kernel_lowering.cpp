// One Atlas kernel as a SPIR-V GLCompute entry point (SPEC §9.1).
//
// Registers are variables, one per (register, type) slot: Private, so the subroutines of a
// kernel (`call`/`ret`) become SPIR-V functions that share them. A Vulkan kernel without
// subroutines never loads or stores them: the builder turns their reads and writes into SSA
// values and phis (Builder::set_ssa_locals); elsewhere a block loads each register it reads
// once and stores the ones it writes once, at its end. Control flow is structured region by region:
// a region (a function body or a natural loop) lists its blocks and child loops in reverse
// post-order, which is a topological order of the region once its child loops are collapsed (the
// verifier rejects irreducible graphs). The region's first item runs unconditionally; every later
// item is a selection construct guarded by `cur == item`, where `cur` names the block control goes
// to. A loop is a loop construct whose body is its region; it continues while `cur` names its
// header and breaks otherwise, so exits to any outer block (or outer loop's header) need no
// further structure. `exit` and `ret` are OpReturn, which SPIR-V allows anywhere.
//
// Arithmetic follows SPEC §3.4 exactly: integer division by zero yields 0, MIN / -1 = MIN,
// shift amounts are reduced modulo the width, float->int conversions saturate, min/max are
// IEEE minNum/maxNum with -0 < +0, float results carry NoContraction so a driver cannot fuse
// a multiply and an add the ISA rounds separately. 8- and 16-bit integers and f16/bf16 bits
// live in 32-bit registers (normalised after every operation), so no Int8/Int16 arithmetic
// capability is needed; buffers keep their element width in memory.
#include "kernel_lowering.h"

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
  for (const auto &inst : k_.insts)
    if (inst.op == Opcode::Addr) addressed_params_.insert(inst.operands[1].index);
  b_.capability(cl_ ? spv::Capability::Kernel : spv::Capability::Shader);
  if (cl_) b_.capability(spv::Capability::Addresses);
  b_.capability(spv::Capability::Int64);
  ext_ = b_.import(cl_ ? "OpenCL.std" : "GLSL.std.450");
  if (cl_) {
    declare_kernel_args();
  } else {
    declare_interface();
    declare_registers();
  }

  // Every function first, so calls can name any of them.
  for (uint32_t f : cfg_.function_entries) fn_ids_[f] = b_.fresh();
  Id entry = fn_ids_.at(cfg_.function_entries[0]);
  for (uint32_t f : cfg_.function_entries) emit_function(f, f == cfg_.function_entries[0]);

  // Before SPIR-V 1.4 the interface lists only Input and Output variables.
  bool all_globals = !cl_ && o_.target.env != SpirvEnv::Vulkan1_1;
  b_.entry_point(cl_ ? spv::ExecutionModel::Kernel : spv::ExecutionModel::GLCompute, entry, k_.name,
                 all_globals ? interface_ : inputs_);
  b_.name(entry, k_.name);
  if (fixed_block_) {
    if (cl_)
      b_.execution_mode(entry, spv::ExecutionMode::LocalSize,
                        {o_.block[0], o_.block[1], o_.block[2]});
    info_.block = o_.block;
  }
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
  if (cl_) { // OpenCL addresses bytes and shorts natively
    if (bits == 8) b_.capability(spv::Capability::Int8);
    if (bits == 16) b_.capability(spv::Capability::Int16);
  } else if (bits == 8) {
    b_.capability(spv::Capability::StorageBuffer8BitAccess);
    b_.capability(spv::Capability::Int8);
    if (o_.target.env == SpirvEnv::Vulkan1_1) b_.extension("SPV_KHR_8bit_storage");
    features_.insert("int8");
    features_.insert("storage_buffer_8bit");
  } else if (bits == 16) {
    b_.capability(spv::Capability::StorageBuffer16BitAccess);
    b_.capability(spv::Capability::Int16);
    features_.insert("int16");
    features_.insert("storage_buffer_16bit");
  }
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
  // SPIR-V lets a shift amount be narrower than the shifted value; llvm-spirv does not.
  if (cl_ && w.size() == 2 &&
      (o == Op::OpShiftLeftLogical || o == Op::OpShiftRightLogical ||
       o == Op::OpShiftRightArithmetic)) {
    Id amount_t = b_.type_of(w[1]);
    if (amount_t && amount_t != t) return b_.op(o, t, {w[0], b_.op(Op::OpUConvert, t, {w[1]})});
  }
  return b_.op(o, t, w);
}

auto KernelLowering::exact(Id v) -> Id {
  // OpenCL consumers contract nothing unless FPFastMathMode says so (NoContraction is a
  // Shader decoration).
  if (!o_.fast_math && !cl_) b_.decorate(v, spv::Decoration::NoContraction);
  return v;
}

auto KernelLowering::glsl(Id t, GLSLstd450 f, const Words &w) -> Id {
  if (!cl_) return b_.ext(ext_, t, f, w);
  if (f == GLSLstd450FindUMsb) // 31 - clz(x): -1 for 0, like FindUMsb
    return op(Op::OpISub, t, {cu32(31), b_.ext(ext_, t, OpenCLLIB::Clz, w)});
  return b_.ext(ext_, t, opencl_std(f), w);
}

auto KernelLowering::opencl_std(GLSLstd450 f) -> uint32_t {
  // GLSL.std.450 is Khronos' enum, so a lookup rather than a switch over all of it.
  static constexpr std::pair<GLSLstd450, uint32_t> kTwins[] = {
      {GLSLstd450Atan2, OpenCLLIB::Atan2},   {GLSLstd450Ceil, OpenCLLIB::Ceil},
      {GLSLstd450Cos, OpenCLLIB::Cos},       {GLSLstd450Exp, OpenCLLIB::Exp},
      {GLSLstd450Exp2, OpenCLLIB::Exp2},     {GLSLstd450FAbs, OpenCLLIB::Fabs},
      {GLSLstd450FClamp, OpenCLLIB::FClamp}, {GLSLstd450FMin, OpenCLLIB::Fmin},
      {GLSLstd450FSign, OpenCLLIB::Sign},    {GLSLstd450Floor, OpenCLLIB::Floor},
      {GLSLstd450Fma, OpenCLLIB::Fma},       {GLSLstd450InverseSqrt, OpenCLLIB::Rsqrt},
      {GLSLstd450Ldexp, OpenCLLIB::Ldexp},   {GLSLstd450Log, OpenCLLIB::Log},
      {GLSLstd450Log2, OpenCLLIB::Log2},     {GLSLstd450Pow, OpenCLLIB::Pow},
      {GLSLstd450Sin, OpenCLLIB::Sin},       {GLSLstd450Sqrt, OpenCLLIB::Sqrt},
      {GLSLstd450Tan, OpenCLLIB::Tan},       {GLSLstd450Tanh, OpenCLLIB::Tanh},
      {GLSLstd450Trunc, OpenCLLIB::Trunc},   {GLSLstd450UMin, OpenCLLIB::UMin},
  };
  for (const auto &[glsl, ocl] : kTwins)
    if (glsl == f) return ocl;
  throw std::logic_error("spirv: no OpenCL.std twin for a GLSL.std.450 function");
}

auto KernelLowering::normalize(Type t, Id v) -> Id {
  if (cl_ && (t == Type::I8 || t == Type::I16)) { // OpBitFieldSExtract is Shader-only
    Id sh = cu32(t == Type::I8 ? 24 : 16);
    return op(Op::OpShiftRightArithmetic, u32t(),
              {op(Op::OpShiftLeftLogical, u32t(), {v, sh}), sh});
  }
  switch (t) {
  case Type::I8: return op(Op::OpBitFieldSExtract, u32t(), {v, cu32(0), cu32(8)});
  case Type::I16: return op(Op::OpBitFieldSExtract, u32t(), {v, cu32(0), cu32(16)});
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

auto KernelLowering::push_u32(uint32_t member) -> Id {
  Id ptr = op(Op::OpAccessChain, b_.t_pointer(SC::PushConstant, u32t()), {push_, cu32(member)});
  return load(u32t(), ptr);
}

auto KernelLowering::builtin(Id var, uint32_t d) -> Id {
  if (cl_) // a whole size_t vector, as OpenCL consumers expect built-ins to be read
    return to32(op(Op::OpCompositeExtract, u64t(), {load(b_.t_vector(u64t(), 3), var), d}));
  Id ptr = op(Op::OpAccessChain, b_.t_pointer(SC::Input, u32t()), {var, cu32(d)});
  return load(u32t(), ptr);
}

auto KernelLowering::compute_specials() -> void {
  Specials &s = specials_;
  for (uint32_t d = 0; d < 3; ++d) {
    s.lane[d] = builtin(local_id_, d);
    if (cl_) { // one NDRange covers the grid
      bdim_[d] = builtin(group_size_, d);
      s.grid[d] = builtin(group_count_, d);
      s.block[d] = builtin(group_id_, d);
      continue;
    }
    s.grid[d] = push_u32(d);
    s.block[d] = op(Op::OpIAdd, u32t(), {builtin(group_id_, d), push_u32(3 + d)});
  }
  if (fixed_block_)
    for (uint32_t d = 0; d < 3; ++d) bdim_[d] = cu32(o_.block[d]);
  // In `width` bits (lane ids of a launch of fewer than 2^32 lanes fit in 32).
  auto ids = [&](Id t, bool wide, Id &gid, Id(&axis)[3], Id &gsize) {
    auto mul = [&](Id a, Id c) { return op(Op::OpIMul, t, {a, c}); };
    auto add = [&](Id a, Id c) { return op(Op::OpIAdd, t, {a, c}); };
    auto w = [&](Id v) { return wide ? to64(v) : v; };
    Id lanes = mul(mul(w(bdim_[0]), w(bdim_[1])), w(bdim_[2]));
    Id lane_linear =
        add(mul(add(mul(w(s.lane[2]), w(bdim_[1])), w(s.lane[1])), w(bdim_[0])), w(s.lane[0]));
    Id block_linear =
        add(mul(add(mul(w(s.block[2]), w(s.grid[1])), w(s.block[1])), w(s.grid[0])), w(s.block[0]));
    gid = add(mul(block_linear, lanes), lane_linear);
    for (uint32_t d = 0; d < 3; ++d) axis[d] = add(mul(w(s.block[d]), w(bdim_[d])), w(s.lane[d]));
    gsize = mul(mul(mul(w(s.grid[0]), w(s.grid[1])), w(s.grid[2])), lanes);
  };
  ids(u64t(), true, s.gid, s.gid_axis, s.gsize);
  if (cl_) return;
  // Vulkan: the 32-bit forms when the launch says they fit (specialisation constant 4, so
  // the driver drops the other).
  Id narrow =
      b_.shared_global("spec.4", [&] { return b_.spec_bool(info_.narrow_lanes_spec_id, false); });
  Id gid32 = 0, axis32[3]{}, gsize32 = 0;
  ids(u32t(), false, gid32, axis32, gsize32);
  auto pick = [&](Id &v, Id v32) { v = sel(u64t(), narrow, to64(v32), v); };
  pick(s.gid, gid32);
  for (uint32_t d = 0; d < 3; ++d) pick(s.gid_axis[d], axis32[d]);
  pick(s.gsize, gsize32);
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
  return KernelLowering(builder, kernel, options, library).run();
}

} // namespace hologram::codegen::spirv
