// The canonical printer of the .hasm text format.
#include "hologram/isa/atlas.h"
#include "hologram/isa/numeric.h"
#include "hologram/isa/text.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace hologram::isa {

namespace {
constexpr size_t kMnemonicColumn = 15;

template <typename F> std::string shortest_float(F v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string print_index(const Address &a) {
  std::string s = reg_name(a.index);
  if (a.scale != 1) s += "*" + std::to_string(a.scale);
  return s;
}

std::string print_address(const Kernel &k, const Address &a) {
  std::string s = "[";
  switch (a.base) {
  case AddrBase::Param: s += "%" + k.params.at(a.base_id).name; break;
  case AddrBase::Pool: s += "%pool:" + k.params.at(a.base_id).name; break;
  case AddrBase::Shared: s += "shared"; break;
  case AddrBase::Class: s += "class " + std::to_string(a.base_id); break;
  case AddrBase::Reg: s += reg_name(a.base_id); break;
  case AddrBase::Boundary: {
    auto d = static_cast<uint64_t>(a.disp);
    s += "phi " + std::to_string(d / atlas::kClassBytes) + "," +
         std::to_string(d % atlas::kClassBytes / atlas::kBytesPerPage) + "," +
         std::to_string(d % atlas::kBytesPerPage);
    break;
  }
  }
  if (a.index != kNoReg) s += " + " + print_index(a);
  if (a.base != AddrBase::Boundary && a.disp != 0) {
    if (a.disp < 0)
      s += " - " + std::to_string(-static_cast<uint64_t>(a.disp));
    else
      s += " + " + std::to_string(a.disp);
  }
  return s + "]";
}

std::string print_operand(const Kernel &k, const Instruction &inst, size_t i) {
  const Operand &op = inst.operands[i];
  const auto &row = inst.info();
  switch (op.kind) {
  case OperandKind::None: return "none";
  case OperandKind::Reg: return reg_name(op.index);
  case OperandKind::Pred: return "p" + std::to_string(op.index);
  case OperandKind::Label:
    return op.index < k.labels.size() ? "@" + k.labels[op.index].name : "@<bad-label>";
  case OperandKind::Param:
    return op.index < k.params.size() ? "%" + k.params[op.index].name : "%<bad-param>";
  case OperandKind::Addr: return print_address(k, op.addr);
  case OperandKind::Imm:
    if (i < row.num_operands() && row.role(i) == OperandRole::LiteralT)
      return format_literal(inst.type, op.imm);
    return std::to_string(op.imm);
  }
  return "?";
}
} // namespace

std::string reg_name(Reg r) {
  if (is_special(r)) return std::string(special_name(reg_special(r)));
  return "r" + std::to_string(r);
}

std::string format_literal(Type type, uint64_t bits) {
  switch (type) {
  case Type::I8: return std::to_string(static_cast<int8_t>(bits));
  case Type::I16: return std::to_string(static_cast<int16_t>(bits));
  case Type::I32: return std::to_string(static_cast<int32_t>(bits));
  case Type::I64: return std::to_string(static_cast<int64_t>(bits));
  case Type::U8: return std::to_string(static_cast<uint8_t>(bits));
  case Type::U16: return std::to_string(static_cast<uint16_t>(bits));
  case Type::U32: return std::to_string(static_cast<uint32_t>(bits));
  case Type::U64: return std::to_string(bits);
  case Type::F32: {
    float f = bits_to_f32(bits);
    return std::isfinite(f) ? shortest_float(f) : hex(bits & 0xffffffffu);
  }
  case Type::F64: {
    double d = bits_to_f64(bits);
    return std::isfinite(d) ? shortest_float(d) : hex(bits);
  }
  case Type::F16:
  case Type::BF16: return hex(bits & 0xffff);
  case Type::None:
  case Type::Pred: break;
  }
  return std::to_string(bits);
}

std::string print_mnemonic(const Instruction &inst) {
  const auto &row = inst.info();
  std::string m(row.mnemonic);
  if (row.sub == SubKind::Cmp)
    m += cmp_name(static_cast<CmpCode>(inst.sub));
  else if (row.sub != SubKind::None)
    m += "." + std::string(sub_name(row.sub, inst.sub));
  if (inst.op == Opcode::Cvt) {
    m += "." + std::string(type_name(inst.type)) + "." + std::string(type_name(inst.type2));
  } else if (row.typed() || inst.type != Type::None) {
    m += "." + std::string(type_name(inst.type));
  }
  if (inst.guard.present)
    m += std::string(inst.guard.negate ? " !p" : " p") + std::to_string(inst.guard.pred);
  return m;
}

std::string print_instruction(const Kernel &k, const Instruction &inst) {
  std::string s = print_mnemonic(inst);
  if (inst.operands.empty()) return s;
  s.append(s.size() < kMnemonicColumn ? kMnemonicColumn - s.size() : 1, ' ');
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    if (i) s += ", ";
    s += print_operand(k, inst, i);
  }
  return s;
}

std::string print_kernel(const Kernel &k) {
  std::ostringstream os;
  os << ".kernel " << k.name << '\n';
  for (const auto &p : k.params) {
    os << ".param %" << p.name << " : ";
    switch (p.kind) {
    case ParamKind::Buffer:
      os << "buffer<" << type_name(p.type) << "> " << access_name(p.access);
      break;
    case ParamKind::Pool: os << "pool"; break;
    case ParamKind::Scalar: os << type_name(p.type); break;
    }
    os << '\n';
  }
  if (k.shared_bytes) os << ".shared " << k.shared_bytes << '\n';
  size_t next_label = 0;
  auto print_labels_at = [&](size_t index) {
    while (next_label < k.labels.size() && k.labels[next_label].target == index)
      os << '@' << k.labels[next_label++].name << ":\n";
  };
  for (size_t i = 0; i < k.insts.size(); ++i) {
    print_labels_at(i);
    os << "  " << print_instruction(k, k.insts[i]) << '\n';
  }
  print_labels_at(k.insts.size());
  return os.str();
}

std::string print_module(const Module &m) {
  std::string out;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    if (i) out += '\n';
    out += print_kernel(m.kernels[i]);
  }
  return out;
}

} // namespace hologram::isa
