// Opcodes of the Atlas ISA and the constexpr instruction table built from opcodes.def.
#pragma once

#include "hologram/isa/type.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hologram::isa {

enum class Opcode : uint16_t {
#define HG_OPCODE(id, mn, fam, types, sub, sig, flags, names) id,
#include "hologram/isa/opcodes.def"
};

inline constexpr unsigned kNumOpcodes = 0
#define HG_OPCODE(id, mn, fam, types, sub, sig, flags, names) +1
#include "hologram/isa/opcodes.def"
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

// One enum per family, with the values of the opcodes it holds. Code that handles one family
// switches over that family's enum, so a new instruction breaks the build (-Wswitch-enum)
// exactly in the switches of its family, and a new family in every switch over OpFamily.
enum class MoveOpcode : uint16_t {
#define HG_MOVE(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};
enum class ArithOpcode : uint16_t {
#define HG_ARITH(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};
enum class LogicOpcode : uint16_t {
#define HG_LOGIC(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};
enum class ControlOpcode : uint16_t {
#define HG_CONTROL(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};
enum class SyncOpcode : uint16_t {
#define HG_SYNC(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};
enum class AtomicOpcode : uint16_t {
#define HG_ATOMIC(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};
enum class AtlasOpcode : uint16_t {
#define HG_ATLAS(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};
enum class ReduceOpcode : uint16_t {
#define HG_REDUCE(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};
enum class MathOpcode : uint16_t {
#define HG_MATH(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};
enum class PoolOpcode : uint16_t {
#define HG_POOL(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};
enum class HigherOrderOpcode : uint16_t {
#define HG_HIGHER_ORDER(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};
enum class LibraryOpcode : uint16_t {
#define HG_LIBRARY(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};

/// The whole-launch instructions (flag L: the HigherOrder and Library families), for the code
/// that runs them as launches of their own (the CPU library, the SPIR-V device library).
enum class LaunchOpcode : uint16_t {
#define HG_HIGHER_ORDER(id, ...) id = static_cast<uint16_t>(Opcode::id),
#define HG_LIBRARY(id, ...) id = static_cast<uint16_t>(Opcode::id),
#include "hologram/isa/opcodes.def"
};

namespace detail {
/// The family column, indexed by opcode.
inline constexpr OpFamily kFamilies[] = {
#define HG_OPCODE(id, mn, fam, ...) OpFamily::fam,
#include "hologram/isa/opcodes.def"
};
template <class E> struct FamilyOf;
template <> struct FamilyOf<MoveOpcode> {
  static constexpr OpFamily value = OpFamily::Move;
};
template <> struct FamilyOf<ArithOpcode> {
  static constexpr OpFamily value = OpFamily::Arith;
};
template <> struct FamilyOf<LogicOpcode> {
  static constexpr OpFamily value = OpFamily::Logic;
};
template <> struct FamilyOf<ControlOpcode> {
  static constexpr OpFamily value = OpFamily::Control;
};
template <> struct FamilyOf<SyncOpcode> {
  static constexpr OpFamily value = OpFamily::Sync;
};
template <> struct FamilyOf<AtomicOpcode> {
  static constexpr OpFamily value = OpFamily::Atomic;
};
template <> struct FamilyOf<AtlasOpcode> {
  static constexpr OpFamily value = OpFamily::Atlas;
};
template <> struct FamilyOf<ReduceOpcode> {
  static constexpr OpFamily value = OpFamily::Reduce;
};
template <> struct FamilyOf<MathOpcode> {
  static constexpr OpFamily value = OpFamily::Math;
};
template <> struct FamilyOf<PoolOpcode> {
  static constexpr OpFamily value = OpFamily::Pool;
};
template <> struct FamilyOf<HigherOrderOpcode> {
  static constexpr OpFamily value = OpFamily::HigherOrder;
};
template <> struct FamilyOf<LibraryOpcode> {
  static constexpr OpFamily value = OpFamily::Library;
};
} // namespace detail

/// The family of an opcode.
constexpr OpFamily family_of(Opcode op) {
  return detail::kFamilies[static_cast<size_t>(op)];
}

/// `op` as a member of its family's enum E (e.g. MathOpcode); `op` must be of that family, which
/// a caller knows from a switch over family_of(op).
template <class E> constexpr E as_family(Opcode op) {
  if (family_of(op) != detail::FamilyOf<E>::value) throw std::logic_error("opcode family mismatch");
  return static_cast<E>(op);
}
/// `op` as a whole-launch instruction; `op` must be one (OpcodeInfo::launch_level()).
constexpr LaunchOpcode as_launch(Opcode op) {
  if (family_of(op) != OpFamily::HigherOrder && family_of(op) != OpFamily::Library)
    throw std::logic_error("not a whole-launch opcode");
  return static_cast<LaunchOpcode>(op);
}
/// The opcode of a family enum's value.
template <class E> constexpr Opcode to_opcode(E family_op) {
  (void)detail::FamilyOf<E>::value; // only family enums
  return static_cast<Opcode>(family_op);
}

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

/// Instruction flags from the table (the letters of its flags column).
enum OpFlag : uint16_t {
  kFlagLaunchLevel = 1,   ///< L: whole-launch operation: the kernel runs once per launch
  kFlagReadsMemory = 2,   ///< M
  kFlagWritesMemory = 4,  ///< S
  kFlagTerminator = 8,    ///< T: transfers control, so it ends a basic block
  kFlagBarrier = 16,      ///< B: the lanes of a block meet here; it ends an SPMD block
  kFlagLaneVarying = 32,  ///< V: the result differs between lanes whatever the operands
  kFlagEffect = 64,       ///< E: an effect beyond the destinations and memory
  kFlagCommutative = 128, ///< C: the first two sources may be swapped
  kFlagElementwise = 256, ///< W: element i of its outputs depends only on element i of its
                          ///< inputs, over `n` elements (a whole-launch operation)
  kFlagReduces = 512,     ///< R: folds `n` elements of its buffers into its result
  kFlagPoolAccess = 1024, ///< P: accesses a pool parameter (a register holds a pool's handle)
};

/// The flags that make an instruction more than a function of its sources.
inline constexpr uint16_t kImpureFlags = kFlagLaunchLevel | kFlagReadsMemory | kFlagWritesMemory |
                                         kFlagTerminator | kFlagBarrier | kFlagLaneVarying |
                                         kFlagEffect;

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
  uint16_t flags;

