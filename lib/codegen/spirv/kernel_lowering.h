// The SPIR-V kernel lowering (SPEC §9): what both flavours share, as one class whose parts
// live in several files: kernel_lowering.cpp (what the target runs, types, shorthands,
// registers and specials), interface.cpp (what a kernel's interface needs), control.cpp
// (functions, blocks and control instructions), instructions.cpp (dispatch and arithmetic),
// atlas.cpp (the Atlas instructions), math.cpp (math within the SPEC's bounds),
// conversions.cpp and memory.cpp (addresses, word storage, atomics). What differs between
// the Shader module Vulkan runs and the Kernel module OpenCL runs is the flavour interface
// below, implemented by VulkanLowering and OpenClLowering (flavours.h).
#pragma once

#include "hologram/isa/accesses.h"
#include "hologram/isa/atlas.h"
#include "hologram/isa/cfg.h"
#include "hologram/isa/handles.h"
#include "hologram/isa/type_dispatch.h"
#include "hologram/opt/lane_analysis.h"
#include "hologram/opt/value_ranges.h"
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

inline bool is64(Type t) {
  return type_size(t) == 8;
}

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
inline Type library_element_type(const Kernel &k) {
  for (const auto &p : k.params)
    if (p.kind == ParamKind::Buffer) return p.type;
  return Type::None;
}

class KernelLowering : public F64Flavour {
public:
  KernelLowering(Builder &b, const Kernel &k, const SpirvOptions &o, bool library)
      : b_(b), k_(k), o_(o),
        gemm_library_(library && k.name.starts_with(std::string(kSpirvLibraryPrefix) + "gemm")),
        f32_library_(library && library_element_type(k) == Type::F32),
        fixed_block_(!library && o.block[0] != 0), lanes_(opt::analyse_lanes(k)),
        natural_loops_(natural_loops(cfg_)) {}
  virtual ~KernelLowering() = default;
  KernelLowering(const KernelLowering &) = delete;
  KernelLowering &operator=(const KernelLowering &) = delete;

  SpirvKernelInfo run();

protected:
  // ------------------------------------------------------------------------------------------
  // The flavour: each hook is one thing the Vulkan (Shader, GLCompute, logical addressing,
  // structured control flow) and OpenCL (Kernel, physical addressing, the ISA's own blocks)
  // modules do differently.

  // The module and the entry point.

  /// Capabilities, the extended instruction set (ext_), built-ins, the parameters (bindings
  /// and push constants, or kernel arguments), the status buffer, shared memory and the
  /// register variables.
  virtual void declare_interface() = 0;
  /// The entry point `entry` of the kernel: its execution model, interface and a fixed
  /// block size.
  virtual void declare_entry_point(Id entry) = 0;

  // Functions and control flow.

  /// Opens function `entry` (the kernel when `is_kernel`, else a subroutine) with its
  /// parameters and first block, and chooses whether registers are SSA values.
  virtual void begin_function(uint32_t entry, bool is_kernel) = 0;
  /// The blocks of the open function (rpo_), after its specials.
  virtual void emit_body(uint32_t entry) = 0;
  /// Control goes to ISA block `block`.
  virtual void go_to(uint32_t block) = 0;
  /// Control goes to `then_bb` when c, else to `else_bb`.
  virtual void branch(Id c, uint32_t then_bb, uint32_t else_bb) = 0;
  /// What a call passes a subroutine after its function.
  virtual Words call_arguments() = 0;

  // Launch geometry and parameters.

  /// Component d of a built-in vector variable, as u32.
  virtual Id builtin(Id var, uint32_t d) = 0;
  /// specials_.grid[d], specials_.block[d] (and bdim_[d] when the launch sets it), after
  /// specials_.lane[d].
  virtual void block_geometry(uint32_t d) = 0;
  /// After the 64-bit lane ids: anything that replaces them (Vulkan's 32-bit forms).
  virtual void narrow_lane_ids() = 0;
  /// A bool that is true when the launch's grid is one row of blocks (grid y and z 1), so the
  /// linear block index is block x; 0 when the flavour cannot tell (its lane ids then always
  /// take the general form).
  virtual Id flat_grid() = 0;
  /// What storing `bits`-wide integers (8 or 16) in memory needs: capabilities, extensions,
  /// device features.
  virtual void declare_storage_width(unsigned bits) = 0;
  /// The value of scalar parameter p, of register type t before normalisation.
  virtual Id scalar_param(uint32_t p, Type t) = 0;
  /// The phase the launch reads (phase.get).
  virtual Id phase() = 0;

