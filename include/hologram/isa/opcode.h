// Opcodes of the Atlas ISA and the constexpr instruction table built from opcodes.def.
#pragma once

#include "hologram/isa/type.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hologram::isa {

enum class Opcode : uint16_t {
#define HG_OPCODE(id, mn, fam, types, sub, sig, flags, names) id,
#include "hologram/isa/opcodes.def"
#undef HG_OPCODE
};

inline constexpr unsigned kNumOpcodes = 0
#define HG_OPCODE(id, mn, fam, types, sub, sig, flags, names) +1
#include "hologram/isa/opcodes.def"
#undef HG_OPCODE
    ;

enum class OpFamily : uint8_t {
  Move,
  Arith,
  Logic,
  Control,
  Sync,
  Atomic,
  Atlas,
  Reduce,
  Math,
  Pool,
  HigherOrder,
  Library
};

/// What the sub-operation component of a mnemonic selects.
enum class SubKind : uint8_t { None, Cmp, Scope, AtomicOp, ReduceOp, MapUnary, MapBinary };

/// Comparison codes of `set<cc>`; the `u` forms are true when either operand is NaN.
enum class CmpCode : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, Equ, Neu, Ltu, Leu, Gtu, Geu };
enum class FenceScope : uint8_t { Thread, Block, Device, System };
enum class AtomicOp : uint8_t { Add, Min, Max, And, Or, Xor, Xchg };
enum class ReduceOp : uint8_t { Add, Mul, Min, Max };
enum class MapUnaryOp : uint8_t {
  Abs,
  Neg,
  Sqrt,
  Rsqrt,
  Rcp,
  Exp,
  Exp2,
  Log,
  Log2,
  Log10,
  Sin,
  Cos,
  Tan,
  Tanh,
  Sigmoid,
  Erf,
  Relu,
  Floor,
  Ceil,
  Round,
  Trunc
};
enum class MapBinaryOp : uint8_t { Add, Sub, Mul, Div, Min, Max, Pow, Atan2 };

/// Instruction flags from the table.
enum OpFlag : uint8_t {
  kFlagLaunchLevel = 1, ///< whole-launch operation: the kernel runs once per launch
  kFlagReadsMemory = 2,
  kFlagWritesMemory = 4,
};

/// The role of one operand, as written in a signature string of opcodes.def.
enum class OperandRole : char {
  DstT = 'd',
  SrcT = 's',
  DstPred = 'P',
  SrcPred = 'p',
  DstU32 = 'U',
  SrcU32 = 'u',
  DstU64 = 'W',
  SrcU64 = 'w',
  SrcF64 = 'f',
  LiteralT = 'i',
  Count = 'n',
  Label = 'L',
  ScalarParam = 'v',
  BufferParam = 'b',
  OptBufferParam = 'o',
  MemParam = 'q',
  Address = 'a',
  LoopCounter = 'k',
  RegWindow = 'r',
  CvtDst = 'X',
  CvtSrc = 'x'
};

/// One row of the instruction table.
struct OpcodeInfo {
  Opcode opcode;
  std::string_view id;       ///< the C++ enumerator name, e.g. "MovImm"
  std::string_view mnemonic; ///< base mnemonic, e.g. "mov.imm"
  OpFamily family;
  TypeSet types; ///< accepted instruction types; empty = no type suffix
  SubKind sub;
  std::string_view signature;
  uint8_t flags;

  [[nodiscard]] size_t num_operands() const { return signature.size(); }
  [[nodiscard]] OperandRole role(size_t i) const { return static_cast<OperandRole>(signature[i]); }
  [[nodiscard]] bool typed() const { return !types.empty(); }
  [[nodiscard]] bool launch_level() const { return flags & kFlagLaunchLevel; }
};

/// The whole table, indexed by opcode.
std::span<const OpcodeInfo> opcode_table();
/// The table row of an opcode.
const OpcodeInfo &info(Opcode op);

/// Names of sub-operations (for printing) and their parsers.
std::string_view cmp_name(CmpCode c);
std::string_view scope_name(FenceScope s);
std::string_view atomic_op_name(AtomicOp a);
std::string_view reduce_op_name(ReduceOp r);
std::string_view map_unary_name(MapUnaryOp m);
std::string_view map_binary_name(MapBinaryOp m);
/// The text of a sub-operation value of the given kind ("" for SubKind::None).
std::string_view sub_name(SubKind kind, uint8_t value);
/// Parses a sub-operation of `kind`; nullopt when `s` is not one.
std::optional<uint8_t> parse_sub(SubKind kind, std::string_view s);
/// The number of values a sub-operation kind has.
unsigned sub_count(SubKind kind);

/// The instruction tables of docs/isa.md ("Every instruction"), one per family, in Markdown.
std::string instruction_reference_markdown();

/// True for the comparison codes that are only defined on floats (the unordered forms).
constexpr bool is_unordered(CmpCode c) {
  return c >= CmpCode::Equ;
}

/// Operand names of an instruction from the table (e.g. gemm: C, A, B, M, N, K, alpha, beta,
/// lda, ldb, ldc, transA, transB); empty for instructions without names.
std::span<const std::string_view> operand_names(Opcode op);

namespace detail {
/// The table's operand-name column, indexed by opcode: names separated by single spaces.
inline constexpr std::string_view kOperandNameLists[] = {
#define HG_OPCODE(id, mn, fam, types, sub, sig, flags, names) names,
#include "hologram/isa/opcodes.def"
#undef HG_OPCODE
};

/// One opcode's operand names, split.
struct OperandNames {
  static constexpr size_t kMax = 17; ///< the longest signature (batched_gemm)
  std::array<std::string_view, kMax> names{};
  size_t count = 0;
};
/// Splits a list of the name column; the one reader of its format.
constexpr OperandNames split_operand_names(std::string_view list) {
  OperandNames row;
  while (!list.empty() && row.count < OperandNames::kMax) {
    const size_t end = list.find(' ');
    row.names[row.count++] = list.substr(0, end);
    list = end == std::string_view::npos ? std::string_view{} : list.substr(end + 1);
  }
  return row;
}
} // namespace detail

/// Position of the operand of `op` called `name`; nullopt when the table names none so.
constexpr std::optional<size_t> operand_position(Opcode op, std::string_view name) {
  const auto row = detail::split_operand_names(detail::kOperandNameLists[static_cast<size_t>(op)]);
  for (size_t pos = 0; pos < row.count; ++pos)
    if (row.names[pos] == name) return pos;
  return std::nullopt;
}

/// Position of operand `name` of `op`, for a name known when the program is compiled: a name
/// the table does not give `op` is a compile error, never a wrong operand.
consteval size_t operand_index(Opcode op, std::string_view name) {
  const auto pos = operand_position(op, name);
  if (!pos) throw "opcodes.def names no operand of this opcode so";
  return *pos;
}

} // namespace hologram::isa
