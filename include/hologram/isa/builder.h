// A small API for building kernels in C++ (used by front ends and tests).
#pragma once

#include "hologram/isa/program.h"

#include <initializer_list>
#include <string>

namespace hologram::isa {

/// Builds one kernel instruction by instruction; labels may be used before they are bound.
class KernelBuilder {
public:
  explicit KernelBuilder(std::string name);

  /// Declares parameters; each returns the parameter index for Operand::param / addresses.
  unsigned buffer(std::string name, Type element, Access access = Access::ReadWrite);
  unsigned pool(std::string name);
  unsigned scalar(std::string name, Type type);

  /// Returns the index of label `name`, creating it (unbound) if needed.
  unsigned label(const std::string &name);
  /// Binds a label to the position of the next instruction.
  void bind(unsigned label);

  /// Appends an instruction and returns it for further adjustment (guard, location).
  Instruction &emit(Opcode op, Type type, std::initializer_list<Operand> operands);
  Instruction &emit_sub(Opcode op, uint8_t sub, Type type, std::initializer_list<Operand> operands);
  Instruction &emit_cvt(Type dst, Type src, Reg d, Reg s);
  /// `mov.imm.T d, value` with the literal given as raw bits, or as a double for float types.
  Instruction &mov_imm_bits(Type type, Reg d, uint64_t bits);
  Instruction &mov_imm(Type type, Reg d, double value);
  Instruction &mov_imm_int(Type type, Reg d, int64_t value);
  /// `bra [!]p @label` (guard optional).
  Instruction &bra(unsigned label, int pred = -1, bool negate = false);

  /// The i-th instruction emitted so far.
  Instruction &inst(size_t i) { return kernel_.insts.at(i); }
  /// The number of instructions emitted so far.
  [[nodiscard]] size_t size() const { return kernel_.insts.size(); }
  /// Finishes the kernel (labels in canonical order).
  Kernel finish();

private:
  Kernel kernel_;
};

/// Operand helpers.
inline Operand R(unsigned r) {
  return Operand::reg(static_cast<Reg>(r));
}
inline Operand Sp(Special s) {
  return Operand::reg(special_reg(s));
}
inline Operand P(unsigned p) {
  return Operand::pred(p);
}
inline Operand N(uint64_t v) {
  return Operand::imm_bits(v);
}
/// `[%param + index*scale + disp]`; index may be kNoReg.
Operand mem(unsigned param, Reg index = kNoReg, uint32_t scale = 1, int64_t disp = 0);
/// `[shared + index*scale + disp]`.
Operand shared_mem(Reg index, uint32_t scale = 1, int64_t disp = 0);
/// Encodes a double as the literal bits of a float type (f16/bf16/f32/f64, round to nearest).
uint64_t float_bits(Type type, double value);

} // namespace hologram::isa
