// The types of the JSON kernel language (SPEC §5.3) and the typing of its expressions, apart
// from emission: what a variable is, C's usual arithmetic conversions, which conversions may
// change a value, the built-in functions, and the type an expression has before any code for
// it is written (json_lowering.cpp emits with it).
#pragma once

#include "hologram/isa/opcode.h"
#include "hologram/isa/program.h"
#include "json_ast.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hologram::frontend::json {

/// A scalar variable, an array parameter or a shared array.
struct Var {
  enum class Kind { Scalar, Array, Shared } kind = Kind::Scalar;
  Type type = Type::None; ///< scalar type (Pred = bool) or element type
  isa::Reg reg = 0;       ///< scalar storage (a bool lives in a u32 register as 0 or 1)
  unsigned param = 0;     ///< array parameter index
  uint32_t offset = 0;    ///< shared array byte offset
  bool loaded = false, stored = false;
};

/// What the front end knows of an expression's type before emitting it.
struct TypeInfo {
  Type type = Type::None;
  bool literal = false; ///< an untyped literal: takes the type its context needs
  bool int_literal = false;
};

/// The storage type of a JSON type: bool arrays and variables are bytes / u32.
Type array_storage(Type t);
/// A type as JSON writes it ("bool" for Pred).
std::string type_text(Type t);
/// C's usual arithmetic conversions (no promotion of small integers).
Type unify(Type a, Type b);
/// Whether converting `from` to `to` can change the value (-Wconversion).
bool lossy(Type from, Type to);

/// Every built-in function name (for "did you mean" suggestions).
const std::vector<std::string> &builtin_names();

/// A math built-in and its instruction.
struct MathFn {
  const char *name;
  isa::Opcode op;
  unsigned arity;
};
/// The math built-ins (their `f`-suffixed f32 forms are the same functions).
const std::vector<MathFn> &math_functions();

/// The types of expressions over the variables declared so far.
class ExprTypes {
public:
  explicit ExprTypes(const std::map<std::string, Var> &vars) : vars_(vars) {}

  /// The type of `e`, or nullopt when it cannot have one (an unknown name, an operand
  /// without a type); emitting it then reports why.
  [[nodiscard]] std::optional<TypeInfo> infer(const Expr &e) const;
  /// The type both operands of an arithmetic or comparison operator are converted to; `ok`
  /// false when either has none.
  Type operand_type(const Expr &l, const Expr &r, bool &ok) const;
  /// Whether an integer literal fits `t` (floats always fit, with rounding).
  static bool literal_fits(const Expr &e, Type t);

private:
  const std::map<std::string, Var> &vars_;
};

} // namespace hologram::frontend::json
