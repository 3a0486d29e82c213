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
#include "hologram/isa/accesses.h"
#include "hologram/isa/atlas.h"
#include "hologram/isa/cfg.h"
#include "hologram/isa/type_dispatch.h"
#include "hologram/opt/lane_analysis.h"
#include "hologram/support/unreachable.h"
#include "lowering.h"
#include "math64.h"

#include <spirv/unified1/GLSL.std.450.h>
#include <spirv/unified1/OpenCL.std.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <utility>

namespace hologram::codegen::spirv {

using namespace isa;
using spv::Op;
using SC = spv::StorageClass;

namespace {

bool is64(Type t) {
  return type_size(t) == 8;
}

std::string location(const Kernel &k, const Instruction &inst) {
  return "kernel '" + k.name + "', line " + std::to_string(inst.loc.line) + ":" +
         std::to_string(inst.loc.col);
}

/// A natural loop of one function.
struct Loop {
  uint32_t header = 0;
  std::set<uint32_t> body; ///< includes the header
  int parent = -1;         ///< index of the enclosing loop
};

/// A buffer or pool as the code reaches it: its variable (OpenCL: pointer) and element type.
struct Buffer {
  Id var = 0, elem = 0;
};

/// A pool.alloc site: its region of every lane's launch scratch.
struct ScratchSite {
  uint32_t site = 0;   ///< its number in handles (from 1)
  uint64_t offset = 0; ///< in each lane's scratch
  uint64_t size = 0;   ///< bytes it allocates
};

/// The element type a device library kernel is instantiated for: that of its first buffer,
/// the output, in every kernel of library.cpp.
Type library_element_type(const Kernel &k) {
  for (const auto &p : k.params)
    if (p.kind == ParamKind::Buffer) return p.type;
  return Type::None;
}

class KernelLowering {
public:
  KernelLowering(Builder &b, const Kernel &k, const SpirvOptions &o, bool library)
      : b_(b), k_(k), o_(o), cl_(!o.target.is_vulkan()),
        f32_library_(library && library_element_type(k) == Type::F32),
        lanes_(opt::analyse_lanes(k)), natural_loops_(natural_loops(cfg_)) {}

  SpirvKernelInfo run() {
    info_.name = k_.name;
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
    b_.entry_point(cl_ ? spv::ExecutionModel::Kernel : spv::ExecutionModel::GLCompute, entry,
                   k_.name, all_globals ? interface_ : inputs_);
    b_.name(entry, k_.name);
    info_.requires_features.assign(features_.begin(), features_.end());
    return info_;
  }

private:
  // ------------------------------------------------------------------------------------------
  // What this back end runs

