// The x86 kernel lowering (SPMD on SIMD, SPEC §7) as one class whose parts live in several
// files: kernel_lowering.cpp (types, the chunk function, entry and saved state, the scheduler,
// errors, registers, blocks), memory.cpp (addresses, loads, stores, bounds checks, atomics,
// pools), instructions.cpp (arithmetic, comparisons, conversions, calls, whole-launch
// instructions), atlas.cpp (the Atlas instructions) and driver.cpp (the block driver).
#pragma once

#include "hologram/codegen/cpu_abi.h"
#include "hologram/isa/accesses.h"
#include "hologram/isa/atlas.h"
#include "hologram/isa/elementwise.h"
#include "hologram/isa/handles.h"
#include "hologram/isa/type_dispatch.h"
#include "hologram/opt/lane_affinity.h"
#include "hologram/opt/lane_analysis.h"
#include "hologram/opt/value_ranges.h"
#include "hologram/support/unreachable.h"
#include "lowering.h"
#include "value_ops.h"

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>

#include <bit>
#include <map>
#include <optional>
#include <tuple>

namespace hologram::codegen::detail {

using namespace isa;
using llvm::BasicBlock;
using llvm::Value;

// Field indices of the ABI structs.
enum LaunchField {
  LArgs,
  LSizes,
  LGrid,
  LBlock,
  LBoundary,
  LResonance,
  LPhaseAdv,
  LPhase,
  LKernel,
  LLaunchOp,
  LConvert,
  LRuntime,
  LStreamBytes
};
enum WorkerField { WShared, WSharedSize, WScratch, WScratchSize, WError };

inline constexpr uint32_t kExitPc = 0x7fffffff;  // a lane that has finished
inline constexpr uint32_t kParkBit = 0x40000000; // a lane waiting at a barrier
inline constexpr uint32_t kMaxCallDepth = 64;

/// A value that is either uniform (a scalar) or one element per lane (a vector).
struct V {
  Value *v = nullptr;
  bool uni = true;
};

/// Lanes per chunk of kernel `k`, in the chunks that run when the launch's stores stay in the
/// caches (`cached`) and in the loop of whole chunks that runs when they stream (`streaming`,
/// non-temporal stores); the two differ only where noted:
/// - twice the target's width below AVX-512 for a kernel of f32 math functions (exp, log, sin,
///   ...), whose chunks are long chains of dependent operations: two registers a value put two
///   independent chains in each basic block, which the CPU overlaps;
/// - four times it for a straight-line kernel (no loop, no call) that stores, of at most six
///   varying values and no math, a stream such as c = a + b: each load, operation and store becomes
///   four, and a chunk's loads all come before its stores, so that a store does not stall the next
///   loads (a store whose address matches a later load's modulo 4 KiB holds it back, which
///   arrays allocated one after another hit). At AVX-512, where a store of the kernel may
///   bypass the caches (`affinity.write_only`), its streaming chunks keep the target's width:
///   there, non-temporal stores four registers at a time were slower than one at a time
///   (docs/design.md);
/// - the target's width otherwise, and for kernels with barriers or fences, pools, atomics,
///   reductions, the Atlas state or f64 values.
struct ChunkWidths {
  unsigned cached;
  unsigned streaming;
};
ChunkWidths chunk_widths(const Kernel &k, const opt::LaneAnalysis &lanes,
                         const opt::LaneAffinity &affinity, const CpuTarget &target);

class KernelLowering {
public:
  /// `width`: lanes per chunk, or 0 for the kernel's cached width (chunk_widths).
  KernelLowering(llvm::Module &m, const AbiTypes &abi, const Kernel &k, uint32_t kernel_index,
                 const CpuTarget &target, const CpuOptions &opts, unsigned width = 0)
      : m_(m), c_(m.getContext()), abi_(abi), k_(k), kernel_index_(kernel_index), target_(target),
        opts_(opts), b_(c_), a_(opt::analyse_lanes(k)), affinity_(k, a_.cfg, a_.uniformity),
        widths_(chunk_widths(k, a_, affinity_, target)), w_(width ? width : widths_.cached),
        ranges_(k), chain_length_(k.insts.size(), 1) {
    for (const ElementwiseChain &c : elementwise_chains(k)) chain_length_[c.first] = c.count;
  }

