#include "builder.h"

#include <algorithm>
#include <stdexcept>

namespace hologram::codegen::spirv {

void append(Words &out, spv::Op op, const Words &operands) {
  out.push_back(static_cast<uint32_t>(operands.size() + 1) << 16 | static_cast<uint32_t>(op));
  out.insert(out.end(), operands.begin(), operands.end());
}

void append_string(Words &out, std::string_view s) {
  uint32_t word = 0;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    word |= static_cast<uint32_t>(static_cast<unsigned char>(s[i])) << (8 * (i % 4));
    if (i % 4 == 3) {
      out.push_back(word);
      word = 0;
    }
  }
  out.push_back(word); // the terminating nul, with the last partial word
}

namespace {
Words with_string(std::string_view s, const Words &before = {}) {
  Words w = before;
  append_string(w, s);
  return w;
}
} // namespace

Builder::Builder() = default;

Id Builder::import(const std::string &set) {
  auto [it, inserted] = imports_.try_emplace(set, 0);
  if (inserted) it->second = fresh();
  return it->second;
}

void Builder::entry_point(spv::ExecutionModel model, Id fn, const std::string &n,
                          const std::vector<Id> &interface) {
  Words w = with_string(n, {static_cast<uint32_t>(model), fn});
  w.insert(w.end(), interface.begin(), interface.end());
  append(entry_points_, spv::Op::OpEntryPoint, w);
}

void Builder::execution_mode(Id fn, spv::ExecutionMode mode, const Words &literals) {
  Words w{fn, static_cast<uint32_t>(mode)};
  w.insert(w.end(), literals.begin(), literals.end());
  append(execution_modes_, spv::Op::OpExecutionMode, w);
}

void Builder::name(Id id, std::string_view n) {
  append(names_, spv::Op::OpName, with_string(n, {id}));
}

void Builder::member_name(Id type, uint32_t member, std::string_view n) {
  append(names_, spv::Op::OpMemberName, with_string(n, {type, member}));
}

void Builder::decorate(Id id, spv::Decoration d, const Words &literals) {
  Words w{id, static_cast<uint32_t>(d)};
  w.insert(w.end(), literals.begin(), literals.end());
  append(annotations_, spv::Op::OpDecorate, w);
}

void Builder::member_decorate(Id type, uint32_t member, spv::Decoration d, const Words &literals) {
  Words w{type, member, static_cast<uint32_t>(d)};
  w.insert(w.end(), literals.begin(), literals.end());
  append(annotations_, spv::Op::OpMemberDecorate, w);
}

Id Builder::type(spv::Op o, const Words &operands) {
  Words key{static_cast<uint32_t>(o)};
  key.insert(key.end(), operands.begin(), operands.end());
  auto it = types_.find(key);
  if (it != types_.end()) return it->second;
  Id id = fresh();
  Words w{id};
  w.insert(w.end(), operands.begin(), operands.end());
  append(globals_, o, w);
  type_defs_.emplace(id, key);
  types_.emplace(std::move(key), id);
  return id;
}

Id Builder::t_void() {
  return type(spv::Op::OpTypeVoid, {});
}
Id Builder::t_bool() {
  return type(spv::Op::OpTypeBool, {});
}
Id Builder::t_int(uint32_t bits, bool is_signed) {
  return type(spv::Op::OpTypeInt, {bits, is_signed ? 1u : 0u});
}
Id Builder::t_float(uint32_t bits) {
  return type(spv::Op::OpTypeFloat, {bits});
}
Id Builder::t_vector(Id component, uint32_t n) {
  return type(spv::Op::OpTypeVector, {component, n});
}
Id Builder::t_pointer(spv::StorageClass sc, Id pointee) {
  return type(spv::Op::OpTypePointer, {static_cast<uint32_t>(sc), pointee});
}
Id Builder::t_function(Id ret, const std::vector<Id> &params) {
  Words w{ret};
  w.insert(w.end(), params.begin(), params.end());
  return type(spv::Op::OpTypeFunction, w);
}
Id Builder::t_array(Id element, Id length_constant) {
  return type(spv::Op::OpTypeArray, {element, length_constant});
}
Id Builder::t_runtime_array_unique(Id element) {
  Id id = fresh();
  append(globals_, spv::Op::OpTypeRuntimeArray, {id, element});
  return id;
}
Id Builder::t_array_unique(Id element, Id length_constant) {
  Id id = fresh();
  append(globals_, spv::Op::OpTypeArray, {id, element, length_constant});
  return id;
}
Id Builder::t_struct_unique(const std::vector<Id> &members) {
  Id id = fresh();
  Words w{id};
  w.insert(w.end(), members.begin(), members.end());
  append(globals_, spv::Op::OpTypeStruct, w);
  return id;
}

