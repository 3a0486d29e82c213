// Circuit lexer and parser (SPEC §6.1) with transforms resolved at parse time (§6.2).
#include "hologram/frontend/circuit.h"
#include "hologram/isa/atlas.h"
#include "hologram/support/unreachable.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace hologram::frontend {

namespace {

enum class Tok {
  At,
  Dot,
  DotDot,
  Caret,
  Tilde,
  Plus,
  Minus,
  Comma,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Arrow,
  BiArrow,
  Par,
  Number,
  Word,
  End
};

struct Token {
  Tok kind;
  std::string text;
  uint64_t value = 0;
  SourceLoc loc;
};

const char *tok_text(Tok t) {
  switch (t) {
  case Tok::At: return "'@'";
  case Tok::Dot: return "'.'";
  case Tok::DotDot: return "'..'";
  case Tok::Caret: return "'^'";
  case Tok::Tilde: return "'~'";
  case Tok::Plus: return "'+'";
  case Tok::Minus: return "'-'";
  case Tok::Comma: return "','";
  case Tok::LParen: return "'('";
  case Tok::RParen: return "')'";
  case Tok::LBracket: return "'['";
  case Tok::RBracket: return "']'";
  case Tok::Arrow: return "'->'";
  case Tok::BiArrow: return "'<->'";
  case Tok::Par: return "'||'";
  case Tok::Number: return "a number";
  case Tok::Word: return "a word";
  case Tok::End: return "the end of the circuit";
  }
  return "?";
}

/// A transform: R (h2 + r mod 4), T (l + t mod 8), M (flip d 1 <-> 2), applied in that order.
struct Transform {
  int r = 0, t = 0;
  bool m = false;
  [[nodiscard]] uint32_t apply(uint32_t cls) const {
    auto k = atlas::class_coords(cls);
    k.h2 = static_cast<uint32_t>(((static_cast<int>(k.h2) + r) % 4 + 4) % 4);
    k.l = static_cast<uint32_t>(((static_cast<int>(k.l) + t) % 8 + 8) % 8);
    if (m && k.d != 0) k.d = 3 - k.d;
    return atlas::class_of(k);
  }
};

/// The classes whose data an op reads or writes.
std::set<uint32_t> touched(const CircuitOp &op) {
  switch (op.gen) {
  case Generator::Copy:
  case Generator::Swap: return {op.a.cls, op.b.cls};
  case Generator::Merge:
    if (op.range) return {op.classes.begin(), op.classes.end()};
    return {op.a.cls, op.b.cls, op.c.cls};
  case Generator::Split: return {op.a.cls, op.b.cls, op.c.cls};
  case Generator::Evaluate:
  case Generator::Mark:
  case Generator::Quote: return {};
  }
  unreachable_enum("Generator");
}

const std::vector<std::string> kGenerators = {"mark",  "copy",  "swap",    "merge",
                                              "split", "quote", "evaluate"};

class CircuitParser {
public:
  CircuitParser(std::string_view text, const std::string &file, DiagnosticEngine &diags)
      : text_(text), file_(file), diags_(diags) {}

  std::optional<Circuit> run();

private:
  bool lex();
  void error(SourceLoc loc, std::string msg, std::vector<std::string> notes = {}) {
    if (failed_) return; // one error per circuit: the rest would follow from it
    diags_.error(file_, loc, std::move(msg), std::move(notes));
    failed_ = true;
  }
  const Token &peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  Token take() { return toks_[std::min(pos_++, toks_.size() - 1)]; }
  bool accept(Tok k) {
    if (peek().kind != k) return false;
    ++pos_;
    return true;
  }
  bool expect(Tok k, const std::string &context) {
    if (accept(k)) return true;
    error(peek().loc,
          std::string("expected ") + tok_text(k) + " " + context + ", found " + describe(peek()));
    return false;
  }
  static std::string describe(const Token &t) {
    if (t.kind == Tok::Word) return "'" + t.text + "'";
    if (t.kind == Tok::Number) return "'" + t.text + "'";
    return tok_text(t.kind);
  }

  bool parse_transform(Transform &t);
  bool parse_signed(int &out, const char *what);
  bool parse_par(std::vector<CircuitOp> &out);
  bool parse_branches(std::vector<std::vector<CircuitOp>> &branches);
  bool parse_seq(std::vector<CircuitOp> &out);
  bool parse_term(std::vector<CircuitOp> &out);
  bool parse_sigil(ClassRef &out, const Token &marker);
  bool parse_post(Transform &post);
  bool number(uint64_t &v, uint64_t limit, const char *what);

