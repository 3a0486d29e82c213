// The SPIR-V lowering's interface: built-ins, push constants (Vulkan) or kernel arguments
// (OpenCL), storage buffers and their views, shared memory, the status buffer, launch scratch
// and the register variables (kernel_lowering.h).
#include "kernel_lowering.h"

namespace hologram::codegen::spirv {

auto KernelLowering::declare_interface() -> void {
  Id uvec3 = b_.t_vector(u32t(), 3);
  Id in_ptr = b_.t_pointer(SC::Input, uvec3);
  auto input = [&](spv::BuiltIn bi, const char *key) {
    return b_.shared_global(key, [&] {
      Id v = b_.global_variable(in_ptr, SC::Input);
      b_.decorate(v, spv::Decoration::BuiltIn, {static_cast<uint32_t>(bi)});
      return v;
    });
  };
  local_id_ = input(spv::BuiltIn::LocalInvocationId, "LocalInvocationId");
  group_id_ = input(spv::BuiltIn::WorkgroupId, "WorkgroupId");
  interface_ = {local_id_, group_id_};
  inputs_ = interface_;

  for (uint32_t d = 0; d < 3; ++d)
    bdim_[d] = b_.shared_global("spec." + std::to_string(d), [&] {
      return b_.spec_u32(info_.local_size_spec_ids[d], fixed_block_ ? o_.block[d] : 1);
    });
  b_.shared_global("WorkgroupSize", [&] {
    Id wg = b_.spec_composite(uvec3, {bdim_[0], bdim_[1], bdim_[2]});
    b_.decorate(wg, spv::Decoration::BuiltIn, {static_cast<uint32_t>(spv::BuiltIn::WorkgroupSize)});
    return wg;
  });

  // Push constants: geometry, then the scalars.
  std::vector<Id> members(6, u32t());
  std::vector<uint32_t> offsets{0, 4, 8, 12, 16, 20};
  uint32_t offset = 24;
  for (uint32_t p = 0; p < k_.params.size(); ++p) {
    const Param &param = k_.params[p];
    if (param.kind != ParamKind::Scalar) continue;
    uint32_t size = is64(param.type) ? 8 : 4;
    offset = (offset + size - 1) & ~(size - 1);
    info_.scalars.push_back({p, offset, size});
    push_member_[p] = static_cast<uint32_t>(members.size());
    members.push_back(rep(param.type));
    offsets.push_back(offset);
    offset += size;
  }
  if (uses(Opcode::PhaseGet)) {
    info_.phase_offset = offset;
    phase_member_ = static_cast<uint32_t>(members.size());
    members.push_back(u32t());
    offsets.push_back(offset);
    offset += 4;
  }
  info_.push_constant_bytes = (offset + 7) & ~7u;
  Id pc_struct = b_.t_struct_unique(members);
  b_.decorate(pc_struct, spv::Decoration::Block);
  for (uint32_t i = 0; i < members.size(); ++i)
    b_.member_decorate(pc_struct, i, spv::Decoration::Offset, {offsets[i]});
  push_ = b_.global_variable(b_.t_pointer(SC::PushConstant, pc_struct), SC::PushConstant);
  b_.name(push_, k_.name + ".args");
  interface_.push_back(push_);

  // Buffers in parameter order, each a runtime array of its element's bits.
  uint32_t binding = 0;
  for (uint32_t p = 0; p < k_.params.size(); ++p) {
    const Param &param = k_.params[p];
    if (param.kind == ParamKind::Scalar) continue;
    // A pool is bytes: u32 words, reached like shared memory.
    bool pool = param.kind == ParamKind::Pool;
    Id elem = pool ? u32t() : mem_int(param.type);
    Id var = storage_array(elem, pool ? 4 : type_size(param.type), binding,
                           !pool && param.access == Access::Read);
    b_.name(var, param.name);
    buffers_[p] = {var, elem};
    info_.bindings.push_back(
        {pool ? SpirvBinding::Kind::Pool : SpirvBinding::Kind::Buffer, binding, p});
    ++binding;
  }
  if (uses_boundary()) { // the Atlas boundary pool: u32 words, like shared memory
    boundary_ = storage_array(u32t(), 4, binding, false);
    b_.name(boundary_, k_.name + ".boundary");
    info_.bindings.push_back({SpirvBinding::Kind::Boundary, binding, 0});
    ++binding;
  }
  if (uses_atlas_state()) { // resonance and the phase advance, u64 words
    atlas_ = storage_array(u64t(), 8, binding, false);
    b_.name(atlas_, k_.name + ".atlas");
    info_.bindings.push_back({SpirvBinding::Kind::Atlas, binding, 0});
    ++binding;
  }
  if (plan_scratch()) { // launch scratch: u32 words, every lane's regions
    scratch_ = storage_array(u32t(), 4, binding, false);
    b_.name(scratch_, k_.name + ".scratch");
    info_.bindings.push_back({SpirvBinding::Kind::Scratch, binding, 0});
    ++binding;
  }
  if (needs_status()) {
    status_ = storage_array(u32t(), 4, binding, false);
    b_.name(status_, k_.name + ".status");
    info_.has_status = true;
    info_.status_binding = binding;
    info_.bindings.push_back({SpirvBinding::Kind::Status, binding, 0});
  }

  // Shared memory: u32 words, as many as the launch asks for (a specialisation constant).
  shared_words_ = b_.shared_global("spec.3", [&] {
    return b_.spec_u32(info_.shared_words_spec_id, 1); // always specialised at launch
  });
  if (!uses_shared()) return;
  // A kernel with 64-bit atomics on shared memory keeps it in u64 words (a Workgroup array
  // has one element type unless VK_KHR_workgroup_memory_explicit_layout is there, which
  // lavapipe lacks); narrower accesses are parts of a word (load_word, store_word_part).
  wide_shared_ = wide_shared_atomic() != nullptr;
  Id arr =
      wide_shared_
          ? b_.t_array(u64t(), b_.spec_op(Op::OpShiftRightLogical, u32t(),
                                          {b_.spec_op(Op::OpIAdd, u32t(), {shared_words_, cu32(1)}),
                                           cu32(1)}))
          : b_.t_array(u32t(), shared_words_);
  shared_ = b_.global_variable(b_.t_pointer(SC::Workgroup, arr), SC::Workgroup);
  interface_.push_back(shared_);
  b_.name(shared_, k_.name + ".shared");
}

auto KernelLowering::wide_shared_atomic() const -> const Instruction * {
  if (cl_) return nullptr;
  for (const auto &inst : k_.insts)
    if ((inst.op == Opcode::Atom || inst.op == Opcode::AtomCas) && is64(inst.type) &&
        inst.operands[1].addr.base == AddrBase::Shared)
      return &inst;
  return nullptr;
}

auto KernelLowering::storage_array(Id elem, uint32_t stride, uint32_t binding, bool read_only)
    -> Id {
  Id arr = b_.t_runtime_array_unique(elem);
  b_.decorate(arr, spv::Decoration::ArrayStride, {stride});
  Id st = b_.t_struct_unique({arr});
  b_.decorate(st, spv::Decoration::Block);
  b_.member_decorate(st, 0, spv::Decoration::Offset, {0});
  if (read_only) b_.member_decorate(st, 0, spv::Decoration::NonWritable);
  Id var = b_.global_variable(b_.t_pointer(SC::StorageBuffer, st), SC::StorageBuffer);
  b_.decorate(var, spv::Decoration::DescriptorSet, {0});
  b_.decorate(var, spv::Decoration::Binding, {binding});
  interface_.push_back(var);
  binding_of_[var] = binding;
  return var;
}

auto KernelLowering::view(Id var, Id elem, uint32_t stride) -> Id {
  auto [it, fresh] = views_.try_emplace({var, elem}, 0);
  if (fresh) {
    uint32_t binding = binding_of_.at(var);
    it->second = storage_array(elem, stride, binding, false);
    b_.name(it->second,
            k_.name + ".binding" + std::to_string(binding) + ".u" + std::to_string(stride * 8));
  }
  return it->second;
}

auto KernelLowering::declare_kernel_args() -> void {
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
    if (param.kind == ParamKind::Scalar) cl_scalars_[p] = 0;
    if (param.kind != ParamKind::Scalar && o_.bounds_check) cl_bytes_[p] = 0;
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
      arg(&cl_scalars_.at(p), rep(param.type), SpirvKernelArg::Kind::Scalar, p);
      info_.scalars.push_back({p, index, size});
    }
  }
  if (uses_boundary())
    arg(&boundary_, b_.t_pointer(SC::CrossWorkgroup, u32t()), SpirvKernelArg::Kind::Boundary, 0);
  if (uses_atlas_state())
    arg(&atlas_, b_.t_pointer(SC::CrossWorkgroup, u64t()), SpirvKernelArg::Kind::Atlas, 0);
  if (uses(Opcode::PhaseGet)) arg(&cl_phase_, u32t(), SpirvKernelArg::Kind::Phase, 0);
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
  for (auto &[p, id] : cl_bytes_) arg(&id, u64t(), SpirvKernelArg::Kind::BufferBytes, p);

  auto variable = [&](Id *ref, Id type) {
    context_.push_back({ref, b_.t_pointer(SC::Function, type), type, ""});
  };
  if (cfg_.function_entries.size() > 1) variable(&exited_, boolt());
  for (const auto &s : lanes_.slots) regs_[s] = 0;
  for (auto &[slot, id] : regs_) variable(&id, slot.pred ? boolt() : rep(slot.type));
}