  LoweredKernel run(const std::string &symbol) {
    if (opts_.debug_info) begin_debug_info();
    plan_pools();
    llvm::Function *chunk = emit_chunk(symbol + ".chunk");
    // The streaming loop's chunk function, where its width differs (stream_size_ says whether
    // any store may stream at all).
    StreamingChunk streaming;
    if (widths_.streaming != w_ && stream_size_)
      streaming = KernelLowering(m_, abi_, k_, kernel_index_, target_, opts_, widths_.streaming)
                      .emit_streaming_chunk(symbol + ".chunk.stream");
    // The probe of a span's first chunk, where its bound check comes before anything with an
    // effect (the driver's loops of chunks that go on then start at the span's first chunk).
    llvm::Function *probe = nullptr;
    if (has_goes_on_check_ && goes_on_pure_ && k_.insts.size() <= kMaxWholeBlockLoop)
      probe = KernelLowering(m_, abi_, k_, kernel_index_, target_, opts_, w_)
                  .emit_probe_chunk(symbol + ".probe");
    LoweredKernel out;
    out.blocks = emit_driver(symbol, chunk, streaming, probe);
    out.state_bytes = state_bytes_;
    out.pool_bytes = pool_bytes_;
    if (di_) di_->finalize();
    return out;
  }

private:
  // ------------------------------------------------------------------------------------------
  // Types and constants

  llvm::Type *i1() { return b_.getInt1Ty(); }
  llvm::Type *i8() { return b_.getInt8Ty(); }
  llvm::Type *i32() { return b_.getInt32Ty(); }
  llvm::Type *i64() { return b_.getInt64Ty(); }
  llvm::PointerType *ptr() { return b_.getPtrTy(); }
  llvm::VectorType *vec(llvm::Type *t) { return llvm::FixedVectorType::get(t, w_); }

  /// Registers of f16/bf16 hold their 16 storage bits.
  llvm::Type *scalar_type(Type t) { return ops_.scalar_type(t); }
  static bool is_fp(Type t) { return t == Type::F32 || t == Type::F64; }

  Value *constant(Type t, uint64_t bits) { return ops_.constant(t, bits); }
  Value *u32c(uint64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }
  Value *u64c(uint64_t v) { return b_.getInt64(v); }
  Value *splat(Value *s) { return b_.CreateVectorSplat(w_, s); }
  Value *splat(const V &x) { return x.uni ? splat(x.v) : x.v; }
  /// A loop's metadata (on its back edge) that tells LLVM not to unroll it.
  llvm::MDNode *no_unroll() {
    llvm::MDNode *id = llvm::MDNode::getDistinct(
        c_,
        {nullptr, llvm::MDNode::get(c_, {llvm::MDString::get(c_, "llvm.loop.unroll.disable")})});
    id->replaceOperandWith(0, id);
    return id;
  }
  Value *iota32();
  Value *iota64(uint64_t step);

  /// Applies f to scalars when every operand is uniform, to vectors otherwise.
  template <typename F> V lift(std::initializer_list<V> xs, F &&f) {
    bool uni = true;
    for (const V &x : xs) uni = uni && x.uni;
    std::vector<Value *> vals;
    for (const V &x : xs) vals.push_back(uni ? x.v : splat(x));
    return {f(vals), uni};
  }

  // ------------------------------------------------------------------------------------------
  // Pools and state layout

  void plan_pools();

  // ------------------------------------------------------------------------------------------
  // Debug info

  void begin_debug_info();
  void attach_subprogram(llvm::Function *f);
  void set_location(const Instruction &inst);

  // ------------------------------------------------------------------------------------------
  // The chunk function: runs one chunk of lanes of one block until it finishes or parks at a
  // barrier. (launch, worker, block_linear, bx, by, bz, chunk, state) -> status.

  llvm::Function *emit_chunk(const std::string &name);
  /// The chunk function of the loops that stream, of a kernel whose two widths differ, with
  /// debug information of its own. It is called with a variable for `state`, where a full
  /// chunk leaves the address of its first lane's element of the first store that may
  /// stream (of `element` bytes): the driver aligns the loop's chunks to it.
  struct StreamingChunk {
    llvm::Function *fn = nullptr;
    uint64_t element = 0; ///< 0: no store reports its address
  };
  StreamingChunk emit_streaming_chunk(const std::string &name);
  /// The chunk function cut short at the bound check of the kernel's first block: it returns
  /// the chunk function's answer there (the number of the span's chunks, from this one, that go
  /// on past it; leaves_from as the chunk function stores it) having done nothing else, and
  /// 0 on every way that does not reach that check. Only for a kernel whose first block has
  /// nothing with an effect before the check (goes_on_pure_), so that the driver may run the
  /// same chunk again.
  llvm::Function *emit_probe_chunk(const std::string &name);

