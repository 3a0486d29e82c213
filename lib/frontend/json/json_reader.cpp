// JSON kernel reader: nlohmann-json DOM -> syntax trees, with precise shape diagnostics.
#include "json_reader.h"

#include <nlohmann/json.hpp>

#include <set>

namespace hologram::frontend::json {

namespace {

using nlohmann::json;

const std::vector<std::string> kStmtTypes = {"let",     "assign", "if",     "for",
                                             "return",  "while",  "break",  "continue",
                                             "barrier", "expr",   "shared", "library"};
const std::vector<std::string> kExprTypes = {"var",  "literal",  "binary_op", "index",
                                             "call", "unary_op", "select",    "cast"};
const std::set<std::string> kV11Stmts = {"while", "break",  "continue", "barrier",
                                         "expr",  "shared", "library"};
const std::set<std::string> kV11Exprs = {"unary_op", "select", "cast"};

std::string kind_of(const json &j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  if (j.is_object()) return "an object";
  if (j.is_number()) return "a number";
  return "nothing"; // a discarded value (a parser callback dropped it)
}

class Reader {
public:
  Reader(const std::string &file, const JsonLocator &loc, DiagnosticEngine &diags)
      : file_(file), loc_(loc), diags_(diags) {}

  std::optional<std::vector<KernelDecl>> run(const json &root);

private:
  // Reports at the value at `ptr` (or its key when `at_key`).
  void error(const std::string &ptr, std::string msg, std::vector<std::string> notes = {},
             bool at_key = false) {
    Diagnostic d;
    d.file = file_;
    d.loc = at_key ? loc_.key(ptr) : loc_.value(ptr);
    d.pointer = ptr.empty() ? "/" : ptr;
    d.message = std::move(msg);
    d.notes = std::move(notes);
    diags_.report(std::move(d));
    ok_ = false;
  }
  static std::string child(const std::string &ptr, const std::string &key) {
    return ptr + "/" + JsonLocator::escape(key);
  }
  static std::string child(const std::string &ptr, size_t i) {
    return ptr + "/" + std::to_string(i);
  }
  template <typename T> void locate(T &node, const std::string &ptr) {
    node.ptr = ptr;
    node.loc = loc_.value(ptr);
  }

  /// Checks that `j` is an object with exactly the allowed keys and the required ones.
  bool check_object(const json &j, const std::string &ptr, const std::string &what,
                    const std::vector<std::string> &required,
                    const std::vector<std::string> &optional) {
    if (!j.is_object()) {
      error(ptr, what + " must be an object, not " + kind_of(j));
      return false;
    }
    bool good = true;
    std::vector<std::string> known = required;
    known.insert(known.end(), optional.begin(), optional.end());
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
      auto near = closest_match(it.key(), known);
      error(child(ptr, it.key()), "unknown field '" + it.key() + "' in " + what,
            near.empty() ? std::vector<std::string>{}
                         : std::vector<std::string>{"did you mean '" + near + "'?"},
            true);
      good = false;
    }
    for (const auto &r : required)
      if (!j.contains(r)) {
        error(ptr, what + " is missing the field '" + r + "'");
        good = false;
      }
    return good;
  }

  bool get_string(const json &j, const std::string &ptr, const std::string &what,
                  std::string &out) {
    if (!j.is_string()) {
      error(ptr, what + " must be a string, not " + kind_of(j));
      return false;
    }
    out = j.get<std::string>();
    return true;
  }

  bool get_identifier(const json &j, const std::string &ptr, const std::string &what,
                      std::string &out) {
    if (!get_string(j, ptr, what, out)) return false;
    bool valid =
        !out.empty() && (std::isalpha(static_cast<unsigned char>(out[0])) || out[0] == '_');
    for (char c : out) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!valid) error(ptr, what + " '" + out + "' is not an identifier (letters, digits and '_')");
    return valid;
  }