  [[nodiscard]] constexpr size_t num_operands() const { return signature.size(); }
  [[nodiscard]] constexpr OperandRole role(size_t i) const {
    return static_cast<OperandRole>(signature[i]);
  }
  [[nodiscard]] constexpr bool typed() const { return !types.empty(); }
  [[nodiscard]] constexpr bool launch_level() const { return flags & kFlagLaunchLevel; }
  [[nodiscard]] constexpr bool ends_block() const { return flags & kFlagTerminator; }
  /// Ends a block of the SPMD lowering: a control transfer or a barrier.
  [[nodiscard]] constexpr bool ends_lane_block() const {
    return flags & (kFlagTerminator | kFlagBarrier);
  }
  [[nodiscard]] constexpr bool lane_varying() const { return flags & kFlagLaneVarying; }
  [[nodiscard]] constexpr bool commutative() const { return flags & kFlagCommutative; }
  /// Element-wise over `n` elements: runs range by range, and may be fused with its neighbours
  /// (isa::elementwise_chains).
  [[nodiscard]] constexpr bool elementwise() const { return flags & kFlagElementwise; }
  /// Folds `n` elements into its result: it may end an element-wise chain.
  [[nodiscard]] constexpr bool reduces() const { return flags & kFlagReduces; }
  /// Accesses a pool: its address names a pool parameter, or a register holding a pool's handle.
  [[nodiscard]] constexpr bool pool_access() const { return flags & kFlagPoolAccess; }
  /// Pure: the destinations depend only on the sources; nothing else happens.
  [[nodiscard]] constexpr bool pure() const { return (flags & kImpureFlags) == 0; }
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