  void create_allocas();
  static std::string slot_name(const opt::Slot &s);

  Value *load_field(llvm::StructType *st, Value *base, unsigned field, llvm::Type *t,
                    const char *name = "");
  /// Marks a load of launch data that no store of the kernel can change (the launch and
  /// worker descriptions, argument pointers, scalar arguments), so LLVM may hoist it out of
  /// the lane loops.
  Value *invariant(llvm::LoadInst *load);
  Value *launch_dim(unsigned field, unsigned d);

  void emit_specials();

  /// The value of a special register.
  V special(Special s);
  Value *gid_axis(Value *block, Value *dim, Value *lane);

  /// Global linear id of lane `index` (i32) of this chunk.
  Value *global_lane(Value *index);

  // ------------------------------------------------------------------------------------------
  // Entry, saved state, scheduler

  /// The layout of a barrier kernel's saved state: pc, then every slot, then the call stack.
  llvm::StructType *state_type();

  void save_state();

  void restore_state();

  void emit_entry_state();

  void emit_dispatcher();

  /// No lane can run and some wait at a barrier: every valid lane must wait at the same one.
  void emit_suspend(Value *pc, Value *parked);

  /// The index of the bar.sync instruction a parked pc resumes after.
  Value *inst_of_parked(Value *parked);

  void emit_exit_lanes();

  void set_pc(Value *mask, Value *target);

  uint32_t pc_of(uint32_t block) const;
  BasicBlock *bb_of(uint32_t block) { return block == opt::kExitBlock ? exit_all_ : bb_of_[block]; }

  // ------------------------------------------------------------------------------------------
  // Errors

  /// Fails the launch when any lane of `bad` (a vector of i1, or a scalar for a uniform
  /// condition) is set: records the first such lane and returns -1 from the chunk.
  void fail_if(Value *bad, int32_t kind, Value *inst, Value *value, uint64_t size, int32_t region);
  /// The same with each lane's region (a vector of i32).
  void fail_if(Value *bad, int32_t kind, Value *inst, Value *value, uint64_t size, Value *region);
  void fail_if(Value *bad, int32_t kind, uint32_t inst, Value *value, uint64_t size = 0,
               int32_t region = 0);

  /// A local variable of the chunk function: allocas belong in the entry block, where
  /// mem2reg turns them into registers.
  llvm::AllocaInst *entry_alloca(llvm::Type *t);

  /// Restricts a lane condition to the active lanes (scalars stay scalars).
  Value *active(Value *cond);

  // ------------------------------------------------------------------------------------------
  // Registers

  struct SlotInfo {
    llvm::AllocaInst *alloca;
    bool uni;
  };

  V get(Reg r, Type t);
  V get_pred(unsigned p);
  V src(const Instruction &inst, size_t i, Type t) { return get(inst.operands[i].index, t); }

  void put(const opt::Slot &s, V v);
  void set(const Instruction &inst, size_t i, Type t, V v);
  void set_pred(unsigned p, V v);

  // ------------------------------------------------------------------------------------------
  // Blocks

  /// The mask of live lanes: a constant while emitting the copy of a block for full chunks.
  Value *lane_mask();

  /// Whether a block gets a second copy for chunks whose lanes are all live, in which masked
  /// loads and stores become plain ones and a bound check on a growing id is decided by two
  /// lanes: a block every live lane runs, with memory accesses or such a check, and nothing
  /// that keeps state across copies (barriers, calls, whole-launch operations). Capped per
  /// kernel, since each copy is compiled again.
  bool version_for_full_chunks(const opt::LaneBlock &bb);
  uint32_t bb_index(const opt::LaneBlock &bb) const;

  void emit_block(uint32_t block);

  void emit_block_body(const opt::LaneBlock &bb);

  /// If-conversion of the simplest divergent region: a block every live lane runs that ends
  /// in a lane-varying `bra p, @T`, whose fallthrough F has no other way in, runs only
  /// instructions that can run under a mask, and falls through into T. F then runs under
  /// the mask of the lanes that do not branch and T follows directly with the mask of the
  /// branch: no lane waits in the dispatcher, and the kernel stays straight-line code (a
  /// dispatcher loop around every block made register allocation grow faster than the
  /// kernel). Marks such blocks F in predicated_.
  void plan_predication();

  /// An unconditional transfer to `target` of every active lane.
  void jump(uint32_t target);