  bool need_v11(const std::string &ptr, const std::string &construct) {
    if (version_ == "1.1") return true;
    error(ptr, construct + " needs \"version\": \"1.1\"",
          {"this document declares version " + version_});
    return false;
  }

  bool read_kernel(const json &schema, const std::string &ptr, KernelDecl &k);
  bool read_param(const json &j, const std::string &ptr, ParamDecl &p);
  bool read_scalar_type(const json &j, const std::string &ptr, Type &out);
  bool read_body(const json &j, const std::string &ptr, std::vector<Stmt> &out);
  bool read_stmt(const json &j, const std::string &ptr, Stmt &s);
  bool read_expr(const json &j, const std::string &ptr, Expr &e);

  /// Limits recursion on deeply nested (valid) documents.
  struct Nest {
    Reader &r;
    explicit Nest(Reader &x) : r(x) { ++r.depth_; }
    ~Nest() { --r.depth_; }
  };
  bool too_deep(const std::string &ptr) {
    if (depth_ <= kMaxDepth) return false;
    error(ptr, "the kernel nests statements and expressions more than " +
                   std::to_string(kMaxDepth) + " levels deep");
    return true;
  }
  static constexpr unsigned kMaxDepth = 200;

  const std::string &file_;
  const JsonLocator &loc_;
  DiagnosticEngine &diags_;
  std::string version_;
  unsigned depth_ = 0;
  bool ok_ = true;
};

std::optional<std::vector<KernelDecl>> Reader::run(const json &root) {
  std::vector<KernelDecl> kernels;
  if (root.is_array()) {
    if (root.empty())
      error("", "the document is an empty array; expected one or more kernel schemas");
    for (size_t i = 0; i < root.size(); ++i) {
      KernelDecl k;
      if (read_kernel(root[i], child("", i), k)) kernels.push_back(std::move(k));
    }
  } else {
    KernelDecl k;
    if (read_kernel(root, "", k)) kernels.push_back(std::move(k));
  }
  std::set<std::string> names;
  for (const auto &k : kernels)
    if (!names.insert(k.name).second)
      error(k.ptr + "/kernel/name", "kernel '" + k.name + "' is defined twice in this module");
  if (!ok_) return std::nullopt;
  return kernels;
}

bool Reader::read_kernel(const json &schema, const std::string &ptr, KernelDecl &k) {
  if (!check_object(schema, ptr, "a kernel schema", {"version", "kernel"}, {})) return false;
  if (!get_string(schema["version"], child(ptr, "version"), "'version'", version_)) return false;
  if (version_ != "1.0" && version_ != "1.1") {
    error(child(ptr, "version"),
          "unsupported version \"" + version_ + "\" (expected \"1.0\" or \"1.1\")");
    return false;
  }
  k.version = version_;
  std::string kp = child(ptr, "kernel");
  const json &kj = schema["kernel"];
  locate(k, kp);
  k.ptr = ptr;
  if (!check_object(kj, kp, "'kernel'", {"name", "params", "body"}, {})) return false;
  bool good = get_identifier(kj["name"], child(kp, "name"), "the kernel name", k.name);
  const json &params = kj["params"];
  if (!params.is_array()) {
    error(child(kp, "params"), "'params' must be an array, not " + kind_of(params));
    return false;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < params.size(); ++i) {
    ParamDecl p;
    std::string pp = child(child(kp, "params"), i);
    if (!read_param(params[i], pp, p)) {
      good = false;
      continue;
    }
    if (!seen.insert(p.name).second) {
      error(child(pp, "name"), "parameter '" + p.name + "' is declared twice");
      good = false;
    }
    k.params.push_back(std::move(p));
  }
  return read_body(kj["body"], child(kp, "body"), k.body) && good;
}