auto KernelLowering::uses(Opcode o) const -> bool {
  return std::any_of(k_.insts.begin(), k_.insts.end(),
                     [&](const Instruction &i) { return i.op == o; });
}

auto KernelLowering::plan_scratch() -> bool {
  if (!scratch_sites_.empty() || info_.scratch_bytes_per_lane) return true;
  uint64_t offset = 0;
  for (uint32_t i = 0; i < k_.insts.size(); ++i) {
    if (k_.insts[i].op != Opcode::PoolAlloc) continue;
    uint64_t size = (k_.insts[i].operands[1].imm + 7) & ~uint64_t{7};
    auto site = static_cast<uint32_t>(scratch_sites_.size() + 1);
    scratch_sites_.emplace(i, ScratchSite{site, offset, k_.insts[i].operands[1].imm});
    offset += size;
  }
  info_.scratch_bytes_per_lane = offset;
  return offset > 0;
}

auto KernelLowering::in_words(const Address &a) -> bool {
  // Reg: an address resolved to a launch scratch allocation (through_register).
  return a.base == AddrBase::Shared || a.base == AddrBase::Class || a.base == AddrBase::Boundary ||
         a.base == AddrBase::Pool || a.base == AddrBase::Reg;
}

auto KernelLowering::uses_boundary() const -> bool {
  if (uses(Opcode::NbrLd) || uses(Opcode::NbrSt)) return true;
  for (const auto &inst : k_.insts)
    for (const auto &opnd : inst.operands)
      if (opnd.kind == OperandKind::Addr &&
          (opnd.addr.base == AddrBase::Class || opnd.addr.base == AddrBase::Boundary))
        return true;
  return false;
}