  /// The condition in the first and the last lane of a full chunk, when those two decide for
  /// every lane (a comparison that is monotone across the chunk).
  struct Ends {
    Value *first, *last;
    Value *ordered; ///< the compared values do not wrap within the chunk
    /// For a comparison of %gid itself: whether the block's first and last lanes agree (so
    /// every lane of the block does, in every chunk), and the condition there. Neither
    /// changes from chunk to chunk: LLVM hoists them out of the chunk loop.
    Value *block_agrees = nullptr, *block_value = nullptr;
    /// For a comparison of %gid itself: the number of chunks, from the span's first, whose
    /// lanes all agree with its first lane (i32; 0 where the span is not whole chunks).
    Value *agreeing_chunks = nullptr;
    /// For a comparison of %gid itself against a uniform value: the number of chunks, from
    /// the span's first, that hold a lane with its first lane's condition (i32: every later
    /// lane has the other); null where that is unknown.
    Value *first_run_chunks = nullptr;
    /// The comparison is in the kernel's first block, which runs once per chunk, and its other
    /// operand has the same value in every chunk of a block (same_in_every_chunk): the
    /// block's decision there holds for all of its chunks. (ends_of_pred_ is per block, so
    /// a branch that sees these ends is in the first block too.)
    bool once_per_chunk = false;

    /// The ends of the negated condition.
    Ends negated(llvm::IRBuilder<> &b) const {
      return {b.CreateNot(first),
              b.CreateNot(last),
              ordered,
              block_agrees,
              block_value ? b.CreateNot(block_value) : nullptr,
              agreeing_chunks,
              first_run_chunks,
              once_per_chunk};
    }
  };

  /// The number of lanes, from the span's first (at %gid `first`), whose `%gid cc y` (`y cc
  /// %gid` where grows is 2) equals the first lane's (i64); null where the comparison is not
  /// an ordering or y varies.
  Value *first_run(CmpCode cc, size_t grows, Value *first, V y);
  /// Ends::agreeing_chunks for the span's first run (first_run, or null); `agrees` says
  /// whether the whole span agrees.
  Value *agreeing_chunks(Value *run, Value *agrees);
  /// A `set` that orders %gid itself against a uniform value: the chunk's lanes are %gid =
  /// g0 .. g0 + w - 1, so the lanes on the bound's lower side are a prefix, whose count in
  /// scalar arithmetic makes the mask (prefix_mask) in place of w 64-bit lane ids and their
  /// compares (eight registers of them for 32 lanes at x86-64-v3: with the span's lanes made
  /// the same way, saxpy's compile there took 160 million instructions, 174 before). Null for
  /// any other `set`.
  Value *gid_prefix(const Instruction &set);
  /// Whether a chunk's predicates live in mask registers (AVX-512), where a prefix of its
  /// lanes is a count's bits.
  bool masks_in_registers() const;
  /// The chunk's first `lanes` lanes (i64, at most w) as a predicate: a count's bits (bzhi)
  /// where masks_in_registers, else the lane numbers below the count in 32-bit lanes.
  Value *prefix_mask(Value *lanes, const llvm::Twine &name);
  /// Whether `set` compares a value that grows with %gid across a chunk against a uniform
  /// one by an ordering, so that its lanes' results change at most once along the chunk.
  bool monotone_in_chunk(const Instruction &set) const;
  /// The chunk's first lane in the block: chunk * w, which does not wrap (at most 2^30 lanes).
  Value *chunk_first_lane();
  /// The chunk's first lane's %gid (i64): the span's first plus chunk * w.
  Value *chunk_first_gid();
  /// How many of the chunk's w lanes, numbered on from `first`, are below `bound` (both of one
  /// integer type; the result too): none where first >= bound, else min(bound - first, w).
  Value *lanes_below(Value *first, Value *bound);
  /// Whether `use`, read by instruction `at` of the kernel's first block, has the same value
  /// in every chunk of a block: a block-level special register, or a register that the first
  /// block computes before `at` by pure instructions from such values, parameters and
  /// literals (so no load, which another chunk's store could change).
  bool same_in_every_chunk(const isa::RegAccess &use, uint32_t at);
  /// Whether instruction `i` of the first block is pure and reads only such values.
  bool defines_same_in_every_chunk(uint32_t i);
  /// Returns from the chunk: every lane has finished. For a kernel without barriers, the
  /// value says whether the block goes on past its first block's bound check (goes_on_).
  void finish();

