// Canonicalisation of circuits: rewrites that shorten a circuit without changing its data
// effect, and the printer of circuit syntax.
#include "hologram/frontend/circuit.h"
#include "hologram/support/unreachable.h"

#include <algorithm>
#include <cstdio>

namespace hologram::frontend {

namespace {

std::string ref_text(const ClassRef &r) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "c%02u", r.cls);
  std::string s = buf;
  if (r.page >= 0) s += "@" + std::to_string(r.page);
  return s;
}

const char *gen_name(Generator g) {
  switch (g) {
  case Generator::Mark: return "mark";
  case Generator::Copy: return "copy";
  case Generator::Swap: return "swap";
  case Generator::Merge: return "merge";
  case Generator::Split: return "split";
  case Generator::Quote: return "quote";
  case Generator::Evaluate: return "evaluate";
  }
  return "?";
}

std::string op_text(const CircuitOp &op) {
  std::string s = std::string(gen_name(op.gen)) + "@";
  if (op.range) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "c[%u..%u]", op.classes.front(), op.classes.back());
    return s + buf;
  }
  switch (op.gen) {
  case Generator::Copy: return s + ref_text(op.a) + "->" + ref_text(op.b);
  case Generator::Swap: return s + ref_text(op.a) + "<->" + ref_text(op.b);
  case Generator::Merge:
  case Generator::Split:
    return s + ref_text(op.a) + "[" + ref_text(op.b) + "," + ref_text(op.c) + "]";
  case Generator::Evaluate:
  case Generator::Mark:
  case Generator::Quote: return s + ref_text(op.a);
  }
  unreachable_enum("Generator");
}

/// Whether `op` reads any byte of class `cls`.
bool reads(const CircuitOp &op, uint32_t cls) {
  switch (op.gen) {
  case Generator::Copy: return op.a.cls == cls;
  case Generator::Swap: return op.a.cls == cls || op.b.cls == cls;
  case Generator::Merge:
    if (op.range) return std::find(op.classes.begin(), op.classes.end(), cls) != op.classes.end();
    return op.a.cls == cls || op.b.cls == cls;
  case Generator::Split: return op.a.cls == cls || op.b.cls == cls;
  case Generator::Evaluate:
  case Generator::Mark:
  case Generator::Quote: return false;
  }
  unreachable_enum("Generator");
}

/// Every class an op names (data or marker).
std::vector<uint32_t> classes_of(const CircuitOp &op) {
  if (op.range) return op.classes;
  switch (op.gen) {
  case Generator::Copy:
  case Generator::Swap: return {op.a.cls, op.b.cls};
  case Generator::Merge:
  case Generator::Split: return {op.a.cls, op.b.cls, op.c.cls};
  case Generator::Evaluate:
  case Generator::Mark:
  case Generator::Quote: return {op.a.cls};
  }
  unreachable_enum("Generator");
}

bool shares_class(const CircuitOp &x, const CircuitOp &y) {
  auto a = classes_of(x), b = classes_of(y);
  for (uint32_t c : a)
    if (std::find(b.begin(), b.end(), c) != b.end()) return true;
  return false;
}

/// The single destination of copy, merge and split (nullptr for other ops).
const ClassRef *destination(const CircuitOp &op) {
  if (op.range) return nullptr;
  if (op.gen == Generator::Copy) return &op.b;
  if (op.gen == Generator::Merge || op.gen == Generator::Split) return &op.c;
  return nullptr;
}

/// Whether `op` overwrites every byte that a write to `r` touches.
bool overwrites(const CircuitOp &op, const ClassRef &r) {
  const ClassRef *d = destination(op);
  return d && d->cls == r.cls && (d->page < 0 || d->page == r.page);
}

std::string where(const CircuitOp &op) {
  return "'" + op_text(op) + "' at " + std::to_string(op.loc.line) + ":" +
         std::to_string(op.loc.col);
}

class Canonicalizer {
public:
  explicit Canonicalizer(std::vector<RewriteNote> *notes) : notes_(notes) {}

  void run(std::vector<CircuitOp> &seq) {
    split_ranges(seq);
    while (one_pass(seq)) {
    }
  }

private:
  void note(const char *rule, const std::string &detail) {
    if (notes_) notes_->push_back({rule, detail});
  }