  // Instructions.

  /// The semantics that order device memory other lanes see, at a barrier or a fence.
  virtual spv::MemorySemanticsMask device_memory(bool fence) = 0;
  /// A shift of `value` by `amount` (an amount narrower than the value, or not).
  virtual Id shift(Op o, Id t, Id value, Id amount) = 0;
  /// `v` as a result the target must not contract with its neighbours.
  virtual Id exact(Id v) = 0;
  /// A GLSL.std.450 function, or its twin in the flavour's extended instruction set.
  virtual Id glsl(Id t, GLSLstd450 f, const Words &w) = 0;
  /// Whether the flavour's fma rounds once (OpenCL.std's does, for f32 and f64;
  /// GLSL.std.450's need not fuse), so that `fma` needs no emulation.
  virtual bool fma_rounds_once() const = 0;
  /// Where it need not: a bool specialisation constant, true when the runtime found the
  /// device's fma of `t` (f32 or f64) to round once, so the exact fma function uses it
  /// (SpirvKernelInfo::fma_spec_ids); 0 where the flavour's fma rounds once anyway.
  virtual Id fma_rounds_once_here(Type t) = 0;
  /// Whether the flavour's OpFRem is C's fmod, exact (OpenCL's is; Vulkan's SPIR-V
  /// environment gives it no precision, and lavapipe's is x - y trunc(x / y), several ulp
  /// off, NaN for an infinite y).
  virtual bool frem_is_exact() const = 0;
  // f64 math (math64.h): f64_no_contraction.
  Id f64_extended(GLSLstd450 fn, Id x) override { return glsl(f64t(), fn, {x}); }
  Id f64_product_error(Id a, Id c, Id p, const std::function<Id()> &split_error) override;
  /// The module's f64 function for `fn` (math64.h), called; a kernel that calls one has an
  /// exact fma (SpirvKernelInfo::exact_fma) where the flavour's fma may round twice.
  Id f64_math(isa::MathOpcode fn, Id x, Id y = 0);

  /// The low `bits` of v sign-extended to 32.
  virtual Id sign_extend(Id v, uint32_t bits) = 0;
  /// The signed remainder of a by a divisor that is neither 0 nor -1 with a = MIN: C's sign
  /// (the dividend's) whatever the operands' signs.
  virtual Id signed_rem(Id ty, Id a, Id divisor) = 0;

  // Memory.

  /// A pointer to word i of the status buffer.
  virtual Id status_word(uint32_t i) = 0;
  /// A pointer to u64 word `index32` of the Atlas state buffer.
  virtual Id atlas_word(Id index32) = 0;
  /// `buf` as an array of `elem` (`stride` bytes each) for a register address that reads it
  /// with another width: Vulkan's view of its binding, OpenCL's pointer reinterpreted.
  virtual Id buffer_view(const Buffer &buf, Id elem, uint32_t stride) = 0;
  /// The number of `size`-byte elements of buffer p (u64), for bounds checks.
  virtual Id buffer_elements(uint32_t p, const Buffer &buf, unsigned size) = 0;
  /// A pointer to element `index64` of `buf`.
  virtual Id buffer_element(const Buffer &buf, Id index64) = 0;
  /// The size in bytes of pool p (u64).
  virtual Id pool_bytes(uint32_t p) = 0;
  /// A pointer to u32 word `word_index32` of the word storage `a` names.
  virtual Id word_ptr(const Address &a, Id word_index32) = 0;
  /// A pointer to the u64 at an 8-aligned byte offset of word storage.
  virtual Id wide_ptr(const Address &a, Id byte_off) = 0;
  /// Notes a 64-bit atomic on shared memory (a device feature on Vulkan).
  virtual void require_shared_int64_atomics() = 0;