auto KernelLowering::uses_shared() const -> bool {
  if (k_.shared_bytes > 0) return true;
  for (const auto &inst : k_.insts)
    for (const auto &opnd : inst.operands)
      if (opnd.kind == OperandKind::Addr && opnd.addr.base == AddrBase::Shared) return true;
  return false;
}

auto KernelLowering::needs_status() const -> bool {
  if (o_.bounds_check || o_.check_div) return true;
  // Atlas instructions fail the launch for a class, page or byte out of range.
  for (const auto &inst : k_.insts)
    if (inst.info().family == OpFamily::Atlas && inst.op != Opcode::PhaseGet &&
        inst.op != Opcode::PhaseAdv)
      return true;
  // Register addresses fail the launch for a register that holds none.
  for (const auto &inst : k_.insts)
    for (const auto &opnd : inst.operands)
      if (opnd.kind == OperandKind::Addr && inst.op != Opcode::Addr &&
          (opnd.addr.base == AddrBase::Reg || !statically_aligned(opnd.addr, inst)))
        return true;
  return false;
}

auto KernelLowering::access_size(const Instruction &inst) -> unsigned {
  return std::max(1u, type_size(inst.type));
}

auto KernelLowering::statically_aligned(const Address &a, const Instruction &inst, unsigned align)
    -> bool {
  unsigned size = align ? align : access_size(inst);
  if (in_words(a) && !align) size = std::min(size, 4u);
  bool idx_ok = a.index == kNoReg || a.scale % size == 0;
  return idx_ok && a.disp % static_cast<int64_t>(size) == 0;
}

auto KernelLowering::declare_registers() -> void {
  for (const auto &s : lanes_.slots) {
    Id t = s.pred ? boolt() : rep(s.type);
    Id var = b_.global_variable(b_.t_pointer(SC::Private, t), SC::Private, b_.c_null(t));
    b_.name(var, s.pred ? "p" + std::to_string(s.reg)
                        : "r" + std::to_string(s.reg) + "." + std::string(type_name(s.type)));
    regs_[s] = var;
    interface_.push_back(var);
  }
  if (cfg_.function_entries.size() > 1) {
    exited_ = b_.global_variable(b_.t_pointer(SC::Private, boolt()), SC::Private, b_.c_bool(false));
    b_.name(exited_, "exited");
    interface_.push_back(exited_);
  }
}

} // namespace hologram::codegen::spirv
