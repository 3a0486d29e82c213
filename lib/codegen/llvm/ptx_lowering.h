// The PTX lowering (SPEC §9.4; include/hologram/codegen/ptx.h) as one class whose parts live in
// several files: ptx_lowering.cpp (the kernel function, its plan, failures, special registers,
// blocks, calls, and compile_ptx), ptx_memory.cpp (addresses, loads, stores and the Atlas
// instructions) and ptx_instructions.cpp (the instruction switch).
//
// Each kernel is lowered to one SIMT function, a scalar per thread, run through LLVM's
// optimisation pipeline and NVPTX's code generator. Registers are allocas per (register, type)
// slot, which SROA turns into SSA values; the ISA's blocks are LLVM blocks and its branches are
// branches (the hardware handles divergence); `bar.sync N` is PTX's barrier N (both have 16).
// Arithmetic, comparisons and conversions are value_ops.h's, the same IR the x86 lowering
// builds per lane, and transcendentals are math.cpp's inline IR (no libdevice) with FMA fused,
// as on x86-64-v3. Memory accesses carry the alignment the address proves (buffer bases are at
// least 16-byte aligned), so NVPTX splits an access that may be misaligned into narrower ones:
// the ISA has no alignment requirement.
#pragma once

#include "hologram/codegen/ptx.h"
#include "hologram/codegen/spirv_library.h"
#include "hologram/isa/cfg.h"
#include "hologram/isa/handles.h"
#include "lowering.h"
#include "value_ops.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace hologram::codegen::ptx {

using isa::Opcode;
using isa::Type;
using llvm::BasicBlock;
using llvm::Value;

/// Address space numbers of NVPTX.
constexpr unsigned kGlobal = 1, kShared = 3, kConstant = 4;

/// A buffer's first byte is at least this aligned: cuMemAlloc aligns to 256 bytes, and a
/// view starts at a multiple of the device's view alignment, which the CUDA backend sets to
/// at least this.
constexpr uint64_t kBaseAlign = 16;

/// An instruction this back end does not lower (yet): InvalidProgram at the instruction.
struct Unsupported : std::runtime_error {
  Unsupported(const std::string &why, SourceLoc where) : std::runtime_error(why), loc(where) {}
  SourceLoc loc;
};

/// Lowers one kernel into a function of `m`.
class SimtLowering {
public:
  SimtLowering(llvm::Module &m, const isa::Kernel &k, const PtxOptions &o,
               const LibraryLaunchBounds &bounds = {});

  /// Builds the kernel's function and says what the launch must pass it.
  PtxKernelInfo run();

private:
  struct Arg {
    Value *value = nullptr; ///< the scalar, or the buffer's pointer
    Value *bytes = nullptr; ///< the buffer's size
  };

  llvm::Type *i32() { return b_.getInt32Ty(); }
  llvm::Type *i64() { return b_.getInt64Ty(); }

  [[noreturn]] void unsupported(const isa::Instruction &inst, const std::string &what) {
    throw Unsupported("the CUDA back end does not lower " + what + " yet", inst.loc);
  }

  /// What the kernel needs beyond its parameters (PtxKernelInfo).
  void plan();

  // Failures (ptx_lowering.cpp) ---------------------------------------------------------------

  /// Records the launch's first failure when `bad` holds (spirv_status's words: the code,
  /// the lane, `param`, `offset`, `size`, the instruction); the thread goes on, with the
  /// access that failed not made.
  void record_if(Value *bad, uint32_t code, uint32_t param, Value *offset, uint32_t size);
  /// The same with the region word computed (a handle's region).
  void record_region_if(Value *bad, uint32_t code, Value *param, Value *offset, uint32_t size);
  /// v, or limit - 1 after recording that v >= limit (an Atlas range: 0 class, 1 page, 2 byte).
  Value *in_range(Value *v, uint32_t limit, uint32_t which);

  // Registers ---------------------------------------------------------------------------------

  llvm::AllocaInst *slot(bool pred, isa::Reg r, Type t) {
    auto [it, fresh] = slots_.try_emplace({pred, r, t}, nullptr);
    if (fresh) {
      llvm::IRBuilder<> entry(entry_, entry_->getFirstInsertionPt());
      it->second = entry.CreateAlloca(ops_.scalar_type(t));
    }
    return it->second;
  }

  Value *get(isa::Reg r, Type t) {
    if (isa::is_special(r)) {
      const isa::Special s = isa::reg_special(r);
      if (isa::special_type(s) != t)
        throw detail::LoweringError("special register read with the wrong type");
      return special(s);
    }
    llvm::AllocaInst *a = slot(false, r, t);
    return b_.CreateLoad(a->getAllocatedType(), a);
  }
  Value *src(const isa::Instruction &inst, size_t i, Type t) {
    return get(inst.operands[i].index, t);
  }
  void set(const isa::Instruction &inst, size_t i, Type t, Value *v) {
    b_.CreateStore(v, slot(false, inst.operands[i].index, t));
  }
  Value *get_pred(unsigned p) {
    llvm::AllocaInst *a = slot(true, static_cast<isa::Reg>(p), Type::Pred);
    return b_.CreateLoad(b_.getInt1Ty(), a);
  }
  void set_pred(unsigned p, Value *v) {
    b_.CreateStore(v, slot(true, static_cast<isa::Reg>(p), Type::Pred));
  }

  // Launch geometry (special() in ptx_lowering.cpp) -------------------------------------------