Id Builder::constant(spv::Op o, Id ty, const Words &operands) {
  Words key{static_cast<uint32_t>(o), ty};
  key.insert(key.end(), operands.begin(), operands.end());
  auto it = constants_.find(key);
  if (it != constants_.end()) return it->second;
  Id id = fresh();
  Words w{ty, id};
  w.insert(w.end(), operands.begin(), operands.end());
  append(globals_, o, w);
  constants_.emplace(std::move(key), id);
  value_types_.emplace(id, ty);
  return id;
}

Id Builder::c_bool(bool v) {
  return constant(v ? spv::Op::OpConstantTrue : spv::Op::OpConstantFalse, t_bool(), {});
}
Id Builder::c_int(uint32_t bits, uint64_t value) {
  if (bits == 64)
    return constant(spv::Op::OpConstant, t_int(64),
                    {static_cast<uint32_t>(value), static_cast<uint32_t>(value >> 32)});
  uint32_t mask = bits == 32 ? 0xffffffffu : (1u << bits) - 1;
  return constant(spv::Op::OpConstant, t_int(bits), {static_cast<uint32_t>(value) & mask});
}
Id Builder::c_float(uint32_t bits, uint64_t value_bits) {
  if (bits == 64)
    return constant(spv::Op::OpConstant, t_float(64),
                    {static_cast<uint32_t>(value_bits), static_cast<uint32_t>(value_bits >> 32)});
  return constant(spv::Op::OpConstant, t_float(bits), {static_cast<uint32_t>(value_bits)});
}
Id Builder::c_null(Id ty) {
  // Scalars get a plain zero: OpenCL consumers (llvm-spirv) take OpConstantNull only for
  // composites and pointers.
  auto it = type_defs_.find(ty);
  if (it != type_defs_.end()) {
    const Words &def = it->second;
    const auto type_op = static_cast<spv::Op>(def[0]);
    if (type_op == spv::Op::OpTypeBool) return c_bool(false);
    if (type_op == spv::Op::OpTypeInt) return c_int(def[1], 0);
    if (type_op == spv::Op::OpTypeFloat) return c_float(def[1], 0);
  }
  return constant(spv::Op::OpConstantNull, ty, {});
}
Id Builder::c_composite(Id ty, const std::vector<Id> &parts) {
  return constant(spv::Op::OpConstantComposite, ty, Words(parts.begin(), parts.end()));
}
Id Builder::spec_u32(uint32_t spec_id, uint32_t default_value) {
  Id id = fresh();
  append(globals_, spv::Op::OpSpecConstant, {t_int(32), id, default_value});
  decorate(id, spv::Decoration::SpecId, {spec_id});
  return id;
}
Id Builder::spec_bool(uint32_t spec_id, bool default_value) {
  Id id = fresh();
  append(globals_, default_value ? spv::Op::OpSpecConstantTrue : spv::Op::OpSpecConstantFalse,
         {t_bool(), id});
  decorate(id, spv::Decoration::SpecId, {spec_id});
  return id;
}
Id Builder::spec_composite(Id ty, const std::vector<Id> &parts) {
  Id id = fresh();
  Words w{ty, id};
  w.insert(w.end(), parts.begin(), parts.end());
  append(globals_, spv::Op::OpSpecConstantComposite, w);
  return id;
}