  // ------------------------------------------------------------------------------------------
  // What this back end runs

  void check_supported();

  // ------------------------------------------------------------------------------------------
  // Types

  Id u32t() { return b_.t_int(32); }
  Id u64t() { return b_.t_int(64); }
  Id boolt() { return b_.t_bool(); }
  Id f32t() {
    f32_used_ = true;
    return b_.t_float(32);
  }
  Id f64t();
  void use_f64();

  /// The SPIR-V type of a register of ISA type t.
  Id rep(Type t);
  /// The unsigned integer type of t's bits in memory.
  Id mem_int(Type t);

  Id cu32(uint32_t v) { return b_.c_u32(v); }
  Id cu64(uint64_t v) { return b_.c_u64(v); }
  Id cf32(float v) { return b_.c_float(32, std::bit_cast<uint32_t>(v)); }
  Id cf64(double v) { return b_.c_float(64, std::bit_cast<uint64_t>(v)); }
  Id cfloat(Type t, double v) { return t == Type::F64 ? cf64(v) : cf32(static_cast<float>(v)); }
  Id ctrue() { return b_.c_bool(true); }

  /// A constant of register type t from literal bits.
  Id constant(Type t, uint64_t bits);
  static uint64_t normalize_const(Type t, uint64_t bits);

  // ------------------------------------------------------------------------------------------
  // Shorthands for instructions

  Id op(Op o, Id t, const Words &w);
  Id sel(Id t, Id c, Id a, Id bv) { return op(Op::OpSelect, t, {c, a, bv}); }
  /// a == bv; the constant true when both are one value (a constant, or one SSA value).
  Id ieq(Id a, Id bv) { return a == bv ? b_.c_bool(true) : op(Op::OpIEqual, boolt(), {a, bv}); }
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
  Id normalize(Type t, Id v);

  /// A loop construct inside one instruction: while (condition()) body(); `condition` emits
  /// its test in the loop's header, so values it loads are visible to `body`.
  void structured_loop(const std::function<Id()> &condition, const std::function<void()> &body);

  // Structured control flow inside one instruction: if (c) { then() }.
  void if_then(Id c, const std::function<void()> &then);

  // ------------------------------------------------------------------------------------------
  // Interface: built-ins, push constants, buffers, shared memory, status

  bool uses(Opcode o) const;
  bool uses_atlas_state() const { return uses(Opcode::ResAccum) || uses(Opcode::PhaseAdv); }

  /// Launch scratch: each pool.alloc site gets its own region of every lane's scratch (the
  /// verifier frees an allocation before its site allocates again). True when there is any.
  bool plan_scratch();

  static bool in_words(const Address &a);
  bool uses_boundary() const;

  bool uses_shared() const;

  bool needs_status() const;
  static unsigned access_size(const Instruction &inst);
  /// The alignment an access needs: its size, at most a word in word storage, except an atomic
  /// there, which needs its whole size (a 64-bit one at a 4-byte boundary would straddle two
  /// words).
  static unsigned alignment_needed(const Instruction &inst, const Address &a);
  /// Whether index * scale + disp is a multiple of `size` by the address's form alone.
  static bool aligned_by_form(const Address &a, unsigned size);
  /// Whether the access is aligned to `align` bytes (by default alignment_needed) whatever the
  /// registers hold: by the address's form, or by the low zero bits of its index register
  /// (opt::ValueRanges), as `lane * 4` has.
  bool statically_aligned(const Address &a, const Instruction &inst, unsigned align = 0) const;

  // ------------------------------------------------------------------------------------------
  // Registers and specials

  Id read_reg(Reg r, Type t);
  void write_reg(Reg r, Type t, Id v) { b_.store_local(regs_.at(opt::Slot{false, r, t}), v); }
  Id read_pred(unsigned p);
  void write_pred(unsigned p, Id v);

