// A SPIR-V module under construction: result ids, the logical sections of SPEC 2.4 of the
// SPIR-V specification, de-duplicated types and constants, and function bodies written block
// by block. The enums come from SPIRV-Headers; nothing here knows about the Atlas ISA.
#pragma once

#include <spirv/unified1/spirv.hpp11>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hologram::codegen::spirv {

using Id = uint32_t;
using Words = std::vector<uint32_t>;

/// Appends one instruction (opcode and word count in the first word).
void append(Words &out, spv::Op op, const Words &operands);
/// A literal string operand (nul-terminated, padded to words).
void append_string(Words &out, std::string_view s);

class Builder {
public:
  Builder();

  Id fresh() { return next_id_++; }
  [[nodiscard]] uint32_t bound() const { return next_id_; }

  void capability(spv::Capability c) { capabilities_.insert(c); }
  void extension(const std::string &e) { extensions_.insert(e); }
  Id import(const std::string &set); ///< OpExtInstImport, once per set
  void memory_model(spv::AddressingModel a, spv::MemoryModel m) {
    addressing_ = a;
    memory_ = m;
  }

  void entry_point(spv::ExecutionModel model, Id fn, const std::string &name,
                   const std::vector<Id> &interface);
  void execution_mode(Id fn, spv::ExecutionMode mode, const Words &literals);
  void name(Id id, std::string_view n);
  void member_name(Id type, uint32_t member, std::string_view n);
  void decorate(Id id, spv::Decoration d, const Words &literals = {});
  void member_decorate(Id type, uint32_t member, spv::Decoration d, const Words &literals = {});

  // Types, de-duplicated except where noted.
  Id t_void();
  Id t_bool();
  Id t_int(uint32_t bits, bool is_signed = false);
  Id t_float(uint32_t bits);
  Id t_vector(Id component, uint32_t n);
  Id t_pointer(spv::StorageClass sc, Id pointee);
  Id t_function(Id ret, const std::vector<Id> &params);
  Id t_array(Id element, Id length_constant);
  /// Never de-duplicated: callers decorate them (ArrayStride, Block, offsets).
  Id t_runtime_array_unique(Id element);
  Id t_array_unique(Id element, Id length_constant);
  Id t_struct_unique(const std::vector<Id> &members);

  // Constants, de-duplicated.
  Id c_bool(bool v);
  Id c_int(uint32_t bits, uint64_t value); ///< in an unsigned integer type of `bits`
  Id c_u32(uint32_t v) { return c_int(32, v); }
  Id c_u64(uint64_t v) { return c_int(64, v); }
  Id c_float(uint32_t bits, uint64_t value_bits);
  Id c_null(Id type);
  Id c_composite(Id type, const std::vector<Id> &parts);
  Id spec_u32(uint32_t spec_id, uint32_t default_value);
  Id spec_bool(uint32_t spec_id, bool default_value);
  Id spec_composite(Id type, const std::vector<Id> &parts);
  /// OpSpecConstantOp: `o` applied to (specialisation) constants.
  Id spec_op(spv::Op o, Id type, const Words &operands);

  /// The id `make` returns the first time `key` is asked for, then the same id: module-scope
  /// objects every entry point shares (OpenCL built-ins).
  Id shared_global(const std::string &key, const std::function<Id()> &make);
  /// A module-scope variable (Private, StorageBuffer, Workgroup, PushConstant, ...).
  Id global_variable(Id pointer_type, spv::StorageClass sc, Id initializer = 0);

  // Functions and blocks. Function-scope variables go to the entry block, wherever they are
  // requested.
  Id begin_function(Id ret, Id fn_type, Id fn = 0);
  /// Runs `write`, which writes one whole function (begin_function .. end_function), while
  /// another function is being written; the latter goes on where it was afterwards.
  void aside(const std::function<void()> &write);
  Id function_param(Id type);
  void end_function();
  Id local_variable(Id type); ///< type is the pointee type
  void begin_block(Id label);
  [[nodiscard]] bool in_block() const { return in_block_; }
  [[nodiscard]] Id current_block() const { return current_label_; }
  /// An instruction with a result type and result id; returns the id.
  Id op(spv::Op o, Id type, const Words &operands);
  /// An instruction without result.
  void op_void(spv::Op o, const Words &operands);
  /// Ends the current block.
  void terminate(spv::Op o, const Words &operands);