  Value *sreg(llvm::Intrinsic::ID id) { return b_.CreateIntrinsic(id, {}, {}); }
  Value *tid(unsigned d) {
    constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z};
    return sreg(ids[d]);
  }
  Value *ntid(unsigned d) {
    constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_z};
    return sreg(ids[d]);
  }
  Value *ctaid(unsigned d) {
    constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
    return sreg(ids[d]);
  }
  Value *nctaid(unsigned d) {
    constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                           llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
    return sreg(ids[d]);
  }
  Value *z64(Value *v) { return b_.CreateZExt(v, i64()); }
  /// Lanes per block (u64).
  Value *lanes() { return b_.CreateMul(b_.CreateMul(z64(ntid(0)), z64(ntid(1))), z64(ntid(2))); }
  /// SPEC §3.3's special registers; %gid is (block linear id) * lanes + (lane linear id).
  Value *special(isa::Special s);

  // Memory and the Atlas instructions (ptx_memory.cpp) ----------------------------------------

  /// The dynamic shared memory of the block (the launch sizes it).
  Value *shared();
  /// The dynamic shared memory's size in bytes (PTX's %dynamic_smem_size).
  Value *shared_bytes();

  /// Where an access goes: the pointer, the alignment its address proves, and whether it may
  /// happen (-fbounds-check; null when not checked).
  struct Place {
    Value *ptr;
    llvm::Align align;
    Value *ok = nullptr;
  };
  /// `extra` (u64, or null) is added to the address's offset before it is checked.
  Place address(const isa::Address &a, uint64_t size, Value *extra = nullptr);

  /// `body()` where `ok` holds (everywhere when `ok` is null); what it yields, of type `ty`
  /// unless that is null, is 0 where it did not run.
  template <typename F> Value *guarded(Value *ok, llvm::Type *ty, F body) {
    return detail::guarded(b_, fn_, ok, ty, body);
  }

  /// A load of t at `p` (0 where the access may not happen).
  Value *load(Type t, const Place &p);
  void store(const Place &p, Value *v);

  /// table[index] from a constant table (index within it).
  Value *table_lookup(const std::vector<uint32_t> &table, Value *index, const std::string &name);
  template <typename F> static std::vector<uint32_t> tabulate(uint32_t n, F f) {
    std::vector<uint32_t> t(n);
    for (uint32_t i = 0; i < n; ++i) t[i] = f(i);
    return t;
  }
  Value *neighbour(Value *c, uint64_t k);
  void emit_atlas(const isa::Instruction &inst);
  /// `reduce` over memory: a loop over the count's elements from the address, folded in
  /// order from the identity, each access checked as a load of its own.
  void emit_reduce_mem(const isa::Instruction &inst);

  // Control (ptx_lowering.cpp) ----------------------------------------------------------------

  BasicBlock *block_of_label(const isa::Operand &label);
  BasicBlock *fallthrough(uint32_t block);
  void emit_block(uint32_t i);

  // Subroutines -------------------------------------------------------------------------------
  // `call` and `ret` share the kernel's registers, as on every backend: a subroutine is blocks
  // of the one function, and each thread keeps a stack of the return sites it is to go back
  // to (the verifier bounds the nesting by kMaxCallDepth and rejects recursion).

  static constexpr uint32_t kMaxCallDepth = 64;

  llvm::AllocaInst *entry_alloca(llvm::Type *t) {
    llvm::IRBuilder<> entry(entry_, entry_->getFirstInsertionPt());
    return entry.CreateAlloca(t);
  }

  void make_stack();
  /// The number of block `b` among the return sites.
  uint32_t return_site(uint32_t b);
  void emit_call(const isa::Instruction &inst, uint32_t block);
  /// Back to the top return site; with none (a `ret` of the kernel itself) the thread exits.
  void emit_ret();

  // Instructions (ptx_instructions.cpp) -------------------------------------------------------

  void binary(const isa::Instruction &inst, detail::ValueOps::BinaryOp op);
  void emit(const isa::Instruction &inst, uint32_t block);

  llvm::Module &m_;
  llvm::LLVMContext &c_;
  const isa::Kernel &k_;
  const PtxOptions &o_;
  LibraryLaunchBounds bounds_;
  llvm::IRBuilder<> b_;
  detail::ValueOps ops_;
  isa::Cfg cfg_;
  CpuTarget math_;
  llvm::Function *fn_ = nullptr;
  std::vector<Arg> args_;
  BasicBlock *entry_ = nullptr, *exit_ = nullptr;
  std::vector<BasicBlock *> bbs_;
  std::map<std::tuple<bool, isa::Reg, Type>, llvm::AllocaInst *> slots_;
  llvm::GlobalVariable *shared_ = nullptr;
  llvm::AllocaInst *stack_ = nullptr, *sp_ = nullptr;
  PtxKernelInfo info_;
  Value *status_ = nullptr, *boundary_ = nullptr, *atlas_ = nullptr, *phase_ = nullptr;
  std::map<std::string, llvm::GlobalVariable *> tables_;
  uint32_t cur_ = 0;                        ///< the instruction being lowered
  std::map<uint32_t, uint64_t> pool_sites_; ///< pool.alloc: its place in the scratch
  uint64_t scratch_bytes_ = 0;
  llvm::AllocaInst *scratch_ = nullptr;
  std::vector<uint32_t> addressed_; ///< the parameters an `addr` names (handle::)
  /// The thread's scratch (local memory), made on first use.
  llvm::AllocaInst *scratch();
};

} // namespace hologram::codegen::ptx