  /// The special registers, computed in the entry block of each function.
  void compute_specials();
  /// The linear lane id, the per-axis ids and the launch's lane count, from the geometry in
  /// specials_, in type t (`wide`: u64 computed from the u32 geometry). A launch of fewer
  /// than 2^32 lanes has them all in 32 bits.
  struct LaneIds {
    Id gid = 0, axis[3]{}, gsize = 0;
  };
  LaneIds lane_ids(Id t, bool wide);

  Id special(Special sp);

  /// Source operand i of the current instruction, by its role in the signature.
  Id src(const Instruction &inst, size_t i);
  void dst(const Instruction &inst, Id v);

  // ------------------------------------------------------------------------------------------
  // Functions and structured control flow

  void emit_function(uint32_t entry, bool is_kernel);

  void emit_exit();

  void emit_block(uint32_t bb);

  uint32_t label_block(const Instruction &inst);

  void emit_control(ControlOpcode which, const Instruction &inst, const BasicBlock &block);

  // ------------------------------------------------------------------------------------------
  // Instructions

  void emit_instruction(const Instruction &inst);

  // ------------------------------------------------------------------------------------------
  // The Atlas instructions (SPEC §4): class arithmetic on (h2, d, l), neighbours sorted by a
  // 5-input network, the boundary pool, and the state buffer for resonance and phase.

  /// v, or limit - 1 after recording that v >= limit (`which`: 0 class, 1 page, 2 byte).
  Id in_range(Id v, uint32_t limit, uint32_t which);
  struct Coords {
    Id h2, d, l;
  };
  Coords coords(Id c);
  Id class_of(Id h2, Id d, Id l);
  Id mirror_d(Id d);
  /// The k-th neighbour of class c (k taken modulo the count), as the interpreter lists them.
  Id neighbour(Id c, uint64_t k);

  void atlas_op(AtlasOpcode which, const Instruction &inst);

  Id fold(ReduceOp rop, Type t, Id acc, Id v);

  /// The operations below, by the number of sources; each Arith, Logic and Math instruction
  /// maps onto one of them in arith().
  enum class UnaryOp { Abs, Neg, Not, Sign, Rcp, Floor, Ceil, Trunc, Round };
  enum class BinaryOp { Add, Sub, Mul, Div, Rem, Min, Max, And, Or, Xor, Shl, Shr, Pow, Atan2 };
  enum class TernaryOp { Mad, Fma, Fms, Clamp, Lerp };

  /// An Arith, integer Logic or Math instruction's result.
  Id arith(const Instruction &inst);

  Id signbit(Type t, Id x);
  /// trunc of f32 by the device; of f64 by clearing the fraction's bits (x's sign stays, so
  /// trunc(-0.5) is -0), since lavapipe's f64 trunc gave +0 there and kept a fraction of ½
  /// above 2^28. floor, ceil and round of f64 step from it.
  Id trunc(Type t, Id x);
  /// A 32-bit register's value as 64 bits, sign-extended by shifts (is_signed) rather than
  /// OpSConvert: lavapipe compared OpSConvert's result with 0 as if it were not negative.
  Id widen_to_64(bool is_signed, Id v);
  /// The index of the highest set bit of a u64, as a u32 (FindUMsb of its halves; ~0 for 0).
  Id msb64(Id v);
  Id isnan(Id x) { return op(Op::OpIsNan, boolt(), {x}); }

  /// IEEE minNum / maxNum, -0 below +0 (SPEC §3.4), independent of the target's FMin.
  Id fminmax(bool is_min, Type t, Id a, Id c);

  Id binary(BinaryOp o, Type t, Id a, Id c);

  Id unary(UnaryOp o, Type t, Id x);

  Id ternary(TernaryOp o, Type t, Id a, Id c, Id d);

