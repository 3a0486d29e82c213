// The in-memory form of an Atlas ISA module: kernels with parameters, labels and instructions.
#pragma once

#include "hologram/isa/opcode.h"
#include "hologram/isa/type.h"
#include "hologram/support/diagnostics.h"
#include "hologram/support/status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hologram::isa {

// ---------------------------------------------------------------------------------------------
// Registers

/// A register number. 0..251 are general registers; 252..255 are the read-only special
/// registers %lane.x, %block.x, %bdim.x and %gid (prototype-compatible indices); 256 and above
/// name the other special registers, which have no general-register alias.
using Reg = uint16_t;

inline constexpr Reg kNumGeneralRegs = 256; ///< r0..r255 as written in text
inline constexpr Reg kFirstSpecialReg = 252;
inline constexpr unsigned kNumPreds = 16;
inline constexpr Reg kNoReg = 0xffff;

enum class Special : uint8_t {
  LaneX,
  BlockX,
  BdimX,
  Gid, // r252..r255
  LaneY,
  LaneZ,
  BlockY,
  BlockZ,
  BdimY,
  BdimZ,
  GdimX,
  GdimY,
  GdimZ,
  GidX,
  GidY,
  GidZ,
  Gsize
};
inline constexpr unsigned kNumSpecials = 17;

constexpr bool is_special(Reg r) {
  return r >= kFirstSpecialReg && r != kNoReg;
}
constexpr Reg special_reg(Special s) {
  auto i = static_cast<unsigned>(s);
  return static_cast<Reg>(i < 4 ? kFirstSpecialReg + i : 256 + (i - 4));
}
constexpr Special reg_special(Reg r) {
  return static_cast<Special>(r < 256 ? r - kFirstSpecialReg : r - 256 + 4);
}
/// The text name (`%lane.x`) and type of a special register.
std::string_view special_name(Special s);
Type special_type(Special s);
std::optional<Special> parse_special(std::string_view name); ///< name with the leading %
/// True for specials whose value differs between the lanes of one block.
bool special_varies_in_block(Special s);
/// True for specials that tell which block a lane is in or where in it, more than its %gid:
/// the lane and block coordinates and %gid.x/y/z. The others are the lane's %gid and the
/// launch's sizes, which are the same in every block.
bool special_tells_block(Special s);

// ---------------------------------------------------------------------------------------------
// Operands

/// Where an address's base points.
enum class AddrBase : uint8_t {
  Param,    ///< a buffer parameter (`[%a + ...]`)
  Pool,     ///< a pool parameter (`[%pool:p + ...]`)
  Shared,   ///< per-block shared memory (`[shared + ...]`)
  Class,    ///< one class window of the boundary pool (`[class 5 + ...]`)
  Boundary, ///< the whole boundary pool, from a Φ coordinate (`[phi c,p,b + ...]`)
  Reg,      ///< a register: a raw address from `addr`, or a pool handle in pool.ld/pool.st
};

/// base + index * scale + disp (bytes). `index` is a u64 register or kNoReg.
struct Address {
  AddrBase base = AddrBase::Param;
  uint16_t base_id = 0; ///< parameter index, class number or base register
  Reg index = kNoReg;
  uint32_t scale = 1;
  int64_t disp = 0;
  friend bool operator==(const Address &, const Address &) = default;
};

enum class OperandKind : uint8_t { None, Reg, Pred, Imm, Label, Param, Addr };

struct Operand {
  OperandKind kind = OperandKind::None;
  uint16_t index = 0; ///< register, predicate, label or parameter index
  uint64_t imm = 0;   ///< literal bits (zero-extended to 64 bits)
  Address addr;

  static Operand reg(Reg r) { return {OperandKind::Reg, r, 0, {}}; }
  static Operand pred(unsigned p) { return {OperandKind::Pred, static_cast<uint16_t>(p), 0, {}}; }
  static Operand imm_bits(uint64_t bits) { return {OperandKind::Imm, 0, bits, {}}; }
  static Operand label(unsigned l) { return {OperandKind::Label, static_cast<uint16_t>(l), 0, {}}; }
  static Operand param(unsigned p) { return {OperandKind::Param, static_cast<uint16_t>(p), 0, {}}; }
  static Operand none() { return {}; }
  static Operand address(const Address &a) { return {OperandKind::Addr, 0, 0, a}; }
  friend bool operator==(const Operand &, const Operand &) = default;
};

