// The syntax tree of a JSON kernel (SPEC §5) after the shape of the document has been
// checked. Every node keeps its JSON Pointer and source position for diagnostics.
#pragma once

#include "hologram/isa/type.h"
#include "hologram/support/diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hologram::frontend::json {

using isa::Type; // Type::Pred stands for the JSON `bool` type

struct Node {
  std::string ptr; ///< JSON Pointer
  SourceLoc loc;
};

struct Expr : Node {
  enum class Kind { Var, Literal, Binary, Unary, Index, Call, Select, Cast };
  Kind kind = Kind::Literal;
  std::string name; ///< variable, operator or function name
  // Literals: integers keep sign and magnitude so that the whole u64 and i64 ranges fit.
  enum class Lit { Int, Float, Bool } lit = Lit::Int;
  bool negative = false;
  uint64_t magnitude = 0;
  double fvalue = 0;
  bool bvalue = false;
  std::optional<Type> dtype; ///< typed literal, or the target type of a cast
  std::vector<Expr> args;    ///< operands: binary [l, r], unary [x], index [array, index],
                             ///< call [args...], select [cond, a, b], cast [x]
};

struct Stmt : Node {
  enum class Kind {
    Let,
    Assign,
    If,
    For,
    While,
    Break,
    Continue,
    Return,
    Barrier,
    ExprStmt,
    Shared,
    Library
  };
  Kind kind = Kind::Return;
  std::string name; ///< let / for variable, shared array, library op
  std::optional<Expr> target, value, start, stop, step;
  std::vector<Stmt> body, else_body;
  Type element = Type::None; ///< shared array element type
  uint64_t length = 0;       ///< shared array length
  std::vector<std::pair<std::string, Expr>> lib_args;
  std::optional<std::string> result; ///< library op result variable
};

struct ParamDecl : Node {
  std::string name;
  bool array = false;
  Type type = Type::None; ///< scalar type or element type
};

struct KernelDecl : Node {
  std::string name;
  std::string version;
  std::vector<ParamDecl> params;
  std::vector<Stmt> body;
};

} // namespace hologram::frontend::json