  Id compare(CmpCode cc, Type t, Id a, Id c);

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
  Id pow2(Id n);
  /// e^t in f64 for any t: |relative error| < 1e-15; 0 below -708, +inf above 708.
  Id exp64(Id t);
  /// e^t - 1 in f64 without cancellation near 0.
  /// erf in f64 for any x, ~1e-15 relative: 2/sqrt(pi) e^(-a^2) sum_n a (2a^2)^n / (2n+1)!!
  /// (every term positive, so nothing cancels), 1 from |x| = 6 on, the sign of x restored.
  Id erf64(Id x);

  Id is_integral(Id v);

  /// pow with C99 Annex F's special cases: exp(y log|x|), negated for x < 0 and odd y.
  Id pow64(Id x, Id y);

  /// atan of t >= 0 (inf included): two halvings atan(t) = 2 atan(t / (1 + sqrt(1 + t^2)))
  /// after reflecting t > 1 to 1/t, then an odd series on |t| <= tan(pi/16).
  Id atan64(Id t);

  /// atan2 with IEEE's signed zeros and infinities.
  Id atan2_64(Id y, Id x);

  /// sin, cos or tan of an f32 value v (held in an f64), in f64: v reduced modulo pi/2 with
  /// a 4-part Cody-Waite split below 2^25 and with the bits of 2/pi above it (v = m 2^e with
  /// a 24-bit m: (m * 128 bits of 2/pi) mod 2^128 gives the quadrant and the fraction), then
  /// Taylor polynomials on |r| <= pi/4. Correct to ~1e-16 for every f32, so rounding to f32
  /// is within the SPEC's 4 ulp.
  Id trig_f32(MathOpcode o, Id v);

  Id expm1_64(Id t);
  /// ln x in f64 for x > 0 finite (and the IEEE special cases).
  Id log64(Id x);

  Id math(MathOpcode o, Type t, Id x);

  /// fma rounding once: the flavour's where it rounds once, with fast math and in the device
  /// library's gemm, else a call of one function per module and type (__hg_fma_f32, __hg_fma_f64; a
  /// call keeps the module, and spirv-opt's work, small).
  Id fma(Type t, Id a, Id b, Id c);
  /// For f32, a*b is exact in f64 and the sum is rounded to odd there (TwoSum finds its
  /// error), so the final rounding to f32 is correct.
  Id fma_f32_exact(Id a, Id b, Id c);
  /// For f64, in integer arithmetic (no float operation, so nothing depends on the device's
  /// rounding or subnormals): the significands' 106-bit product and c's significand, each
  /// with its highest bit at bit 126 of a u64 pair, the smaller shifted to the larger's
  /// exponent with a sticky bit, added or subtracted, and rounded to nearest even once at
  /// the result's lowest bit (normal or subnormal); specials by their bits.
  Id fma_f64_exact(Id a, Id b, Id c);
  /// Float `rem` (SPEC §3.4: C's fmod, exact): OpFRem where the flavour's is exact, else a
  /// call of one function per module and type whose body is fmod_exact.
  Id frem(Type t, Id a, Id c);
  /// A float's magnitude bits (sign cleared; f64 in a u64 when `wide`, else f32 in a u32) as
  /// (biased exponent, significand): the exponent field and the fraction with its hidden bit,
  /// or 1 and the fraction for a subnormal.
  std::pair<Id, Id> split_float(bool wide, Id magnitude);
  /// fmod(a, c) of f32 or f64 in integer arithmetic: the significands' remainder
  /// mx 2^(ex - ey) mod my by steps of as many bits as a u64 holds beside mx (40 for f32, 11
  /// for f64), then rebuilt with c's exponent (exact: the result is representable).
  Id fmod_exact(Type t, Id a, Id c);

  // ------------------------------------------------------------------------------------------
  // Conversions (SPEC §3.4: all pairs; float->int truncates and saturates, NaN -> 0)

  Id convert(Type dt, Type st, Id v);

  Id float_to_int(Type dt, Type st, Id v);

  /// f16/bf16 bits (in a u32) -> f32, exactly.
  Id small_to_f32(Type st, Id h);

  /// f32 bits -> f16/bf16 bits, round to nearest even; NaN -> the quiet NaN of the format.
  Id f32_to_small(Type dt, Id x);

