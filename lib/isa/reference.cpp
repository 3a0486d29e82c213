// The "Every instruction" section of docs/isa.md, generated from the instruction table so the
// reference cannot drift from what the parser, verifier and interpreter accept.
#include "hologram/isa/opcode.h"

#include <array>
#include <string>
#include <utility>

namespace hologram::isa {

namespace {

std::string_view family_name(OpFamily f) {
  static constexpr std::array<std::string_view, 12> kNames = {
      "Move",  "Arith",  "Logic", "Control", "Sync",        "Atomic",
      "Atlas", "Reduce", "Math",  "Pool",    "HigherOrder", "Library"};
  return kNames[static_cast<size_t>(f)];
}

std::string operand_text(OperandRole r) {
  switch (r) {
  case OperandRole::DstT: return "rD:T";
  case OperandRole::SrcT: return "rS:T";
  case OperandRole::DstPred: return "pD";
  case OperandRole::SrcPred: return "pS";
  case OperandRole::DstU32: return "rD:u32";
  case OperandRole::SrcU32: return "rS:u32";
  case OperandRole::DstU64: return "rD:u64";
  case OperandRole::SrcU64: return "rS:u64";
  case OperandRole::SrcF64: return "rS:f64";
  case OperandRole::LiteralT: return "literal:T";
  case OperandRole::Count: return "N";
  case OperandRole::Label: return "@label";
  case OperandRole::ScalarParam: return "%scalar";
  case OperandRole::BufferParam: return "%buffer<T>";
  case OperandRole::OptBufferParam: return "%buffer<T>|none";
  case OperandRole::MemParam: return "%buffer|%pool";
  case OperandRole::Address: return "[address]";
  case OperandRole::LoopCounter: return "rC:u32";
  case OperandRole::RegWindow: return "rBase (window of N)";
  case OperandRole::CvtDst: return "rD:DST";
  case OperandRole::CvtSrc: return "rS:SRC";
  }
  return "?";
}

std::string types_text(TypeSet t) {
  using namespace types;
  if (t.empty()) return "—";
  if (t.bits() == kAll.bits()) return "all 12";
  if (t.bits() == kNumeric.bits()) return "ints, f32, f64";
  if (t.bits() == kInt.bits()) return "integers";
  if (t.bits() == kFloat.bits()) return "f32, f64";
  static constexpr std::array<Type, 12> kOrder = {Type::I8,  Type::U8,   Type::I16, Type::U16,
                                                  Type::I32, Type::U32,  Type::I64, Type::U64,
                                                  Type::F16, Type::BF16, Type::F32, Type::F64};
  std::string s;
  for (Type ty : kOrder)
    if (t.contains(ty)) s += (s.empty() ? "" : " ") + std::string(type_name(ty));
  return s;
}

std::string subs_text(SubKind kind) {
  std::string s;
  for (unsigned i = 0; i < sub_count(kind); ++i)
    s += (i ? " " : "") + std::string(sub_name(kind, static_cast<uint8_t>(i)));
  return kind == SubKind::Cmp ? "`<cc>` glued: " + s : s;
}

/// The flags column in words.
std::string properties_text(uint16_t flags) {
  static constexpr std::array<std::pair<uint16_t, std::string_view>, 11> kWords = {{
      {kFlagLaunchLevel, "whole-launch"},
      {kFlagReadsMemory, "reads memory"},
      {kFlagWritesMemory, "writes memory"},
      {kFlagTerminator, "ends a block"},
      {kFlagBarrier, "barrier"},
      {kFlagLaneVarying, "lane-varying result"},
      {kFlagEffect, "side effect"},
      {kFlagCommutative, "commutative"},
      {kFlagElementwise, "element-wise"},
      {kFlagReduces, "reduces"},
      {kFlagPoolAccess, "accesses a pool"},
  }};
  std::string s;
  for (const auto &[flag, word] : kWords)
    if (flags & flag) s += (s.empty() ? "" : ", ") + std::string(word);
  return s.empty() ? "pure" : s;
}

} // namespace

std::string instruction_reference_markdown() {
  std::string out;
  bool first = true;
  OpFamily current{};
  for (const auto &row : opcode_table()) {
    if (first || row.family != current) {
      out += std::string(first ? "" : "\n") + "### " + std::string(family_name(row.family)) +
             "\n\n| mnemonic | operands | types | sub-operations | properties "
             "|\n|---|---|---|---|---|\n";
      current = row.family;
      first = false;
    }
    const auto names = operand_names(row.opcode);
    std::string operands;
    for (size_t i = 0; i < row.num_operands(); ++i)
      operands += (i ? ", " : "") + (i < names.size() ? std::string(names[i]) + " " : "") +
                  operand_text(row.role(i));
    out += "| `" + std::string(row.mnemonic) + "` | " + (operands.empty() ? "—" : operands) +
           " | " + types_text(row.types) + " | " + subs_text(row.sub) + " | " +
           properties_text(row.flags) + " |\n";
  }
  return out;
}

} // namespace hologram::isa