  /// Active lanes with `cond` go to `taken`, the others to `other`. `ends` (in a full chunk):
  /// the condition in the first and last lanes, which decide whether the lanes agree.
  void branch(V cond, uint32_t taken, uint32_t other, std::optional<Ends> ends = std::nullopt);

  // ------------------------------------------------------------------------------------------
  // Memory

  /// A resolved address: a uniform base pointer and a byte offset per lane (or a raw address
  /// per lane for register bases), the region's size and its id for error messages.
  /// Under -fbounds-check, an access through a register holds a handle
  /// (hologram/isa/handles.h); per lane, the region its tag names: where it starts (0 for
  /// none), its bytes (0 for none), its HG_CPU_REGION_* (HG_CPU_REGION_HANDLE for none), and
  /// the register's bits.
  struct Handle {
    V start, bytes, region, bits;
  };
  struct Access {
    Value *base = nullptr; ///< null for raw addresses
    V off;
    Value *limit = nullptr; ///< region size in bytes; null when unchecked
    int32_t region = 0;
    /// A handle's region (`off` is then the address itself); nullopt otherwise.
    std::optional<Handle> handle;
    /// Each lane's HG_CPU_REGION_* where it differs by lane (nbr.ld's class); else `region`.
    V regions;
    /// How the offset steps from one lane to the next on a base that is the same for every
    /// lane (opt::LaneAffinity; nullopt: unknown). Consecutive SIMD lanes have consecutive
    /// %gid, and consecutive %gid.x and %lane.x while the run stays in one row of the block.
    std::optional<opt::LaneStep> step;
  };

  /// A parameter's pointer, loaded once in the entry block: it dominates every use, and once
  /// chunks are inlined into the driver's loop the load is hoisted out of it.
  Value *param_pointer(unsigned p);
  /// A scalar parameter's value, loaded once in the entry block like its pointer.
  Value *param_value(unsigned p, Type t);
  /// Emits `emit()` at the end of the entry block (before its branch), whatever the insertion
  /// point: what it computes dominates every use and is hoisted out of the driver's chunk loop.
  template <typename F> Value *in_entry_block(F emit) {
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    if (auto *term = entry_->getTerminator())
      b_.SetInsertPoint(term);
    else
      b_.SetInsertPoint(entry_);
    return emit();
  }
  Value *param_size(unsigned p);
  Value *boundary() { return load_field(abi_.launch, launch_, LBoundary, ptr()); }

  Access resolve(const Address &a);
  /// An access through register bits `h` plus `disp` under -fbounds-check: the region its tag
  /// names among the parameters `addr` takes (pools only for pool.ld and pool.st) and the
  /// allocation sites, and the address in it.
  Access resolve_handle(const V &h, const V &disp);

  void check_bounds(const Access &acc, uint64_t size);
  /// The address of each lane's launch scratch (a vector of i64): lane l of the block owns
  /// [l * pool_bytes_, (l + 1) * pool_bytes_) after the chunks' saved states.
  Value *lane_scratch();

  Value *pointer(const Access &acc, Value *off);

  /// Whether a lane-varying access touches consecutive elements of `size` bytes in every run.
  [[nodiscard]] static bool always_consecutive(const Access &acc, uint64_t size);

  /// Whether the active lanes of this run touch consecutive elements of `size` bytes: for a
  /// row-wise lane id, whether runs stay in one row of the block (once per launch); otherwise
  /// compared lane by lane.
  Value *consecutive(const Access &acc, uint64_t size);

  Value *consecutive_lanes(Value *off, uint64_t size);

  V load(Type t, const Access &acc);

  /// `streams`: the address is of an output that the kernel only writes (write_only).
  void store(Type t, const Access &acc, V v, bool streams = false);