  /// f64 -> f32 rounded to odd, so a following rounding to f16/bf16 is correctly rounded.
  Id f64_to_f32_odd(Id d);

  /// Rounding to odd in the bits (of `type`, u32 or u64) of a value rounded to nearest: the
  /// bits when `inexact` is false, else the odd one of the value and its neighbour towards the
  /// exact one: `bits | 1` when `nearer_zero` (0 or 1, of `type`) is 0, `(bits - 1) | 1` when
  /// the exact value is nearer zero than the rounded one.
  Id odd_bits(Id type, Id bits, Id inexact, Id nearer_zero);

  /// An integer -> f32 rounded to odd (exact below 2^24).
  Id int_to_f32_odd(Type st, Id v);

  // ------------------------------------------------------------------------------------------
  // Memory

  Id zero_u64() { return cu64(0); }

  /// Byte offset of an address (u64).
  Id byte_offset(const Address &a);

  /// Records the first failure of the launch in the status buffer.
  void record_if(Id cond, uint32_t code, uint32_t param, Id offset64, uint32_t size);
  /// The same with the region word computed (an allocation site's).
  void record_region_if(Id cond, uint32_t code, Id param, Id offset64, uint32_t size);

  // Register addresses (SPEC §3.3). Vulkan's logical addressing has no pointer a register
  // could hold, so an address is, as in the interpreter, a handle (hologram/isa/handles.h): a
  // tag in the top 16 bits and a byte offset below. An access through a register tests the
  // tag against each region the kernel names that way (the parameters `addr` takes, the
  // scratch sites) and accesses the one it names.

  /// An address through a register not yet resolved to its region.
  static bool through_reg(const Address &a);

  /// Runs `body` for each region the register address `a` may name, under a test of its tag,
  /// with `a` rewritten to that region; what it yields (of `type`, unless 0) is 0 when the
  /// register names no region, which fails the launch.
  Id through_register(const Instruction &inst, const Address &a, Id type,
                      const std::function<Id(const Address &)> &body);

  /// A guarded access: `ok` says whether it may happen; the load yields 0 otherwise.
  struct Place {
    Id ptr = 0; ///< element pointer (buffers) or word index (shared)
    Id ok = 0;  ///< bool, or 0 when always fine
  };

  /// Buffer p as an array of t's bits: itself, or a view of it (buffer_view).
  Buffer buffer_as(uint32_t p, Type t);
  Place buffer_place(const Instruction &inst, const Address &a, Type t);

  /// Loads bits of memory type t and turns them into the register form.
  Id from_memory(Type t, Id bits);
  Id to_memory(Type t, Id v);

  /// Runs `body` only when `ok` (if any); a value it yields is 0 otherwise.
  Id guarded(Id ok, Id type, const std::function<Id()> &body);
  void guarded_void(Id ok, const std::function<void()> &body);

  Id load_mem(const Instruction &inst, const Address &a, Type t);

  void store_mem(const Instruction &inst, const Address &a, Type t, Id v);

  // Shared memory and the boundary pool are arrays of u32 words; narrower values are parts of
  // a word. A class address is an offset in its class's window of the pool.
  /// `align`: what the access needs (default: its size, at most a word).
  Place shared_place(const Instruction &inst, const Address &a, Type t, unsigned align = 0);
  /// A field of the scratch site a handle names (its tag); 0 for a handle that names none.
  Id scratch_field(Id handle, uint64_t ScratchSite::*field);
  Id scratch_size(Id handle) { return scratch_field(handle, &ScratchSite::size); }
  /// The byte offset in the launch scratch of this lane's region at `site_offset`.
  Id scratch_base(Id site_offset);

  /// The variable of the word storage `a` names (shared memory, a pool, the launch scratch or
  /// the boundary pool).
  Id word_base(const Address &a);
  /// The region a failure in word storage names (spirv_status).
  static uint32_t word_region(const Address &a);

  Id load_shared(const Instruction &inst, const Address &a, Type t);

  void store_shared(const Instruction &inst, const Address &a, Type t, Id v);

