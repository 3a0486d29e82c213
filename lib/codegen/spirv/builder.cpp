#include "builder.h"

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
  bool in_function = in_function_, in_block = in_block_, first_block = first_block_;
  in_function_ = in_block_ = false;
  write();
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
  append(fn_body_, spv::Op::OpLabel, {label});
  if (first_block_) {
    first_block_ = false;
    locals_at_ = fn_body_.size(); // the entry block's variables go here
  }
}

void Builder::end_function() {
  if (in_block_) throw std::logic_error("spirv: function ends inside a block");
  functions_.insert(functions_.end(), fn_header_.begin(), fn_header_.end());
  functions_.insert(functions_.end(), fn_body_.begin(), fn_body_.begin() + locals_at_);
  functions_.insert(functions_.end(), fn_locals_.begin(), fn_locals_.end());
  functions_.insert(functions_.end(), fn_body_.begin() + locals_at_, fn_body_.end());
  append(functions_, spv::Op::OpFunctionEnd, {});
  in_function_ = false;
}

Id Builder::op(spv::Op o, Id ty, const Words &operands) {
  if (!in_block_) throw std::logic_error("spirv: instruction outside a block");
  Id id = fresh();
  Words w{ty, id};
  w.insert(w.end(), operands.begin(), operands.end());
  append(fn_body_, o, w);
  value_types_.emplace(id, ty);
  return id;
}

void Builder::op_void(spv::Op o, const Words &operands) {
  if (!in_block_) throw std::logic_error("spirv: instruction outside a block");
  append(fn_body_, o, operands);
}

void Builder::terminate(spv::Op o, const Words &operands) {
  op_void(o, operands);
  in_block_ = false;
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