  std::string_view text_;
  const std::string &file_;
  DiagnosticEngine &diags_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  Transform phrase_;
  unsigned group_depth_ = 0;
  bool failed_ = false;
};

bool CircuitParser::lex() {
  uint32_t line = 1, col = 1;
  size_t i = 0;
  auto adv = [&](size_t n) {
    for (size_t k = 0; k < n; ++k) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
      ++i;
    }
  };
  while (i < text_.size()) {
    char c = text_[i];
    SourceLoc loc{line, col};
    if (std::isspace(static_cast<unsigned char>(c))) {
      adv(1);
      continue;
    }
    if (c == '#') { // comment to the end of the line
      while (i < text_.size() && text_[i] != '\n') adv(1);
      continue;
    }
    auto push = [&](Tok k, size_t n) {
      toks_.push_back({k, std::string(text_.substr(i, n)), 0, loc});
      adv(n);
    };
    auto next = [&](size_t k) { return i + k < text_.size() ? text_[i + k] : '\0'; };
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      uint64_t v = 0;
      bool overflow = false;
      while (j < text_.size() && std::isdigit(static_cast<unsigned char>(text_[j]))) {
        v = v * 10 + static_cast<uint64_t>(text_[j] - '0');
        overflow |= v > 1000000;
        ++j;
      }
      if (overflow) {
        error(loc, "number '" + std::string(text_.substr(i, j - i)) + "' is too large");
        return false;
      }
      toks_.push_back({Tok::Number, std::string(text_.substr(i, j - i)), v, loc});
      adv(j - i);
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      // Identifiers are letters and '_'; a digit ends one, so c05 is 'c' then 5.
      size_t j = i;
      while (j < text_.size() &&
             (std::isalpha(static_cast<unsigned char>(text_[j])) || text_[j] == '_'))
        ++j;
      push(Tok::Word, j - i);
    } else if (c == '.' && next(1) == '.') {
      push(Tok::DotDot, 2);
    } else if (c == '-' && next(1) == '>') {
      push(Tok::Arrow, 2);
    } else if (c == '<' && next(1) == '-' && next(2) == '>') {
      push(Tok::BiArrow, 3);
    } else if (c == '|' && next(1) == '|') {
      push(Tok::Par, 2);
    } else {
      static const std::pair<char, Tok> kSingle[] = {
          {'@', Tok::At},     {'.', Tok::Dot},      {'^', Tok::Caret},   {'~', Tok::Tilde},
          {'+', Tok::Plus},   {'-', Tok::Minus},    {',', Tok::Comma},   {'(', Tok::LParen},
          {')', Tok::RParen}, {'[', Tok::LBracket}, {']', Tok::RBracket}};
      bool found = false;
      for (auto [ch, k] : kSingle)
        if (c == ch) {
          push(k, 1);
          found = true;
          break;
        }
      if (!found) {
        std::vector<std::string> notes;
        if (c == '|') notes.push_back("parallel composition is written '||'");
        if (c == '<') notes.push_back("a swap is written 'cA<->cB'");
        error(loc, "unexpected " + describe_char(c), notes);
        return false;
      }
    }
  }
  toks_.push_back({Tok::End, "", 0, {line, col}});
  return true;
}

bool CircuitParser::number(uint64_t &v, uint64_t limit, const char *what) {
  if (peek().kind != Tok::Number) {
    error(peek().loc, std::string("expected ") + what + ", found " + describe(peek()));
    return false;
  }
  Token t = take();
  if (t.value >= limit) {
    error(t.loc, std::string(what) + " " + t.text + " is out of range (0.." +
                     std::to_string(limit - 1) + ")");
    return false;
  }
  v = t.value;
  return true;
}

bool CircuitParser::parse_signed(int &out, const char *what) {
  bool neg = false;
  if (accept(Tok::Minus))
    neg = true;
  else
    accept(Tok::Plus);
  uint64_t v;
  if (!number(v, 1000000, what)) return false;
  out = neg ? -static_cast<int>(v) : static_cast<int>(v);
  return true;
}