  /// A contiguous masked access of `size`-byte elements at `p0`: a store of `val`, or (`val`
  /// null) a load of elements of type `ty`, which it returns. One masked load or store, except
  /// where masked_in_pages and the chunk's elements reach past a page: then by_registers (v4)
  /// or by_lanes (v3), in pages_function.
  Value *masked_access(Value *p0, Value *mask, uint64_t size, Value *val, llvm::Type *ty);
  /// Whether a masked access under `mask` looks at the pages it reaches: at AVX2 and AVX-512,
  /// where the mask is not known to be full (below AVX2 LLVM makes a masked access lane by
  /// lane, each lane's only where it is in the mask).
  bool masked_in_pages(Value *mask);
  /// Whether [p, p + bytes) reaches past the end of p's page.
  Value *reaches_past_page(Value *p, uint64_t bytes);
  /// The cold_function (lowering.h) of masked_access's rare way for a `store` or a load of
  /// vector type `vty` and `size`-byte elements (arguments: the address, the mask's bits, the
  /// slot of the value), made at its first use in the module and shared by every kernel of
  /// this target.
  llvm::Function *pages_function(llvm::Type *vty, uint64_t size, bool store);
  /// masked_access's rare way at AVX-512, the body of pages_function `f` (its arguments):
  /// register by register in a loop, a store from or a load into the slot of the chunk's
  /// vector type `vty`.
  void by_registers(llvm::Function *f, llvm::Type *vty, uint64_t size, bool store);
  /// masked_access's rare way at AVX2, the body of pages_function `f` (its arguments): the
  /// lanes in the mask one by one, in a loop over its set bits, a store from or a load into
  /// the slot of the chunk's vector type `vty`.
  void by_lanes(llvm::Function *f, llvm::Type *vty, uint64_t size, bool store);
  /// by_registers' access of one register at `p` that reaches past its page, whose first
  /// `head` bytes (a whole number of its `size`-byte elements: 4 or 8) lie in p's page: a
  /// store of `part` or (`part` null) a load, which it returns, under `mask`.
  Value *split_register(llvm::Function *f, Value *p, Value *head, Value *mask, Value *part,
                        llvm::FixedVectorType *part_ty, uint64_t size);

  /// A full chunk's contiguous store: non-temporal when the launch's stores of this
  /// instruction write at least hg_cpu_launch.stream_bytes (an output larger than the cache,
  /// which normal stores would first read in) and the address is 16-byte aligned (movntps
  /// needs it; LLVM splits a wider vector into aligned 16-byte stores); a plain store otherwise.
  void store_maybe_streaming(Value *val, Value *p0, uint64_t size);

  /// Whether a launch of `lanes` lanes writes at least `limit` bytes (hg_cpu_launch's
  /// stream_bytes; 0: never) through a store of `size`-byte elements. The chunk's stores and
  /// the driver's sfence decide with this one test.
  Value *launch_streams(Value *limit, Value *lanes, uint64_t size);

  /// Lanes of the whole launch (grid times block), below 2^62 (the runtime refuses more).
  Value *launch_lanes();

  // ------------------------------------------------------------------------------------------
  // Lane loops for what has no vector form (atomics, conversion helpers)

  /// Calls body(lane) for every active lane, lane by lane in order.
  template <typename F> void for_each_active_lane(F &&body) {
    Value *mask = lane_mask();
    for (unsigned j = 0; j < w_; ++j) {
      BasicBlock *run = BasicBlock::Create(c_, "lane", fn_);
      BasicBlock *next = BasicBlock::Create(c_, "lane.next", fn_);
      b_.CreateCondBr(b_.CreateExtractElement(mask, uint64_t{j}), run, next);
      b_.SetInsertPoint(run);
      body(j);
      b_.CreateBr(next);
      b_.SetInsertPoint(next);
    }
  }

  Value *lane_of(const V &v, unsigned j);

  // ------------------------------------------------------------------------------------------
  // Instructions

  void emit_instruction(const Instruction &inst);
  /// The two-operand instructions that map onto one LLVM binary operator.
  using BinaryOp = ValueOps::BinaryOp;
  V binary(BinaryOp op, Type t, V x, V y);
  void set_binary(const Instruction &inst, BinaryOp op);
  V fold(ReduceOp op, Type t, V acc, V x);
  /// Whether any instruction addresses shared memory (only then is it cleared per block).
  bool uses_shared() const;
  uint32_t state_type_bytes();
  V min_max(bool is_min, Type t, V x, V y);
  V convert(V x, Type dst, Type src);
  V compare(CmpCode cc, Type t, V x, V y);
  void emit_atomic(const Instruction &inst);
  void emit_atlas(const Instruction &inst);
  void emit_reduce_mem(const Instruction &inst);
  /// Whole-launch instructions [first, first + count): one call into the runtime, which runs
  /// an element-wise chain (isa::elementwise_chains) fused when its arrays allow.
  void emit_launch_ops(uint32_t first, uint32_t count);
  void emit_pool_alloc(const Instruction &inst);
  void emit_call(const Instruction &inst);
  void emit_ret();
  V table_lookup(const std::vector<uint32_t> &table, V index, const std::string &name);
  void check_class(V c);
  /// f(class) of the class in source operand 1, checked, from a constant table.
  V class_lookup(const Instruction &inst, const std::string &name, uint32_t (*f)(uint32_t));
  Value *bits64(Value *scalar, Type t);
  Value *from_bits64(Value *bits, Type t);