  void check_supported() {
    for (const auto &inst : k_.insts) {
      switch (inst.info().family) {
      case OpFamily::HigherOrder:
      case OpFamily::Library:
        throw Unsupported(location(k_, inst) + ": '" + std::string(inst.info().mnemonic) +
                          "' is not supported by the SPIR-V back end yet");
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

  // ------------------------------------------------------------------------------------------
  // Types

  Id u32t() { return b_.t_int(32); }
  Id u64t() { return b_.t_int(64); }
  Id boolt() { return b_.t_bool(); }
  Id f32t() { return b_.t_float(32); }
  Id f64t() {
    use_f64();
    return b_.t_float(64);
  }
  void use_f64() {
    if (!f64_used_) {
      f64_used_ = true;
      b_.capability(spv::Capability::Float64);
      features_.insert("float64");
    }
  }

  /// The SPIR-V type of a register of ISA type t.
  Id rep(Type t) {
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
  /// The unsigned integer type of t's bits in memory.
  Id mem_int(Type t) {
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

  Id cu32(uint32_t v) { return b_.c_u32(v); }
  Id cu64(uint64_t v) { return b_.c_u64(v); }
  Id cf32(float v) { return b_.c_float(32, std::bit_cast<uint32_t>(v)); }
  Id cf64(double v) { return b_.c_float(64, std::bit_cast<uint64_t>(v)); }
  Id cfloat(Type t, double v) { return t == Type::F64 ? cf64(v) : cf32(static_cast<float>(v)); }
  Id ctrue() { return b_.c_bool(true); }

  /// A constant of register type t from literal bits.
  Id constant(Type t, uint64_t bits) {
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
  static uint64_t normalize_const(Type t, uint64_t bits) {
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

  // ------------------------------------------------------------------------------------------
  // Shorthands for instructions

  Id op(Op o, Id t, const Words &w) {
    // SPIR-V lets a shift amount be narrower than the shifted value; llvm-spirv does not.
    if (cl_ && w.size() == 2 &&
        (o == Op::OpShiftLeftLogical || o == Op::OpShiftRightLogical ||
         o == Op::OpShiftRightArithmetic)) {
      Id amount_t = b_.type_of(w[1]);
      if (amount_t && amount_t != t) return b_.op(o, t, {w[0], b_.op(Op::OpUConvert, t, {w[1]})});
    }
    return b_.op(o, t, w);
  }
  Id exact(Id v) {
    // OpenCL consumers contract nothing unless FPFastMathMode says so (NoContraction is a
    // Shader decoration).
    if (!o_.fast_math && !cl_) b_.decorate(v, spv::Decoration::NoContraction);
    return v;
  }
  /// A GLSL.std.450 function, or its OpenCL.std twin in the Kernel flavour.
  Id glsl(Id t, GLSLstd450 f, const Words &w) {
    if (!cl_) return b_.ext(ext_, t, f, w);
    if (f == GLSLstd450FindUMsb) // 31 - clz(x): -1 for 0, like FindUMsb
      return op(Op::OpISub, t, {cu32(31), b_.ext(ext_, t, OpenCLLIB::Clz, w)});
    return b_.ext(ext_, t, opencl_std(f), w);
  }
  static uint32_t opencl_std(GLSLstd450 f) {
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
  Id sel(Id t, Id c, Id a, Id bv) { return op(Op::OpSelect, t, {c, a, bv}); }
  Id ieq(Id a, Id bv) { return op(Op::OpIEqual, boolt(), {a, bv}); }
  Id ine(Id a, Id bv) { return op(Op::OpINotEqual, boolt(), {a, bv}); }
  Id land(Id a, Id bv) { return op(Op::OpLogicalAnd, boolt(), {a, bv}); }
  Id lor(Id a, Id bv) { return op(Op::OpLogicalOr, boolt(), {a, bv}); }
  Id lnot(Id a) { return op(Op::OpLogicalNot, boolt(), {a}); }
  Id to64(Id v32) { return op(Op::OpUConvert, u64t(), {v32}); }
  Id to32(Id v64) { return op(Op::OpUConvert, u32t(), {v64}); }
  Id bitcast(Id t, Id v) { return op(Op::OpBitcast, t, {v}); }
  Id load(Id t, Id ptr) { return op(Op::OpLoad, t, {ptr}); }
  void store(Id ptr, Id v) { b_.op_void(Op::OpStore, {ptr, v}); }

  /// Keeps the low bits of an 8/16-bit type, sign- or zero-extended into 32.
  Id normalize(Type t, Id v) {
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

  /// A loop construct inside one instruction: while (condition()) body(); `condition` emits
  /// its test in the loop's header, so values it loads are visible to `body`.
  void structured_loop(const std::function<Id()> &condition, const std::function<void()> &body) {
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

  // Structured control flow inside one instruction: if (c) { then() }.
  void if_then(Id c, const std::function<void()> &then) {
    Id t = b_.fresh(), m = b_.fresh();
    b_.op_void(Op::OpSelectionMerge, {m, 0});
    b_.terminate(Op::OpBranchConditional, {c, t, m});
    b_.begin_block(t);
    then();
    if (b_.in_block()) b_.terminate(Op::OpBranch, {m});
    b_.begin_block(m);
  }

  // ------------------------------------------------------------------------------------------
  // Interface: built-ins, push constants, buffers, shared memory, status

  void declare_interface() {
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
      bdim_[d] = b_.shared_global("spec." + std::to_string(d),
                                  [&] { return b_.spec_u32(info_.local_size_spec_ids[d], 1); });
    b_.shared_global("WorkgroupSize", [&] {
      Id wg = b_.spec_composite(uvec3, {bdim_[0], bdim_[1], bdim_[2]});
      b_.decorate(wg, spv::Decoration::BuiltIn,
                  {static_cast<uint32_t>(spv::BuiltIn::WorkgroupSize)});
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
    Id arr = wide_shared_
                 ? b_.t_array(u64t(),
                              b_.spec_op(Op::OpShiftRightLogical, u32t(),
                                         {b_.spec_op(Op::OpIAdd, u32t(), {shared_words_, cu32(1)}),
                                          cu32(1)}))
                 : b_.t_array(u32t(), shared_words_);
    shared_ = b_.global_variable(b_.t_pointer(SC::Workgroup, arr), SC::Workgroup);
    interface_.push_back(shared_);
    b_.name(shared_, k_.name + ".shared");
  }

  /// The first 64-bit atomic on shared memory, if any (Vulkan).
  const Instruction *wide_shared_atomic() const {
    if (cl_) return nullptr;
    for (const auto &inst : k_.insts)
      if ((inst.op == Opcode::Atom || inst.op == Opcode::AtomCas) && is64(inst.type) &&
          inst.operands[1].addr.base == AddrBase::Shared)
        return &inst;
    return nullptr;
  }

  Id storage_array(Id elem, uint32_t stride, uint32_t binding, bool read_only) {
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
  /// Vulkan: a view of a storage buffer as an array of `elem` (another variable on the same
  /// binding, which Vulkan allows): u64 words of pools, the boundary pool and scratch for
  /// 64-bit atomics, and buffers reached through a register address with another width.
  Id view(Id var, Id elem, uint32_t stride) {
    auto [it, fresh] = views_.try_emplace({var, elem}, 0);
    if (fresh) {
      uint32_t binding = binding_of_.at(var);
      it->second = storage_array(elem, stride, binding, false);
      b_.name(it->second,
              k_.name + ".binding" + std::to_string(binding) + ".u" + std::to_string(stride * 8));
    }
    return it->second;
  }
  Id wide_view(Id words_var) { return view(words_var, u64t(), 8); }

  /// OpenCL (SPEC §9.2): built-ins are Input vectors of size_t; buffers are CrossWorkgroup
  /// pointers and scalars values, in parameter order; then the status buffer, the shared
  /// memory (a local pointer sized at launch) and, with -fbounds-check, the sizes.
  void declare_kernel_args() {
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

  bool uses(Opcode o) const {
    return std::any_of(k_.insts.begin(), k_.insts.end(),
                       [&](const Instruction &i) { return i.op == o; });
  }
  bool uses_atlas_state() const { return uses(Opcode::ResAccum) || uses(Opcode::PhaseAdv); }

  /// Launch scratch: each pool.alloc site gets its own region of every lane's scratch (the
  /// verifier frees an allocation before its site allocates again). True when there is any.
  bool plan_scratch() {
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

  static bool in_words(const Address &a) {
    // Reg: an address resolved to a launch scratch allocation (through_register).
    return a.base == AddrBase::Shared || a.base == AddrBase::Class ||
           a.base == AddrBase::Boundary || a.base == AddrBase::Pool || a.base == AddrBase::Reg;
  }
  bool uses_boundary() const {
    if (uses(Opcode::NbrLd) || uses(Opcode::NbrSt)) return true;
    for (const auto &inst : k_.insts)
      for (const auto &opnd : inst.operands)
        if (opnd.kind == OperandKind::Addr &&
            (opnd.addr.base == AddrBase::Class || opnd.addr.base == AddrBase::Boundary))
          return true;
    return false;
  }

  bool uses_shared() const {
    if (k_.shared_bytes > 0) return true;
    for (const auto &inst : k_.insts)
      for (const auto &opnd : inst.operands)
        if (opnd.kind == OperandKind::Addr && opnd.addr.base == AddrBase::Shared) return true;
    return false;
  }

  bool needs_status() const {
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
  static unsigned access_size(const Instruction &inst) {
    return std::max(1u, type_size(inst.type));
  }
  /// Whether the access is aligned to `align` bytes whatever the registers hold (by default
  /// what the access needs: its size, at most a word in word storage).
  static bool statically_aligned(const Address &a, const Instruction &inst, unsigned align = 0) {
    unsigned size = align ? align : access_size(inst);
    if (in_words(a) && !align) size = std::min(size, 4u);
    bool idx_ok = a.index == kNoReg || a.scale % size == 0;
    return idx_ok && a.disp % static_cast<int64_t>(size) == 0;
  }

  void declare_registers() {
    for (const auto &s : lanes_.slots) {
      Id t = s.pred ? boolt() : rep(s.type);
      Id var = b_.global_variable(b_.t_pointer(SC::Private, t), SC::Private, b_.c_null(t));
      b_.name(var, s.pred ? "p" + std::to_string(s.reg)
                          : "r" + std::to_string(s.reg) + "." + std::string(type_name(s.type)));
      regs_[s] = var;
      interface_.push_back(var);
    }
    if (cfg_.function_entries.size() > 1) {
      exited_ =
          b_.global_variable(b_.t_pointer(SC::Private, boolt()), SC::Private, b_.c_bool(false));
      b_.name(exited_, "exited");
      interface_.push_back(exited_);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Registers and specials

  Id read_reg(Reg r, Type t) {
    if (r == kPendingReg) return pending_offset_;
    if (r == kHandleReg) return pending_handle_;
    if (is_special(r)) return special(reg_special(r));
    auto it = regs_.find(opt::Slot{false, r, t});
    if (it == regs_.end()) return b_.c_null(rep(t));
    return b_.load_local(rep(t), it->second);
  }
  void write_reg(Reg r, Type t, Id v) { b_.store_local(regs_.at(opt::Slot{false, r, t}), v); }
  Id read_pred(unsigned p) {
    auto it = regs_.find(opt::Slot{true, static_cast<Reg>(p), Type::Pred});
    if (it == regs_.end()) return b_.c_bool(false);
    return b_.load_local(boolt(), it->second);
  }
  void write_pred(unsigned p, Id v) {
    b_.store_local(regs_.at(opt::Slot{true, static_cast<Reg>(p), Type::Pred}), v);
  }

  Id push_u32(uint32_t member) {
    Id ptr = op(Op::OpAccessChain, b_.t_pointer(SC::PushConstant, u32t()), {push_, cu32(member)});
    return load(u32t(), ptr);
  }
  Id builtin(Id var, uint32_t d) {
    if (cl_) // a whole size_t vector, as OpenCL consumers expect built-ins to be read
      return to32(op(Op::OpCompositeExtract, u64t(), {load(b_.t_vector(u64t(), 3), var), d}));
    Id ptr = op(Op::OpAccessChain, b_.t_pointer(SC::Input, u32t()), {var, cu32(d)});
    return load(u32t(), ptr);
  }

  /// The special registers, computed in the entry block of each function.
  void compute_specials() {
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
    // In `width` bits (lane ids of a launch of fewer than 2^32 lanes fit in 32).
    auto ids = [&](Id t, bool wide, Id &gid, Id(&axis)[3], Id &gsize) {
      auto mul = [&](Id a, Id c) { return op(Op::OpIMul, t, {a, c}); };
      auto add = [&](Id a, Id c) { return op(Op::OpIAdd, t, {a, c}); };
      auto w = [&](Id v) { return wide ? to64(v) : v; };
      Id lanes = mul(mul(w(bdim_[0]), w(bdim_[1])), w(bdim_[2]));
      Id lane_linear =
          add(mul(add(mul(w(s.lane[2]), w(bdim_[1])), w(s.lane[1])), w(bdim_[0])), w(s.lane[0]));
      Id block_linear = add(mul(add(mul(w(s.block[2]), w(s.grid[1])), w(s.block[1])), w(s.grid[0])),
                            w(s.block[0]));
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

  Id special(Special sp) {
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

  /// Source operand i of the current instruction, by its role in the signature.
  Id src(const Instruction &inst, size_t i) {
    const Operand &opnd = inst.operands[i];
    const OperandRole role = inst.info().role(i);
    if (role == OperandRole::SrcPred) return read_pred(opnd.index);
    if (role == OperandRole::LiteralT) return constant(inst.type, opnd.imm);
    const Type t = read_type(inst, role);
    return read_reg(opnd.index, t == Type::None ? inst.type : t);
  }
  void dst(const Instruction &inst, Id v) {
    const Operand &opnd = inst.operands[0];
    const Type t = write_type(inst, inst.info().role(0));
    if (t == Type::Pred) return write_pred(opnd.index, v);
    write_reg(opnd.index, t == Type::None ? inst.type : t, v);
  }

  // ------------------------------------------------------------------------------------------
  // Functions and structured control flow

  void emit_function(uint32_t entry, bool is_kernel) {
    is_kernel_fn_ = is_kernel;
    Id void_t = b_.t_void();
    if (!cl_) {
      b_.begin_function(void_t, b_.t_function(void_t, {}), fn_ids_.at(entry));
      b_.begin_block(b_.fresh());
    } else {
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
    }
    // Registers become SSA values unless subroutines share them through memory, or the
    // control flow is the ISA's own (OpenCL), not the structured form the builder follows.
    b_.set_ssa_locals(!cl_ && cfg_.function_entries.size() == 1);
    compute_specials();
    if (!cl_) cur_ = b_.local_variable(u32t());

    // Blocks, dominators and natural loops of this function.
    rpo_ = reverse_post_order(cfg_, entry);
    in_fn_.assign(cfg_.blocks.size(), false);
    for (uint32_t bb : rpo_) in_fn_[bb] = true;
    if (cl_) {
      // Kernel modules need no structure: the ISA's own blocks and branches, the control
      // flow OpenCL compilers expect (PoCL's work-group loops handle barriers there).
      labels_.clear();
      for (uint32_t bb : rpo_) labels_[bb] = b_.fresh();
      b_.terminate(Op::OpBranch, {labels_.at(rpo_.front())});
      for (uint32_t bb : rpo_) {
        b_.begin_block(labels_.at(bb));
        emit_block(bb);
        if (b_.in_block()) b_.terminate(Op::OpUnreachable, {});
      }
    } else {
      find_loops(entry);
      emit_region(-1);
    }
    if (b_.in_block()) b_.terminate(Op::OpReturn, {});
    b_.end_function();
  }

  /// OpenCL: control goes to ISA block `bb` (leaving the function when it is not part of it).
  void jump(uint32_t bb) {
    auto it = labels_.find(bb);
    if (it == labels_.end()) return emit_exit();
    b_.terminate(Op::OpBranch, {it->second});
  }
  /// OpenCL: to `then_bb` when c, else to `else_bb`.
  void jump_if(Id c, uint32_t then_bb, uint32_t else_bb) {
    Id t = b_.fresh(), e = b_.fresh();
    b_.terminate(Op::OpBranchConditional, {c, t, e});
    b_.begin_block(t);
    jump(then_bb);
    b_.begin_block(e);
    jump(else_bb);
  }

  /// This function's natural loops (isa::natural_loops), in the order their first latch
  /// comes in reverse post-order, as sets of blocks.
  void find_loops(uint32_t entry) {
    loops_.clear();
    std::vector<uint32_t> rpo_index(cfg_.blocks.size(), UINT32_MAX);
    for (uint32_t i = 0; i < rpo_.size(); ++i) rpo_index[rpo_[i]] = i;
    std::vector<const NaturalLoop *> mine;
    for (const NaturalLoop &l : natural_loops_)
      if (l.function_entry == entry) mine.push_back(&l);
    auto first_latch = [&](const NaturalLoop *l) {
      const uint32_t u = l->latches.front();
      const auto &succs = cfg_.blocks[u].succs;
      const auto at = std::find(succs.begin(), succs.end(), l->header) - succs.begin();
      return std::pair(rpo_index[u], at);
    };
    std::sort(mine.begin(), mine.end(), [&](const NaturalLoop *a, const NaturalLoop *b) {
      return first_latch(a) < first_latch(b);
    });
    for (const NaturalLoop *l : mine) {
      Loop loop{l->header, {}, -1};
      for (uint32_t b = 0; b < l->body.size(); ++b)
        if (l->body[b]) loop.body.insert(b);
      loops_.push_back(std::move(loop));
    }
    for (size_t i = 0; i < loops_.size(); ++i) {
      size_t best = SIZE_MAX;
      for (size_t j = 0; j < loops_.size(); ++j)
        if (j != i && loops_[j].body.count(loops_[i].header) &&
            loops_[j].body.size() > loops_[i].body.size() &&
            (best == SIZE_MAX || loops_[j].body.size() < loops_[best].body.size()))
          best = j;
      loops_[i].parent = best == SIZE_MAX ? -1 : static_cast<int>(best);
    }
    innermost_.assign(cfg_.blocks.size(), -1);
    for (uint32_t bb : rpo_) {
      int best = -1;
      for (size_t j = 0; j < loops_.size(); ++j)
        if (loops_[j].body.count(bb) &&
            (best < 0 || loops_[j].body.size() < loops_[static_cast<size_t>(best)].body.size()))
          best = static_cast<int>(j);
      innermost_[bb] = best;
    }
  }

  /// Emits the items of a region (-1: the function body) into the open block.
  void emit_region(int region) {
    bool first = true;
    for (uint32_t bb : rpo_) {
      int inner = innermost_[bb];
      bool is_block = inner == region;
      int child = -1;
      if (!is_block) {
        if (inner < 0) continue;
        // A child loop of this region starts at its header.
        int l = inner;
        while (l >= 0 && loops_[static_cast<size_t>(l)].parent != region)
          l = loops_[static_cast<size_t>(l)].parent;
        if (l < 0 || loops_[static_cast<size_t>(l)].header != bb) continue;
        child = l;
      }
      if (region >= 0 && !loops_[static_cast<size_t>(region)].body.count(bb)) continue;
      auto emit_item = [&] {
        if (child >= 0)
          emit_loop(child);
        else
          emit_block(bb);
      };
      if (first) {
        emit_item();
        first = false;
      } else {
        if (!b_.in_block()) b_.begin_block(b_.fresh()); // unreachable rest of a region
        if_then(ieq(b_.load_local(u32t(), cur_), cu32(bb)), emit_item);
      }
    }
  }

  void emit_loop(int l) {
    uint32_t header = loops_[static_cast<size_t>(l)].header;
    Id head = b_.fresh(), body = b_.fresh(), cont = b_.fresh(), merge = b_.fresh();
    b_.terminate(Op::OpBranch, {head});
    b_.begin_block(head);
    b_.op_void(Op::OpLoopMerge, {merge, cont, 0});
    b_.terminate(Op::OpBranch, {body});
    b_.begin_block(body);
    emit_region(l);
    if (b_.in_block())
      b_.terminate(Op::OpBranchConditional,
                   {ieq(b_.load_local(u32t(), cur_), cu32(header)), cont, merge});
    b_.begin_block(cont);
    b_.terminate(Op::OpBranch, {head});
    b_.begin_block(merge);
  }

  void go_to(uint32_t block) {
    if (cl_) return jump(block);
    b_.store_local(cur_, cu32(block));
  }

  void emit_exit() {
    if (!is_kernel_fn_ && exited_) store(exited_, ctrue());
    b_.terminate(Op::OpReturn, {});
  }

  void emit_block(uint32_t bb) {
    const BasicBlock &block = cfg_.blocks[bb];
    for (uint32_t i = block.begin; i < block.end; ++i) {
      const Instruction &inst = k_.insts[i];
      inst_index_ = i;
      try {
        if (inst.info().ends_block()) {
          emit_control(as_family<ControlOpcode>(inst.op), inst, block);
          return;
        }
        emit_instruction(inst);
      } catch (const Unsupported &e) {
        std::string what = e.what();
        if (what.rfind("kernel '", 0) == 0) throw;
        throw Unsupported(location(k_, inst) + ": " + what);
      }
    }
    if (block.ends_in_exit || block.succs.empty())
      emit_exit();
    else
      go_to(block.succs[0]);
  }

  uint32_t label_block(const Instruction &inst) {
    for (const auto &opnd : inst.operands)
      if (opnd.kind == OperandKind::Label)
        return cfg_.block_of[std::min<uint32_t>(k_.labels.at(opnd.index).target,
                                                static_cast<uint32_t>(k_.insts.size()))];
    return cfg_.block_of[k_.insts.size()];
  }

  void emit_control(ControlOpcode which, const Instruction &inst, const BasicBlock &block) {
    uint32_t next = cfg_.block_of[block.end];
    switch (which) {
    case ControlOpcode::Bra:
      if (!inst.guard.present) {
        go_to(label_block(inst));
      } else {
        Id p = read_pred(inst.guard.pred);
        if (inst.guard.negate) p = lnot(p);
        if (cl_) return jump_if(p, label_block(inst), next);
        b_.store_local(cur_, sel(u32t(), p, cu32(label_block(inst)), cu32(next)));
      }
      return;
    case ControlOpcode::Loop: {
      Reg r = inst.operands[0].index;
      Id c = read_reg(r, Type::U32);
      Id more = op(Op::OpUGreaterThan, boolt(), {c, cu32(0)});
      write_reg(r, Type::U32, sel(u32t(), more, op(Op::OpISub, u32t(), {c, cu32(1)}), c));
      if (cl_) return jump_if(more, label_block(inst), next);
      b_.store_local(cur_, sel(u32t(), more, cu32(label_block(inst)), cu32(next)));
      return;
    }
    case ControlOpcode::Call: {
      Words call{fn_ids_.at(block.call_target)};
      for (const auto &c : context_) call.push_back(*c.ref);
      b_.op(Op::OpFunctionCall, b_.t_void(), call);
      if_then(load(boolt(), exited_), [&] { b_.terminate(Op::OpReturn, {}); });
      go_to(next);
      return;
    }
    case ControlOpcode::Ret: b_.terminate(Op::OpReturn, {}); return;
    case ControlOpcode::Exit: emit_exit(); return;
    }
  }

  // ------------------------------------------------------------------------------------------
  // Instructions

  void emit_instruction(const Instruction &inst) {
    Type t = inst.type;
    switch (inst.op) {
    case Opcode::Mov:
    case Opcode::MovImm: dst(inst, src(inst, 1)); return;
    case Opcode::Param: {
      uint32_t p = inst.operands[1].index;
      if (cl_) return dst(inst, normalize(t, cl_scalars_.at(p)));
      Id ptr = op(Op::OpAccessChain, b_.t_pointer(SC::PushConstant, rep(t)),
                  {push_, cu32(push_member_.at(p))});
      dst(inst, normalize(t, load(rep(t), ptr)));
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
                                             (cl_ ? spv::MemorySemanticsMask::CrossWorkgroupMemory
                                                  : spv::MemorySemanticsMask::MaskNone)))});
      return;
    case Opcode::MemFence: {
      auto scope = static_cast<FenceScope>(inst.sub);
      if (scope == FenceScope::Thread) return; // a lane's own accesses are already ordered
      spv::Scope s = scope == FenceScope::Block ? spv::Scope::Workgroup : spv::Scope::Device;
      auto sem = spv::MemorySemanticsMask::AcquireRelease |
                 spv::MemorySemanticsMask::WorkgroupMemory |
                 (cl_ ? spv::MemorySemanticsMask::CrossWorkgroupMemory
                      : spv::MemorySemanticsMask::UniformMemory);
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
    case Opcode::Addr: dst(inst, cu64(param_tag(inst.operands[1].index))); return;
    case Opcode::PoolAlloc: {
      // handle = (kTagScratch + site) << 48 (register addresses); its region, zero-filled.
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
      dst(inst, cu64((kTagScratch + site.site) << 48));
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
      throw Unsupported(location(k_, inst) + ": '" + std::string(inst.info().mnemonic) +
                        "' runs as a whole launch (the device library), not in a kernel");
    }
  }

  // ------------------------------------------------------------------------------------------
  // The Atlas instructions (SPEC §4): class arithmetic on (h2, d, l), neighbours sorted by a
  // 5-input network, the boundary pool, and the state buffer for resonance and phase.

  /// v, or limit - 1 after recording that v >= limit (`which`: 0 class, 1 page, 2 byte).
  Id in_range(Id v, uint32_t limit, uint32_t which) {
    record_if(op(Op::OpUGreaterThanEqual, boolt(), {v, cu32(limit)}), spirv_status::AtlasRange,
              which, to64(v), 0);
    return glsl(u32t(), GLSLstd450UMin, {v, cu32(limit - 1)});
  }
  struct Coords {
    Id h2, d, l;
  };
  Coords coords(Id c) {
    Id r = op(Op::OpUMod, u32t(), {c, cu32(24)});
    return {op(Op::OpUDiv, u32t(), {c, cu32(24)}), op(Op::OpUDiv, u32t(), {r, cu32(8)}),
            op(Op::OpUMod, u32t(), {r, cu32(8)})};
  }
  Id class_of(Id h2, Id d, Id l) {
    return op(Op::OpIAdd, u32t(),
              {op(Op::OpIAdd, u32t(),
                  {op(Op::OpIMul, u32t(), {h2, cu32(24)}), op(Op::OpIMul, u32t(), {d, cu32(8)})}),
               l});
  }
  Id mirror_d(Id d) {
    return sel(u32t(), ieq(d, cu32(0)), cu32(0), op(Op::OpISub, u32t(), {cu32(3), d}));
  }
  /// The k-th neighbour of class c (k taken modulo the count), as the interpreter lists them.
  Id neighbour(Id c, uint64_t k) {
    Coords x = coords(c);
    auto mod = [&](Id v, uint32_t m) { return op(Op::OpUMod, u32t(), {v, cu32(m)}); };
    auto add = [&](Id v, uint32_t n) { return op(Op::OpIAdd, u32t(), {v, cu32(n)}); };
    Id flat = ieq(x.d, cu32(0));
    Id v[5] = {class_of(mod(add(x.h2, 1), 4), x.d, x.l), class_of(mod(add(x.h2, 3), 4), x.d, x.l),
               class_of(x.h2, x.d, mod(add(x.l, 1), 8)), class_of(x.h2, x.d, mod(add(x.l, 7), 8)),
               sel(u32t(), flat, cu32(0xffff), class_of(x.h2, mirror_d(x.d), x.l))};
    // An optimal sorting network for five values (nine comparators).
    constexpr std::pair<int, int> kNet[] = {{0, 1}, {3, 4}, {2, 4}, {2, 3}, {1, 4},
                                            {0, 3}, {0, 2}, {1, 3}, {1, 2}};
    for (auto [a, b] : kNet) {
      Id lo = glsl(u32t(), GLSLstd450UMin, {v[a], v[b]});
      Id hi = sel(u32t(), op(Op::OpULessThan, boolt(), {v[a], v[b]}), v[b], v[a]);
      v[a] = lo;
      v[b] = hi;
    }
    return sel(u32t(), flat, v[k % 4], v[k % 5]);
  }
  Id atlas_word(Id index32) {
    if (cl_)
      return op(Op::OpInBoundsPtrAccessChain, b_.t_pointer(SC::CrossWorkgroup, u64t()),
                {atlas_, index32});
    return op(Op::OpAccessChain, b_.t_pointer(SC::StorageBuffer, u64t()),
              {atlas_, cu32(0), index32});
  }

  void atlas_op(AtlasOpcode which, const Instruction &inst) {
    const Type t = inst.type;
    switch (which) {
    case AtlasOpcode::ClsGet: {
      Id byte = in_range(src(inst, 1), 256, 2);
      auto bits = [&](uint32_t shift, uint32_t mask) {
        return op(Op::OpBitwiseAnd, u32t(),
                  {op(Op::OpShiftRightLogical, u32t(), {byte, cu32(shift)}), cu32(mask)});
      };
      Id d = op(Op::OpUMod, u32t(), {bits(4, 3), cu32(3)});
      return dst(inst, class_of(bits(6, 3), d, bits(1, 7)));
    }
    case AtlasOpcode::Mirror: {
      Coords x = coords(in_range(src(inst, 1), atlas::kNumClasses, 0));
      return dst(inst, class_of(x.h2, mirror_d(x.d), x.l));
    }
    case AtlasOpcode::UnityTest: {
      Coords x = coords(in_range(src(inst, 1), atlas::kNumClasses, 0));
      return dst(inst, land(ieq(x.d, cu32(0)), ieq(x.l, cu32(0))));
    }
    case AtlasOpcode::NbrCount: {
      Coords x = coords(in_range(src(inst, 1), atlas::kNumClasses, 0));
      return dst(inst, sel(u32t(), ieq(x.d, cu32(0)), cu32(4), cu32(5)));
    }
    case AtlasOpcode::NbrGet:
      return dst(inst,
                 neighbour(in_range(src(inst, 1), atlas::kNumClasses, 0), inst.operands[2].imm));
    case AtlasOpcode::NbrLd:
    case AtlasOpcode::NbrSt: {
      bool ld = inst.op == Opcode::NbrLd;
      Id c = in_range(src(inst, ld ? 1 : 0), atlas::kNumClasses, 0);
      Id n = neighbour(c, inst.operands[ld ? 2 : 1].imm);
      Id within = src(inst, ld ? 3 : 2);
      if (o_.bounds_check) { // the class window
        Id end = op(Op::OpIAdd, u64t(), {within, cu64(type_size(t))});
        record_if(op(Op::OpUGreaterThan, boolt(), {end, cu64(atlas::kClassBytes)}),
                  spirv_status::OutOfBounds, spirv_status::kBoundaryPool, within, type_size(t));
      }
      Id value = ld ? 0 : src(inst, 3);
      pending_offset_ = op(Op::OpIAdd, u64t(),
                           {op(Op::OpIMul, u64t(), {to64(n), cu64(atlas::kClassBytes)}), within});
      Address a{AddrBase::Boundary, 0, kPendingReg, 1, 0};
      if (ld)
        dst(inst, load_mem(inst, a, t));
      else
        store_mem(inst, a, t, value);
      pending_offset_ = 0;
      return;
    }
    case AtlasOpcode::ResAccum: {
      Id c = in_range(src(inst, 0), atlas::kNumClasses, 0);
      Id v = src(inst, 1);
      b_.capability(spv::Capability::Int64Atomics);
      features_.insert("int64_atomics");
      cas_loop(atlas_word(c), cu32(static_cast<uint32_t>(spv::Scope::Device)), u64t(),
               [&](Id old) { return bitcast(u64t(), fadd(bitcast(f64t(), old), v)); });
      return;
    }
    case AtlasOpcode::PhaseGet:
      if (cl_) return dst(inst, cl_phase_);
      return dst(inst, push_u32(phase_member_));
    case AtlasOpcode::PhaseAdv: {
      b_.capability(spv::Capability::Int64Atomics);
      features_.insert("int64_atomics");
      uint64_t k = inst.operands[0].imm % atlas::kPhaseModulus;
      cas_loop(atlas_word(cu32(atlas::kNumClasses)),
               cu32(static_cast<uint32_t>(spv::Scope::Device)), u64t(), [&](Id old) {
                 return op(Op::OpUMod, u64t(),
                           {op(Op::OpIAdd, u64t(), {old, cu64(k)}), cu64(atlas::kPhaseModulus)});
               });
      return;
    }
    case AtlasOpcode::BoundMap: {
      Id c = in_range(src(inst, 1), atlas::kNumClasses, 0);
      Id p = in_range(src(inst, 2), atlas::kPagesPerClass, 1);
      Id b = in_range(src(inst, 3), atlas::kBytesPerPage, 2);
      Id off = op(Op::OpIAdd, u64t(),
                  {op(Op::OpIAdd, u64t(),
                      {op(Op::OpIMul, u64t(), {to64(c), cu64(atlas::kClassBytes)}),
                       op(Op::OpIMul, u64t(), {to64(p), cu64(atlas::kBytesPerPage)})}),
                   to64(b)});
      return dst(inst, off);
    }
    }
  }

  Id fold(ReduceOp rop, Type t, Id acc, Id v) {
    switch (rop) {
    case ReduceOp::Add: return binary(BinaryOp::Add, t, acc, v);
    case ReduceOp::Mul: return binary(BinaryOp::Mul, t, acc, v);
    case ReduceOp::Min: return binary(BinaryOp::Min, t, acc, v);
    case ReduceOp::Max: return binary(BinaryOp::Max, t, acc, v);
    }
    return acc;
  }

  /// The operations below, by the number of sources; each Arith, Logic and Math instruction
  /// maps onto one of them in arith().
  enum class UnaryOp { Abs, Neg, Not, Sign, Rcp, Floor, Ceil, Trunc, Round };
  enum class BinaryOp { Add, Sub, Mul, Div, Rem, Min, Max, And, Or, Xor, Shl, Shr, Pow, Atan2 };
  enum class TernaryOp { Mad, Fma, Fms, Clamp, Lerp };

  /// An Arith, integer Logic or Math instruction's result.
  Id arith(const Instruction &inst) {
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

  Id signbit(Type t, Id x) {
    if (t == Type::F64) return op(Op::OpSLessThan, boolt(), {bitcast(u64t(), x), cu64(0)});
    return op(Op::OpSLessThan, boolt(), {bitcast(u32t(), x), cu32(0)});
  }
  Id isnan(Id x) { return op(Op::OpIsNan, boolt(), {x}); }

  /// IEEE minNum / maxNum, -0 below +0 (SPEC §3.4), independent of the target's FMin.
  Id fminmax(bool is_min, Type t, Id a, Id c) {
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

  Id binary(BinaryOp o, Type t, Id a, Id c) {
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
      if (f) return exact(op(o == BinaryOp::Div ? Op::OpFDiv : Op::OpFRem, ty, {a, c}));
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
      if (o == BinaryOp::Rem && s && !cl_) {
        // Vulkan leaves OpSRem undefined when an operand is negative (its SPIR-V environment,
        // "Precision and Operation"): the remainder of the magnitudes, with the dividend's sign.
        // Each operand is built in its own statement: the ids come out in one order whatever
        // the compiler's order of evaluating arguments.
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
        r = sel(ty, a_negative, negated, m);
      } else {
        Op dop = o == BinaryOp::Div ? (s ? Op::OpSDiv : Op::OpUDiv) : (s ? Op::OpSRem : Op::OpUMod);
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
        return call_f64_math(b_, cl_, o == BinaryOp::Pow ? MathOpcode::Pow : MathOpcode::Atan2, a,
                             c);
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

  Id unary(UnaryOp o, Type t, Id x) {
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
    case UnaryOp::Floor: return glsl(ty, GLSLstd450Floor, {x});
    case UnaryOp::Ceil: return glsl(ty, GLSLstd450Ceil, {x});
    case UnaryOp::Trunc: return glsl(ty, GLSLstd450Trunc, {x});
    case UnaryOp::Round: {
      // Half away from zero: x - trunc(x) is exact, so compare it with 0.5.
      Id tr = glsl(ty, GLSLstd450Trunc, {x});
      Id frac = glsl(ty, GLSLstd450FAbs, {exact(op(Op::OpFSub, ty, {x, tr}))});
      Id up = op(Op::OpFOrdGreaterThanEqual, boolt(), {frac, cfloat(t, 0.5)});
      Id step = glsl(ty, GLSLstd450FSign, {x});
      return sel(ty, up, exact(op(Op::OpFAdd, ty, {tr, step})), tr);
    }
    }
    unreachable_enum("UnaryOp");
  }

  Id ternary(TernaryOp o, Type t, Id a, Id c, Id d) {
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

  Id compare(CmpCode cc, Type t, Id a, Id c) {
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

  // ------------------------------------------------------------------------------------------
  // Math within the SPEC's bounds. Vulkan's own precision (GLSL.std.450) is far weaker
  // (exp: 3 + 2|x| ulp, sin: 2^-11 absolute) and its Fma need not be fused, so f32 math is
  // evaluated in f64 with our own range reductions and polynomials, then rounded once; with
  // -ffast-math the target's functions are used as they are.

  Id d(double v) { return cf64(v); }
  Id fadd(Id a, Id c) { return exact(op(Op::OpFAdd, f64t(), {a, c})); }
  Id fsub(Id a, Id c) { return exact(op(Op::OpFSub, f64t(), {a, c})); }
  Id fmul(Id a, Id c) { return exact(op(Op::OpFMul, f64t(), {a, c})); }
  Id fdiv(Id a, Id c) { return exact(op(Op::OpFDiv, f64t(), {a, c})); }
  Id flt(Id a, Id c) { return op(Op::OpFOrdLessThan, boolt(), {a, c}); }
  Id fgt(Id a, Id c) { return op(Op::OpFOrdGreaterThan, boolt(), {a, c}); }
  Id dsel(Id c, Id a, Id e) { return sel(f64t(), c, a, e); }
  Id horner(Id x, const std::vector<double> &coeffs) { // coeffs[0] + coeffs[1] x + ...
    Id acc = d(coeffs.back());
    for (size_t i = coeffs.size() - 1; i-- > 0;) acc = fadd(fmul(acc, x), d(coeffs[i]));
    return acc;
  }
  /// 2^n for an integer-valued f64 n in [-1022, 1023], built from its bits.
  Id pow2(Id n) {
    Id bits =
        op(Op::OpShiftLeftLogical, u64t(),
           {op(Op::OpIAdd, u64t(), {op(Op::OpConvertFToS, u64t(), {n}), cu64(1023)}), cu32(52)});
    return bitcast(f64t(), bits);
  }
  /// e^t in f64 for any t: |relative error| < 1e-15; 0 below -708, +inf above 708.
  Id exp64(Id t) {
    Id tc = glsl(f64t(), GLSLstd450FClamp, {t, d(-708.0), d(708.0)});
    Id n = glsl(f64t(), GLSLstd450Floor, {fadd(fmul(tc, d(1.4426950408889634074)), d(0.5))});
    // Cody-Waite: ln2 = hi + lo with hi's low bits zero, so n * hi is exact.
    Id r = fsub(fsub(tc, fmul(n, d(std::bit_cast<double>(uint64_t{0x3FE62E42FEE00000})))),
                fmul(n, d(std::bit_cast<double>(uint64_t{0x3DEA39EF35793C76}))));
    std::vector<double> c(14);
    double f = 1;
    for (int i = 0; i < 14; ++i) {
      c[static_cast<size_t>(i)] = 1.0 / f;
      f *= i + 1;
    }
    Id p = fmul(horner(r, c), pow2(n));
    p = dsel(fgt(t, d(708.0)), d(INFINITY), p);
    p = dsel(flt(t, d(-708.0)), d(0.0), p);
    return dsel(isnan(t), t, p);
  }
  /// e^t - 1 in f64 without cancellation near 0.
  /// erf in f64 for any x, ~1e-15 relative: 2/sqrt(pi) e^(-a^2) sum_n a (2a^2)^n / (2n+1)!!
  /// (every term positive, so nothing cancels), 1 from |x| = 6 on, the sign of x restored.
  Id erf64(Id x) {
    Id a = glsl(f64t(), GLSLstd450FMin, {glsl(f64t(), GLSLstd450FAbs, {x}), d(6.0)});
    Id x2 = fmul(a, a);
    Id twice = fmul(x2, d(2.0));
    Id sum_var = b_.local_variable(f64t()), term_var = b_.local_variable(f64t()),
       n_var = b_.local_variable(f64t());
    store(sum_var, a);
    store(term_var, a);
    store(n_var, d(3.0));
    Id n = 0, term = 0, sum = 0;
    structured_loop(
        [&] {
          n = load(f64t(), n_var);
          term = load(f64t(), term_var);
          sum = load(f64t(), sum_var);
          // Up to 200 terms; stop once a term no longer changes the sum.
          return land(flt(n, d(403.0)), fgt(term, fmul(sum, d(1e-17))));
        },
        [&] {
          Id next = fdiv(fmul(term, twice), n);
          store(term_var, next);
          store(sum_var, fadd(sum, next));
          store(n_var, fadd(n, d(2.0)));
        });
    Id r = fmul(fmul(d(1.1283791670955126), exp64(op(Op::OpFNegate, f64t(), {x2}))),
                load(f64t(), sum_var));
    r = dsel(flt(a, d(6.0)), glsl(f64t(), GLSLstd450FMin, {r, d(1.0)}), d(1.0));
    r = dsel(signbit(Type::F64, x), op(Op::OpFNegate, f64t(), {r}), r);
    return dsel(isnan(x), x, r);
  }

  Id is_integral(Id v) {
    return op(Op::OpFOrdEqual, boolt(), {glsl(f64t(), GLSLstd450Floor, {v}), v});
  }

  /// pow with C99 Annex F's special cases: exp(y log|x|), negated for x < 0 and odd y.
  Id pow64(Id x, Id y) {
    Id ax = glsl(f64t(), GLSLstd450FAbs, {x});
    Id r = exp64(fmul(y, log64(ax)));
    Id y_int = is_integral(y);
    Id y_odd = land(y_int, lnot(is_integral(fmul(y, d(0.5)))));
    Id negative = signbit(Type::F64, x);
    r = dsel(land(negative, y_odd), op(Op::OpFNegate, f64t(), {r}), r);
    // A finite negative base to a finite non-integral power has no real value.
    Id finite_neg = land(flt(x, d(0.0)), lnot(op(Op::OpIsInf, boolt(), {x})));
    r = dsel(land(finite_neg, land(lnot(y_int), lnot(op(Op::OpIsInf, boolt(), {y})))), d(NAN), r);
    // |x| = 1 to an infinite power is 1 (log gives 0 * inf otherwise).
    r = dsel(land(op(Op::OpFOrdEqual, boolt(), {ax, d(1.0)}), op(Op::OpIsInf, boolt(), {y})),
             d(1.0), r);
    r = dsel(lor(isnan(x), isnan(y)), d(NAN), r);
    Id one =
        lor(op(Op::OpFOrdEqual, boolt(), {y, d(0.0)}), op(Op::OpFOrdEqual, boolt(), {x, d(1.0)}));
    return dsel(one, d(1.0), r);
  }

  /// atan of t >= 0 (inf included): two halvings atan(t) = 2 atan(t / (1 + sqrt(1 + t^2)))
  /// after reflecting t > 1 to 1/t, then an odd series on |t| <= tan(pi/16).
  Id atan64(Id t) {
    Id big = fgt(t, d(1.0));
    Id u = dsel(big, fdiv(d(1.0), t), t);
    for (int i = 0; i < 2; ++i)
      u = fdiv(u, fadd(d(1.0), glsl(f64t(), GLSLstd450Sqrt, {fadd(d(1.0), fmul(u, u))})));
    std::vector<double> c;
    for (int k = 0; k < 14; ++k) c.push_back((k % 2 ? -1.0 : 1.0) / (2 * k + 1));
    Id a = fmul(d(4.0), fmul(u, horner(fmul(u, u), c)));
    return dsel(big, fsub(d(1.5707963267948966), a), a);
  }

  /// atan2 with IEEE's signed zeros and infinities.
  Id atan2_64(Id y, Id x) {
    Id ay = glsl(f64t(), GLSLstd450FAbs, {y}), ax = glsl(f64t(), GLSLstd450FAbs, {x});
    Id both_inf = land(op(Op::OpIsInf, boolt(), {y}), op(Op::OpIsInf, boolt(), {x}));
    Id both_zero = land(op(Op::OpFOrdEqual, boolt(), {ay, d(0.0)}),
                        op(Op::OpFOrdEqual, boolt(), {ax, d(0.0)}));
    Id t = dsel(both_inf, d(1.0), dsel(both_zero, d(0.0), fdiv(ay, ax)));
    Id a = atan64(t);
    a = dsel(signbit(Type::F64, x), fsub(d(3.141592653589793), a), a);
    a = dsel(signbit(Type::F64, y), op(Op::OpFNegate, f64t(), {a}), a);
    return dsel(lor(isnan(x), isnan(y)), d(NAN), a);
  }

  /// sin, cos or tan of an f32 value v (held in an f64), in f64: v reduced modulo pi/2 with
  /// a 4-part Cody-Waite split below 2^25 and with the bits of 2/pi above it (v = m 2^e with
  /// a 24-bit m: (m * 128 bits of 2/pi) mod 2^128 gives the quadrant and the fraction), then
  /// Taylor polynomials on |r| <= pi/4. Correct to ~1e-16 for every f32, so rounding to f32
  /// is within the SPEC's 4 ulp.
  Id trig_f32(MathOpcode o, Id v) {
    Id ax = glsl(f64t(), GLSLstd450FAbs, {v});
    // Small: k = nearest(ax * 2/pi), r = ax - k pi/2.
    Id k = glsl(f64t(), GLSLstd450Floor, {fadd(fmul(ax, d(0.6366197723675814)), d(0.5))});
    Id r_small = fsub(ax, fmul(k, d(0x1.921fb54000000p+0)));
    r_small = fsub(r_small, fmul(k, d(0x1.10b4612000000p-30)));
    r_small = fsub(r_small, fmul(k, d(-0x1.676733a000000p-60)));
    r_small = fsub(r_small, fmul(k, d(-0x1.d1fc8f8cbb5bfp-89)));
    Id q_small = fsub(k, fmul(d(4.0), glsl(f64t(), GLSLstd450Floor, {fmul(k, d(0.25))})));
    // Large: the window of 2/pi that matters, starting at bit e - 1.
    Id bits = bitcast(u64t(), ax);
    Id e = op(Op::OpISub, u64t(),
              {op(Op::OpShiftRightLogical, u64t(), {bits, cu32(52)}), cu64(1023 + 23)});
    Id m = op(Op::OpBitwiseOr, u64t(),
              {op(Op::OpShiftRightLogical, u64t(),
                  {op(Op::OpBitwiseAnd, u64t(), {bits, cu64(0xFFFFFFFFFFFFFull)}), cu32(29)}),
               cu64(1u << 23)});
    Id idx = op(Op::OpISub, u64t(), {e, cu64(2)}); // e >= 2 on this path
    Id first = ine(op(Op::OpShiftRightLogical, u64t(), {idx, cu32(6)}), cu64(0));
    Id sh = to32(op(Op::OpBitwiseAnd, u64t(), {idx, cu64(63)}));
    const uint64_t T[4] = {0xa2f9836e4e441529ull, 0xfc2757d1f534ddc0ull, 0xdb6295993c439041ull,
                           0xfe5163abdebbc561ull};
    Id wa = sel(u64t(), first, cu64(T[1]), cu64(T[0]));
    Id wb = sel(u64t(), first, cu64(T[2]), cu64(T[1]));
    Id wc = sel(u64t(), first, cu64(T[3]), cu64(T[2]));
    Id back = op(Op::OpBitwiseAnd, u32t(), {op(Op::OpISub, u32t(), {cu32(64), sh}), cu32(63)});
    Id some = ine(sh, cu32(0));
    auto join = [&](Id hi, Id lo) {
      return op(Op::OpBitwiseOr, u64t(),
                {op(Op::OpShiftLeftLogical, u64t(), {hi, sh}),
                 sel(u64t(), some, op(Op::OpShiftRightLogical, u64t(), {lo, back}), cu64(0))});
    };
    Id w_hi = join(wa, wb), w_lo = join(wb, wc);
    Id mask32 = cu64(0xFFFFFFFFull);
    Id a0 = op(Op::OpIMul, u64t(), {m, op(Op::OpBitwiseAnd, u64t(), {w_lo, mask32})});
    Id a1 = op(Op::OpIMul, u64t(), {m, op(Op::OpShiftRightLogical, u64t(), {w_lo, cu32(32)})});
    Id mid = op(Op::OpIAdd, u64t(),
                {op(Op::OpShiftRightLogical, u64t(), {a0, cu32(32)}),
                 op(Op::OpBitwiseAnd, u64t(), {a1, mask32})});
    Id p_lo = op(Op::OpBitwiseOr, u64t(),
                 {op(Op::OpBitwiseAnd, u64t(), {a0, mask32}),
                  op(Op::OpShiftLeftLogical, u64t(), {mid, cu32(32)})});
    Id carry = op(Op::OpIAdd, u64t(),
                  {op(Op::OpShiftRightLogical, u64t(), {a1, cu32(32)}),
                   op(Op::OpShiftRightLogical, u64t(), {mid, cu32(32)})});
    Id p_hi = op(Op::OpIAdd, u64t(), {op(Op::OpIMul, u64t(), {m, w_hi}), carry});
    Id q_big =
        op(Op::OpConvertUToF, f64t(), {op(Op::OpShiftRightLogical, u64t(), {p_hi, cu32(62)})});
    Id f = fadd(fmul(op(Op::OpConvertUToF, f64t(),
                        {op(Op::OpBitwiseAnd, u64t(), {p_hi, cu64((uint64_t{1} << 62) - 1)})}),
                     d(0x1p-62)),
                fmul(op(Op::OpConvertUToF, f64t(), {p_lo}), d(0x1p-126)));
    Id up = op(Op::OpFOrdGreaterThanEqual, boolt(), {f, d(0.5)});
    f = dsel(up, fsub(f, d(1.0)), f);
    q_big = dsel(up, fadd(q_big, d(1.0)), q_big);
    q_big = dsel(op(Op::OpFOrdEqual, boolt(), {q_big, d(4.0)}), d(0.0), q_big);
    Id r_big = fmul(f, d(1.5707963267948966));
    Id big = op(Op::OpFOrdGreaterThanEqual, boolt(), {ax, d(0x1p25)});
    Id r = dsel(big, r_big, r_small), q = dsel(big, q_big, q_small);

    Id r2 = fmul(r, r);
    std::vector<double> sc, cc;
    double fs = 1, fc = 1;
    for (int i = 0; i < 12; ++i) {
      sc.push_back((i % 2 ? -1.0 : 1.0) / fs); // 1/(2i+1)!
      cc.push_back((i % 2 ? -1.0 : 1.0) / fc); // 1/(2i)!
      fs *= (2 * i + 2) * (2 * i + 3);
      fc *= (2 * i + 1) * (2 * i + 2);
    }
    Id sn = fmul(r, horner(r2, sc)), cs = horner(r2, cc);
    auto is_q = [&](double n) { return op(Op::OpFOrdEqual, boolt(), {q, d(n)}); };
    auto neg = [&](Id x) { return op(Op::OpFNegate, f64t(), {x}); };
    Id res;
    if (o == MathOpcode::Cos) {
      res = dsel(is_q(0), cs, dsel(is_q(1), neg(sn), dsel(is_q(2), neg(cs), sn)));
    } else {
      Id odd = lor(is_q(1), is_q(3));
      res = o == MathOpcode::Sin
                ? dsel(is_q(0), sn, dsel(is_q(1), cs, dsel(is_q(2), neg(sn), neg(cs))))
                : dsel(odd, neg(fdiv(cs, sn)), fdiv(sn, cs));
      res = dsel(signbit(Type::F64, v), neg(res), res);
    }
    Id bad = lor(isnan(v), op(Op::OpIsInf, boolt(), {v}));
    return dsel(bad, d(NAN), res);
  }

  Id expm1_64(Id t) {
    std::vector<double> c(18);
    double f = 1;
    c[0] = 0;
    for (int i = 1; i < 18; ++i) {
      f *= i;
      c[static_cast<size_t>(i)] = 1.0 / f;
    }
    Id small = flt(glsl(f64t(), GLSLstd450FAbs, {t}), d(0.25));
    return dsel(small, horner(t, c), fsub(exp64(t), d(1.0)));
  }
  /// ln x in f64 for x > 0 finite (and the IEEE special cases).
  Id log64(Id x) {
    Id bits = bitcast(u64t(), x);
    Id e = op(Op::OpISub, u64t(),
              {op(Op::OpBitwiseAnd, u64t(),
                  {op(Op::OpShiftRightLogical, u64t(), {bits, cu32(52)}), cu64(0x7ff)}),
               cu64(1022)});
    Id m = bitcast(f64t(), op(Op::OpBitwiseOr, u64t(),
                              {op(Op::OpBitwiseAnd, u64t(), {bits, cu64(0x800FFFFFFFFFFFFFull)}),
                               cu64(uint64_t{1022} << 52)}));
    Id ef = op(Op::OpConvertSToF, f64t(), {e});
    // m in [0.5, 1): bring it to [sqrt(1/2), sqrt(2)).
    Id low = flt(m, d(0.70710678118654752440));
    m = dsel(low, fmul(m, d(2.0)), m);
    ef = dsel(low, fsub(ef, d(1.0)), ef);
    Id s = fdiv(fsub(m, d(1.0)), fadd(m, d(1.0)));
    Id s2 = fmul(s, s);
    std::vector<double> c;
    for (int k = 0; k < 12; ++k) c.push_back(2.0 / (2 * k + 1));
    Id lm = fmul(s, horner(s2, c));
    Id r = fadd(fmul(ef, d(std::bit_cast<double>(uint64_t{0x3FE62E42FEE00000}))),
                fadd(lm, fmul(ef, d(std::bit_cast<double>(uint64_t{0x3DEA39EF35793C76})))));
    r = dsel(op(Op::OpFOrdEqual, boolt(), {x, d(0.0)}), d(-INFINITY), r);
    r = dsel(op(Op::OpIsInf, boolt(), {x}), x, r);
    return dsel(lor(flt(x, d(0.0)), isnan(x)), d(NAN), r);
  }

  Id math(MathOpcode o, Type t, Id x) {
    Id ty = rep(t);
    // GLSL.std.450 has no f64 transcendentals and neither has erf.
    if (o_.fast_math && t != Type::F64 && o != MathOpcode::Erf) {
      switch (o) {
      case MathOpcode::Sqrt: return glsl(ty, GLSLstd450Sqrt, {x});
      case MathOpcode::Rsqrt: return glsl(ty, GLSLstd450InverseSqrt, {x});
      case MathOpcode::Exp: return glsl(ty, GLSLstd450Exp, {x});
      case MathOpcode::Exp2: return glsl(ty, GLSLstd450Exp2, {x});
      case MathOpcode::Log: return glsl(ty, GLSLstd450Log, {x});
      case MathOpcode::Log2: return glsl(ty, GLSLstd450Log2, {x});
      case MathOpcode::Log10:
        return op(Op::OpFMul, ty, {glsl(ty, GLSLstd450Log2, {x}), cf32(0.30102999566f)});
      case MathOpcode::Sin: return glsl(ty, GLSLstd450Sin, {x});
      case MathOpcode::Cos: return glsl(ty, GLSLstd450Cos, {x});
      case MathOpcode::Tan: return glsl(ty, GLSLstd450Tan, {x});
      case MathOpcode::Tanh: return glsl(ty, GLSLstd450Tanh, {x});
      case MathOpcode::Sigmoid: {
        Id e = glsl(ty, GLSLstd450Exp, {op(Op::OpFNegate, ty, {x})});
        return op(Op::OpFDiv, ty, {cf32(1.0f), op(Op::OpFAdd, ty, {cf32(1.0f), e})});
      }
      case MathOpcode::Erf:
      case MathOpcode::Pow:
      case MathOpcode::Atan2: break; // erf has no GLSL twin; pow and atan2 are binary()'s
      }
    }
    // f64 to the SPEC's 1 ulp in double-double (math64.h); the device library's f32 kernels
    // use the f64 evaluations below (~1e-15 relative), which their f32 results need, and are
    // faster. Its f64 kernels (map.exp.f64, gelu.f64) need the 1-ulp functions.
    if (t == Type::F64 && !f32_library_) return call_f64_math(b_, cl_, o, x);
    if (o == MathOpcode::Sin || o == MathOpcode::Cos || o == MathOpcode::Tan) {
      if (t == Type::F64) throw Unsupported("f64 trigonometry in the device library");
      return op(Op::OpFConvert, f32t(), {trig_f32(o, op(Op::OpFConvert, f64t(), {x}))});
    }
    Id v = t == Type::F64 ? x : op(Op::OpFConvert, f64t(), {x});
    Id r = 0;
    switch (o) {
    case MathOpcode::Erf: r = erf64(v); break;
    case MathOpcode::Sqrt: r = glsl(f64t(), GLSLstd450Sqrt, {v}); break;
    case MathOpcode::Rsqrt: r = fdiv(d(1.0), glsl(f64t(), GLSLstd450Sqrt, {v})); break;
    case MathOpcode::Exp: r = exp64(v); break;
    case MathOpcode::Exp2: {
      Id n = glsl(f64t(), GLSLstd450Floor,
                  {fadd(glsl(f64t(), GLSLstd450FClamp, {v, d(-1022.0), d(1023.0)}), d(0.5))});
      Id frac = fmul(fsub(v, n), d(0.69314718055994530942));
      r = fmul(exp64(frac), pow2(n));
      r = dsel(fgt(v, d(1023.0)), d(INFINITY), dsel(flt(v, d(-1022.0)), d(0.0), r));
      r = dsel(isnan(v), v, r);
      break;
    }
    case MathOpcode::Log: r = log64(v); break;
    case MathOpcode::Log2: r = fmul(log64(v), d(1.44269504088896340736)); break;
    case MathOpcode::Log10: r = fmul(log64(v), d(0.43429448190325182765)); break;
    case MathOpcode::Tanh: {
      Id a = glsl(f64t(), GLSLstd450FAbs, {v});
      Id em = expm1_64(fmul(d(2.0), glsl(f64t(), GLSLstd450FMin, {a, d(20.0)})));
      Id th = fdiv(em, fadd(em, d(2.0)));
      th = dsel(fgt(a, d(20.0)), d(1.0), th);
      r = dsel(signbit(Type::F64, v), op(Op::OpFNegate, f64t(), {th}), th);
      r = dsel(isnan(v), v, r);
      break;
    }
    case MathOpcode::Sin:
    case MathOpcode::Cos:
    case MathOpcode::Tan: // handled above
    case MathOpcode::Pow:
    case MathOpcode::Atan2: // binary()'s
      throw std::logic_error("spirv: math() on a function it does not evaluate");
    case MathOpcode::Sigmoid: { // saturates to exactly 0 when e^-x exceeds the f32 range
      Id e = exp64(op(Op::OpFNegate, f64t(), {v}));
      r = fdiv(d(1.0), fadd(d(1.0), e));
      if (t != Type::F64) r = dsel(fgt(e, d(3.4028234663852886e38)), d(0.0), r);
      r = dsel(isnan(v), v, r);
      break;
    }
    }
    return t == Type::F64 ? r : op(Op::OpFConvert, f32t(), {r});
  }

  /// fma rounding once. f32 without fast math calls one function per module (its body is
  /// two dozen instructions; a call keeps the module, and spirv-opt's work, small).
  Id fma(Type t, Id a, Id b, Id c) {
    Id ty = rep(t);
    if (o_.fast_math || t == Type::F64) return glsl(ty, GLSLstd450Fma, {a, b, c});
    Id fn = b_.shared_global("fma.f32", [&] {
      Id id = b_.fresh();
      b_.aside([&] {
        b_.begin_function(ty, b_.t_function(ty, {ty, ty, ty}), id);
        Id pa = b_.function_param(ty), pb = b_.function_param(ty), pc = b_.function_param(ty);
        b_.begin_block(b_.fresh());
        b_.terminate(Op::OpReturnValue, {fma_f32_exact(pa, pb, pc)});
        b_.end_function();
      });
      b_.name(id, "__hg_fma_f32");
      return id;
    });
    return b_.op(Op::OpFunctionCall, ty, {fn, a, b, c});
  }
  /// For f32, a*b is exact in f64 and the sum is rounded to odd there (TwoSum finds its
  /// error), so the final rounding to f32 is correct.
  Id fma_f32_exact(Id a, Id b, Id c) {
    Id p = fmul(op(Op::OpFConvert, f64t(), {a}), op(Op::OpFConvert, f64t(), {b}));
    Id cd = op(Op::OpFConvert, f64t(), {c});
    Id s = fadd(p, cd);
    Id bb = fsub(s, p);
    Id err = fadd(fsub(p, fsub(s, bb)), fsub(cd, bb));
    Id bits = bitcast(u64t(), s);
    Id even = ieq(op(Op::OpBitwiseAnd, u64t(), {bits, cu64(1)}), cu64(0));
    Id inexact =
        land(op(Op::OpFOrdNotEqual, boolt(), {err, d(0.0)}), lnot(op(Op::OpIsInf, boolt(), {s})));
    // Move one ulp towards the exact sum: up in magnitude when err has s's sign.
    Id same_sign =
        op(Op::OpLogicalEqual, boolt(), {signbit(Type::F64, err), signbit(Type::F64, s)});
    Id odd = sel(u64t(), same_sign, op(Op::OpIAdd, u64t(), {bits, cu64(1)}),
                 op(Op::OpISub, u64t(), {bits, cu64(1)}));
    Id sum = bitcast(f64t(), sel(u64t(), land(inexact, even), odd, bits));
    return op(Op::OpFConvert, f32t(), {sum});
  }

  // ------------------------------------------------------------------------------------------
  // Conversions (SPEC §3.4: all pairs; float->int truncates and saturates, NaN -> 0)

  Id convert(Type dt, Type st, Id v) {
    if (dt == st) return v;
    if (is_int(st) && is_int(dt)) {
      if (is64(st) && !is64(dt)) return normalize(dt, to32(v));
      if (!is64(st) && is64(dt))
        return op(is_signed_int(st) ? Op::OpSConvert : Op::OpUConvert, u64t(), {v});
      return normalize(dt, v);
    }
    if (st == Type::F16 || st == Type::BF16) return convert(dt, Type::F32, small_to_f32(st, v));
    if (dt == Type::F16 || dt == Type::BF16) {
      Id f = is_float(st) ? (st == Type::F64 ? f64_to_f32_odd(v) : v) : int_to_f32_odd(st, v);
      return f32_to_small(dt, bitcast(u32t(), f));
    }
    if (is_float(st) && is_float(dt)) return op(Op::OpFConvert, rep(dt), {v});
    if (is_int(st)) // int -> float, correctly rounded
      return op(is_signed_int(st) ? Op::OpConvertSToF : Op::OpConvertUToF, rep(dt), {v});
    return float_to_int(dt, st, v);
  }

  Id float_to_int(Type dt, Type st, Id v) {
    unsigned bits = type_bits(dt);
    bool s = is_signed_int(dt);
    Id ft = rep(st);
    Id it = is64(dt) ? u64t() : u32t();
    unsigned conv_bits = is64(dt) ? 64 : 32;
    // 2^(bits-1) for signed, 2^bits for unsigned: the first value above the range.
    double hi = std::ldexp(1.0, static_cast<int>(s ? bits - 1 : bits));
    double lo = s ? -hi : 0.0;
    uint64_t max_bits = s ? (uint64_t{1} << (bits - 1)) - 1
                          : (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
    uint64_t min_bits = s ? ~uint64_t{0} << (bits - 1) : 0;
    Id maxc = conv_bits == 64 ? cu64(max_bits) : cu32(static_cast<uint32_t>(max_bits));
    Id minc = conv_bits == 64 ? cu64(min_bits) : cu32(static_cast<uint32_t>(min_bits));
    // Clamp into range before converting (an out-of-range conversion is undefined).
    Id safe = sel(ft, isnan(v), cfloat(st, 0.0), v);
    Id too_big = op(Op::OpFOrdGreaterThanEqual, boolt(), {safe, cfloat(st, hi)});
    Id too_small =
        op(s ? Op::OpFOrdLessThanEqual : Op::OpFOrdLessThan, boolt(), {safe, cfloat(st, lo)});
    Id in_range = sel(ft, lor(too_big, too_small), cfloat(st, 0.0), safe);
    Id r = op(s ? Op::OpConvertFToS : Op::OpConvertFToU, it, {in_range});
    r = sel(it, too_big, maxc, sel(it, too_small, minc, r));
    return normalize(dt, r);
  }

  /// f16/bf16 bits (in a u32) -> f32, exactly.
  Id small_to_f32(Type st, Id h) {
    if (st == Type::BF16) return bitcast(f32t(), op(Op::OpShiftLeftLogical, u32t(), {h, cu32(16)}));
    auto u = [&](Op o, Id a, Id c) { return op(o, u32t(), {a, c}); };
    Id sign = u(Op::OpShiftLeftLogical, u(Op::OpBitwiseAnd, h, cu32(0x8000)), cu32(16));
    Id e = u(Op::OpBitwiseAnd, u(Op::OpShiftRightLogical, h, cu32(10)), cu32(0x1f));
    Id m = u(Op::OpBitwiseAnd, h, cu32(0x3ff));
    Id normal = u(Op::OpBitwiseOr, u(Op::OpShiftLeftLogical, u(Op::OpIAdd, e, cu32(112)), cu32(23)),
                  u(Op::OpShiftLeftLogical, m, cu32(13)));
    Id special =
        u(Op::OpBitwiseOr, sel(u32t(), ine(m, cu32(0)), cu32(0x7fc00000), cu32(0x7f800000)),
          u(Op::OpShiftLeftLogical, m, cu32(13)));
    // Subnormal: m * 2^-24, exact in f32.
    Id sub = bitcast(u32t(),
                     exact(op(Op::OpFMul, f32t(),
                              {op(Op::OpConvertUToF, f32t(), {m}), cf32(std::ldexp(1.0f, -24))})));
    Id mag = sel(u32t(), ieq(e, cu32(0)), sub, sel(u32t(), ieq(e, cu32(31)), special, normal));
    return bitcast(f32t(), u(Op::OpBitwiseOr, mag, sign));
  }

  /// f32 bits -> f16/bf16 bits, round to nearest even; NaN -> the quiet NaN of the format.
  Id f32_to_small(Type dt, Id x) {
    auto u = [&](Op o, Id a, Id c) { return op(o, u32t(), {a, c}); };
    Id sign = u(Op::OpBitwiseAnd, u(Op::OpShiftRightLogical, x, cu32(16)), cu32(0x8000));
    Id a = u(Op::OpBitwiseAnd, x, cu32(0x7fffffff));
    Id is_nan = op(Op::OpUGreaterThan, boolt(), {a, cu32(0x7f800000)});
    Id mag;
    if (dt == Type::BF16) {
      Id lsb = u(Op::OpBitwiseAnd, u(Op::OpShiftRightLogical, a, cu32(16)), cu32(1));
      mag =
          u(Op::OpShiftRightLogical, u(Op::OpIAdd, a, u(Op::OpIAdd, cu32(0x7fff), lsb)), cu32(16));
      mag = sel(u32t(), is_nan, cu32(0x7fc0), mag);
    } else {
      Id e = op(Op::OpISub, u32t(), {u(Op::OpShiftRightLogical, a, cu32(23)), cu32(127)}); // signed
      Id m = u(Op::OpBitwiseAnd, a, cu32(0x7fffff));
      // Normal range: e >= -14.
      Id base = u(Op::OpBitwiseOr, u(Op::OpShiftLeftLogical, u(Op::OpIAdd, e, cu32(15)), cu32(10)),
                  u(Op::OpShiftRightLogical, m, cu32(13)));
      Id rb = u(Op::OpBitwiseAnd, m, cu32(0x1fff));
      Id up = lor(op(Op::OpUGreaterThan, boolt(), {rb, cu32(0x1000)}),
                  land(ieq(rb, cu32(0x1000)), ine(u(Op::OpBitwiseAnd, base, cu32(1)), cu32(0))));
      Id normal = u(Op::OpIAdd, base, sel(u32t(), up, cu32(1), cu32(0)));
      normal = sel(u32t(), op(Op::OpUGreaterThan, boolt(), {normal, cu32(0x7c00)}), cu32(0x7c00),
                   normal);
      // Subnormal range: shift the full mantissa right by -e-1 (14..24 for e in -15..-25).
      Id full = u(Op::OpBitwiseOr, m, cu32(0x800000));
      Id sh = op(Op::OpISub, u32t(), {cu32(0xffffffffu), e}); // -e-1
      sh = glsl(u32t(), GLSLstd450UMin, {sh, cu32(31)});
      Id q = u(Op::OpShiftRightLogical, full, sh);
      Id rem =
          u(Op::OpBitwiseAnd, full, u(Op::OpISub, u(Op::OpShiftLeftLogical, cu32(1), sh), cu32(1)));
      Id half = u(Op::OpShiftLeftLogical, cu32(1), u(Op::OpISub, sh, cu32(1)));
      Id up2 = lor(op(Op::OpUGreaterThan, boolt(), {rem, half}),
                   land(ieq(rem, half), ine(u(Op::OpBitwiseAnd, q, cu32(1)), cu32(0))));
      Id sub = u(Op::OpIAdd, q, sel(u32t(), up2, cu32(1), cu32(0)));
      Id es = bitcast(u32t(), e);
      Id is_normal = op(Op::OpSGreaterThanEqual, boolt(), {es, cu32(static_cast<uint32_t>(-14))});
      Id is_tiny = op(Op::OpSLessThan, boolt(), {es, cu32(static_cast<uint32_t>(-25))});
      Id is_big = op(Op::OpSGreaterThan, boolt(), {es, cu32(15)});
      mag = sel(u32t(), is_normal, normal, sel(u32t(), is_tiny, cu32(0), sub));
      mag = sel(u32t(), is_big, cu32(0x7c00), mag); // also infinity
      mag = sel(u32t(), is_nan, cu32(0x7e00), mag);
    }
    return u(Op::OpBitwiseOr, sign, mag);
  }

  /// f64 -> f32 rounded to odd, so a following rounding to f16/bf16 is correctly rounded.
  Id f64_to_f32_odd(Id d) {
    Id r = op(Op::OpFConvert, f32t(), {d});
    Id back = op(Op::OpFConvert, f64t(), {r});
    Id bits = bitcast(u32t(), r);
    Id inexact = land(op(Op::OpFOrdNotEqual, boolt(), {back, d}), lnot(isnan(d)));
    Id even = ieq(op(Op::OpBitwiseAnd, u32t(), {bits, cu32(1)}), cu32(0));
    Id away = op(Op::OpFOrdGreaterThan, boolt(),
                 {glsl(f64t(), GLSLstd450FAbs, {back}), glsl(f64t(), GLSLstd450FAbs, {d})});
    Id adjusted = sel(u32t(), away, op(Op::OpISub, u32t(), {bits, cu32(1)}),
                      op(Op::OpIAdd, u32t(), {bits, cu32(1)}));
    return bitcast(f32t(), sel(u32t(), land(inexact, even), adjusted, bits));
  }

  /// An integer -> f32 rounded to odd (exact below 2^24).
  Id int_to_f32_odd(Type st, Id v) {
    bool s = is_signed_int(st);
    if (!is64(st)) { // 32-bit registers: promote to 64 and share the code
      v = op(s ? Op::OpSConvert : Op::OpUConvert, u64t(), {v});
      st = s ? Type::I64 : Type::U64;
    }
    Id neg = s ? op(Op::OpSLessThan, boolt(), {v, cu64(0)}) : b_.c_bool(false);
    Id mag = sel(u64t(), neg, op(Op::OpSNegate, u64t(), {v}), v);
    Id hi = to32(op(Op::OpShiftRightLogical, u64t(), {mag, cu32(32)}));
    Id lo = to32(mag);
    Id msb = sel(u32t(), ine(hi, cu32(0)),
                 op(Op::OpIAdd, u32t(), {glsl(u32t(), GLSLstd450FindUMsb, {hi}), cu32(32)}),
                 glsl(u32t(), GLSLstd450FindUMsb, {lo}));
    Id big = op(Op::OpUGreaterThan, boolt(), {mag, cu64((uint64_t{1} << 24) - 1)});
    Id n = sel(u32t(), big, op(Op::OpISub, u32t(), {msb, cu32(23)}), cu32(0));
    Id mask = op(Op::OpISub, u64t(), {op(Op::OpShiftLeftLogical, u64t(), {cu64(1), n}), cu64(1)});
    Id sticky = ine(op(Op::OpBitwiseAnd, u64t(), {mag, mask}), cu64(0));
    Id kept =
        op(Op::OpBitwiseOr, u64t(),
           {op(Op::OpShiftRightLogical, u64t(), {mag, n}), sel(u64t(), sticky, cu64(1), cu64(0))});
    Id f = op(Op::OpConvertUToF, f32t(), {kept}); // exact: at most 24 significant bits
    f = glsl(f32t(), GLSLstd450Ldexp, {f, n});
    return sel(f32t(), neg, op(Op::OpFNegate, f32t(), {f}), f);
  }

  // ------------------------------------------------------------------------------------------
  // Memory

  Id zero_u64() { return cu64(0); }

  /// Byte offset of an address (u64).
  Id byte_offset(const Address &a) {
    Id off = cu64(static_cast<uint64_t>(a.disp));
    if (a.index == kNoReg) return off;
    Id idx = read_reg(a.index, Type::U64);
    Id scaled = a.scale == 1 ? idx : op(Op::OpIMul, u64t(), {idx, cu64(a.scale)});
    return a.disp == 0 ? scaled : op(Op::OpIAdd, u64t(), {scaled, off});
  }

  /// Records the first failure of the launch in the status buffer.
  void record_if(Id cond, uint32_t code, uint32_t param, Id offset64, uint32_t size) {
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
        store(status_word(3), cu32(param));
        store(status_word(4), to32(offset64));
        store(status_word(5), to32(op(Op::OpShiftRightLogical, u64t(), {offset64, cu32(32)})));
        store(status_word(6), cu32(size));
        store(status_word(7), cu32(inst_index_));
      });
    });
  }
  Id status_word(uint32_t i) {
    if (cl_)
      return op(Op::OpInBoundsPtrAccessChain, b_.t_pointer(SC::CrossWorkgroup, u32t()),
                {status_, cu64(i)});
    return op(Op::OpAccessChain, b_.t_pointer(SC::StorageBuffer, u32t()),
              {status_, cu32(0), cu32(i)});
  }

  // Register addresses (SPEC §3.3). Vulkan's logical addressing has no pointer a register
  // could hold, so an address is, as in the interpreter, a tag in the top 16 bits and a byte
  // offset below: `addr %p` yields (p + 1) << 48, pool.alloc (kTagScratch + site) << 48. An
  // access through a register tests the tag against each region the kernel names that way
  // (the parameters `addr` takes, the scratch sites) and accesses the one it names.
  static constexpr uint64_t kTagScratch = 0x8000;
  static constexpr uint64_t kOffsetMask = (uint64_t{1} << 48) - 1;
  static uint64_t param_tag(uint32_t p) { return (uint64_t{p} + 1) << 48; }

  /// An address through a register not yet resolved to its region.
  static bool through_reg(const Address &a) {
    return a.base == AddrBase::Reg && a.base_id != kHandleReg;
  }

  /// Runs `body` for each region the register address `a` may name, under a test of its tag,
  /// with `a` rewritten to that region; what it yields (of `type`, unless 0) is 0 when the
  /// register names no region, which fails the launch.
  Id through_register(const Instruction &inst, const Address &a, Id type,
                      const std::function<Id(const Address &)> &body) {
    bool pool_op = inst.op == Opcode::PoolLd || inst.op == Opcode::PoolSt;
    Id v = read_reg(a.base_id, Type::U64);
    Id tag = to32(op(Op::OpShiftRightLogical, u64t(), {v, cu32(48)}));
    Id disp = byte_offset(a);
    Id off = op(Op::OpIAdd, u64t(), {op(Op::OpBitwiseAnd, u64t(), {v, cu64(kOffsetMask)}), disp});
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
      region(ieq(tag, cu32(static_cast<uint32_t>(param_tag(p) >> 48))),
             {pool ? AddrBase::Pool : AddrBase::Param, static_cast<uint16_t>(p), kPendingReg, 1, 0},
             off, 0);
    }
    if (!scratch_sites_.empty()) {
      Id is = land(op(Op::OpUGreaterThan, boolt(), {tag, cu32(kTagScratch)}),
                   op(Op::OpULessThanEqual, boolt(),
                      {tag, cu32(static_cast<uint32_t>(kTagScratch + scratch_sites_.size()))}));
      region(is, {AddrBase::Reg, kHandleReg, kPendingReg, 1, 0}, disp, v);
    }
    record_if(named ? lnot(named) : ctrue(), spirv_status::InvalidAddress,
              a.base_id | (pool_op ? spirv_status::kPoolHandle : 0), v, access_size(inst));
    return type ? load(type, result) : 0;
  }

  /// A guarded access: `ok` says whether it may happen; the load yields 0 otherwise.
  struct Place {
    Id ptr = 0; ///< element pointer (buffers) or word index (shared)
    Id ok = 0;  ///< bool, or 0 when always fine
  };

  /// Buffer p as an array of t's bits: itself, or for a register address that reads it with
  /// another width, OpenCL's pointer reinterpreted or a Vulkan view of its binding.
  Buffer buffer_as(uint32_t p, Type t) {
    const Buffer &buf = buffers_.at(p);
    Id elem = mem_int(t);
    if (elem == buf.elem) return buf;
    if (cl_) return {bitcast(b_.t_pointer(SC::CrossWorkgroup, elem), buf.var), elem};
    return {view(buf.var, elem, type_size(t)), elem};
  }

  Place buffer_place(const Instruction &inst, const Address &a, Type t) {
    uint32_t p = a.base_id;
    const Buffer buf = buffer_as(p, t);
    unsigned size = type_size(t);
    Id index;
    Id ok = 0;
    if (statically_aligned(a, inst)) {
      Id idx = a.index == kNoReg ? cu64(0) : read_reg(a.index, Type::U64);
      uint64_t step = a.scale / size;
      index = a.index == kNoReg ? cu64(0)
                                : (step == 1 ? idx : op(Op::OpIMul, u64t(), {idx, cu64(step)}));
      if (a.disp != 0)
        index = op(Op::OpIAdd, u64t(),
                   {index, cu64(static_cast<uint64_t>(a.disp / static_cast<int64_t>(size)))});
    } else {
      Id off = byte_offset(a);
      Id aligned = ieq(op(Op::OpBitwiseAnd, u64t(), {off, cu64(size - 1)}), cu64(0));
      record_if(lnot(aligned), spirv_status::Misaligned, p, off, size);
      ok = aligned;
      index = op(Op::OpShiftRightLogical, u64t(),
                 {off, cu32(static_cast<uint32_t>(std::countr_zero(size)))});
    }
    if (o_.bounds_check) {
      Id len = cl_ ? op(Op::OpUDiv, u64t(), {cl_bytes_.at(p), cu64(size)})
                   : to64(op(Op::OpArrayLength, u32t(), {buf.var, 0}));
      Id inside = op(Op::OpULessThan, boolt(), {index, len});
      Id off = op(Op::OpIMul, u64t(), {index, cu64(size)});
      record_if(lnot(inside), spirv_status::OutOfBounds, p, off, size);
      ok = ok ? land(ok, inside) : inside;
    }
    Id ptr = cl_ ? op(Op::OpInBoundsPtrAccessChain, b_.t_pointer(SC::CrossWorkgroup, buf.elem),
                      {buf.var, index})
                 : op(Op::OpAccessChain, b_.t_pointer(SC::StorageBuffer, buf.elem),
                      {buf.var, cu32(0), to32(index)});
    return {ptr, ok};
  }

  /// Loads bits of memory type t and turns them into the register form.
  Id from_memory(Type t, Id bits) {
    switch (type_bits(t)) {
    case 8:
    case 16:
      return normalize(t, op(is_signed_int(t) ? Op::OpSConvert : Op::OpUConvert, u32t(), {bits}));
    default: return is_float(t) ? bitcast(rep(t), bits) : bits;
    }
  }
  Id to_memory(Type t, Id v) {
    switch (type_bits(t)) {
    case 8:
    case 16: return op(Op::OpUConvert, b_.t_int(type_bits(t)), {v});
    default: return is_float(t) ? bitcast(b_.t_int(type_bits(t)), v) : v;
    }
  }

  /// Runs `body` only when `ok` (if any); a value it yields is 0 otherwise.
  Id guarded(Id ok, Id type, const std::function<Id()> &body) {
    if (!ok) return body();
    Id var = b_.local_variable(type);
    store(var, b_.c_null(type));
    if_then(ok, [&] { store(var, body()); });
    return load(type, var);
  }
  void guarded_void(Id ok, const std::function<void()> &body) {
    if (!ok) return body();
    if_then(ok, body);
  }

  Id load_mem(const Instruction &inst, const Address &a, Type t) {
    if (through_reg(a))
      return through_register(inst, a, rep(t),
                              [&](const Address &r) { return load_mem(inst, r, t); });
    if (in_words(a)) return load_shared(inst, a, t);
    Place pl = buffer_place(inst, a, t);
    return guarded(pl.ok, rep(t), [&] { return from_memory(t, load(mem_int(t), pl.ptr)); });
  }

  void store_mem(const Instruction &inst, const Address &a, Type t, Id v) {
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

  // Shared memory and the boundary pool are arrays of u32 words; narrower values are parts of
  // a word. A class address is an offset in its class's window of the pool.
  /// `align`: what the access needs (default: its size, at most a word).
  Place shared_place(const Instruction &inst, const Address &a, Type t, unsigned align = 0) {
    unsigned size = type_size(t);
    Id off = byte_offset(a);
    Id ok = 0;
    if (!align) align = std::min(size, 4u);
    uint32_t what = word_region(a);
    if (a.base == AddrBase::Reg) // the offset in the scratch allocation
      off = op(
          Op::OpIAdd, u64t(),
          {off, op(Op::OpBitwiseAnd, u64t(), {read_reg(a.base_id, Type::U64), cu64(kOffsetMask)})});
    if ((a.base == AddrBase::Reg && align > 1) || !statically_aligned(a, inst, align)) {
      Id aligned = ieq(op(Op::OpBitwiseAnd, u64t(), {off, cu64(align - 1)}), cu64(0));
      record_if(lnot(aligned), spirv_status::Misaligned, what, off, size);
      ok = aligned;
    }
    if (o_.bounds_check) {
      Id limit = a.base == AddrBase::Shared ? op(Op::OpIMul, u64t(), {to64(shared_words_), cu64(4)})
                 : a.base == AddrBase::Class ? cu64(atlas::kClassBytes)
                 : a.base == AddrBase::Pool  ? pool_bytes(a.base_id)
                 : a.base == AddrBase::Reg   ? scratch_size(read_reg(a.base_id, Type::U64))
                                             : cu64(atlas::kBoundaryPoolBytes);
      Id end = op(Op::OpIAdd, u64t(), {off, cu64(size)});
      Id inside = op(Op::OpULessThanEqual, boolt(), {end, limit});
      record_if(lnot(inside), spirv_status::OutOfBounds, what, off, size);
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
  /// A field of the scratch site a handle names (its tag); 0 for a handle that names none.
  Id scratch_field(Id handle, uint64_t ScratchSite::*field) {
    Id tag = to32(op(Op::OpShiftRightLogical, u64t(), {handle, cu32(48)}));
    Id v = cu64(0);
    for (const auto &[inst, s] : scratch_sites_)
      v = sel(u64t(), ieq(tag, cu32(static_cast<uint32_t>(kTagScratch + s.site))), cu64(s.*field),
              v);
    return v;
  }
  Id scratch_size(Id handle) { return scratch_field(handle, &ScratchSite::size); }
  /// The byte offset in the launch scratch of this lane's region at `site_offset`.
  Id scratch_base(Id site_offset) {
    return op(
        Op::OpIAdd, u64t(),
        {op(Op::OpIMul, u64t(), {specials_.gid, cu64(info_.scratch_bytes_per_lane)}), site_offset});
  }

  Id pool_bytes(uint32_t p) {
    if (cl_) return cl_bytes_.at(p);
    return op(Op::OpIMul, u64t(),
              {to64(op(Op::OpArrayLength, u32t(), {buffers_.at(p).var, 0})), cu64(4)});
  }
  Id word_ptr(const Address &a, Id word_index32) {
    bool shared = a.base == AddrBase::Shared;
    SC sc = shared ? SC::Workgroup : cl_ ? SC::CrossWorkgroup : SC::StorageBuffer;
    Id base = shared                     ? shared_
              : a.base == AddrBase::Pool ? buffers_.at(a.base_id).var
              : a.base == AddrBase::Reg  ? scratch_
                                         : boundary_;
    if (cl_)
      return op(Op::OpInBoundsPtrAccessChain, b_.t_pointer(sc, u32t()), {base, word_index32});
    if (shared) return op(Op::OpAccessChain, b_.t_pointer(sc, u32t()), {base, word_index32});
    return op(Op::OpAccessChain, b_.t_pointer(sc, u32t()), {base, cu32(0), word_index32});
  }

  /// A pointer to the u64 at an 8-aligned byte offset of word storage: OpenCL reinterprets the
  /// word pointer, Vulkan indexes a u64 view of the buffer or of shared memory.
  Id wide_ptr(const Address &a, Id byte_off) {
    Id word = to32(op(Op::OpShiftRightLogical, u64t(), {byte_off, cu32(2)}));
    if (cl_) {
      SC sc = a.base == AddrBase::Shared ? SC::Workgroup : SC::CrossWorkgroup;
      return bitcast(b_.t_pointer(sc, u64t()), word_ptr(a, word));
    }
    Id base = a.base == AddrBase::Pool  ? buffers_.at(a.base_id).var
              : a.base == AddrBase::Reg ? scratch_
                                        : boundary_;
    Id index = to32(op(Op::OpShiftRightLogical, u64t(), {byte_off, cu32(3)}));
    if (a.base == AddrBase::Shared) return shared_u64(index);
    return op(Op::OpAccessChain, b_.t_pointer(SC::StorageBuffer, u64t()),
              {wide_view(base), cu32(0), index});
  }
  /// The region a failure in word storage names (spirv_status).
  static uint32_t word_region(const Address &a) {
    return a.base == AddrBase::Shared ? spirv_status::kSharedMemory
           : a.base == AddrBase::Pool ? uint32_t{a.base_id}
           : a.base == AddrBase::Reg  ? spirv_status::kLaunchScratch
                                      : spirv_status::kBoundaryPool;
  }

  Id load_shared(const Instruction &inst, const Address &a, Type t) {
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

  void store_shared(const Instruction &inst, const Address &a, Type t, Id v) {
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
      Id part =
          op(Op::OpBitwiseAnd, u32t(), {op(Op::OpShiftLeftLogical, u32t(), {v, shift}), mask});
      store_word_part(a, word, mask, part);
    });
  }

  // Word storage reached a u32 word at a time; in u64-word shared memory (wide_shared_) a u32
  // word is half of one.
  bool in_wide_words(const Address &a) const { return wide_shared_ && a.base == AddrBase::Shared; }
  Id shared_u64(Id index32) {
    return op(Op::OpAccessChain, b_.t_pointer(SC::Workgroup, u64t()), {shared_, index32});
  }
  /// The u64 word holding u32 word `word`, and the shift of that half in it.
  std::pair<Id, Id> wide_half(Id word) {
    Id ptr = shared_u64(op(Op::OpShiftRightLogical, u32t(), {word, cu32(1)}));
    return {ptr, op(Op::OpShiftLeftLogical, u32t(),
                    {op(Op::OpBitwiseAnd, u32t(), {word, cu32(1)}), cu32(5)})};
  }
  Id load_word(const Address &a, Id word) {
    if (!in_wide_words(a)) return load(u32t(), word_ptr(a, word));
    auto [ptr, shift] = wide_half(word);
    return to32(op(Op::OpShiftRightLogical, u64t(), {load(u64t(), ptr), shift}));
  }
  void store_word(const Address &a, Id word, Id v) {
    if (!in_wide_words(a)) return store(word_ptr(a, word), v);
    store_word_part(a, word, cu32(~0u), v);
  }
  /// Stores the bits of `part` under `mask` in a word, atomically: neighbouring lanes may
  /// write its other parts.
  void store_word_part(const Address &a, Id word, Id mask, Id part) {
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

  Id reduce_memory(const Instruction &inst) {
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

  /// A load from an address whose byte offset is already computed (`off`).
  Id load_at(const Instruction &inst, const Address &a, Type t, Id off) {
    // Route through a scratch register-free path: treat the offset as the index register.
    pending_offset_ = off;
    Address dyn = a;
    dyn.index = kPendingReg;
    Id v = load_mem(inst, dyn, t);
    pending_offset_ = 0;
    return v;
  }

  Id atomic(const Instruction &inst) {
    const Address &a = inst.operands[1].addr;
    if (through_reg(a))
      return through_register(inst, a, rep(inst.type),
                              [&](const Address &r) { return atomic_at(inst, r); });
    return atomic_at(inst, a);
  }
  Id atomic_at(const Instruction &inst, const Address &a) {
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
      // Natural alignment: a u64 atomic at a 4-byte boundary would straddle two words.
      Place pl = shared_place(inst, a, t, is64(t) ? 8 : 4);
      ok = pl.ok;
      if (is64(t)) {
        if (a.base == AddrBase::Shared && !cl_) features_.insert("shared_int64_atomics");
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
      return cas_loop(ptr, scope, it,
                      [&](Id old_bits) { return atomic_update(inst, it, old_bits); });
    });
    return is_float(t) ? bitcast(rep(t), result) : result;
  }

  /// The bits (of integer type `it`) an atomic writes where it found `old_bits`.
  Id atomic_update(const Instruction &inst, Id it, Id old_bits) {
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

  Id cas_loop(Id ptr, Id scope, Id it, const std::function<Id(Id)> &update) {
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

  // ------------------------------------------------------------------------------------------

  static constexpr Reg kPendingReg = 0xfffe; ///< "the byte offset in pending_offset_"
  static constexpr Reg kHandleReg = 0xfffd;  ///< "the scratch handle in pending_handle_"

  struct Specials {
    Id lane[3]{}, block[3]{}, grid[3]{}, gid = 0, gid_axis[3]{}, gsize = 0;
  };

  Builder &b_;
  const Kernel &k_;
  const SpirvOptions &o_;
  bool cl_; ///< the Kernel flavour (OpenCL)
  /// A device library kernel for f32 arrays: its f64 math need only be accurate enough for
  /// f32 results (~1e-15 relative), not the SPEC's 1 ulp of f64.
  bool f32_library_;
  opt::LaneAnalysis lanes_;
  const Cfg &cfg_ = lanes_.cfg;
  std::vector<NaturalLoop> natural_loops_; ///< every function's, found once
  SpirvKernelInfo info_;
  std::set<std::string> features_;
  bool f64_used_ = false;

  Id ext_ = 0, local_id_ = 0, group_id_ = 0, push_ = 0, status_ = 0, shared_ = 0, shared_words_ = 0,
     boundary_ = 0, atlas_ = 0, cl_phase_ = 0, scratch_ = 0;
  bool wide_shared_ = false;          ///< Vulkan: shared memory is u64 words (wide_shared_atomic)
  std::map<Id, uint32_t> binding_of_; ///< storage buffer variable -> its binding
  std::map<std::pair<Id, Id>, Id> views_;         ///< (storage buffer variable, element) -> a view
  std::map<uint32_t, ScratchSite> scratch_sites_; ///< pool.alloc instruction -> its site
  uint32_t phase_member_ = 0;
  std::vector<Id> inputs_; ///< the Input built-ins

  // OpenCL: the kernel's arguments and the register variables live in the kernel function
  // and are handed to its subroutines as parameters, in the order of `context_`; the members
  // above (buffers_, status_, shared_, regs_, ...) name the current function's ids.
  struct ContextItem {
    Id *ref;     ///< the member holding the current function's id
    Id type;     ///< its type as a parameter
    Id var_type; ///< 0 for a kernel argument; else the type of the kernel's Function variable
    std::string name;
  };
  std::vector<ContextItem> context_;
  std::map<uint32_t, Id> cl_scalars_; ///< parameter -> value
  std::map<uint32_t, Id> cl_bytes_;   ///< buffer parameter -> its size in bytes (u64)
  Id group_count_ = 0, group_size_ = 0;
  Id bdim_[3]{};
  Id exited_ = 0, cur_ = 0;
  std::vector<Id> interface_;
  std::map<uint32_t, uint32_t> push_member_;
  std::map<uint32_t, Buffer> buffers_;
  std::map<opt::Slot, Id> regs_;
  std::map<uint32_t, Id> fn_ids_;
  Specials specials_;
  Id pending_offset_ = 0, pending_handle_ = 0;
  std::set<uint32_t> addressed_params_; ///< parameters whose address `addr` takes
  uint32_t inst_index_ = 0;

  bool is_kernel_fn_ = true;
  std::vector<uint32_t> rpo_;
  std::vector<bool> in_fn_;
  std::vector<Loop> loops_;
  std::vector<int> innermost_;
  std::map<uint32_t, Id> labels_; ///< OpenCL: ISA block -> label
};

} // namespace

SpirvKernelInfo lower_kernel(Builder &builder, const Kernel &kernel, const SpirvOptions &options,
                             bool library) {
  return KernelLowering(builder, kernel, options, library).run();
}

} // namespace hologram::codegen::spirv