bool CircuitParser::parse_transform(Transform &t) {
  const Token &first = peek();
  if (first.kind == Tok::Word && first.text == "R") {
    take();
    if (!parse_signed(t.r, "a rotation after 'R'")) return false;
    if (peek().kind == Tok::Word && peek().text == "T") {
      take();
      if (!parse_signed(t.t, "a twist after 'T'")) return false;
    }
  } else if (first.kind == Tok::Word && first.text == "T") {
    take();
    if (!parse_signed(t.t, "a twist after 'T'")) return false;
  }
  if (accept(Tok::Tilde)) t.m = true;
  return expect(Tok::At, "after the transform");
}

bool CircuitParser::parse_post(Transform &post) {
  if (accept(Tok::Caret))
    if (!parse_signed(post.t, "a twist after '^'")) return false;
  if (accept(Tok::Tilde)) post.m = true;
  return true;
}

bool CircuitParser::parse_sigil(ClassRef &out, const Token &marker) {
  if (marker.kind != Tok::Word || marker.text != "c") {
    error(marker.loc, "expected a class such as 'c05', found " + describe(marker));
    return false;
  }
  if (peek().kind == Tok::Minus) {
    error(peek().loc, "class numbers have no sign (0..95)");
    return false;
  }
  uint64_t cls;
  if (!number(cls, atlas::kNumClasses, "class")) return false;
  Transform post;
  if (!parse_post(post)) return false;
  out.cls = phrase_.apply(post.apply(static_cast<uint32_t>(cls)));
  if (accept(Tok::At)) {
    uint64_t page;
    if (!number(page, atlas::kPagesPerClass, "page")) return false;
    out.page = static_cast<int>(page);
  }
  return true;
}

bool CircuitParser::parse_term(std::vector<CircuitOp> &out) {
  if (peek().kind == Tok::LParen) {
    Token open = take();
    if (++group_depth_ > 200) {
      error(open.loc, "groups are nested more than 200 levels deep");
      return false;
    }
    bool ok = parse_par(out);
    --group_depth_;
    if (!ok) return false;
    return expect(Tok::RParen, "to close the group");
  }
  Token g = take();
  if (g.kind != Tok::Word) {
    error(g.loc, "expected a generator (mark, copy, swap, merge, split, quote, evaluate), found " +
                     describe(g));
    return false;
  }
  auto it = std::find(kGenerators.begin(), kGenerators.end(), g.text);
  if (it == kGenerators.end()) {
    auto near = closest_match(g.text, kGenerators);
    error(g.loc, "unknown generator '" + g.text + "'",
          near.empty() ? std::vector<std::string>{}
                       : std::vector<std::string>{"did you mean '" + near + "'?"});
    return false;
  }
  CircuitOp op;
  op.gen = static_cast<Generator>(it - kGenerators.begin());
  op.loc = g.loc;
  if (!expect(Tok::At, "after '" + g.text + "'")) return false;
  Token marker = take();
  if (marker.kind == Tok::Word && marker.text == "c" && peek().kind == Tok::LBracket) { // a range
    Token open = take();
    uint64_t a, b;
    if (!number(a, atlas::kNumClasses, "class")) return false;
    if (!expect(Tok::DotDot, "in the range")) return false;
    if (!number(b, atlas::kNumClasses, "class")) return false;
    if (!expect(Tok::RBracket, "to close the range")) return false;
    if (a >= b) {
      error(open.loc,
            "the range c[" + std::to_string(a) + ".." + std::to_string(b) +
                "] must cover at least two classes",
            {a == b ? "write c" + std::to_string(a) + " for a single class"
                    : "its start is after its end"});
      return false;
    }
    Transform post;
    if (!parse_post(post)) return false;
    if (op.gen != Generator::Merge && op.gen != Generator::Mark && op.gen != Generator::Quote &&
        op.gen != Generator::Evaluate) {
      error(g.loc, "'" + g.text + "' does not take a range",
            {"ranges are for merge (doubling each class) and the markers mark, quote, evaluate"});
      return false;
    }
    op.range = true;
    for (uint64_t k = a; k <= b; ++k)
      op.classes.push_back(phrase_.apply(post.apply(static_cast<uint32_t>(k))));
    out.push_back(std::move(op));
    return true;
  }
  if (!parse_sigil(op.a, marker)) return false;
  auto needs = [&](const char *form) {
    error(g.loc, "'" + g.text + "' needs the form " + form);
    return false;
  };
  switch (op.gen) {
  case Generator::Copy:
    if (!accept(Tok::Arrow)) return needs("copy@cA->cB");
    if (!parse_sigil(op.b, take())) return false;
    break;
  case Generator::Swap:
    if (!accept(Tok::BiArrow)) return needs("swap@cA<->cB");
    if (!parse_sigil(op.b, take())) return false;
    break;
  case Generator::Merge:
  case Generator::Split:
    if (!accept(Tok::LBracket))
      return needs(op.gen == Generator::Merge ? "merge@cA[cB,cC] or merge@c[a..b]"
                                              : "split@cA[cB,cC]");
    if (!parse_sigil(op.b, take())) return false;
    if (!expect(Tok::Comma, "between the operands")) return false;
    if (!parse_sigil(op.c, take())) return false;
    if (!expect(Tok::RBracket, "to close the operands")) return false;
    break;
  case Generator::Evaluate:
  case Generator::Mark:
  case Generator::Quote: break;
  }
  // Operands of one generator cover the same extent: all whole classes or all single pages.
  std::vector<ClassRef> refs = {op.a};
  if (op.gen == Generator::Copy || op.gen == Generator::Swap) refs.push_back(op.b);
  if (op.gen == Generator::Merge || op.gen == Generator::Split) refs = {op.a, op.b, op.c};
  for (const auto &r : refs)
    if ((r.page < 0) != (refs[0].page < 0)) {
      error(g.loc, "the operands of '" + g.text + "' mix whole classes and single pages");
      return false;
    }
  out.push_back(std::move(op));
  return true;
}