  // ------------------------------------------------------------------------------------------
  // The driver: runs blocks [first, end), every chunk of each, in phases for barrier kernels.

  /// `narrow`: the chunk function of the loops of whole chunks that run when the launch
  /// streams, of widths_.streaming lanes (a divisor of w_), where that width differs from w_
  /// (else `narrow.fn` is null and those loops run `chunk`). `probe_chunk`: emit_probe_chunk's
  /// function, or null.
  llvm::Function *emit_driver(const std::string &symbol, llvm::Function *chunk,
                              const StreamingChunk &narrow, llvm::Function *probe_chunk);
  /// Whether the driver may run consecutive blocks as one span: nothing in the kernel tells
  /// one block from the next or where a lane sits in its block (it reads %gid and launch-wide
  /// specials only, and no shared memory, barrier, per-lane pool or whole-launch instruction).
  bool spans_blocks() const;
  /// Whether the kernel calls a math function (exp, log, sin, ...): the driver then runs its
  /// loops of whole chunks that go on past the bound check in functions of their own.
  bool has_math() const;

  friend class DriverEmitter;

  llvm::Module &m_;
  llvm::LLVMContext &c_;
  const AbiTypes &abi_;
  const Kernel &k_;
  uint32_t kernel_index_;
  const CpuTarget &target_;
  const CpuOptions &opts_;
  llvm::IRBuilder<> b_;
  ValueOps ops_{b_};
  opt::LaneAnalysis a_;
  opt::LaneAffinity affinity_;
  ChunkWidths widths_;
  unsigned w_;
  /// Value ranges under the CPU backend's launch limits (cpu_module.cpp refuses launches
  /// beyond them), which are opt::LaunchLimits' defaults.
  opt::ValueRanges ranges_;
  /// Per instruction: the length of the element-wise chain it starts, else 1.
  std::vector<uint32_t> chain_length_;
  /// Per block: it runs under the mask of a predicated branch (plan_predication).
  std::vector<bool> predicated_;
  /// Predicated blocks of at most this many instructions run without testing for a lane.
  static constexpr uint32_t kMaxUntested = 8;
  /// The mask of the branch in front of a predicated block, restored after it (such blocks
  /// hold no branch, so they never nest).
  llvm::AllocaInst *branch_mask_ = nullptr;

  std::unique_ptr<llvm::DIBuilder> di_;
  llvm::DIFile *di_file_ = nullptr;
  llvm::DICompileUnit *di_cu_ = nullptr;

