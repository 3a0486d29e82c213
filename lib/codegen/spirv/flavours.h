// The two flavours of the SPIR-V kernel lowering (kernel_lowering.h): the Shader module with
// a GLCompute entry point that Vulkan runs (vulkan_lowering.cpp, structurizer.cpp), and the
// Kernel module that OpenCL runs through llvm-spirv (opencl_lowering.cpp).
#pragma once

#include "kernel_lowering.h"

#include <memory>

namespace hologram::codegen::spirv {

/// Vulkan (SPEC §9.1): logical addressing, so buffers are storage buffers bound in parameter
/// order (views of the same binding for other element widths) and scalars push constants;
/// the launch geometry is a push constant too (the grid, and the first block of a launch
/// split in parts); registers are Private variables; control flow is structured.
class VulkanLowering final : public KernelLowering {
public:
  using KernelLowering::KernelLowering;

private:
  void declare_interface() override;
  void declare_entry_point(Id entry) override;
  void begin_function(uint32_t entry, bool is_kernel) override;
  void emit_body(uint32_t entry) override;
  void go_to(uint32_t block) override;
  void branch(Id c, uint32_t then_bb, uint32_t else_bb) override;
  Words call_arguments() override { return {}; }
  Id builtin(Id var, uint32_t d) override;
  void block_geometry(uint32_t d) override;
  void narrow_lane_ids() override;
  Id flat_grid() override;
  void declare_storage_width(unsigned bits) override;
  Id scalar_param(uint32_t p, Type t) override;
  Id phase() override { return push_u32(phase_member_); }
  spv::MemorySemanticsMask device_memory(bool fence) override;
  Id shift(Op o, Id t, Id value, Id amount) override;
  Id exact(Id v) override;
  Id glsl(Id t, GLSLstd450 f, const Words &w) override;
  void f64_no_contraction(Id v) override { b_.decorate(v, spv::Decoration::NoContraction); }
  bool fma_rounds_once() const override { return false; }
  Id fma_rounds_once_here(Type t) override;
  bool frem_is_exact() const override { return false; }
  Id sign_extend(Id v, uint32_t bits) override;
  Id signed_rem(Id ty, Id a, Id divisor) override;
  Id status_word(uint32_t i) override;
  Id atlas_word(Id index32) override;
  Id buffer_view(const Buffer &buf, Id elem, uint32_t stride) override;
  Id buffer_elements(uint32_t p, const Buffer &buf, unsigned size) override;
  Id buffer_element(const Buffer &buf, Id index64) override;
  Id pool_bytes(uint32_t p) override;
  Id word_ptr(const Address &a, Id word_index32) override;
  Id wide_ptr(const Address &a, Id byte_off) override;
  void require_shared_int64_atomics() override { features_.insert("shared_int64_atomics"); }

  /// Built-ins, push constants, storage buffers, shared memory and the status buffer.
  void declare_globals();
  /// Member `member` of the push constants (u32).
  Id push_u32(uint32_t member);
  /// The register variables (Private) and `exited`.
  void declare_registers();
  /// The first 64-bit atomic on shared memory, if any.
  const Instruction *wide_shared_atomic() const;
  Id storage_array(Id elem, uint32_t stride, uint32_t binding, bool read_only);
  /// A view of a storage buffer as an array of `elem` (another variable on the same binding,
  /// which Vulkan allows): u64 words of pools, the boundary pool and scratch for 64-bit
  /// atomics, and buffers reached through a register address with another width.
  Id view(Id var, Id elem, uint32_t stride);
  Id wide_view(Id words_var) { return view(words_var, u64t(), 8); }

  // The structuriser (structurizer.cpp).

  /// A natural loop of one function as the structuriser nests them.
  struct Loop {
    uint32_t header = 0;
    std::set<uint32_t> body; ///< includes the header
    int parent = -1;         ///< index of the enclosing loop
  };
  /// This function's natural loops (isa::natural_loops), in the order their first latch
  /// comes in reverse post-order, as sets of blocks.
  void find_loops(uint32_t entry);
  /// Emits the items of a region (-1: the function body) into the open block.
  void emit_region(int region);
  void emit_loop(int l);
  /// The blocks control may go to from an item of a region: block `bb`'s successors, or
  /// (`child` >= 0) the blocks outside loop `child` its body branches to.
  void item_targets(uint32_t bb, int child, std::vector<uint32_t> &out) const;
  /// If-conversion: the blocks of this function that run folded into the block in front of
  /// them (marked in folded_). A block F qualifies when a guarded `bra p, @T` ends the only
  /// block that enters it, F falls through into T, and F holds a few pure instructions
  /// (no memory, no control, no division under -fcheck-div): the branch then runs F for
  /// every lane and keeps F's results where p holds (OpSelect), and T follows in the same
  /// block. A region of straight-line code with such branches stays one block, which GPUs
  /// run without divergence and SPIRV-Tools' validator and optimiser, whose time grows
  /// faster than the number of blocks, see as one.
  void find_foldable(uint32_t entry);
  std::vector<bool> folded_;
  static constexpr uint32_t kMaxFolded = 16; ///< instructions in a folded block at most