  // Word storage reached a u32 word at a time; in u64-word shared memory (wide_shared_) a u32
  // word is half of one.
  bool in_wide_words(const Address &a) const { return wide_shared_ && a.base == AddrBase::Shared; }
  Id shared_u64(Id index32);
  /// The u64 word holding u32 word `word`, and the shift of that half in it.
  std::pair<Id, Id> wide_half(Id word);
  Id load_word(const Address &a, Id word);
  void store_word(const Address &a, Id word, Id v);
  /// Stores the bits of `part` under `mask` in a word, atomically: neighbouring lanes may
  /// write its other parts.
  void store_word_part(const Address &a, Id word, Id mask, Id part);

  Id reduce_memory(const Instruction &inst);

  /// A load from an address whose byte offset is already computed (`off`).
  Id load_at(const Instruction &inst, const Address &a, Type t, Id off);

  Id atomic(const Instruction &inst);
  Id atomic_at(const Instruction &inst, const Address &a);

  /// The bits (of integer type `it`) an atomic writes where it found `old_bits`.
  Id atomic_update(const Instruction &inst, Id it, Id old_bits);

  Id cas_loop(Id ptr, Id scope, Id it, const std::function<Id(Id)> &update);

  // ------------------------------------------------------------------------------------------

  static constexpr Reg kPendingReg = 0xfffe; ///< "the byte offset in pending_offset_"
  static constexpr Reg kHandleReg = 0xfffd;  ///< "the scratch handle in pending_handle_"

  struct Specials {
    Id lane[3]{}, block[3]{}, grid[3]{}, gid = 0, gid_axis[3]{}, gsize = 0;
  };

  Builder &b_;
  const Kernel &k_;
  const SpirvOptions &o_;
  /// The device library's gemm (and batched gemm): held to gemm's error bound (docs/isa.md,
  /// γ_K), which a product and a sum rounded apart also meet, so its `fma` is the device's own
  /// even where that need not round once (Vulkan), not the exact emulation. The other library
  /// kernels keep `fma` exact (axpy is y = fma(alpha, x, y)).
  bool gemm_library_;
  /// A device library kernel for f32 arrays: its f64 math need only be accurate enough for
  /// f32 results (~1e-15 relative), not the SPEC's 1 ulp of f64.
  bool f32_library_;
  /// --block for this kernel (not the device library's, which have their own): the block's
  /// size is a constant of the code, the runtime refuses other launches.
  bool fixed_block_;
  opt::LaneAnalysis lanes_;
  opt::ValueRanges ranges_{k_}; ///< for the alignment an index register's zero bits prove
  const Cfg &cfg_ = lanes_.cfg;
  std::vector<NaturalLoop> natural_loops_; ///< every function's, found once
  SpirvKernelInfo info_;
  std::set<std::string> features_;
  bool f64_used_ = false, f32_used_ = false;

  // The ids of the current function (OpenCL hands the kernel's to its subroutines).
  Id ext_ = 0, local_id_ = 0, group_id_ = 0, status_ = 0, shared_ = 0, shared_words_ = 0,
     boundary_ = 0, atlas_ = 0, scratch_ = 0;
  bool wide_shared_ = false; ///< shared memory is u64 words (Vulkan, for 64-bit atomics)
  std::map<uint32_t, ScratchSite> scratch_sites_; ///< pool.alloc instruction -> its site
  std::vector<Id> inputs_;                        ///< the Input built-ins
  Id bdim_[3]{};
  Id exited_ = 0;
  std::map<uint32_t, Buffer> buffers_;
  std::map<opt::Slot, Id> regs_;
  std::map<uint32_t, Id> fn_ids_;
  Specials specials_;
  Id pending_offset_ = 0, pending_handle_ = 0;
  std::vector<uint32_t> addressed_params_; ///< parameters whose address `addr` takes
  uint32_t inst_index_ = 0;

  bool is_kernel_fn_ = true;
  std::vector<uint32_t> rpo_;
  std::vector<bool> in_fn_;
};

} // namespace hologram::codegen::spirv