  llvm::Function *fn_ = nullptr;
  Value *launch_ = nullptr, *worker_ = nullptr;
  /// What one call of the chunk function runs as one block, its span: a block of the launch,
  /// or in a kernel that sees no block (driver.cpp's spans_blocks), several consecutive
  /// blocks. Its first lane's %gid (i64: its lanes have ids first .. first + span lanes - 1)
  /// and its number of lanes (i32, at most 2^30). The "block" of the chunk's names
  /// (block_whole_, block_goes_on_, block.agrees) is the span.
  Value *first_gid_ = nullptr, *span_lanes_ = nullptr;
  Value *bx_ = nullptr, *by_ = nullptr, *bz_ = nullptr, *state_ = nullptr;
  Value *chunk64_ = nullptr, *chunk_ = nullptr; ///< the chunk's number in the span, and in i32
  Value *gx_ = nullptr, *gy_ = nullptr, *gz_ = nullptr, *bdx_ = nullptr, *bdy_ = nullptr,
        *bdz_ = nullptr, *lanes_ = nullptr;
  Value *rows_whole_ = nullptr;
  Value *stream_bytes_ = nullptr; ///< hg_cpu_launch.stream_bytes
  /// The largest element size of a store that may stream: a launch of lanes * size bytes or
  /// more may stream some store (the driver's may_stream_ and sfence).
  std::optional<uint64_t> stream_size_;
  /// A store streams only if its vector is a multiple of this (and it is aligned to the whole
  /// vector, up to 64 bytes).
  static constexpr uint64_t kStreamAlign = 16;
  static constexpr uint64_t kLine = 64;        ///< bytes of a cache line
  static constexpr uint64_t kPage = 4096;      ///< bytes of the smallest x86 page
  static constexpr uint64_t kVectorBytes = 64; ///< bytes of an AVX-512 register
  static constexpr uint64_t kSlotAlign = 16;   ///< by_registers' slot: the stack's alignment
  /// emit_streaming_chunk: the instruction whose store reports its address, once known.
  bool reports_address_ = false;
  std::optional<uint32_t> reporting_inst_;
  uint64_t reporting_element_ = 0;
  Value *chunk_full_ = nullptr;  ///< every lane of this chunk is in the block
  Value *block_whole_ = nullptr; ///< the block's lanes are a whole number of chunks
  /// The driver knows that every lane of this chunk goes on past the first block's bound check
  /// (an earlier chunk of the span returned a count of chunks that go on beyond this one).
  Value *block_goes_on_ = nullptr;
  /// The driver's decision that this launch is big enough for a store to stream (a constant
  /// in its loops for blocks that go on).
  Value *may_stream_ = nullptr;
  /// The driver knows that the store that reports its address (emit_streaming_chunk) writes
  /// whole lines of a launch whose stores of its size stream: its loop of chunks moved to the
  /// next line (driver.cpp). That store then tests only its address's alignment per chunk.
  Value *reporting_lined_ = nullptr;
  /// The span's answers to the first block's bound check are known (the probe gave them): the
  /// chunk does not work them out again, and returns 0 (no chunk after it goes on).
  Value *answered_ = nullptr;
  /// Where the chunk tells the driver the first chunk of the span from which every lane
  /// leaves at the first block's bound check with nothing done before it (i32; the driver
  /// runs no chunk from there). Only a chunk that finds it stores it.
  Value *leaves_from_ = nullptr;
  /// The number of the span's chunks, from its first, that the first block's bound check found to
  /// go on past it (0 until then; the chunk's return value).
  llvm::AllocaInst *goes_on_ = nullptr;
  Value *lane_lin_ = nullptr, *valid_ = nullptr, *lx_ = nullptr, *ly_ = nullptr, *lz_ = nullptr;
  BasicBlock *entry_ = nullptr, *body_entry_ = nullptr, *dispatch_ = nullptr, *exit_all_ = nullptr;
  std::vector<BasicBlock *> bbs_, bb_of_;
  std::map<opt::Slot, SlotInfo> slots_;
  std::map<unsigned, Value *> param_pointers_;
  std::map<std::pair<unsigned, Type>, Value *> param_values_;
  llvm::AllocaInst *pc_ = nullptr, *mask_ = nullptr, *stack_ = nullptr, *sp_ = nullptr;
  llvm::StructType *state_ty_ = nullptr;
  llvm::GlobalVariable *barrier_table_ = nullptr;
  std::map<std::string, llvm::GlobalVariable *> tables_;
  std::map<size_t, uint64_t> pool_offsets_;
  uint64_t pool_bytes_ = 0;
  std::vector<uint32_t> addressed_; ///< the parameters an `addr` names (resolve_handle)
  uint32_t state_bytes_ = 0;
  bool divergent_ = false;
  bool full_chunk_ = false;        ///< emitting a block's copy for chunks whose lanes are all live
  bool first_block_once_ = false;  ///< no branch returns to the kernel's first block
  bool has_goes_on_check_ = false; ///< the chunk may return a count of chunks that go on
  /// Every bound check that answers has_goes_on_check_ comes before any effect of its block.
  bool goes_on_pure_ = true;
  bool probe_ = false; ///< emitting emit_probe_chunk's function
  /// The block being emitted has, before the current instruction, done something that a lane
  /// which goes on to leave must still do: an instruction that is not pure, or a check that
  /// may fail the launch (-fcheck-div).
  bool effects_ = false;
  std::map<uint32_t, bool> same_in_every_chunk_; ///< defines_same_in_every_chunk's answers
  std::map<unsigned, Ends> ends_of_pred_;        ///< full chunk: predicates whose ends decide
  uint32_t versioned_ = 0;                       ///< instructions emitted twice so far
  std::vector<BasicBlock *> full_bb_; ///< per block: the entry of its full-chunk copy, if any
  static constexpr uint32_t kMaxVersioned = 2048;
  /// Kernels of at most this many instructions get more chunk loops in the driver: for blocks
  /// that go on past the first block's bound check (one, or two when a store may stream), or
  /// else for blocks of whole chunks; the chunk is inlined in each, larger kernels keep one.
  static constexpr size_t kMaxWholeBlockLoop = 256;
  uint32_t cur_ = 0;
  uint32_t cur_block_ = 0; // the lane block being emitted (an empty kernel's has no instruction)
};

} // namespace hologram::codegen::detail
