// The parser of the .hasm text format: a line-oriented lexer and a table-driven instruction
// parser. Syntax errors carry file:line:col; typing rules are left to the verifier.
#include "hologram/isa/atlas.h"
#include "hologram/isa/builder.h"
#include "hologram/isa/numeric.h"
#include "hologram/isa/text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace hologram::isa {

namespace {

enum class Tok { Ident, Percent, At, Number, Punct, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;
  uint32_t col = 0;
};

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

/// Splits one line (comment already removed) into tokens.
bool lex_line(std::string_view line, uint32_t lineno, std::vector<Token> &out, std::string &err,
              uint32_t &err_col) {
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    auto col = static_cast<uint32_t>(i + 1);
    size_t start = i;
    auto next_is_digit = [&](size_t j) {
      return j < line.size() &&
             (std::isdigit(static_cast<unsigned char>(line[j])) || line[j] == '.');
    };
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '-' && next_is_digit(i + 1))) {
      ++i;
      bool hexnum = line.substr(start).starts_with("0x") || line.substr(start).starts_with("-0x");
      while (i < line.size()) {
        char d = line[i];
        if (ident_char(d)) {
          ++i;
        } else if (!hexnum && (d == '+' || d == '-') &&
                   (line[i - 1] == 'e' || line[i - 1] == 'E')) {
          ++i;
        } else {
          break;
        }
      }
      out.push_back({Tok::Number, std::string(line.substr(start, i - start)), col});
    } else if (c == '%' || c == '@') {
      ++i;
      while (i < line.size() && ident_char(line[i])) ++i;
      std::string text(line.substr(start, i - start));
      if (text == "%pool" && i < line.size() && line[i] == ':') {
        ++i;
        while (i < line.size() && ident_char(line[i])) ++i;
        text = std::string(line.substr(start, i - start));
      }
      if (text.size() == 1) {
        err = std::string("expected a name after '") + c + "'";
        err_col = col;
        return false;
      }
      out.push_back({c == '%' ? Tok::Percent : Tok::At, text, col});
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
      while (i < line.size() && ident_char(line[i])) ++i;
      out.push_back({Tok::Ident, std::string(line.substr(start, i - start)), col});
    } else if (std::string_view("[]+-*,:!<>").find(c) != std::string_view::npos) {
      out.push_back({Tok::Punct, std::string(1, c), col});
      ++i;
    } else {
      err = "unexpected " + describe_char(c);
      err_col = col;
      return false;
    }
  }
  (void)lineno;
  return true;
}