Id Builder::spec_op(spv::Op o, Id ty, const Words &operands) {
  Words w{static_cast<uint32_t>(o)};
  w.insert(w.end(), operands.begin(), operands.end());
  return constant(spv::Op::OpSpecConstantOp, ty, w);
}

Id Builder::global_variable(Id pointer_type, spv::StorageClass sc, Id initializer) {
  Id id = fresh();
  Words w{pointer_type, id, static_cast<uint32_t>(sc)};
  if (initializer) w.push_back(initializer);
  append(globals_, spv::Op::OpVariable, w);
  return id;
}

Id Builder::begin_function(Id ret, Id fn_type, Id fn) {
  if (in_function_) throw std::logic_error("spirv: nested function");
  if (!fn) fn = fresh();
  in_function_ = true;
  first_block_ = true;
  locals_ = {};
  fn_header_.clear();
  fn_locals_.clear();
  fn_body_.clear();
  append(fn_header_, spv::Op::OpFunction, {ret, fn, 0, fn_type});
  return fn;
}

void Builder::aside(const std::function<void()> &write) {
  Words header = std::move(fn_header_), locals = std::move(fn_locals_), body = std::move(fn_body_);
  size_t locals_at = locals_at_;
  Id label = current_label_;
  Locals locals_kept = std::move(locals_);
  locals_ = {};
  bool in_function = in_function_, in_block = in_block_, first_block = first_block_;
  in_function_ = in_block_ = false;
  write();
  locals_ = std::move(locals_kept);
  if (in_function_) throw std::logic_error("spirv: a function written aside did not end");
  fn_header_ = std::move(header);
  fn_locals_ = std::move(locals);
  fn_body_ = std::move(body);
  locals_at_ = locals_at;
  current_label_ = label;
  in_function_ = in_function;
  in_block_ = in_block;
  first_block_ = first_block;
}

Id Builder::function_param(Id ty) {
  Id id = fresh();
  append(fn_header_, spv::Op::OpFunctionParameter, {ty, id});
  value_types_.emplace(id, ty);
  return id;
}

Id Builder::local_variable(Id ty) {
  Id id = fresh();
  append(fn_locals_, spv::Op::OpVariable,
         {t_pointer(spv::StorageClass::Function, ty), id,
          static_cast<uint32_t>(spv::StorageClass::Function)});
  return id;
}

void Builder::begin_block(Id label) {
  if (in_block_) throw std::logic_error("spirv: block not terminated");
  in_block_ = true;
  current_label_ = label;
  locals_.block.clear();
  append(fn_body_, spv::Op::OpLabel, {label});
  if (locals_.ssa) {
    locals_.begun.insert(label);
    locals_.block_start[label] = fn_body_.size();
  }
  if (first_block_) {
    first_block_ = false;
    locals_at_ = fn_body_.size(); // the entry block's variables go here
  }
}

void Builder::end_function() {
  if (in_block_) throw std::logic_error("spirv: function ends inside a block");
  if (!locals_.unsealed.empty()) throw std::logic_error("spirv: a loop without its back edge");
  if (!locals_.phis.empty()) { // each block's phis right after its label
    // (where, which): in order of creation within a block (std::stable_sort warns under
    // clang with libstdc++ 12).
    std::vector<std::pair<size_t, size_t>> at;
    for (size_t i = 0; i < locals_.phis.size(); ++i)
      if (!locals_.phis[i].dead) at.emplace_back(locals_.block_start.at(locals_.phis[i].block), i);
    std::sort(at.begin(), at.end());
    Words body;
    size_t from = 0;
    for (const auto &[offset, index] : at) {
      const Locals::Phi *phi = &locals_.phis[index];
      body.insert(body.end(), fn_body_.begin() + static_cast<std::ptrdiff_t>(from),
                  fn_body_.begin() + static_cast<std::ptrdiff_t>(offset));
      Words w{phi->type, phi->id};
      w.insert(w.end(), phi->operands.begin(), phi->operands.end());
      append(body, spv::Op::OpPhi, w);
      from = offset;
    }
    body.insert(body.end(), fn_body_.begin() + static_cast<std::ptrdiff_t>(from), fn_body_.end());
    fn_body_ = std::move(body);
  }
  functions_.insert(functions_.end(), fn_header_.begin(), fn_header_.end());
  functions_.insert(functions_.end(), fn_body_.begin(), fn_body_.begin() + locals_at_);
  functions_.insert(functions_.end(), fn_locals_.begin(), fn_locals_.end());
  functions_.insert(functions_.end(), fn_body_.begin() + locals_at_, fn_body_.end());
  append(functions_, spv::Op::OpFunctionEnd, {});
  in_function_ = false;
}

