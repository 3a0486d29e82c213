// Verifier rule family: registers. A forward dataflow over the interprocedural CFG computes,
// for every register and predicate, the set of types its reaching definitions give it and
// whether some path reaches the read with no definition. Every read must see exactly the type
// it expects and be definitely initialised.
#include "dataflow.h"
#include "verify_context.h"

#include <deque>

namespace hologram::isa::detail {

namespace {

constexpr uint16_t kUninit = 1u << 15;

using State = std::vector<uint16_t>; // per slot: type bits | kUninit; 0 = unreachable

uint16_t type_bit(Type t) {
  return static_cast<uint16_t>(1u << static_cast<unsigned>(t));
}

std::string types_in(uint16_t mask) {
  std::string s;
  for (int t = 1; t < kNumTypes; ++t)
    if (mask & (1u << t))
      s += (s.empty() ? "" : " or ") + std::string(type_name(static_cast<Type>(t)));
  return s;
}

std::string slot_name(const RegAccess &a) {
  return a.pred ? "p" + std::to_string(a.reg) : reg_name(a.reg);
}

class RegisterTyping {
public:
  explicit RegisterTyping(VerifyContext &cx) : cx_(cx), cfg_(cx.cfg), k_(cx.kernel) {}

  void run() {
    solve();
    check();
  }

private:
  /// What instruction i writes: each destination now holds exactly its type.
  void apply_defs(uint32_t i, State &s) {
    instruction_defs(k_.insts[i], defs_);
    for (const auto &d : defs_)
      if (d.pred || !is_special(d.reg)) s[slot_of(d)] = type_bit(d.type);
  }

  void transfer(uint32_t b, State &s) {
    for (uint32_t i = cfg_.blocks[b].begin; i < cfg_.blocks[b].end; ++i) apply_defs(i, s);
  }

  void solve() {
    in_ = solve_forward(
        cfg_, State(kNumSlots, 0), State(kNumSlots, kUninit),
        [&](uint32_t b, State &s) { transfer(b, s); },
        [](State &into, const State &from) {
          bool changed = false;
          for (unsigned r = 0; r < kNumSlots; ++r) {
            uint16_t merged = into[r] | from[r];
            changed |= merged != into[r];
            into[r] = merged;
          }
          return changed;
        });
  }

  void check() {
    for (uint32_t b = 0; b < cfg_.blocks.size(); ++b) {
      State s = in_[b];
      bool reachable = false;
      for (auto v : s) reachable |= v != 0;
      if (!reachable) continue;
      for (uint32_t i = cfg_.blocks[b].begin; i < cfg_.blocks[b].end; ++i) {
        instruction_uses(k_.insts[i], uses_);
        for (const auto &u : uses_) check_use(b, i, s, u);
        apply_defs(i, s);
      }
    }
  }

  void check_use(uint32_t b, uint32_t i, const State &s, const RegAccess &u) {
    if (!u.pred && is_special(u.reg)) {
      Type t = special_type(reg_special(u.reg));
      if (t != u.type)
        cx_.error_at(i,
                     "'" + reg_name(u.reg) + "' is " + std::string(type_name(t)) +
                         ", but it is read as " + std::string(type_name(u.type)),
                     {"convert it with cvt." + std::string(type_name(u.type)) + "." +
                      std::string(type_name(t)) + " first"});
      return;
    }
    uint16_t v = s[slot_of(u)];
    std::string name = slot_name(u);
    if (v & kUninit) {
      cx_.error_at(i, name + " may be read before it is written",
                   {"a path on which " + name + " is not initialised: " + uninit_path(b, u)});
      return;
    }
    uint16_t others = v & ~type_bit(u.type);
    if (others) {
      std::vector<std::string> notes;
      if (auto def = find_def(u, others)) notes.push_back(*def);
      cx_.error_at(i,
                   name + " is read as " + std::string(type_name(u.type)) + " but may hold " +
                       types_in(others),
                   std::move(notes));
    }
  }

  std::optional<std::string> find_def(const RegAccess &u, uint16_t types) {
    for (uint32_t i = 0; i < k_.insts.size(); ++i) {
      instruction_defs(k_.insts[i], defs_);
      for (const auto &d : defs_)
        if (d.pred == u.pred && d.reg == u.reg && (types & type_bit(d.type)))
          return slot_name(u) + " is written as " + std::string(type_name(d.type)) + " at line " +
                 std::to_string(k_.insts[i].loc.line) + ": '" + print_instruction(k_, k_.insts[i]) +
                 "'";
    }
    return std::nullopt;
  }

  bool block_defines(uint32_t b, const RegAccess &u) {
    for (uint32_t i = cfg_.blocks[b].begin; i < cfg_.blocks[b].end; ++i) {
      instruction_defs(k_.insts[i], defs_);
      for (const auto &d : defs_)
        if (d.pred == u.pred && d.reg == u.reg) return true;
    }
    return false;
  }

  /// A path from the kernel entry to block `target` through blocks that do not define `u`.
  std::string uninit_path(uint32_t target, const RegAccess &u) {
    const size_t n = cfg_.blocks.size();
    std::vector<uint32_t> parent(n, kNoBlock);
    std::deque<uint32_t> q{0};
    parent[0] = 0;
    while (!q.empty()) {
      uint32_t b = q.front();
      q.pop_front();
      if (b == target) break;
      if (block_defines(b, u)) continue;
      for (uint32_t s : cfg_.flow_succs(b))
        if (parent[s] == kNoBlock) {
          parent[s] = b;
          q.push_back(s);
        }
    }
    if (parent[target] == kNoBlock) return "kernel entry";
    std::vector<uint32_t> path;
    for (uint32_t b = target;; b = parent[b]) {
      path.push_back(b);
      if (b == 0) break;
    }
    std::string s = "entry";
    for (auto it = path.rbegin(); it != path.rend(); ++it)
      if (*it != 0 || path.size() == 1) s += " -> " + cx_.describe_block(*it);
    return s;
  }

  VerifyContext &cx_;
  const Cfg &cfg_;
  const Kernel &k_;
  std::vector<State> in_;
  std::vector<RegAccess> uses_, defs_;
};

} // namespace

void verify_registers(VerifyContext &cx) {
  RegisterTyping(cx).run();
}

} // namespace hologram::isa::detail