std::optional<uint64_t> parse_uint(std::string_view s) {
  uint64_t v = 0;
  int base = 10;
  if (s.starts_with("0x") || s.starts_with("0X")) {
    s.remove_prefix(2);
    base = 16;
  }
  if (s.empty()) return std::nullopt;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

/// Syntactic operand shapes, matched against signature roles.
enum class Shape { Reg, Pred, Imm, Label, Param, None, Addr };

struct RawOperand {
  Shape shape;
  Operand op;
  std::string text; // literal text (for typed literals), label or param name
  uint32_t col;
};

bool role_accepts(OperandRole role, Shape s) {
  switch (role) {
  case OperandRole::DstT:
  case OperandRole::SrcT:
  case OperandRole::DstU32:
  case OperandRole::SrcU32:
  case OperandRole::DstU64:
  case OperandRole::SrcU64:
  case OperandRole::SrcF64:
  case OperandRole::LoopCounter:
  case OperandRole::RegWindow:
  case OperandRole::CvtDst:
  case OperandRole::CvtSrc: return s == Shape::Reg;
  case OperandRole::DstPred:
  case OperandRole::SrcPred: return s == Shape::Pred;
  case OperandRole::LiteralT:
  case OperandRole::Count: return s == Shape::Imm;
  case OperandRole::Label: return s == Shape::Label;
  case OperandRole::ScalarParam:
  case OperandRole::BufferParam:
  case OperandRole::MemParam: return s == Shape::Param;
  case OperandRole::OptBufferParam: return s == Shape::Param || s == Shape::None;
  case OperandRole::Address: return s == Shape::Addr;
  }
  return false;
}

std::string_view role_description(OperandRole role) {
  switch (role) {
  case OperandRole::DstT: return "destination register";
  case OperandRole::SrcT: return "source register";
  case OperandRole::DstPred: return "destination predicate";
  case OperandRole::SrcPred: return "source predicate";
  case OperandRole::DstU32: return "u32 destination register";
  case OperandRole::SrcU32: return "u32 source register";
  case OperandRole::DstU64: return "u64 destination register";
  case OperandRole::SrcU64: return "u64 source register";
  case OperandRole::SrcF64: return "f64 source register";
  case OperandRole::LiteralT: return "literal";
  case OperandRole::Count: return "integer literal";
  case OperandRole::Label: return "label";
  case OperandRole::ScalarParam: return "scalar parameter";
  case OperandRole::BufferParam: return "buffer parameter";
  case OperandRole::OptBufferParam: return "buffer parameter or none";
  case OperandRole::MemParam: return "buffer or pool parameter";
  case OperandRole::Address: return "address";
  case OperandRole::LoopCounter: return "u32 counter register";
  case OperandRole::RegWindow: return "first register of a window";
  case OperandRole::CvtDst: return "destination register";
  case OperandRole::CvtSrc: return "source register";
  }
  return "operand";
}

std::string signature_text(const OpcodeInfo &row) {
  std::string s;
  for (size_t i = 0; i < row.num_operands(); ++i) {
    if (i) s += ", ";
    s += role_description(row.role(i));
  }
  return s.empty() ? "no operands" : s;
}

class Parser {
public:
  Parser(std::string_view text, const std::string &file, DiagnosticEngine &diags)
      : text_(text), file_(file), diags_(diags) {
    for (const auto &row : opcode_table()) mnemonics_.insert(std::string(row.mnemonic));
  }

  std::optional<Module> run();

private:
  void error(uint32_t line, uint32_t col, std::string msg, std::vector<std::string> notes = {}) {
    diags_.error(file_, {line, col}, std::move(msg), std::move(notes));
    ok_ = false;
  }
  void parse_line(uint32_t lineno, std::vector<Token> &toks);
  void parse_kernel_directive(uint32_t lineno, const std::vector<Token> &toks);
  void parse_param_directive(uint32_t lineno, const std::vector<Token> &toks);
  void parse_shared_directive(uint32_t lineno, const std::vector<Token> &toks);
  void parse_instruction(uint32_t lineno, const std::vector<Token> &toks, size_t pos);
  bool parse_operand(uint32_t lineno, const std::vector<Token> &toks, size_t &pos, RawOperand &out);
  bool parse_address(uint32_t lineno, const std::vector<Token> &toks, size_t &pos, Address &a);
  std::optional<Reg> parse_register(uint32_t lineno, const Token &t);
  unsigned label_ref(const std::string &name, SourceLoc loc);
  void finish_kernel();

  std::string_view text_;
  const std::string &file_;
  DiagnosticEngine &diags_;
  std::set<std::string> mnemonics_;
  Module module_;
  Kernel *kernel_ = nullptr;
  std::set<std::string> defined_labels_;
  bool ok_ = true;
};

std::optional<Module> Parser::run() {
  module_.source_name = file_;
  uint32_t lineno = 0;
  size_t pos = 0;
  while (pos <= text_.size()) {
    size_t nl = text_.find('\n', pos);
    if (nl == std::string_view::npos) nl = text_.size();
    std::string_view line = text_.substr(pos, nl - pos);
    ++lineno;
    pos = nl + 1;
    if (auto semi = line.find(';'); semi != std::string_view::npos) line = line.substr(0, semi);
    std::vector<Token> toks;
    std::string err;
    uint32_t err_col = 0;
    if (!lex_line(line, lineno, toks, err, err_col)) {
      error(lineno, err_col, err);
      continue;
    }
    if (!toks.empty()) parse_line(lineno, toks);
    if (nl == text_.size()) break;
  }
  finish_kernel();
  if (!ok_) return std::nullopt;
  return std::move(module_);
}

void Parser::finish_kernel() {
  if (!kernel_) return;
  kernel_->canonicalize_labels();
}

void Parser::parse_line(uint32_t lineno, std::vector<Token> &toks) {
  const Token &first = toks[0];
  if (first.kind == Tok::Ident && first.text == ".kernel")
    return parse_kernel_directive(lineno, toks);
  if (first.kind == Tok::Ident && first.text == ".param")
    return parse_param_directive(lineno, toks);
  if (first.kind == Tok::Ident && first.text == ".shared")
    return parse_shared_directive(lineno, toks);
  if (first.kind == Tok::Ident && first.text.starts_with('.')) {
    auto near = closest_match(first.text, {".kernel", ".param", ".shared"});
    error(lineno, first.col, "unknown directive '" + first.text + "'",
          near.empty() ? std::vector<std::string>{}
                       : std::vector<std::string>{"did you mean '" + near + "'?"});
    return;
  }
  if (!kernel_) {
    error(lineno, first.col, "expected '.kernel NAME' before the first instruction or label");
    return;
  }
  size_t pos = 0;
  if (first.kind == Tok::At && toks.size() >= 2 && toks[1].kind == Tok::Punct &&
      toks[1].text == ":") {
    std::string name = first.text.substr(1);
    if (defined_labels_.count(name)) {
      auto prev = kernel_->labels[*kernel_->find_label(name)].loc;
      error(lineno, first.col, "label '@" + name + "' is defined twice",
            {"first defined at line " + std::to_string(prev.line)});
    } else {
      unsigned l = label_ref(name, {lineno, first.col});
      kernel_->labels[l].target = static_cast<uint32_t>(kernel_->insts.size());
      kernel_->labels[l].loc = {lineno, first.col};
      defined_labels_.insert(name);
    }
    pos = 2;
  }
  if (pos < toks.size()) parse_instruction(lineno, toks, pos);
}

void Parser::parse_kernel_directive(uint32_t lineno, const std::vector<Token> &toks) {
  if (toks.size() != 2 || toks[1].kind != Tok::Ident ||
      toks[1].text.find('.') != std::string::npos) {
    error(lineno, toks[0].col, "expected '.kernel NAME'");
    return;
  }
  finish_kernel();
  if (module_.find_kernel(toks[1].text)) {
    error(lineno, toks[1].col, "kernel '" + toks[1].text + "' is defined twice");
  }
  module_.kernels.emplace_back();
  kernel_ = &module_.kernels.back();
  kernel_->name = toks[1].text;
  kernel_->loc = {lineno, toks[0].col};
  defined_labels_.clear();
}

void Parser::parse_param_directive(uint32_t lineno, const std::vector<Token> &toks) {
  if (!kernel_) {
    error(lineno, toks[0].col, "'.param' outside a kernel");
    return;
  }
  if (!kernel_->insts.empty()) {
    error(lineno, toks[0].col, "'.param' must come before the first instruction");
    return;
  }
  if (toks.size() < 4 || toks[1].kind != Tok::Percent || toks[2].text != ":") {
    error(lineno, toks[0].col, "expected '.param %NAME : TYPE'");
    return;
  }
  Param p;
  p.name = toks[1].text.substr(1);
  p.loc = {lineno, toks[1].col};
  if (parse_special(toks[1].text) || p.name.starts_with("pool:")) {
    error(lineno, toks[1].col, "'" + toks[1].text + "' is a reserved name");
    return;
  }
  if (kernel_->find_param(p.name)) {
    error(lineno, toks[1].col, "parameter '%" + p.name + "' is declared twice");
    return;
  }
  size_t i = 3;
  const Token &t = toks[i];
  if (t.text == "buffer") {
    if (toks.size() < i + 4 || toks[i + 1].text != "<" || toks[i + 3].text != ">") {
      error(lineno, t.col, "expected 'buffer<TYPE>'");
      return;
    }
    auto ty = parse_type(toks[i + 2].text);
    if (!ty || *ty == Type::Pred) {
      error(lineno, toks[i + 2].col, "unknown element type '" + toks[i + 2].text + "'");
      return;
    }
    p.kind = ParamKind::Buffer;
    p.type = *ty;
    p.access = Access::ReadWrite;
    i += 4;
    if (i < toks.size()) {
      const auto &a = toks[i].text;
      if (a == "read")
        p.access = Access::Read;
      else if (a == "write")
        p.access = Access::Write;
      else if (a == "readwrite")
        p.access = Access::ReadWrite;
      else {
        error(lineno, toks[i].col,
              "unknown access '" + a + "' (expected read, write or readwrite)");
        return;
      }
      ++i;
    }
  } else if (t.text == "pool") {
    p.kind = ParamKind::Pool;
    ++i;
  } else if (auto ty = parse_type(t.text); ty && *ty != Type::Pred) {
    p.kind = ParamKind::Scalar;
    p.type = *ty;
    p.access = Access::Read;
    ++i;
  } else {
    error(lineno, t.col,
          "unknown parameter type '" + t.text + "' (expected buffer<T>, pool or a scalar type)");
    return;
  }
  if (i < toks.size()) {
    error(lineno, toks[i].col, "unexpected '" + toks[i].text + "' after the parameter type");
    return;
  }
  kernel_->params.push_back(std::move(p));
}

void Parser::parse_shared_directive(uint32_t lineno, const std::vector<Token> &toks) {
  if (!kernel_) {
    error(lineno, toks[0].col, "'.shared' outside a kernel");
    return;
  }
  auto v = toks.size() == 2 ? parse_uint(toks[1].text) : std::nullopt;
  if (!v || *v > (uint64_t{1} << 30)) {
    error(lineno, toks[0].col, "expected '.shared BYTES' (at most 1 GiB)");
    return;
  }
  kernel_->shared_bytes = static_cast<uint32_t>(*v);
}

unsigned Parser::label_ref(const std::string &name, SourceLoc loc) {
  if (auto l = kernel_->find_label(name)) return *l;
  kernel_->labels.push_back({name, kUndefinedLabel, loc});
  return static_cast<unsigned>(kernel_->labels.size() - 1);
}

std::optional<Reg> Parser::parse_register(uint32_t lineno, const Token &t) {
  auto v = parse_uint(std::string_view(t.text).substr(1));
  if (!v || t.text.size() < 2 || !std::isdigit(static_cast<unsigned char>(t.text[1])))
    return std::nullopt;
  if (*v >= kNumGeneralRegs) {
    error(lineno, t.col, "register '" + t.text + "' is out of range (r0..r255)");
    return kNoReg;
  }
  return static_cast<Reg>(*v);
}

bool is_reg_token(const Token &t) {
  return t.kind == Tok::Ident && t.text.size() >= 2 && t.text[0] == 'r' &&
         std::all_of(t.text.begin() + 1, t.text.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}
bool is_pred_token(const Token &t) {
  return t.kind == Tok::Ident && t.text.size() >= 2 && t.text[0] == 'p' &&
         std::all_of(t.text.begin() + 1, t.text.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool Parser::parse_address(uint32_t lineno, const std::vector<Token> &toks, size_t &pos,
                           Address &a) {
  const Token &open = toks[pos++];
  auto at_end = [&] { return pos >= toks.size(); };
  if (at_end()) {
    error(lineno, open.col, "unterminated address");
    return false;
  }
  const Token &b = toks[pos];
  if (b.kind == Tok::Percent) {
    std::string name = b.text.substr(1);
    bool pool_syntax = name.starts_with("pool:");
    if (pool_syntax) name = name.substr(5);
    auto p = kernel_->find_param(name);
    if (!p) {
      std::vector<std::string> names;
      for (const auto &q : kernel_->params) names.push_back(q.name);
      auto near = closest_match(name, names);
      error(lineno, b.col, "unknown parameter '%" + name + "'",
            near.empty() ? std::vector<std::string>{}
                         : std::vector<std::string>{"did you mean '%" + near + "'?"});
      return false;
    }
    a.base = kernel_->params[*p].kind == ParamKind::Pool ? AddrBase::Pool : AddrBase::Param;
    if (pool_syntax && a.base != AddrBase::Pool) {
      error(lineno, b.col, "'%pool:" + name + "' names a parameter that is not a pool");
      return false;
    }
    a.base_id = static_cast<uint16_t>(*p);
    ++pos;
  } else if (b.kind == Tok::Ident && b.text == "shared") {
    a.base = AddrBase::Shared;
    ++pos;
  } else if (b.kind == Tok::Ident && b.text == "class") {
    ++pos;
    auto v = at_end() ? std::nullopt : parse_uint(toks[pos].text);
    if (!v || *v >= atlas::kNumClasses) {
      error(lineno, at_end() ? b.col : toks[pos].col,
            "expected a class number 0..95 after 'class'");
      return false;
    }
    a.base = AddrBase::Class;
    a.base_id = static_cast<uint16_t>(*v);
    ++pos;
  } else if (b.kind == Tok::Ident && b.text == "phi") {
    ++pos;
    uint64_t cpb[3];
    const uint64_t limits[3] = {atlas::kNumClasses, atlas::kPagesPerClass, atlas::kBytesPerPage};
    const char *what[3] = {"class 0..95", "page 0..47", "byte 0..255"};
    for (int k = 0; k < 3; ++k) {
      if (k && (at_end() || toks[pos].text != ",")) {
        error(lineno, at_end() ? b.col : toks[pos].col, "expected 'phi CLASS,PAGE,BYTE'");
        return false;
      }
      if (k) ++pos;
      auto v = at_end() ? std::nullopt : parse_uint(toks[pos].text);
      if (!v || *v >= limits[k]) {
        error(lineno, at_end() ? b.col : toks[pos].col,
              std::string("expected a ") + what[k] + " in the phi coordinate");
        return false;
      }
      cpb[k] = *v;
      ++pos;
    }
    a.base = AddrBase::Boundary;
    a.disp = static_cast<int64_t>(atlas::bound_map(static_cast<uint32_t>(cpb[0]),
                                                   static_cast<uint32_t>(cpb[1]),
                                                   static_cast<uint32_t>(cpb[2])));
  } else if (is_reg_token(b) || b.kind == Tok::Percent) {
    auto r = parse_register(lineno, b);
    if (!r || *r == kNoReg) return false;
    a.base = AddrBase::Reg;
    a.base_id = *r;
    ++pos;
  } else {
    error(
        lineno, b.col,
        "expected an address base (%param, %pool:NAME, shared, class N, phi C,P,B or a register)");
    return false;
  }
  // Terms: + reg[*scale] | + int | - int
  while (!at_end() && toks[pos].text != "]") {
    const Token &sign = toks[pos];
    bool minus = false;
    if (sign.kind == Tok::Punct && (sign.text == "+" || sign.text == "-")) {
      minus = sign.text == "-";
      ++pos;
    } else if (!(sign.kind == Tok::Number && sign.text.starts_with('-'))) {
      error(lineno, sign.col, "expected '+', '-' or ']' in the address");
      return false;
    }
    if (at_end()) break;
    const Token &t = toks[pos];
    Reg r = kNoReg;
    if (is_reg_token(t)) {
      auto pr = parse_register(lineno, t);
      if (!pr || *pr == kNoReg) return false;
      r = *pr;
    } else if (t.kind == Tok::Percent) {
      auto s = parse_special(t.text);
      if (!s) {
        error(lineno, t.col,
              "'" + t.text + "' cannot be an address index (use a register or a special register)");
        return false;
      }
      r = special_reg(*s);
    }
    if (r != kNoReg) {
      if (minus) {
        error(lineno, sign.col, "an index register cannot be subtracted");
        return false;
      }
      if (a.index != kNoReg || a.base == AddrBase::Boundary) {
        error(lineno, t.col, "an address takes at most one index register");
        return false;
      }
      a.index = r;
      ++pos;
      if (!at_end() && toks[pos].text == "*") {
        ++pos;
        auto s = at_end() ? std::nullopt : parse_uint(toks[pos].text);
        if (!s || *s == 0 || *s > 8) {
          error(lineno, at_end() ? t.col : toks[pos].col,
                "expected a scale of 1, 2, 4 or 8 after '*'");
          return false;
        }
        a.scale = static_cast<uint32_t>(*s);
        ++pos;
      }
      continue;
    }
    if (t.kind == Tok::Number) {
      std::string_view txt = t.text;
      bool neg = txt.starts_with('-');
      if (neg) txt.remove_prefix(1);
      auto v = parse_uint(txt);
      if (!v || *v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        error(lineno, t.col, "expected an integer displacement, got '" + t.text + "'");
        return false;
      }
      if (a.base == AddrBase::Boundary) {
        error(lineno, t.col, "a phi coordinate takes no displacement");
        return false;
      }
      auto d = static_cast<int64_t>(*v);
      a.disp += (neg != minus) ? -d : d;
      ++pos;
      continue;
    }
    error(lineno, t.col, "expected a register or an integer in the address, got '" + t.text + "'");
    return false;
  }
  if (at_end()) {
    error(lineno, open.col, "missing ']' at the end of the address");
    return false;
  }
  ++pos; // ]
  return true;
}

bool Parser::parse_operand(uint32_t lineno, const std::vector<Token> &toks, size_t &pos,
                           RawOperand &out) {
  const Token &t = toks[pos];
  out.col = t.col;
  out.text = t.text;
  if (t.kind == Tok::Punct && t.text == "[") {
    Address a;
    if (!parse_address(lineno, toks, pos, a)) return false;
    out.shape = Shape::Addr;
    out.op = Operand::address(a);
    return true;
  }
  ++pos;
  if (is_reg_token(t)) {
    auto r = parse_register(lineno, t);
    if (!r || *r == kNoReg) return false;
    out.shape = Shape::Reg;
    out.op = Operand::reg(*r);
    return true;
  }
  if (is_pred_token(t)) {
    auto v = parse_uint(std::string_view(t.text).substr(1));
    if (!v || *v >= kNumPreds) {
      error(lineno, t.col, "predicate '" + t.text + "' is out of range (p0..p15)");
      return false;
    }
    out.shape = Shape::Pred;
    out.op = Operand::pred(static_cast<unsigned>(*v));
    return true;
  }
  if (t.kind == Tok::Percent) {
    if (auto s = parse_special(t.text)) {
      out.shape = Shape::Reg;
      out.op = Operand::reg(special_reg(*s));
      return true;
    }
    std::string name = t.text.substr(1);
    auto p = kernel_->find_param(name);
    if (!p) {
      std::vector<std::string> names;
      for (const auto &q : kernel_->params) names.push_back("%" + q.name);
      for (unsigned i = 0; i < kNumSpecials; ++i)
        names.emplace_back(special_name(static_cast<Special>(i)));
      auto near = closest_match(t.text, names);
      error(lineno, t.col, "unknown parameter or special register '" + t.text + "'",
            near.empty() ? std::vector<std::string>{}
                         : std::vector<std::string>{"did you mean '" + near + "'?"});
      return false;
    }
    out.shape = Shape::Param;
    out.op = Operand::param(*p);
    return true;
  }
  if (t.kind == Tok::At) {
    out.shape = Shape::Label;
    out.op = Operand::label(label_ref(t.text.substr(1), {lineno, t.col}));
    return true;
  }
  if (t.kind == Tok::Ident && t.text == "none") {
    out.shape = Shape::None;
    out.op = Operand::none();
    return true;
  }
  if (t.kind == Tok::Number || (t.kind == Tok::Ident && (t.text == "inf" || t.text == "nan"))) {
    out.shape = Shape::Imm;
    out.op = Operand::imm_bits(0);
    return true;
  }
  if (t.kind == Tok::Punct && t.text == "-" && pos < toks.size() && toks[pos].text == "inf") {
    ++pos;
    out.shape = Shape::Imm;
    out.text = "-inf";
    out.op = Operand::imm_bits(0);
    return true;
  }
  error(lineno, t.col, "unexpected '" + t.text + "' where an operand was expected");
  return false;
}

void Parser::parse_instruction(uint32_t lineno, const std::vector<Token> &toks, size_t pos) {
  const Token &mt = toks[pos++];
  if (mt.kind != Tok::Ident) {
    error(lineno, mt.col, "expected an instruction mnemonic, got '" + mt.text + "'");
    return;
  }
  // Split the mnemonic into its base, sub-operation and type suffixes.
  std::vector<std::string> comps;
  {
    size_t s = 0;
    while (true) {
      size_t d = mt.text.find('.', s);
      comps.push_back(mt.text.substr(s, d == std::string::npos ? std::string::npos : d - s));
      if (d == std::string::npos) break;
      s = d + 1;
    }
  }
  std::string base;
  size_t used = 0;
  std::optional<uint8_t> glued_cmp;
  if (comps.size() >= 2 && mnemonics_.count(comps[0] + "." + comps[1])) {
    base = comps[0] + "." + comps[1];
    used = 2;
  } else if (mnemonics_.count(comps[0])) {
    base = comps[0];
    used = 1;
  } else if (comps[0].starts_with("set") &&
             (glued_cmp = parse_sub(SubKind::Cmp, comps[0].substr(3)))) {
    base = "set";
    used = 1;
  } else {
    std::vector<std::string> all(mnemonics_.begin(), mnemonics_.end());
    auto near = closest_match(comps[0], all);
    error(lineno, mt.col, "unknown instruction '" + mt.text + "'",
          near.empty() ? std::vector<std::string>{}
                       : std::vector<std::string>{"did you mean '" + near + "'?"});
    return;
  }
  std::vector<const OpcodeInfo *> candidates;
  for (const auto &row : opcode_table())
    if (row.mnemonic == base) candidates.push_back(&row);
  const OpcodeInfo &first = *candidates[0];

  Instruction inst;
  inst.loc = {lineno, mt.col};
  if (first.sub == SubKind::Cmp) {
    if (!glued_cmp) {
      error(lineno, mt.col,
            "'set' needs a comparison: seteq, setne, setlt, setle, setgt, setge or an unordered "
            "form (setltu, ...)");
      return;
    }
    inst.sub = *glued_cmp;
  } else if (first.sub != SubKind::None) {
    if (used >= comps.size()) {
      error(lineno, mt.col,
            "'" + base + "' needs a sub-operation, e.g. '" + base + "." +
                std::string(sub_name(first.sub, 0)) + "'");
      return;
    }
    auto sub = parse_sub(first.sub, comps[used]);
    if (!sub) {
      std::vector<std::string> names;
      for (unsigned i = 0; i < sub_count(first.sub); ++i)
        names.emplace_back(sub_name(first.sub, static_cast<uint8_t>(i)));
      auto near = closest_match(comps[used], names);
      error(lineno, mt.col, "unknown operation '" + comps[used] + "' for '" + base + "'",
            near.empty() ? std::vector<std::string>{}
                         : std::vector<std::string>{"did you mean '" + base + "." + near + "'?"});
      return;
    }
    inst.sub = *sub;
    ++used;
  }
  size_t want_types = first.opcode == Opcode::Cvt ? 2 : (first.typed() ? 1 : 0);
  size_t have_types = comps.size() - used;
  if (have_types != want_types) {
    if (want_types == 0)
      error(lineno, mt.col, "'" + base + "' takes no type suffix");
    else if (want_types == 2)
      error(lineno, mt.col, "'cvt' needs a destination and a source type, e.g. 'cvt.f32.i32'");
    else
      error(lineno, mt.col, "'" + mt.text + "' needs one type suffix, e.g. '" + mt.text + ".f32'");
    return;
  }
  for (size_t k = 0; k < want_types; ++k) {
    auto ty = parse_type(comps[used + k]);
    if (!ty || *ty == Type::Pred) {
      std::vector<std::string> names;
      for (int i = 1; i < kNumTypes - 1; ++i) names.emplace_back(type_name(static_cast<Type>(i)));
      auto near = closest_match(comps[used + k], names);
      error(lineno, mt.col, "unknown type '" + comps[used + k] + "' in '" + mt.text + "'",
            near.empty() ? std::vector<std::string>{}
                         : std::vector<std::string>{"did you mean '" + near + "'?"});
      return;
    }
    (k == 0 ? inst.type : inst.type2) = *ty;
  }
  // The optional guard of bra.
  if (base == "bra" && pos < toks.size()) {
    bool negate = false;
    size_t p = pos;
    if (toks[p].text == "!") {
      negate = true;
      ++p;
    }
    if (p < toks.size() && is_pred_token(toks[p])) {
      auto v = parse_uint(std::string_view(toks[p].text).substr(1));
      if (!v || *v >= kNumPreds) {
        error(lineno, toks[p].col, "predicate '" + toks[p].text + "' is out of range (p0..p15)");
        return;
      }
      inst.guard = {true, negate, static_cast<uint8_t>(*v)};
      pos = p + 1;
    } else if (negate) {
      error(lineno, toks[pos].col, "expected a predicate after '!'");
      return;
    }
  }
  // Operands.
  std::vector<RawOperand> raw;
  while (pos < toks.size()) {
    RawOperand r;
    if (!parse_operand(lineno, toks, pos, r)) return;
    raw.push_back(std::move(r));
    if (pos < toks.size()) {
      if (toks[pos].text != ",") {
        error(lineno, toks[pos].col, "expected ',' between operands, got '" + toks[pos].text + "'");
        return;
      }
      ++pos;
      if (pos == toks.size()) {
        error(lineno, toks[pos - 1].col, "expected an operand after ','");
        return;
      }
    }
  }
  const OpcodeInfo *chosen = nullptr;
  for (const auto *row : candidates) {
    if (row->num_operands() != raw.size()) continue;
    bool match = true;
    for (size_t i = 0; i < raw.size() && match; ++i)
      match = role_accepts(row->role(i), raw[i].shape);
    if (match) {
      chosen = row;
      break;
    }
  }
  if (!chosen) {
    std::vector<std::string> notes;
    for (const auto *row : candidates)
      notes.push_back("'" + mt.text + "' takes: " + signature_text(*row));
    const OpcodeInfo &row = *candidates[0];
    if (candidates.size() == 1 && row.num_operands() != raw.size()) {
      error(lineno, mt.col,
            "'" + mt.text + "' expects " + std::to_string(row.num_operands()) +
                " operand(s), got " + std::to_string(raw.size()),
            notes);
      return;
    }
    // Point at the first operand that does not fit the (first) signature.
    uint32_t col = mt.col;
    for (size_t i = 0; i < raw.size() && i < row.num_operands(); ++i)
      if (!role_accepts(row.role(i), raw[i].shape)) {
        col = raw[i].col;
        notes.insert(notes.begin(), "operand " + std::to_string(i + 1) + " should be a " +
                                        std::string(role_description(row.role(i))));
        break;
      }
    error(lineno, col, "operands of '" + mt.text + "' do not match its form", notes);
    return;
  }
  inst.op = chosen->opcode;
  for (size_t i = 0; i < raw.size(); ++i) {
    Operand op = raw[i].op;
    if (raw[i].shape == Shape::Imm) {
      auto count = [&]() -> Expected<uint64_t> {
        if (auto u = parse_uint(raw[i].text)) return *u;
        return Status{ErrorCode::InvalidProgram,
                      "expected a non-negative integer, got '" + raw[i].text + "'"};
      };
      auto v = chosen->role(i) == OperandRole::LiteralT ? parse_literal(inst.type, raw[i].text)
                                                        : count();
      if (!v) {
        error(lineno, raw[i].col, v.message());
        return;
      }
      op.imm = *v;
    }
    inst.operands.push_back(op);
  }
  kernel_->insts.push_back(std::move(inst));
}

} // namespace

Expected<uint64_t> parse_literal(Type type, std::string_view text) {
  auto fail = [](std::string msg) -> Expected<uint64_t> {
    return Status{ErrorCode::InvalidArgument, std::move(msg)};
  };
  std::string t(text);
  bool is_hex = text.starts_with("0x") || text.starts_with("0X");
  unsigned bits = type_bits(type);
  uint64_t mask = bits >= 64 ? ~uint64_t{0} : ((uint64_t{1} << bits) - 1);
  if (is_hex) {
    auto v = parse_uint(text);
    if (!v) return fail("malformed hex literal '" + t + "'");
    if (*v & ~mask)
      return fail("hex literal '" + t + "' does not fit in " + std::string(type_name(type)));
    return *v;
  }
  if (is_int(type)) {
    bool neg = text.starts_with('-');
    auto mag = parse_uint(neg ? text.substr(1) : text);
    if (!mag)
      return fail("expected an integer literal for " + std::string(type_name(type)) + ", got '" +
                  t + "'");
    if (is_unsigned_int(type)) {
      if (neg && *mag != 0)
        return fail("negative literal '" + t + "' for unsigned type " +
                    std::string(type_name(type)));
      if (*mag > mask)
        return fail("literal '" + t + "' is out of range for " + std::string(type_name(type)));
      return *mag;
    }
    uint64_t limit = uint64_t{1} << (bits - 1); // |MIN|
    if ((!neg && *mag >= limit) || (neg && *mag > limit))
      return fail("literal '" + t + "' is out of range for " + std::string(type_name(type)));
    uint64_t v = neg ? (~*mag + 1) : *mag;
    return v & mask;
  }
  if (is_float(type)) {
    double d;
    if (t == "inf")
      d = std::numeric_limits<double>::infinity();
    else if (t == "-inf")
      d = -std::numeric_limits<double>::infinity();
    else if (t == "nan")
      d = std::numeric_limits<double>::quiet_NaN();
    else {
      if (type == Type::F32) {
        float f;
        auto res = std::from_chars(t.data(), t.data() + t.size(), f);
        if (res.ec == std::errc::result_out_of_range)
          return fail("literal '" + t + "' overflows f32");
        if (res.ec != std::errc() || res.ptr != t.data() + t.size())
          return fail("expected a floating-point literal, got '" + t + "'");
        return f32_bits(f);
      }
      auto res = std::from_chars(t.data(), t.data() + t.size(), d);
      if (res.ec == std::errc::result_out_of_range)
        return fail("literal '" + t + "' overflows " + std::string(type_name(type)));
      if (res.ec != std::errc() || res.ptr != t.data() + t.size())
        return fail("expected a floating-point literal, got '" + t + "'");
    }
    uint64_t b = float_bits(type, d);
    if (std::isfinite(d) && (type == Type::F16 || type == Type::BF16)) {
      float back = type == Type::F16 ? f16_to_float(static_cast<uint16_t>(b))
                                     : bf16_to_float(static_cast<uint16_t>(b));
      if (std::isinf(back))
        return fail("literal '" + t + "' overflows " + std::string(type_name(type)));
    }
    return b;
  }
  return fail("literals need a numeric type");
}

std::optional<Module> parse_module(std::string_view text, const std::string &file,
                                   DiagnosticEngine &diags) {
  Parser p(text, file, diags);
  return p.run();
}

} // namespace hologram::isa