  /// Where a branch from the block being emitted to `target` goes without `cur`: the
  /// innermost loop's merge block for an exit (a break) or its continue block for the back
  /// edge, so that the rest of the loop's body need not test `cur` for it. 0: through `cur`.
  Id direct_target(uint32_t target) const;

  /// A loop construct being emitted (emit_loop).
  struct LoopFrame {
    int loop;
    Id merge, cont;
  };
  std::vector<LoopFrame> frames_;
  uint32_t emitting_ = UINT32_MAX; ///< the block being emitted (emit_region)
  bool defer_jumps_ = false;       ///< while a folded block runs inside its branch

  Id push_ = 0;
  std::map<uint32_t, uint32_t> push_member_; ///< scalar parameter -> push constant member
  uint32_t phase_member_ = 0;
  std::map<Id, uint32_t> binding_of_;     ///< storage buffer variable -> its binding
  std::map<std::pair<Id, Id>, Id> views_; ///< (storage buffer variable, element) -> a view
  std::vector<Id> interface_;             ///< every global the entry point uses
  Id cur_ = 0;                            ///< the ISA block control goes to
  std::vector<Loop> loops_;
  std::vector<int> innermost_;
};

/// OpenCL (SPEC §9.2): physical addressing, so buffers are CrossWorkgroup pointers and
/// scalars values, kernel arguments in parameter order, then the status buffer, the shared
/// memory (a local pointer sized at launch) and, with -fbounds-check, the sizes; built-ins
/// are Input vectors of size_t. The kernel's arguments and registers live in the kernel
/// function and are handed to its subroutines as parameters. Control flow is the ISA's own
/// blocks, which is what OpenCL compilers expect (PoCL's work-group loops handle barriers).
class OpenClLowering final : public KernelLowering {
public:
  using KernelLowering::KernelLowering;

private:
  void declare_interface() override;
  void declare_entry_point(Id entry) override;
  void begin_function(uint32_t entry, bool is_kernel) override;
  void emit_body(uint32_t entry) override;
  void go_to(uint32_t block) override { jump(block); }
  void branch(Id c, uint32_t then_bb, uint32_t else_bb) override;
  Words call_arguments() override;
  Id builtin(Id var, uint32_t d) override;
  void block_geometry(uint32_t d) override;
  void narrow_lane_ids() override {}
  Id flat_grid() override { return 0; }
  void declare_storage_width(unsigned bits) override {
    // OpenCL addresses bytes and shorts natively.
    b_.capability(bits == 8 ? spv::Capability::Int8 : spv::Capability::Int16);
  }
  Id scalar_param(uint32_t p, Type) override { return scalars_.at(p); }
  Id phase() override { return phase_; }
  spv::MemorySemanticsMask device_memory(bool) override {
    return spv::MemorySemanticsMask::CrossWorkgroupMemory;
  }
  Id shift(Op o, Id t, Id value, Id amount) override;
  Id exact(Id v) override { return v; }
  Id glsl(Id t, GLSLstd450 f, const Words &w) override;
  void f64_no_contraction(Id) override {}
  bool fma_rounds_once() const override { return true; } // OpenCL: correctly rounded
  Id fma_rounds_once_here(Type) override { return 0; }
  bool frem_is_exact() const override { return true; } // OpenCL: fmod, 0 ulp
  Id sign_extend(Id v, uint32_t bits) override;
  Id signed_rem(Id ty, Id a, Id divisor) override { return op(Op::OpSRem, ty, {a, divisor}); }
  Id status_word(uint32_t i) override;
  Id atlas_word(Id index32) override;
  Id buffer_view(const Buffer &buf, Id elem, uint32_t stride) override;
  Id buffer_elements(uint32_t p, const Buffer &buf, unsigned size) override;
  Id buffer_element(const Buffer &buf, Id index64) override;
  Id pool_bytes(uint32_t p) override { return buffer_bytes_.at(p); }
  Id word_ptr(const Address &a, Id word_index32) override;
  Id wide_ptr(const Address &a, Id byte_off) override;
  void require_shared_int64_atomics() override {}

  /// Control goes to ISA block `bb` (leaving the function when it is not part of it).
  void jump(uint32_t bb);
  /// The OpenCL.std function of a GLSL.std.450 one.
  static uint32_t opencl_std(GLSLstd450 f);

  /// A kernel argument or a register variable, in the order subroutines take them.
  struct ContextItem {
    Id *ref;     ///< the member holding the current function's id
    Id type;     ///< its type as a parameter
    Id var_type; ///< 0 for a kernel argument; else the type of the kernel's Function variable
    std::string name;
  };
  std::vector<ContextItem> context_;
  std::map<uint32_t, Id> scalars_;      ///< parameter -> value
  std::map<uint32_t, Id> buffer_bytes_; ///< buffer parameter -> its size in bytes (u64)
  Id phase_ = 0, group_count_ = 0, group_size_ = 0;
  std::map<uint32_t, Id> labels_; ///< ISA block -> label
};

} // namespace hologram::codegen::spirv