  /// A load and a store of a variable that only this invocation sees and nothing else
  /// aliases (a register). By default they stay values within a block: a load after a load
  /// or store of the same variable is that value, and only the last store of each variable
  /// is written, just before the block's merge instruction or terminator, or before a
  /// function call, after which the values are forgotten (the callee may use the variable).
  ///
  /// With set_ssa_locals(true) (a function whose variables no callee touches, written as
  /// structured control flow) they leave no load or store at all: the builder keeps each
  /// variable's value per block and places OpPhi where control flow joins (Braun et al.,
  /// "Simple and Efficient Construction of Static Single Assignment Form", CC 2013). A block
  /// is complete when it begins, except a loop header, which is complete when its back edge
  /// is written. A variable no store reaches reads as OpConstantNull. spirv-opt then has no
  /// memory to turn into SSA (its pass for that is quadratic in the loads of one variable).
  void set_ssa_locals(bool on);
  Id load_local(Id type, Id var);
  void store_local(Id var, Id value);
  Id ext(Id set, Id type, uint32_t instruction, const Words &operands);
  /// The result type of a constant, parameter or instruction result made here (0 otherwise).
  [[nodiscard]] Id type_of(Id value) const;

  [[nodiscard]] Words finish(uint32_t version) const;

private:
  Id type(spv::Op o, const Words &operands);
  /// Writes the stores load_local/store_local have kept back (block-local mode).
  void flush_locals();
  /// SSA mode: `var`'s value at the end of `block` (or where it is now, for the current one).
  Id read_ssa(Id type, Id var, Id block);
  /// A phi of `type` at the start of `block`, operands to come; its place in Locals::phis.
  size_t new_phi(Id type, Id block);
  void ssa_edges(spv::Op o, const Words &operands);
  Id constant(spv::Op o, Id type, const Words &operands);

  Id next_id_ = 1;
  std::set<spv::Capability> capabilities_;
  std::set<std::string> extensions_;
  std::map<std::string, Id> imports_;
  spv::AddressingModel addressing_ = spv::AddressingModel::Logical;
  spv::MemoryModel memory_ = spv::MemoryModel::GLSL450;
  Words entry_points_, execution_modes_, names_, annotations_, globals_, functions_;
  std::map<Words, Id> types_;              ///< opcode + operands -> id
  std::map<Id, Words> type_defs_;          ///< id -> opcode + operands
  std::unordered_map<Id, Id> value_types_; ///< value -> its type
  std::map<std::string, Id> shared_globals_;
  std::map<Words, Id> constants_; ///< opcode + type + operands -> id

  // The function being written.
  Words fn_header_, fn_locals_, fn_body_;
  size_t locals_at_ = 0; ///< where the entry block's variables go in fn_body_
  Id current_label_ = 0;
  /// The state of load_local/store_local in the function being written.
  struct Locals {
    bool ssa = false;
    /// Block-local mode: the block's value of each variable and whether it is yet to be
    /// stored; the stores are written in order of variable id (deterministic output).
    std::map<Id, std::pair<Id, bool>> block;
    /// SSA mode: the value of a variable at the end of a block (key: block << 32 | var).
    std::unordered_map<uint64_t, Id> defs;
    std::unordered_map<Id, std::vector<Id>> preds; ///< the branches into each block so far
    std::set<Id> begun, unsealed; ///< blocks written; loop headers without their back edge
    std::unordered_map<Id, std::vector<std::pair<Id, size_t>>> incomplete; ///< (var, phi)
    struct Phi {
      Id block, type, id;
      Words operands;    ///< (value, parent) pairs
      bool dead = false; ///< every operand was the same value: not written
    };
    std::vector<Phi> phis;
    std::unordered_map<Id, size_t> block_start; ///< where a block's phis go in fn_body_
    std::set<Id> pending, used_pending;         ///< phis whose operands are being read
  };
  Locals locals_;
  bool in_function_ = false, in_block_ = false, first_block_ = true;
};

} // namespace hologram::codegen::spirv