/// The optional predicate guard of `bra`: jump when p (or !p) holds.
struct Guard {
  bool present = false;
  bool negate = false;
  uint8_t pred = 0;
  friend bool operator==(const Guard &, const Guard &) = default;
};

struct Instruction {
  Opcode op = Opcode::Exit;
  Type type = Type::None;  ///< instruction type; for cvt the destination type
  Type type2 = Type::None; ///< for cvt the source type
  uint8_t sub = 0;         ///< sub-operation (CmpCode, FenceScope, AtomicOp, ...)
  Guard guard;
  std::vector<Operand> operands;
  SourceLoc loc;

  [[nodiscard]] const OpcodeInfo &info() const { return isa::info(op); }
  /// Structural equality; source locations are not compared.
  [[nodiscard]] bool same_as(const Instruction &o) const {
    return op == o.op && type == o.type && type2 == o.type2 && sub == o.sub && guard == o.guard &&
           operands == o.operands;
  }
};

/// The operand of `inst` that the instruction table calls `name` (whole-launch operations are
/// read by name, never by position); throws std::logic_error naming the instruction when its
/// row has no such operand.
const Operand &operand_named(const Instruction &inst, std::string_view name);

// ---------------------------------------------------------------------------------------------
// Kernels and modules

enum class ParamKind : uint8_t { Buffer, Pool, Scalar };
enum class Access : uint8_t { Read, Write, ReadWrite };

std::string_view access_name(Access a);

struct Param {
  std::string name; ///< without the leading %
  ParamKind kind = ParamKind::Scalar;
  Type type = Type::None; ///< element type of a buffer, type of a scalar; None for a pool
  Access access = Access::ReadWrite;
  SourceLoc loc;
  friend bool operator==(const Param &a, const Param &b) {
    return a.name == b.name && a.kind == b.kind && a.type == b.type && a.access == b.access;
  }
};

inline constexpr uint32_t kUndefinedLabel = 0xffffffff;

struct Label {
  std::string name;                  ///< without the leading @
  uint32_t target = kUndefinedLabel; ///< index of the instruction it names (may equal size)
  SourceLoc loc;                     ///< where it is defined (or first used, if undefined)
  friend bool operator==(const Label &a, const Label &b) {
    return a.name == b.name && a.target == b.target;
  }
};

struct Kernel {
  std::string name;
  std::vector<Param> params;
  std::vector<Label> labels;
  std::vector<Instruction> insts;
  uint32_t shared_bytes = 0; ///< static shared memory per block (`.shared N`), before the
                             ///< launch's dynamic shared memory
  SourceLoc loc;

  [[nodiscard]] std::optional<unsigned> find_param(std::string_view n) const;
  [[nodiscard]] std::optional<unsigned> find_label(std::string_view n) const;
  /// True when the kernel contains a whole-launch (higher-order or library) instruction.
  [[nodiscard]] bool is_launch_level() const;
  /// True when the kernel touches the Atlas state (Atlas instructions, class or boundary
  /// addresses), so launches of it must not run concurrently on one backend.
  [[nodiscard]] bool uses_atlas_state() const;
  /// Puts labels in canonical order (by target, then definition order; undefined last by
  /// name) and renumbers label operands. Parsers and builders call it, so structurally equal
  /// kernels compare equal and hash equal.
  void canonicalize_labels();
  [[nodiscard]] bool same_as(const Kernel &o) const;
};

struct Module {
  std::string source_name; ///< file the module came from (for diagnostics)
  std::vector<Kernel> kernels;

  [[nodiscard]] const Kernel *find_kernel(std::string_view name) const;
  [[nodiscard]] bool same_as(const Module &o) const;
};

/// An error that a stage after the verifier (a back end, a runtime planner) finds at `loc` in
/// `kernel`: a Status whose diagnostic points at the instruction in `source` (the module's
/// source_name; "" when the caller fills it in) and names the kernel in a note.
Status kernel_error(ErrorCode code, const std::string &source, const Kernel &kernel, SourceLoc loc,
                    std::string message);

} // namespace hologram::isa