Id Builder::op(spv::Op o, Id ty, const Words &operands) {
  if (!in_block_) throw std::logic_error("spirv: instruction outside a block");
  if (o == spv::Op::OpFunctionCall && !locals_.ssa) {
    flush_locals();
    locals_.block.clear();
  }
  Id id = fresh();
  Words w{ty, id};
  w.insert(w.end(), operands.begin(), operands.end());
  append(fn_body_, o, w);
  value_types_.emplace(id, ty);
  return id;
}

void Builder::op_void(spv::Op o, const Words &operands) {
  if (!in_block_) throw std::logic_error("spirv: instruction outside a block");
  if (o == spv::Op::OpSelectionMerge || o == spv::Op::OpLoopMerge) flush_locals();
  if (o == spv::Op::OpLoopMerge && locals_.ssa) {
    for (const auto &[key, value] : locals_.defs)
      if (key >> 32 == current_label_)
        throw std::logic_error("spirv: a variable used in a loop header before its merge");
    locals_.unsealed.insert(current_label_);
  }
  append(fn_body_, o, operands);
}

void Builder::terminate(spv::Op o, const Words &operands) {
  flush_locals();
  op_void(o, operands);
  in_block_ = false;
  if (locals_.ssa) ssa_edges(o, operands);
}

void Builder::set_ssa_locals(bool on) {
  if (!locals_.block.empty() || !locals_.defs.empty())
    throw std::logic_error("spirv: SSA locals chosen after a local was used");
  locals_.ssa = on;
  if (on && in_block_) {
    locals_.begun.insert(current_label_);
    locals_.block_start[current_label_] = fn_body_.size();
  }
}

Id Builder::load_local(Id ty, Id var) {
  if (!in_block_) throw std::logic_error("spirv: instruction outside a block");
  if (locals_.ssa) return read_ssa(ty, var, current_label_);
  auto it = locals_.block.find(var);
  if (it != locals_.block.end()) return it->second.first;
  Id v = op(spv::Op::OpLoad, ty, {var});
  locals_.block.emplace(var, std::pair(v, false));
  return v;
}

void Builder::store_local(Id var, Id value) {
  if (!in_block_) throw std::logic_error("spirv: instruction outside a block");
  if (locals_.ssa)
    locals_.defs[uint64_t{current_label_} << 32 | var] = value;
  else
    locals_.block[var] = {value, true};
}

void Builder::flush_locals() {
  for (auto &[var, value] : locals_.block)
    if (value.second) {
      append(fn_body_, spv::Op::OpStore, {var, value.first});
      value.second = false;
    }
}

size_t Builder::new_phi(Id ty, Id block) {
  Id id = fresh();
  value_types_.emplace(id, ty);
  locals_.phis.push_back({block, ty, id, {}});
  return locals_.phis.size() - 1;
}