bool CircuitParser::parse_seq(std::vector<CircuitOp> &out) {
  if (!parse_term(out)) return false;
  while (accept(Tok::Dot))
    if (!parse_term(out)) return false;
  return true;
}

bool CircuitParser::parse_branches(std::vector<std::vector<CircuitOp>> &branches) {
  std::vector<SourceLoc> starts;
  do {
    starts.push_back(peek().loc);
    branches.emplace_back();
    if (!parse_seq(branches.back())) return false;
  } while (accept(Tok::Par));
  // Parallel branches must be independent: no class touched by two of them.
  for (size_t i = 0; i < branches.size(); ++i) {
    std::set<uint32_t> mine;
    for (const auto &op : branches[i])
      for (uint32_t c : touched(op)) mine.insert(c);
    for (size_t j = i + 1; j < branches.size(); ++j)
      for (const auto &op : branches[j])
        for (uint32_t c : touched(op))
          if (mine.count(c)) {
            error(starts[j], "parallel branches both touch class " + std::to_string(c),
                  {"branches joined by '||' must be independent; use '.' to run them in sequence"});
            return false;
          }
  }
  return true;
}

bool CircuitParser::parse_par(std::vector<CircuitOp> &out) {
  // A group: independent branches run in source order, so they flatten into the sequence.
  std::vector<std::vector<CircuitOp>> branches;
  if (!parse_branches(branches)) return false;
  for (auto &b : branches)
    for (auto &op : b) out.push_back(std::move(op));
  return true;
}

std::optional<Circuit> CircuitParser::run() {
  if (!lex()) return std::nullopt;
  if (peek().kind == Tok::End) {
    error(peek().loc, "the circuit is empty");
    return std::nullopt;
  }
  bool has_transform = (peek().kind == Tok::Word && (peek().text == "R" || peek().text == "T")) ||
                       peek().kind == Tok::Tilde;
  if (has_transform && !parse_transform(phrase_)) return std::nullopt;
  Circuit c;
  if (!parse_branches(c.branches)) return std::nullopt;
  if (peek().kind != Tok::End) {
    error(peek().loc, "unexpected " + describe(peek()) + " after the circuit",
          {"compose with '.' (in sequence) or '||' (in parallel)"});
    return std::nullopt;
  }
  if (failed_) return std::nullopt;
  return c;
}

} // namespace

size_t Circuit::op_count() const {
  size_t n = 0;
  for (const auto &b : branches) n += b.size();
  return n;
}

std::optional<Circuit> parse_circuit(std::string_view text, const std::string &file,
                                     DiagnosticEngine &diags) {
  CircuitParser p(text, file, diags);
  return p.run();
}

} // namespace hologram::frontend