  /// Transforms can make a range non-contiguous; each contiguous run becomes its own op.
  void split_ranges(std::vector<CircuitOp> &seq) {
    std::vector<CircuitOp> out;
    for (auto &op : seq) {
      if (!op.range) {
        out.push_back(std::move(op));
        continue;
      }
      std::vector<uint32_t> sorted = op.classes;
      std::sort(sorted.begin(), sorted.end());
      bool contiguous = true;
      for (size_t i = 1; i < sorted.size(); ++i) contiguous &= sorted[i] == sorted[i - 1] + 1;
      if (contiguous) {
        op.classes = std::move(sorted);
        out.push_back(std::move(op));
        continue;
      }
      size_t start = 0;
      for (size_t i = 1; i <= sorted.size(); ++i)
        if (i == sorted.size() || sorted[i] != sorted[i - 1] + 1) {
          CircuitOp run = op;
          run.classes.assign(sorted.begin() + static_cast<long>(start),
                             sorted.begin() + static_cast<long>(i));
          if (run.classes.size() == 1) { // one class: the same effect without range syntax
            uint32_t k = run.classes[0];
            run.range = false;
            run.classes.clear();
            run.a = ClassRef{k, -1}; // a marker marks cK; merge@cK[cK,cK] doubles cK
            if (run.gen == Generator::Merge) run.b = run.c = run.a;
          }
          out.push_back(std::move(run));
          start = i;
        }
      std::string list;
      for (uint32_t k : sorted) list += (list.empty() ? "" : ", ") + std::to_string(k);
      note("split-range", "'" + std::string(gen_name(op.gen)) + "' at " +
                              std::to_string(op.loc.line) + ":" + std::to_string(op.loc.col) +
                              " covers classes " + list +
                              " after its transforms; written as consecutive runs");
    }
    seq = std::move(out);
  }

  bool one_pass(std::vector<CircuitOp> &seq) {
    for (size_t i = 0; i < seq.size(); ++i) {
      const CircuitOp &op = seq[i];
      // copy@cA->cA and swap@cA<->cA change nothing.
      if ((op.gen == Generator::Copy || op.gen == Generator::Swap) && op.a == op.b) {
        note(op.gen == Generator::Copy ? "self-copy" : "self-swap", "removed " + where(op));
        seq.erase(seq.begin() + static_cast<long>(i));
        return true;
      }
      // mark is an involution: mark@X . mark@X = I. A marker has no data effect, so it
      // commutes with ops that do not touch its classes; two identical marks meet and cancel.
      if (op.gen == Generator::Mark)
        for (size_t j = i + 1; j < seq.size(); ++j) {
          if (seq[j].gen == Generator::Mark && seq[j] == op) {
            note("mark-involution", "removed " + where(op) + " and " + where(seq[j]));
            seq.erase(seq.begin() + static_cast<long>(j));
            seq.erase(seq.begin() + static_cast<long>(i));
            return true;
          }
          if (shares_class(seq[j], op)) break;
        }
      if (i + 1 < seq.size()) {
        const CircuitOp &next = seq[i + 1];
        // evaluate forces a quote: quote@X . evaluate@X = I.
        if (op.gen == Generator::Quote && next.gen == Generator::Evaluate &&
            op.range == next.range && op.a == next.a && op.classes == next.classes) {
          note("quote-evaluate", "removed " + where(op) + " and the evaluate after it");
          seq.erase(seq.begin() + static_cast<long>(i), seq.begin() + static_cast<long>(i) + 2);
          return true;
        }
        // swap is an involution: swap@A<->B . swap@A<->B (either order) = I.
        if (op.gen == Generator::Swap && next.gen == Generator::Swap &&
            ((op.a == next.a && op.b == next.b) || (op.a == next.b && op.b == next.a))) {
          note("swap-involution", "removed " + where(op) + " and the swap that undoes it");
          seq.erase(seq.begin() + static_cast<long>(i), seq.begin() + static_cast<long>(i) + 2);
          return true;
        }
      }
      // A write that is overwritten before anything reads it is dead.
      if (const ClassRef *d = destination(op)) {
        for (size_t j = i + 1; j < seq.size(); ++j) {
          if (reads(seq[j], d->cls)) break;
          if (overwrites(seq[j], *d)) {
            note("dead-write",
                 "removed " + where(op) + ": " + where(seq[j]) + " overwrites its result unread");
            seq.erase(seq.begin() + static_cast<long>(i));
            return true;
          }
          if (seq[j].gen == Generator::Swap && (seq[j].a.cls == d->cls || seq[j].b.cls == d->cls))
            break;
        }
      }
    }
    return false;
  }

  std::vector<RewriteNote> *notes_;
};

} // namespace

Circuit canonicalize(const Circuit &c, std::vector<RewriteNote> *notes) {
  Circuit out = c;
  Canonicalizer canon(notes);
  for (auto &branch : out.branches) canon.run(branch);
  // Empty branches have no effect; an entirely empty circuit is the identity mark@c00.
  std::vector<std::vector<CircuitOp>> kept;
  for (auto &b : out.branches)
    if (!b.empty()) kept.push_back(std::move(b));
  if (kept.empty()) {
    CircuitOp identity;
    identity.gen = Generator::Mark;
    kept.push_back({identity});
    if (notes)
      notes->push_back({"identity", "nothing with a data effect is left; the circuit is mark@c00"});
  }
  out.branches = std::move(kept);
  return out;
}

std::string print_circuit(const Circuit &c) {
  std::string s;
  for (size_t b = 0; b < c.branches.size(); ++b) {
    if (b) s += " || ";
    for (size_t i = 0; i < c.branches[b].size(); ++i) {
      if (i) s += " . ";
      s += op_text(c.branches[b][i]);
    }
  }
  return s;
}

} // namespace hologram::frontend
