// The OpenCL flavour of the SPIR-V kernel lowering (flavours.h): a Kernel module with
// physical addressing; kernel arguments, registers handed to subroutines, and the ISA's own
// blocks as control flow.
#include "flavours.h"

namespace hologram::codegen::spirv {

auto OpenClLowering::declare_interface() -> void {
  b_.capability(spv::Capability::Kernel);
  b_.capability(spv::Capability::Addresses);
  ext_ = b_.import("OpenCL.std");
  Id v3 = b_.t_vector(u64t(), 3);
  // One variable per built-in for the whole module: OpenCL consumers name them by symbol.
  auto input = [&](spv::BuiltIn bi, const char *name) {
    Id var = b_.shared_global(name, [&] {
      Id v = b_.global_variable(b_.t_pointer(SC::Input, v3), SC::Input);
      b_.decorate(v, spv::Decoration::BuiltIn, {static_cast<uint32_t>(bi)});
      b_.decorate(v, spv::Decoration::Constant);
      b_.name(v, name);
      return v;
    });
    inputs_.push_back(var);
    return var;
  };
  local_id_ = input(spv::BuiltIn::LocalInvocationId, "__spirv_BuiltInLocalInvocationId");
  group_id_ = input(spv::BuiltIn::WorkgroupId, "__spirv_BuiltInWorkgroupId");
  group_count_ = input(spv::BuiltIn::NumWorkgroups, "__spirv_BuiltInNumWorkgroups");
  group_size_ = input(spv::BuiltIn::WorkgroupSize, "__spirv_BuiltInWorkgroupSize");

  auto arg = [&](Id *ref, Id type, SpirvKernelArg::Kind kind, uint32_t param) {
    info_.kernel_args.push_back({kind, param});
    std::string name =
        kind == SpirvKernelArg::Kind::Buffer || kind == SpirvKernelArg::Kind::Scalar ||
                kind == SpirvKernelArg::Kind::Pool
            ? k_.params[param].name
        : kind == SpirvKernelArg::Kind::Status      ? "status"
        : kind == SpirvKernelArg::Kind::Boundary    ? "boundary"
        : kind == SpirvKernelArg::Kind::Atlas       ? "atlas"
        : kind == SpirvKernelArg::Kind::Phase       ? "phase"
        : kind == SpirvKernelArg::Kind::Scratch     ? "scratch"
        : kind == SpirvKernelArg::Kind::Shared      ? "shared"
        : kind == SpirvKernelArg::Kind::SharedWords ? "shared_words"
                                                    : k_.params[param].name + "_bytes";
    context_.push_back({ref, type, 0, name});
  };
  // Every entry of the maps first: the context keeps pointers to their values.
  for (uint32_t p = 0; p < k_.params.size(); ++p) {
    const Param &param = k_.params[p];
    if (param.kind == ParamKind::Buffer) buffers_[p] = {0, mem_int(param.type)};
    if (param.kind == ParamKind::Pool) buffers_[p] = {0, u32t()};
    if (param.kind == ParamKind::Scalar) scalars_[p] = 0;
    if (param.kind != ParamKind::Scalar && o_.bounds_check) buffer_bytes_[p] = 0;
  }
  for (uint32_t p = 0; p < k_.params.size(); ++p) {
    const Param &param = k_.params[p];
    auto index = static_cast<uint32_t>(info_.kernel_args.size());
    if (param.kind != ParamKind::Scalar) {
      bool pool = param.kind == ParamKind::Pool;
      Buffer &buf = buffers_.at(p);
      arg(&buf.var, b_.t_pointer(SC::CrossWorkgroup, buf.elem),
          pool ? SpirvKernelArg::Kind::Pool : SpirvKernelArg::Kind::Buffer, p);
      info_.bindings.push_back(
          {pool ? SpirvBinding::Kind::Pool : SpirvBinding::Kind::Buffer, index, p});
    } else if (param.kind == ParamKind::Scalar) {
      uint32_t size = is64(param.type) ? 8 : 4;
      arg(&scalars_.at(p), rep(param.type), SpirvKernelArg::Kind::Scalar, p);
      info_.scalars.push_back({p, index, size});
    }
  }
  if (uses_boundary())
    arg(&boundary_, b_.t_pointer(SC::CrossWorkgroup, u32t()), SpirvKernelArg::Kind::Boundary, 0);
  if (uses_atlas_state())
    arg(&atlas_, b_.t_pointer(SC::CrossWorkgroup, u64t()), SpirvKernelArg::Kind::Atlas, 0);
  if (uses(Opcode::PhaseGet)) arg(&phase_, u32t(), SpirvKernelArg::Kind::Phase, 0);
  if (plan_scratch())
    arg(&scratch_, b_.t_pointer(SC::CrossWorkgroup, u32t()), SpirvKernelArg::Kind::Scratch, 0);
  if (needs_status()) {
    info_.has_status = true;
    info_.status_binding = static_cast<uint32_t>(info_.kernel_args.size());
    info_.bindings.push_back({SpirvBinding::Kind::Status, info_.status_binding, 0});
    arg(&status_, b_.t_pointer(SC::CrossWorkgroup, u32t()), SpirvKernelArg::Kind::Status, 0);
  }
  if (uses_shared()) {
    arg(&shared_, b_.t_pointer(SC::Workgroup, u32t()), SpirvKernelArg::Kind::Shared, 0);
    if (o_.bounds_check) arg(&shared_words_, u32t(), SpirvKernelArg::Kind::SharedWords, 0);
  }
  for (auto &[p, id] : buffer_bytes_) arg(&id, u64t(), SpirvKernelArg::Kind::BufferBytes, p);

  auto variable = [&](Id *ref, Id type) {
    context_.push_back({ref, b_.t_pointer(SC::Function, type), type, ""});
  };
  if (cfg_.function_entries.size() > 1) variable(&exited_, boolt());
  for (const auto &s : lanes_.slots) regs_[s] = 0;
  for (auto &[slot, id] : regs_) variable(&id, slot.pred ? boolt() : rep(slot.type));
}

auto OpenClLowering::jump(uint32_t bb) -> void {
  auto it = labels_.find(bb);
  if (it == labels_.end()) return emit_exit();
  b_.terminate(Op::OpBranch, {it->second});
}

auto OpenClLowering::branch(Id c, uint32_t then_bb, uint32_t else_bb) -> void {
  Id t = b_.fresh(), e = b_.fresh();
  b_.terminate(Op::OpBranchConditional, {c, t, e});
  b_.begin_block(t);
  jump(then_bb);
  b_.begin_block(e);
  jump(else_bb);
}

auto OpenClLowering::declare_entry_point(Id entry) -> void {
  b_.entry_point(spv::ExecutionModel::Kernel, entry, k_.name, inputs_);
  b_.name(entry, k_.name);
  if (fixed_block_)
    b_.execution_mode(entry, spv::ExecutionMode::LocalSize,
                      {o_.block[0], o_.block[1], o_.block[2]});
}

auto OpenClLowering::begin_function(uint32_t entry, bool is_kernel) -> void {
  Id void_t = b_.t_void();
  // The kernel takes its arguments and owns the registers; a subroutine takes them all.
  std::vector<Id> params;
  for (const auto &c : context_)
    if (!c.var_type || !is_kernel) params.push_back(c.type);
  b_.begin_function(void_t, b_.t_function(void_t, params), fn_ids_.at(entry));
  for (const auto &c : context_)
    if (!c.var_type || !is_kernel) {
      *c.ref = b_.function_param(c.type);
      if (is_kernel) b_.name(*c.ref, c.name);
    }
  b_.begin_block(b_.fresh());
  if (is_kernel)
    for (const auto &c : context_) {
      if (!c.var_type) continue;
      *c.ref = b_.local_variable(c.var_type);
      store(*c.ref, b_.c_null(c.var_type));
    }
  // The control flow is the ISA's own, not the structured form the builder's SSA values
  // follow: registers stay variables.
  b_.set_ssa_locals(false);
}

auto OpenClLowering::emit_body(uint32_t) -> void {
  labels_.clear();
  for (uint32_t bb : rpo_) labels_[bb] = b_.fresh();
  b_.terminate(Op::OpBranch, {labels_.at(rpo_.front())});
  for (uint32_t bb : rpo_) {
    b_.begin_block(labels_.at(bb));
    emit_block(bb);
    if (b_.in_block()) b_.terminate(Op::OpUnreachable, {});
  }
}

auto OpenClLowering::call_arguments() -> Words {
  Words args;
  for (const auto &c : context_) args.push_back(*c.ref);
  return args;
}

auto OpenClLowering::builtin(Id var, uint32_t d) -> Id {
  // A whole size_t vector, as OpenCL consumers expect built-ins to be read.
  return to32(op(Op::OpCompositeExtract, u64t(), {load(b_.t_vector(u64t(), 3), var), d}));
}

auto OpenClLowering::block_geometry(uint32_t d) -> void {
  // One NDRange covers the grid.
  Specials &s = specials_;
  bdim_[d] = builtin(group_size_, d);
  s.grid[d] = builtin(group_count_, d);
  s.block[d] = builtin(group_id_, d);
}

auto OpenClLowering::shift(Op o, Id t, Id value, Id amount) -> Id {
  // SPIR-V lets a shift amount be narrower than the shifted value; llvm-spirv does not.
  Id amount_t = b_.type_of(amount);
  if (amount_t && amount_t != t) return b_.op(o, t, {value, b_.op(Op::OpUConvert, t, {amount})});
  return b_.op(o, t, {value, amount});
}

auto OpenClLowering::glsl(Id t, GLSLstd450 f, const Words &w) -> Id {
  if (f == GLSLstd450FindUMsb) // 31 - clz(x): -1 for 0, like FindUMsb
    return op(Op::OpISub, t, {cu32(31), b_.ext(ext_, t, OpenCLLIB::Clz, w)});
  return b_.ext(ext_, t, opencl_std(f), w);
}

auto OpenClLowering::opencl_std(GLSLstd450 f) -> uint32_t {
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

auto OpenClLowering::sign_extend(Id v, uint32_t bits) -> Id {
  // OpBitFieldSExtract is Shader-only.
  Id sh = cu32(32 - bits);
  return op(Op::OpShiftRightArithmetic, u32t(), {op(Op::OpShiftLeftLogical, u32t(), {v, sh}), sh});
}

auto OpenClLowering::status_word(uint32_t i) -> Id {
  return op(Op::OpInBoundsPtrAccessChain, b_.t_pointer(SC::CrossWorkgroup, u32t()),
            {status_, cu64(i)});
}

auto OpenClLowering::atlas_word(Id index32) -> Id {
  return op(Op::OpInBoundsPtrAccessChain, b_.t_pointer(SC::CrossWorkgroup, u64t()),
            {atlas_, index32});
}

auto OpenClLowering::buffer_view(const Buffer &buf, Id elem, uint32_t) -> Id {
  return bitcast(b_.t_pointer(SC::CrossWorkgroup, elem), buf.var);
}

auto OpenClLowering::buffer_elements(uint32_t p, const Buffer &, unsigned size) -> Id {
  return op(Op::OpUDiv, u64t(), {buffer_bytes_.at(p), cu64(size)});
}

auto OpenClLowering::buffer_element(const Buffer &buf, Id index64) -> Id {
  return op(Op::OpInBoundsPtrAccessChain, b_.t_pointer(SC::CrossWorkgroup, buf.elem),
            {buf.var, index64});
}

auto OpenClLowering::word_ptr(const Address &a, Id word_index32) -> Id {
  SC sc = a.base == AddrBase::Shared ? SC::Workgroup : SC::CrossWorkgroup;
  return op(Op::OpInBoundsPtrAccessChain, b_.t_pointer(sc, u32t()), {word_base(a), word_index32});
}

auto OpenClLowering::wide_ptr(const Address &a, Id byte_off) -> Id {
  // The word pointer reinterpreted.
  Id word = to32(op(Op::OpShiftRightLogical, u64t(), {byte_off, cu32(2)}));
  SC sc = a.base == AddrBase::Shared ? SC::Workgroup : SC::CrossWorkgroup;
  return bitcast(b_.t_pointer(sc, u64t()), word_ptr(a, word));
}

} // namespace hologram::codegen::spirv