Id Builder::read_ssa(Id ty, Id var, Id block) {
  Locals &l = locals_;
  const uint64_t key = uint64_t{block} << 32 | var;
  if (auto it = l.defs.find(key); it != l.defs.end()) {
    if (l.pending.count(it->second)) l.used_pending.insert(it->second);
    return it->second;
  }
  if (!l.begun.count(block)) throw std::logic_error("spirv: a value read from an unwritten block");
  // A reference stays valid while the recursion below adds entries to the map.
  const std::vector<Id> &preds = l.preds[block];
  Id value = 0;
  if (l.unsealed.count(block)) { // a loop header: operands once the back edge is known
    const size_t at = new_phi(ty, block);
    l.incomplete[block].emplace_back(var, at);
    value = l.phis[at].id;
  } else if (preds.empty()) {
    value = c_null(ty);
  } else if (preds.size() == 1) {
    value = read_ssa(ty, var, preds.front());
  } else {
    const size_t at = new_phi(ty, block);
    const Id phi = l.phis[at].id;
    l.defs[key] = phi; // a read through a cycle finds the phi
    l.pending.insert(phi);
    Words operands;
    for (Id p : preds) operands.insert(operands.end(), {read_ssa(ty, var, p), p});
    l.pending.erase(phi);
    bool same = true;
    for (size_t i = 2; i < operands.size(); i += 2) same = same && operands[i] == operands[0];
    if (same && !l.used_pending.count(phi) && operands[0] != phi) {
      // Nothing refers to the phi yet and every path brings the same value: no phi.
      l.phis[at].dead = true;
      value = operands[0];
    } else {
      l.phis[at].operands = std::move(operands);
      value = phi;
    }
    l.used_pending.erase(phi);
  }
  l.defs[key] = value;
  return value;
}

void Builder::ssa_edges(spv::Op o, const Words &operands) {
  // Khronos' enum, so comparisons rather than a switch over all of it.
  std::vector<Id> targets;
  if (o == spv::Op::OpBranch) {
    targets = {operands.at(0)};
  } else if (o == spv::Op::OpBranchConditional) {
    targets = {operands.at(1)};
    if (operands.at(2) != operands.at(1)) targets.push_back(operands.at(2));
  } else if (o != spv::Op::OpReturn && o != spv::Op::OpReturnValue && o != spv::Op::OpUnreachable) {
    throw std::logic_error("spirv: a terminator SSA locals do not follow");
  }
  Locals &l = locals_;
  for (Id t : targets) {
    if (l.begun.count(t) && !l.unsealed.count(t))
      throw std::logic_error("spirv: a branch back to a block that is not a loop header");
    l.preds[t].push_back(current_label_);
    if (!l.unsealed.count(t)) continue;
    // The back edge: the loop header is complete, its phis get their operands.
    l.unsealed.erase(t);
    for (const auto &[var, at] : l.incomplete[t]) {
      const Id ty = l.phis[at].type;
      Words ops;
      for (Id p : l.preds.at(t)) ops.insert(ops.end(), {read_ssa(ty, var, p), p});
      l.phis[at].operands = std::move(ops);
    }
    l.incomplete.erase(t);
  }
}

Id Builder::shared_global(const std::string &key, const std::function<Id()> &make) {
  auto it = shared_globals_.find(key);
  if (it != shared_globals_.end()) return it->second;
  Id id = make();
  shared_globals_.emplace(key, id);
  return id;
}

Id Builder::type_of(Id value) const {
  auto it = value_types_.find(value);
  return it == value_types_.end() ? 0 : it->second;
}

Id Builder::ext(Id set, Id ty, uint32_t instruction, const Words &operands) {
  Words w{set, instruction};
  w.insert(w.end(), operands.begin(), operands.end());
  return op(spv::Op::OpExtInst, ty, w);
}

Words Builder::finish(uint32_t version) const {
  Words out{spv::MagicNumber, version, 0 /* generator */, next_id_, 0};
  for (auto c : capabilities_) append(out, spv::Op::OpCapability, {static_cast<uint32_t>(c)});
  for (const auto &e : extensions_) append(out, spv::Op::OpExtension, with_string(e));
  for (const auto &[set, id] : imports_)
    append(out, spv::Op::OpExtInstImport, with_string(set, {id}));
  append(out, spv::Op::OpMemoryModel,
         {static_cast<uint32_t>(addressing_), static_cast<uint32_t>(memory_)});
  for (const Words *w :
       {&entry_points_, &execution_modes_, &names_, &annotations_, &globals_, &functions_})
    out.insert(out.end(), w->begin(), w->end());
  return out;
}

} // namespace hologram::codegen::spirv