std::optional<Type> scalar_type_name(std::string_view n) {
  static const std::pair<const char *, Type> kTypes[] = {
      {"i8", Type::I8},   {"i16", Type::I16}, {"i32", Type::I32},   {"i64", Type::I64},
      {"u8", Type::U8},   {"u16", Type::U16}, {"u32", Type::U32},   {"u64", Type::U64},
      {"f32", Type::F32}, {"f64", Type::F64}, {"bool", Type::Pred}, {"usize", Type::U64}};
  for (auto [name, t] : kTypes)
    if (n == name) return t;
  return std::nullopt;
}

bool Reader::read_scalar_type(const json &j, const std::string &ptr, Type &out) {
  std::string name;
  if (j.is_object()) { // {"kind":"scalar","type":T}
    if (!check_object(j, ptr, "a scalar type", {"kind", "type"}, {})) return false;
    std::string kind;
    if (!get_string(j["kind"], child(ptr, "kind"), "'kind'", kind)) return false;
    if (kind != "scalar") {
      error(child(ptr, "kind"), "expected \"kind\": \"scalar\" here, got \"" + kind + "\"");
      return false;
    }
    return read_scalar_type(j["type"], child(ptr, "type"), out);
  }
  if (!get_string(j, ptr, "a scalar type", name)) return false;
  auto t = scalar_type_name(name);
  if (!t) {
    auto near = closest_match(name, {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32",
                                     "f64", "bool", "usize"});
    error(ptr, "unknown scalar type '" + name + "'",
          near.empty() ? std::vector<std::string>{}
                       : std::vector<std::string>{"did you mean '" + near + "'?"});
    return false;
  }
  out = *t;
  return true;
}

bool Reader::read_param(const json &j, const std::string &ptr, ParamDecl &p) {
  locate(p, ptr);
  if (!check_object(j, ptr, "a parameter", {"name", "type"}, {})) return false;
  if (!get_identifier(j["name"], child(ptr, "name"), "the parameter name", p.name)) return false;
  const json &t = j["type"];
  std::string tp = child(ptr, "type");
  if (!t.is_object() || !t.contains("kind")) {
    error(tp, "a parameter type must be an object with a 'kind'");
    return false;
  }
  std::string kind;
  if (!get_string(t["kind"], child(tp, "kind"), "'kind'", kind)) return false;
  if (kind == "scalar") return read_scalar_type(t, tp, p.type);
  if (kind == "device_array") {
    if (!check_object(t, tp, "a device_array type", {"kind", "element_type"}, {})) return false;
    p.array = true;
    return read_scalar_type(t["element_type"], child(tp, "element_type"), p.type);
  }
  auto near = closest_match(kind, {"scalar", "device_array"});
  error(child(tp, "kind"),
        "unknown parameter kind '" + kind + "' (expected scalar or device_array)",
        near.empty() ? std::vector<std::string>{}
                     : std::vector<std::string>{"did you mean '" + near + "'?"});
  return false;
}

bool Reader::read_body(const json &j, const std::string &ptr, std::vector<Stmt> &out) {
  if (j.is_null()) return true;
  if (!j.is_array()) {
    error(ptr, "a statement list must be an array, not " + kind_of(j));
    return false;
  }
  bool good = true;
  for (size_t i = 0; i < j.size(); ++i) {
    Stmt s;
    if (read_stmt(j[i], child(ptr, i), s))
      out.push_back(std::move(s));
    else
      good = false;
  }
  return good;
}

