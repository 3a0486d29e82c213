// The instruction table (built from opcodes.def) and the names of sub-operations.
#include "hologram/isa/opcode.h"

#include <algorithm>
#include <array>

namespace hologram::isa {

namespace {
using namespace types;
constexpr uint16_t L = kFlagLaunchLevel, M = kFlagReadsMemory, S = kFlagWritesMemory,
                   T = kFlagTerminator, B = kFlagBarrier, V = kFlagLaneVarying, E = kFlagEffect,
                   C = kFlagCommutative, W = kFlagElementwise, R = kFlagReduces,
                   P = kFlagPoolAccess;

constexpr std::array<OpcodeInfo, kNumOpcodes> kTable = {{
#define HG_OPCODE(id, mn, fam, types, sub, sig, flags, names)                                      \
  {Opcode::id, #id, mn, OpFamily::fam, types, SubKind::sub, sig, static_cast<uint16_t>(flags)},
#include "hologram/isa/opcodes.def"
}};

constexpr std::array<std::string_view, 12> kCmp = {"eq",  "ne",  "lt",  "le",  "gt",  "ge",
                                                   "equ", "neu", "ltu", "leu", "gtu", "geu"};
constexpr std::array<std::string_view, 4> kScope = {"thread", "block", "device", "system"};
constexpr std::array<std::string_view, 7> kAtomicNames = {"add", "min", "max", "and",
                                                          "or",  "xor", "xchg"};
constexpr std::array<std::string_view, 4> kReduce = {"add", "mul", "min", "max"};
constexpr std::array<std::string_view, 21> kMapUnary = {
    "abs", "neg", "sqrt", "rsqrt",   "rcp", "exp",  "exp2",  "log",  "log2",  "log10", "sin",
    "cos", "tan", "tanh", "sigmoid", "erf", "relu", "floor", "ceil", "round", "trunc"};
constexpr std::array<std::string_view, 8> kMapBinary = {"add", "sub", "mul", "div",
                                                        "min", "max", "pow", "atan2"};

std::span<const std::string_view> sub_names(SubKind kind) {
  switch (kind) {
  case SubKind::None: return {};
  case SubKind::Cmp: return kCmp;
  case SubKind::Scope: return kScope;
  case SubKind::AtomicOp: return kAtomicNames;
  case SubKind::ReduceOp: return kReduce;
  case SubKind::MapUnary: return kMapUnary;
  case SubKind::MapBinary: return kMapBinary;
  }
  return {};
}

/// The operand-name column split into names, checked against the signatures when compiled.
constexpr std::array<detail::OperandNames, kNumOpcodes> kNames = [] {
  std::array<detail::OperandNames, kNumOpcodes> rows{};
  for (size_t op = 0; op < kNumOpcodes; ++op)
    rows[op] = detail::split_operand_names(detail::kOperandNameLists[op]);
  return rows;
}();
constexpr bool names_match_signatures() {
  for (size_t op = 0; op < kNumOpcodes; ++op) {
    const detail::OperandNames &row = kNames[op];
    const std::string_view list = detail::kOperandNameLists[op];
    const size_t spaces = static_cast<size_t>(std::count(list.begin(), list.end(), ' '));
    if (!list.empty() && spaces + 1 != row.count) return false; // more names than fit
    if (row.count != 0 && row.count != kTable[op].signature.size()) return false;
    for (size_t i = 0; i < row.count; ++i)
      for (size_t j = 0; j < i; ++j)
        if (row.names[i].empty() || row.names[i] == row.names[j]) return false;
  }
  return true;
}
static_assert(names_match_signatures(),
              "opcodes.def: operand names must be one distinct name per signature character");

/// An element-wise (W) or reducing (R) row has what running it range by range needs: it is
/// whole-launch, not both, counts its elements in a u64 register named `n`, has only whole
/// buffers (no `none`, no pools) and no literals, and a result register exactly when it
/// reduces (isa::elementwise_chains and the CPU runtime's fused chains rely on it).
constexpr bool counts_elements(const OpcodeInfo &row) {
  const detail::OperandNames &names = kNames[static_cast<size_t>(row.opcode)];
  const std::string_view sig = row.signature;
  bool has_n = false;
  for (size_t i = 0; i < names.count; ++i)
    has_n = has_n || (names.names[i] == "n" && sig[i] == 'w');
  return row.launch_level() && !(row.elementwise() && row.reduces()) && has_n &&
         sig.find_first_of("oqinkr") == std::string_view::npos &&
         (sig.front() == 'd') == row.reduces();
}

/// The flags agree with the signatures: the two sources of a commutative instruction have one
/// role, a lane-varying result is a result, a whole-launch instruction transfers no control, and
/// the control family is exactly the instructions that end a block, and the whole-launch
/// instructions exactly the HigherOrder and Library families (code that switches over
/// ControlOpcode or LaunchOpcode after asking ends_block() or launch_level() relies on it).
constexpr bool flags_match_signatures() {
  for (const OpcodeInfo &row : kTable) {
    const std::string_view sig = row.signature;
    const size_t first_src = sig.find_first_of("spuwf");
    if (row.commutative() && (first_src == std::string_view::npos || first_src + 1 >= sig.size() ||
                              sig[first_src] != sig[first_src + 1]))
      return false;
    if (row.lane_varying() && sig.find_first_of("dPUWX") != 0) return false;
    if (row.launch_level() && (row.flags & (T | B)) != 0) return false;
    if (row.ends_block() != (row.family == OpFamily::Control)) return false;
    if (row.launch_level() !=
        (row.family == OpFamily::HigherOrder || row.family == OpFamily::Library))
      return false;
    if ((row.elementwise() || row.reduces()) && !counts_elements(row)) return false;
  }
  return true;
}
static_assert(flags_match_signatures(),
              "opcodes.def: a flag disagrees with the instruction's signature");

} // namespace

std::span<const OpcodeInfo> opcode_table() {
  return kTable;
}
const OpcodeInfo &info(Opcode op) {
  return kTable[static_cast<size_t>(op)];
}

std::string_view cmp_name(CmpCode c) {
  return kCmp[static_cast<size_t>(c)];
}
std::string_view scope_name(FenceScope s) {
  return kScope[static_cast<size_t>(s)];
}
std::string_view atomic_op_name(AtomicOp a) {
  return kAtomicNames[static_cast<size_t>(a)];
}
std::string_view reduce_op_name(ReduceOp r) {
  return kReduce[static_cast<size_t>(r)];
}
std::string_view map_unary_name(MapUnaryOp m) {
  return kMapUnary[static_cast<size_t>(m)];
}
std::string_view map_binary_name(MapBinaryOp m) {
  return kMapBinary[static_cast<size_t>(m)];
}

std::string_view sub_name(SubKind kind, uint8_t value) {
  auto names = sub_names(kind);
  return value < names.size() ? names[value] : std::string_view{};
}

std::optional<uint8_t> parse_sub(SubKind kind, std::string_view s) {
  auto names = sub_names(kind);
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == s) return static_cast<uint8_t>(i);
  return std::nullopt;
}

unsigned sub_count(SubKind kind) {
  return static_cast<unsigned>(sub_names(kind).size());
}

std::span<const std::string_view> operand_names(Opcode op) {
  const detail::OperandNames &row = kNames[static_cast<size_t>(op)];
  return {row.names.data(), row.count};
}

} // namespace hologram::isa
