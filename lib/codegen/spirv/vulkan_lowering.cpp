// The Vulkan flavour of the SPIR-V kernel lowering (flavours.h): a Shader module whose
// entry point is GLCompute; storage buffers, push constants and Private registers;
// structured control flow (structurizer.cpp).
#include "flavours.h"

namespace hologram::codegen::spirv {

auto VulkanLowering::declare_interface() -> void {
  declare_globals();
  declare_registers();
}

auto VulkanLowering::declare_entry_point(Id entry) -> void {
  // Before SPIR-V 1.4 the interface lists only Input and Output variables.
  const bool all_globals = o_.target.env != SpirvEnv::Vulkan1_1;
  b_.entry_point(spv::ExecutionModel::GLCompute, entry, k_.name,
                 all_globals ? interface_ : inputs_);
  b_.name(entry, k_.name);
  // SPEC §3.4's floats keep signed zeros, infinities and NaNs. Without this mode the Vulkan
  // environment lets a driver assume there are none (lavapipe has gaps even with it,
  // docs/spirv.md). The runtime refuses a kernel that has it on a device that does not keep
  // them (requires_features).
  for (const auto &[used, bits] : {std::pair{f32_used_, 32u}, std::pair{f64_used_, 64u}}) {
    if (!used) continue;
    if (o_.target.env == SpirvEnv::Vulkan1_1) b_.extension("SPV_KHR_float_controls");
    b_.capability(spv::Capability::SignedZeroInfNanPreserve);
    b_.execution_mode(entry, spv::ExecutionMode::SignedZeroInfNanPreserve, {bits});
    features_.insert("signed_zero_inf_nan_" + std::to_string(bits));
  }
}

auto VulkanLowering::begin_function(uint32_t entry, bool) -> void {
  Id void_t = b_.t_void();
  b_.begin_function(void_t, b_.t_function(void_t, {}), fn_ids_.at(entry));
  b_.begin_block(b_.fresh());
  // Registers become SSA values unless subroutines share them through memory.
  b_.set_ssa_locals(cfg_.function_entries.size() == 1);
}

auto VulkanLowering::emit_body(uint32_t entry) -> void {
  cur_ = b_.local_variable(u32t());
  find_loops(entry);
  find_foldable(entry);
  emit_region(-1);
}

auto VulkanLowering::direct_target(uint32_t target) const -> Id {
  if (frames_.empty() || defer_jumps_ || emitting_ == UINT32_MAX) return 0;
  const LoopFrame &f = frames_.back();
  if (innermost_[emitting_] != f.loop) return 0; // a block of an inner loop's region
  const Loop &l = loops_[static_cast<size_t>(f.loop)];
  if (target == l.header) return f.cont;
  return l.body.count(target) ? 0 : f.merge;
}

auto VulkanLowering::go_to(uint32_t block) -> void {
  b_.store_local(cur_, cu32(block));
  if (Id d = direct_target(block)) b_.terminate(Op::OpBranch, {d});
}

auto VulkanLowering::branch(Id c, uint32_t then_bb, uint32_t else_bb) -> void {
  if (!folded_[else_bb]) {
    b_.store_local(cur_, sel(u32t(), c, cu32(then_bb), cu32(else_bb)));
    // A break or continue on either side leaves the construct here; the other side goes on
    // in a new block (SPIR-V needs no selection merge for a branch to a loop's merge block
    // or continue target).
    const Id dt = direct_target(then_bb), de = direct_target(else_bb);
    if (dt != 0 && dt == de) {
      b_.terminate(Op::OpBranch, {dt});
    } else if (dt != 0 && de != 0) {
      b_.terminate(Op::OpBranchConditional, {c, dt, de});
    } else if (dt != 0 || de != 0) {
      const Id next = b_.fresh();
      b_.terminate(Op::OpBranchConditional, {c, dt != 0 ? dt : next, de != 0 ? de : next});
      b_.begin_block(next);
    }
    return;
  }
  // If-conversion (find_foldable): else_bb runs here for every lane; where c holds, the
  // registers it writes keep the values they had.
  std::vector<isa::RegAccess> defs, all;
  const isa::BasicBlock &f = cfg_.blocks[else_bb];
  for (uint32_t i = f.begin; i < f.end; ++i) {
    isa::instruction_defs(k_.insts[i], defs);
    for (const isa::RegAccess &d : defs)
      if (std::none_of(all.begin(), all.end(), [&](const isa::RegAccess &a) {
            return a.pred == d.pred && a.reg == d.reg && (a.pred || a.type == d.type);
          }))
        all.push_back(d);
  }
  std::vector<Id> before;
  for (const isa::RegAccess &d : all)
    before.push_back(d.pred ? read_pred(d.reg) : read_reg(d.reg, d.type));
  defer_jumps_ = true;
  emit_block(else_bb); // ends by going to then_bb, the block it falls through into
  defer_jumps_ = false;
  for (size_t i = 0; i < all.size(); ++i) {
    const isa::RegAccess &d = all[i];
    if (d.pred)
      write_pred(d.reg, sel(boolt(), c, before[i], read_pred(d.reg)));
    else
      write_reg(d.reg, d.type, sel(rep(d.type), c, before[i], read_reg(d.reg, d.type)));
  }
  if (Id d = direct_target(then_bb)) b_.terminate(Op::OpBranch, {d});
}

auto VulkanLowering::push_u32(uint32_t member) -> Id {
  Id ptr = op(Op::OpAccessChain, b_.t_pointer(SC::PushConstant, u32t()), {push_, cu32(member)});
  return load(u32t(), ptr);
}

auto VulkanLowering::builtin(Id var, uint32_t d) -> Id {
  Id ptr = op(Op::OpAccessChain, b_.t_pointer(SC::Input, u32t()), {var, cu32(d)});
  return load(u32t(), ptr);
}

auto VulkanLowering::block_geometry(uint32_t d) -> void {
  // The grid and the first block of this part of a launch are push constants (a launch
  // larger than a dispatch is split in parts); the block size is WorkgroupSize.
  Specials &s = specials_;
  s.grid[d] = push_u32(d);
  s.block[d] = op(Op::OpIAdd, u32t(), {builtin(group_id_, d), push_u32(3 + d)});
}

auto VulkanLowering::narrow_lane_ids() -> void {
  // The 32-bit forms when the launch says they fit (specialisation constant 4, so the driver
  // drops the other).
  Specials &s = specials_;
  Id narrow =
      b_.shared_global("spec.4", [&] { return b_.spec_bool(info_.narrow_lanes_spec_id, false); });
  const LaneIds narrow_ids = lane_ids(u32t(), false);
  auto pick = [&](Id &v, Id v32) { v = sel(u64t(), narrow, to64(v32), v); };
  pick(s.gid, narrow_ids.gid);
  for (uint32_t d = 0; d < 3; ++d) pick(s.gid_axis[d], narrow_ids.axis[d]);
  pick(s.gsize, narrow_ids.gsize);
}

auto VulkanLowering::flat_grid() -> Id {
  // Specialisation constant 5: the driver keeps only the form the launch needs.
  return b_.shared_global("spec.5", [&] { return b_.spec_bool(info_.flat_grid_spec_id, false); });
}

auto VulkanLowering::fma_rounds_once_here(Type t) -> Id {
  // Specialisation constants 6 (f32) and 7 (f64), set by the runtime's probe of the device.
  const bool wide = t == Type::F64;
  return b_.shared_global(wide ? "spec.7" : "spec.6",
                          [&] { return b_.spec_bool(info_.fma_spec_ids[wide ? 1 : 0], false); });
}

auto VulkanLowering::declare_storage_width(unsigned bits) -> void {
  if (bits == 8) {
    b_.capability(spv::Capability::StorageBuffer8BitAccess);
    b_.capability(spv::Capability::Int8);
    if (o_.target.env == SpirvEnv::Vulkan1_1) b_.extension("SPV_KHR_8bit_storage");
    features_.insert("int8");
    features_.insert("storage_buffer_8bit");
    return;
  }
  b_.capability(spv::Capability::StorageBuffer16BitAccess);
  b_.capability(spv::Capability::Int16);
  features_.insert("int16");
  features_.insert("storage_buffer_16bit");
}

auto VulkanLowering::scalar_param(uint32_t p, Type t) -> Id {
  Id ptr = op(Op::OpAccessChain, b_.t_pointer(SC::PushConstant, rep(t)),
              {push_, cu32(push_member_.at(p))});
  return load(rep(t), ptr);
}

auto VulkanLowering::device_memory(bool fence) -> spv::MemorySemanticsMask {
  return fence ? spv::MemorySemanticsMask::UniformMemory : spv::MemorySemanticsMask::MaskNone;
}

auto VulkanLowering::shift(Op o, Id t, Id value, Id amount) -> Id {
  return b_.op(o, t, {value, amount});
}

auto VulkanLowering::exact(Id v) -> Id {
  if (!o_.fast_math) b_.decorate(v, spv::Decoration::NoContraction);
  return v;
}

auto VulkanLowering::glsl(Id t, GLSLstd450 f, const Words &w) -> Id {
  return b_.ext(ext_, t, f, w);
}

auto VulkanLowering::sign_extend(Id v, uint32_t bits) -> Id {
  return op(Op::OpBitFieldSExtract, u32t(), {v, cu32(0), cu32(bits)});
}

auto VulkanLowering::signed_rem(Id ty, Id a, Id divisor) -> Id {
  // Vulkan leaves OpSRem undefined when an operand is negative (its SPIR-V environment,
  // "Precision and Operation"): the remainder of the magnitudes, with the dividend's sign.
  // Each operand is built in its own statement: the ids come out in one order whatever the
  // compiler's order of evaluating arguments.
  Id zero_t = b_.c_null(ty);
  Id a_negative = op(Op::OpSLessThan, boolt(), {a, zero_t});
  auto magnitude = [&](Id v, Id negative) {
    Id negated = op(Op::OpISub, ty, {zero_t, v});
    return sel(ty, negative, negated, v);
  };
  Id ma = magnitude(a, a_negative);
  Id mb = magnitude(divisor, op(Op::OpSLessThan, boolt(), {divisor, zero_t}));
  Id m = op(Op::OpUMod, ty, {ma, mb});
  Id negated = op(Op::OpISub, ty, {zero_t, m});
  return sel(ty, a_negative, negated, m);
}

auto VulkanLowering::status_word(uint32_t i) -> Id {
  return op(Op::OpAccessChain, b_.t_pointer(SC::StorageBuffer, u32t()),
            {status_, cu32(0), cu32(i)});
}

auto VulkanLowering::atlas_word(Id index32) -> Id {
  return op(Op::OpAccessChain, b_.t_pointer(SC::StorageBuffer, u64t()), {atlas_, cu32(0), index32});
}

auto VulkanLowering::buffer_view(const Buffer &buf, Id elem, uint32_t stride) -> Id {
  return view(buf.var, elem, stride);
}

auto VulkanLowering::buffer_elements(uint32_t, const Buffer &buf, unsigned) -> Id {
  return to64(op(Op::OpArrayLength, u32t(), {buf.var, 0}));
}

auto VulkanLowering::buffer_element(const Buffer &buf, Id index64) -> Id {
  return op(Op::OpAccessChain, b_.t_pointer(SC::StorageBuffer, buf.elem),
            {buf.var, cu32(0), to32(index64)});
}

auto VulkanLowering::pool_bytes(uint32_t p) -> Id {
  return op(Op::OpIMul, u64t(),
            {to64(op(Op::OpArrayLength, u32t(), {buffers_.at(p).var, 0})), cu64(4)});
}

auto VulkanLowering::word_ptr(const Address &a, Id word_index32) -> Id {
  bool shared = a.base == AddrBase::Shared;
  SC sc = shared ? SC::Workgroup : SC::StorageBuffer;
  Id base = word_base(a);
  if (shared) return op(Op::OpAccessChain, b_.t_pointer(sc, u32t()), {base, word_index32});
  return op(Op::OpAccessChain, b_.t_pointer(sc, u32t()), {base, cu32(0), word_index32});
}

auto VulkanLowering::wide_ptr(const Address &a, Id byte_off) -> Id {
  Id index = to32(op(Op::OpShiftRightLogical, u64t(), {byte_off, cu32(3)}));
  if (a.base == AddrBase::Shared) return shared_u64(index);
  return op(Op::OpAccessChain, b_.t_pointer(SC::StorageBuffer, u64t()),
            {wide_view(word_base(a)), cu32(0), index});
}

auto VulkanLowering::declare_globals() -> void {
  b_.capability(spv::Capability::Shader);
  ext_ = b_.import("GLSL.std.450");
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

auto VulkanLowering::wide_shared_atomic() const -> const Instruction * {
  for (const auto &inst : k_.insts)
    if ((inst.op == Opcode::Atom || inst.op == Opcode::AtomCas) && is64(inst.type) &&
        inst.operands[1].addr.base == AddrBase::Shared)
      return &inst;
  return nullptr;
}

auto VulkanLowering::storage_array(Id elem, uint32_t stride, uint32_t binding, bool read_only)
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

auto VulkanLowering::view(Id var, Id elem, uint32_t stride) -> Id {
  auto [it, fresh] = views_.try_emplace({var, elem}, 0);
  if (fresh) {
    uint32_t binding = binding_of_.at(var);
    it->second = storage_array(elem, stride, binding, false);
    b_.name(it->second,
            k_.name + ".binding" + std::to_string(binding) + ".u" + std::to_string(stride * 8));
  }
  return it->second;
}

auto VulkanLowering::declare_registers() -> void {
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