bool Reader::read_stmt(const json &j, const std::string &ptr, Stmt &s) {
  Nest nest(*this);
  if (too_deep(ptr)) return false;
  locate(s, ptr);
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    error(ptr, "a statement must be an object with a string 'type'");
    return false;
  }
  std::string type = j["type"].get<std::string>();
  auto field = [&](const char *k) { return child(ptr, k); };
  if (std::find(kStmtTypes.begin(), kStmtTypes.end(), type) == kStmtTypes.end()) {
    auto near = closest_match(type, kStmtTypes);
    bool is_expr = std::find(kExprTypes.begin(), kExprTypes.end(), type) != kExprTypes.end();
    std::vector<std::string> notes;
    if (!near.empty()) notes.push_back("did you mean '" + near + "'?");
    if (is_expr)
      notes.push_back(
          "an expression used as a statement is written {\"type\": \"expr\", \"value\": ...}");
    error(field("type"), "unknown statement type '" + type + "'", notes);
    return false;
  }
  if (kV11Stmts.count(type) && !need_v11(field("type"), "the '" + type + "' statement"))
    return false;
  auto expr_field = [&](const char *k, std::optional<Expr> &out) {
    out.emplace();
    return read_expr(j[k], field(k), *out);
  };
  if (type == "let") {
    s.kind = Stmt::Kind::Let;
    return check_object(j, ptr, "a 'let' statement", {"type", "name", "value"}, {}) &&
           get_identifier(j["name"], field("name"), "the variable name", s.name) &&
           expr_field("value", s.value);
  }
  if (type == "assign") {
    s.kind = Stmt::Kind::Assign;
    if (!check_object(j, ptr, "an 'assign' statement", {"type", "target", "value"}, {}))
      return false;
    if (!expr_field("target", s.target) || !expr_field("value", s.value)) return false;
    if (s.target->kind != Expr::Kind::Var && s.target->kind != Expr::Kind::Index) {
      error(field("target"), "an assignment target must be a 'var' or an 'index'");
      return false;
    }
    return true;
  }
  if (type == "if") {
    s.kind = Stmt::Kind::If;
    return check_object(j, ptr, "an 'if' statement", {"type", "condition", "then_body"},
                        {"else_body"}) &&
           expr_field("condition", s.value) &&
           read_body(j["then_body"], field("then_body"), s.body) &&
           (!j.contains("else_body") || read_body(j["else_body"], field("else_body"), s.else_body));
  }
  if (type == "for") {
    s.kind = Stmt::Kind::For;
    if (!check_object(j, ptr, "a 'for' statement", {"type", "var", "stop", "body"},
                      {"start", "step"}))
      return false;
    if (!get_identifier(j["var"], field("var"), "the loop variable", s.name)) return false;
    if (j.contains("start") && !expr_field("start", s.start)) return false;
    if (j.contains("step") && !expr_field("step", s.step)) return false;
    return expr_field("stop", s.stop) && read_body(j["body"], field("body"), s.body);
  }
  if (type == "while") {
    s.kind = Stmt::Kind::While;
    return check_object(j, ptr, "a 'while' statement", {"type", "condition", "body"}, {}) &&
           expr_field("condition", s.value) && read_body(j["body"], field("body"), s.body);
  }
  if (type == "return") {
    s.kind = Stmt::Kind::Return;
    if (!check_object(j, ptr, "a 'return' statement", {"type"}, {"value"})) return false;
    if (j.contains("value") && !j["value"].is_null()) {
      error(field("value"), "kernels return no value", {"write results to an array parameter"});
      return false;
    }
    return true;
  }
  if (type == "break" || type == "continue" || type == "barrier") {
    s.kind = type == "break"      ? Stmt::Kind::Break
             : type == "continue" ? Stmt::Kind::Continue
                                  : Stmt::Kind::Barrier;
    return check_object(j, ptr, "a '" + type + "' statement", {"type"}, {});
  }
  if (type == "expr") {
    s.kind = Stmt::Kind::ExprStmt;
    return check_object(j, ptr, "an 'expr' statement", {"type", "value"}, {}) &&
           expr_field("value", s.value);
  }
  if (type == "shared") {
    s.kind = Stmt::Kind::Shared;
    if (!check_object(j, ptr, "a 'shared' statement", {"type", "name", "element_type", "length"},
                      {}))
      return false;
    if (!get_identifier(j["name"], field("name"), "the shared array name", s.name)) return false;
    if (!read_scalar_type(j["element_type"], field("element_type"), s.element)) return false;
    if (!j["length"].is_number_unsigned() || j["length"].get<uint64_t>() == 0 ||
        j["length"].get<uint64_t>() > (uint64_t{1} << 24)) {
      error(field("length"), "'length' must be a positive integer constant (at most 16777216)");
      return false;
    }
    s.length = j["length"].get<uint64_t>();
    return true;
  }
  // library
  s.kind = Stmt::Kind::Library;
  if (!check_object(j, ptr, "a 'library' statement", {"type", "op", "args"}, {"result"}))
    return false;
  if (!get_identifier(j["op"], field("op"), "the library op", s.name)) return false;
  if (j.contains("result")) {
    std::string r;
    if (!get_identifier(j["result"], field("result"), "the result variable", r)) return false;
    s.result = r;
  }
  const json &args = j["args"];
  if (!args.is_object()) {
    error(field("args"), "'args' must be an object mapping operand names to values");
    return false;
  }
  bool good = true;
  for (auto it = args.begin(); it != args.end(); ++it) {
    std::string ap = child(field("args"), it.key());
    Expr e;
    if (it.value().is_string()) { // an array (or variable) by name
      e.kind = Expr::Kind::Var;
      e.name = it.value().get<std::string>();
      locate(e, ap);
    } else if (!read_expr(it.value(), ap, e)) {
      good = false;
      continue;
    }
    s.lib_args.emplace_back(it.key(), std::move(e));
  }
  return good;
}

