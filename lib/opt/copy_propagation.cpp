// Copy propagation over the whole kernel: after `mov.T rA, rB` (rB a register or a read-only
// special such as %gid.x), a read of rA as T reads rB instead wherever that copy reaches on
// every path with neither register written since ("available copies", a forward dataflow
// whose meet keeps the copies every predecessor agrees on). Dead-code elimination then
// removes the copies nothing reads. A called function and the code after a call start with no
// copies (the callee may write any register).
#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/opt/pass_manager.h"

#include <algorithm>
#include <array>
#include <optional>

namespace hologram::opt {

using namespace isa;

namespace {

struct Copy {
  Reg src;
  Type type;
  friend bool operator==(const Copy &, const Copy &) = default;
};
using Copies = std::array<std::optional<Copy>, kFirstSpecialReg>;

/// Reads rB for a read of r as `t` when r holds a copy of rB of that type.
bool rewrite(Reg &r, Type t, const Copies &copies) {
  if (is_special(r) || !copies[r] || copies[r]->type != t) return false;
  r = copies[r]->src;
  return true;
}

/// The copies after `inst`, given those before it.
void transfer(const Instruction &inst, Copies &copies, std::vector<RegAccess> &defs) {
  instruction_defs(inst, defs);
  for (const RegAccess &d : defs) {
    if (d.pred) continue;
    copies[d.reg].reset();
    for (auto &c : copies)
      if (c && c->src == d.reg) c.reset();
  }
  if (inst.op == Opcode::Mov) {
    const Reg dst = inst.operands[0].index, src = inst.operands[1].index;
    if (src != dst) copies[dst] = Copy{src, inst.type};
  }
}

/// Rewrites the register reads of `inst` through `copies`; returns whether any changed.
bool rewrite_reads(Instruction &inst, const Copies &copies) {
  const OpcodeInfo &row = inst.info();
  bool changed = false;
  for (size_t j = 0; j < inst.operands.size() && j < row.num_operands(); ++j) {
    Operand &o = inst.operands[j];
    // A loop counter is read and written in place, so it keeps its register.
    if (o.kind == OperandKind::Reg && row.role(j) != OperandRole::LoopCounter) {
      const Type t = read_type(inst, row.role(j));
      if (t != Type::None) changed |= rewrite(o.index, t, copies);
    } else if (o.kind == OperandKind::Addr) {
      // A base register stays a general register; an index may become a special.
      if (o.addr.base == AddrBase::Reg && copies[o.addr.base_id] &&
          !is_special(copies[o.addr.base_id]->src))
        changed |= rewrite(o.addr.base_id, Type::U64, copies);
      if (o.addr.index != kNoReg) changed |= rewrite(o.addr.index, Type::U64, copies);
    }
  }
  return changed;
}

} // namespace

bool propagate_copies(Kernel &k) {
  const Cfg cfg = build_cfg(k);
  const auto n = cfg.blocks.size();
  // in[b]: copies available on entry; nullopt = not reached yet (the meet's identity).
  std::vector<std::optional<Copies>> in(n);
  std::vector<bool> fresh(n, false); // entered with no copies: kernel and function entries,
  for (uint32_t e : cfg.function_entries) fresh[e] = true; // and return sites
  for (uint32_t r : cfg.return_sites) fresh[r] = true;
  std::vector<RegAccess> defs;
  std::vector<uint32_t> order;
  for (uint32_t e : cfg.function_entries)
    for (uint32_t b : reverse_post_order(cfg, e))
      if (std::find(order.begin(), order.end(), b) == order.end()) order.push_back(b);
  for (uint32_t b : order)
    if (fresh[b]) in[b] = Copies{};
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t b : order) {
      if (!in[b]) continue;
      Copies out = *in[b];
      for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i)
        transfer(k.insts[i], out, defs);
      for (uint32_t s : cfg.blocks[b].succs) {
        if (fresh[s]) continue;
        if (!in[s]) {
          in[s] = out;
          changed = true;
          continue;
        }
        for (unsigned r = 0; r < kFirstSpecialReg; ++r)
          if ((*in[s])[r] && (*in[s])[r] != out[r]) {
            (*in[s])[r].reset();
            changed = true;
          }
      }
    }
  }
  bool changed = false;
  for (uint32_t b = 0; b < n; ++b) {
    if (!in[b]) continue; // unreachable
    Copies copies = *in[b];
    for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
      changed |= rewrite_reads(k.insts[i], copies);
      transfer(k.insts[i], copies, defs);
    }
  }
  return changed;
}

} // namespace hologram::opt
