// KernelBuilder: the C++ API for constructing kernels.
#include "hologram/isa/builder.h"

#include "hologram/isa/numeric.h"
#include "hologram/support/unreachable.h"

namespace hologram::isa {

KernelBuilder::KernelBuilder(std::string name) {
  kernel_.name = std::move(name);
}

unsigned KernelBuilder::buffer(std::string name, Type element, Access access) {
  kernel_.params.push_back({std::move(name), ParamKind::Buffer, element, access, {}});
  return static_cast<unsigned>(kernel_.params.size() - 1);
}

unsigned KernelBuilder::pool(std::string name) {
  kernel_.params.push_back({std::move(name), ParamKind::Pool, Type::None, Access::ReadWrite, {}});
  return static_cast<unsigned>(kernel_.params.size() - 1);
}

unsigned KernelBuilder::scalar(std::string name, Type type) {
  kernel_.params.push_back({std::move(name), ParamKind::Scalar, type, Access::Read, {}});
  return static_cast<unsigned>(kernel_.params.size() - 1);
}

unsigned KernelBuilder::label(const std::string &name) {
  if (auto l = kernel_.find_label(name)) return *l;
  kernel_.labels.push_back({name, kUndefinedLabel, {}});
  return static_cast<unsigned>(kernel_.labels.size() - 1);
}

void KernelBuilder::bind(unsigned label) {
  kernel_.labels[label].target = static_cast<uint32_t>(kernel_.insts.size());
}

Instruction &KernelBuilder::emit(Opcode op, Type type, std::initializer_list<Operand> operands) {
  return emit_sub(op, 0, type, operands);
}

Instruction &KernelBuilder::emit_sub(Opcode op, uint8_t sub, Type type,
                                     std::initializer_list<Operand> operands) {
  Instruction inst;
  inst.op = op;
  inst.type = type;
  inst.sub = sub;
  inst.operands.assign(operands.begin(), operands.end());
  kernel_.insts.push_back(std::move(inst));
  return kernel_.insts.back();
}

Instruction &KernelBuilder::emit_cvt(Type dst, Type src, Reg d, Reg s) {
  auto &inst = emit(Opcode::Cvt, dst, {R(d), R(s)});
  inst.type2 = src;
  return inst;
}

Instruction &KernelBuilder::mov_imm_bits(Type type, Reg d, uint64_t bits) {
  return emit(Opcode::MovImm, type, {R(d), N(bits)});
}

Instruction &KernelBuilder::mov_imm(Type type, Reg d, double value) {
  if (is_float(type)) return mov_imm_bits(type, d, float_bits(type, value));
  return mov_imm_int(type, d, static_cast<int64_t>(value));
}

Instruction &KernelBuilder::mov_imm_int(Type type, Reg d, int64_t value) {
  unsigned bits = type_bits(type);
  uint64_t mask = bits == 64 ? ~uint64_t{0} : ((uint64_t{1} << bits) - 1);
  return mov_imm_bits(type, d, static_cast<uint64_t>(value) & mask);
}

Instruction &KernelBuilder::bra(unsigned label, int pred, bool negate) {
  auto &inst = emit(Opcode::Bra, Type::None, {Operand::label(label)});
  if (pred >= 0) inst.guard = {true, negate, static_cast<uint8_t>(pred)};
  return inst;
}

Kernel KernelBuilder::finish() {
  kernel_.canonicalize_labels();
  return std::move(kernel_);
}

Operand mem(unsigned param, Reg index, uint32_t scale, int64_t disp) {
  Address a;
  a.base = AddrBase::Param;
  a.base_id = static_cast<uint16_t>(param);
  a.index = index;
  a.scale = scale;
  a.disp = disp;
  return Operand::address(a);
}

Operand shared_mem(Reg index, uint32_t scale, int64_t disp) {
  Address a;
  a.base = AddrBase::Shared;
  a.index = index;
  a.scale = scale;
  a.disp = disp;
  return Operand::address(a);
}

uint64_t float_bits(Type type, double value) {
  switch (type) {
  case Type::F16: return double_to_f16(value);
  case Type::BF16: return double_to_bf16(value);
  case Type::F32: return f32_bits(static_cast<float>(value));
  case Type::F64: return f64_bits(value);
  case Type::I16:
  case Type::I32:
  case Type::I64:
  case Type::I8:
  case Type::None:
  case Type::Pred:
  case Type::U16:
  case Type::U32:
  case Type::U64:
  case Type::U8: return 0;
  }
  unreachable_enum("Type");
}

} // namespace hologram::isa