bool Reader::read_expr(const json &j, const std::string &ptr, Expr &e) {
  Nest nest(*this);
  if (too_deep(ptr)) return false;
  locate(e, ptr);
  auto field = [&](const char *k) { return child(ptr, k); };
  if (j.is_number() || j.is_boolean()) { // shorthand for a literal (library arguments)
    if (j.is_boolean()) {
      e.lit = Expr::Lit::Bool;
      e.bvalue = j.get<bool>();
    } else if (j.is_number_float()) {
      e.lit = Expr::Lit::Float;
      e.fvalue = j.get<double>();
    } else if (j.is_number_unsigned()) {
      e.magnitude = j.get<uint64_t>();
    } else {
      int64_t v = j.get<int64_t>();
      e.negative = v < 0;
      e.magnitude = e.negative ? ~static_cast<uint64_t>(v) + 1 : static_cast<uint64_t>(v);
    }
    e.kind = Expr::Kind::Literal;
    return true;
  }
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    error(ptr, "an expression must be an object with a string 'type', not " + kind_of(j));
    return false;
  }
  std::string type = j["type"].get<std::string>();
  if (std::find(kExprTypes.begin(), kExprTypes.end(), type) == kExprTypes.end()) {
    auto near = closest_match(type, kExprTypes);
    error(field("type"), "unknown expression type '" + type + "'",
          near.empty() ? std::vector<std::string>{}
                       : std::vector<std::string>{"did you mean '" + near + "'?"});
    return false;
  }
  if (kV11Exprs.count(type) && !need_v11(field("type"), "the '" + type + "' expression"))
    return false;
  auto sub = [&](const char *k) {
    e.args.emplace_back();
    return read_expr(j[k], field(k), e.args.back());
  };
  if (type == "var") {
    e.kind = Expr::Kind::Var;
    return check_object(j, ptr, "a 'var' expression", {"type", "name"}, {}) &&
           get_identifier(j["name"], field("name"), "the variable name", e.name);
  }
  if (type == "literal") {
    e.kind = Expr::Kind::Literal;
    if (!check_object(j, ptr, "a 'literal'", {"type", "value"}, {"dtype"})) return false;
    if (j.contains("dtype")) {
      if (!need_v11(field("dtype"), "a typed literal")) return false;
      Type t;
      if (!read_scalar_type(j["dtype"], field("dtype"), t)) return false;
      e.dtype = t;
    }
    const json &v = j["value"];
    if (v.is_boolean()) {
      e.lit = Expr::Lit::Bool;
      e.bvalue = v.get<bool>();
    } else if (v.is_number_float()) {
      e.lit = Expr::Lit::Float;
      e.fvalue = v.get<double>();
    } else if (v.is_number_unsigned()) {
      e.magnitude = v.get<uint64_t>();
    } else if (v.is_number_integer()) {
      int64_t x = v.get<int64_t>();
      e.negative = x < 0;
      e.magnitude = e.negative ? ~static_cast<uint64_t>(x) + 1 : static_cast<uint64_t>(x);
    } else {
      error(field("value"), "a literal's value must be a number or a boolean, not " + kind_of(v));
      return false;
    }
    return true;
  }
  if (type == "binary_op") {
    e.kind = Expr::Kind::Binary;
    return check_object(j, ptr, "a 'binary_op'", {"type", "op", "left", "right"}, {}) &&
           get_string(j["op"], field("op"), "'op'", e.name) && sub("left") && sub("right");
  }
  if (type == "unary_op") {
    e.kind = Expr::Kind::Unary;
    return check_object(j, ptr, "a 'unary_op'", {"type", "op", "operand"}, {}) &&
           get_string(j["op"], field("op"), "'op'", e.name) && sub("operand");
  }
  if (type == "index") {
    e.kind = Expr::Kind::Index;
    if (!check_object(j, ptr, "an 'index' expression", {"type", "array", "index"}, {}))
      return false;
    if (!sub("array") || !sub("index")) return false;
    if (e.args[0].kind != Expr::Kind::Var) {
      error(field("array"), "only a named array can be indexed");
      return false;
    }
    return true;
  }
  if (type == "call") {
    e.kind = Expr::Kind::Call;
    if (!check_object(j, ptr, "a 'call'", {"type", "function", "args"}, {})) return false;
    if (!get_identifier(j["function"], field("function"), "the function name", e.name))
      return false;
    const json &a = j["args"];
    if (!a.is_array()) {
      error(field("args"), "'args' must be an array, not " + kind_of(a));
      return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
      e.args.emplace_back();
      if (!read_expr(a[i], child(field("args"), i), e.args.back())) return false;
    }
    return true;
  }
  if (type == "select") {
    e.kind = Expr::Kind::Select;
    return check_object(j, ptr, "a 'select'", {"type", "condition", "if_true", "if_false"}, {}) &&
           sub("condition") && sub("if_true") && sub("if_false");
  }
  // cast
  e.kind = Expr::Kind::Cast;
  if (!check_object(j, ptr, "a 'cast'", {"type", "dtype", "value"}, {})) return false;
  Type t;
  if (!read_scalar_type(j["dtype"], field("dtype"), t)) return false;
  e.dtype = t;
  return sub("value");
}

} // namespace

std::optional<Type> parse_scalar_type(std::string_view name) {
  return scalar_type_name(name);
}

std::optional<std::vector<KernelDecl>> read_document(std::string_view text, const std::string &file,
                                                     const JsonLocator &locator,
                                                     DiagnosticEngine &diags) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error &e) {
    Diagnostic d;
    d.file = file;
    d.loc = locator.at_offset(e.byte > 0 ? e.byte - 1 : 0);
    std::string what = e.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 5: ..."
    auto colon = what.find(": ", what.find("column"));
    d.message = "malformed JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2));
    diags.report(std::move(d));
    return std::nullopt;
  } catch (const json::exception &e) {
    // Other failures while parsing (a number that overflows, ...) carry no byte position.
    std::string what = e.what();
    auto bracket = what.find("] ");
    diags.error(file, {},
                "malformed JSON: " +
                    (bracket == std::string::npos ? what : what.substr(bracket + 2)));
    return std::nullopt;
  }
  Reader r(file, locator, diags);
  return r.run(root);
}

} // namespace hologram::frontend::json
