// Memory forwarding within each basic block: a load from an address that this lane stored
// to or loaded from earlier in the block, with nothing in between that may have written it,
// becomes a `mov` of the register that holds the value. This is what fuses the steps of a
// circuit (`merge@c00[c01,c02] . split@c02[c00,c03]` reads class 2 right after writing it, and
// class 0 twice) and consecutive element-wise statements of a JSON kernel.
//
// Another lane writing the same location without a barrier or an atomic is a data race, whose
// result may be any written value (SPEC §3.4), so only this lane's own accesses count. Two
// accesses are known apart when they are in different memory (shared memory, the boundary
// pool, buffers), in different classes of the boundary pool, or at non-overlapping
// displacements from the same base and index. Buffers may be bound twice and raw addresses
// point anywhere, so a store through one forgets every other buffer's values. Barriers,
// fences, atomics and every other write forget everything. A removed load always follows an
// access of the same bytes, so -fbounds-check still stops at the first bad one.
#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/opt/pass_manager.h"
#include "kernel_edit.h"

#include <optional>
#include <vector>

namespace hologram::opt {

using namespace isa;

namespace {

/// An address with the versions of the registers it reads (a register written again makes
/// a different address).
struct Location {
  Address addr;
  uint32_t base_version = 0, index_version = 0;
  bool shared = false; ///< lds/sts
  friend bool operator==(const Location &, const Location &) = default;
};

struct Known {
  Location at;
  Type type;
  uint32_t size;
  Reg value;              ///< the register holding the bytes at `at`, read as `type`
  uint32_t value_version; ///< valid while the register keeps this version
};

/// Memory an address may reach: buffers and raw addresses share one space.
enum class Space : uint8_t { Shared, Boundary, Global };

Space space_of(const Location &l) {
  switch (l.addr.base) {
  case AddrBase::Shared: return Space::Shared;
  case AddrBase::Class:
  case AddrBase::Boundary: return Space::Boundary;
  case AddrBase::Param:
  case AddrBase::Pool:
  case AddrBase::Reg: return Space::Global;
  }
  return Space::Global;
}

/// Whether the bytes [a, a + sa) and [b, b + sb) are known to be different.
bool apart(const Location &a, uint32_t sa, const Location &b, uint32_t sb) {
  if (a.addr.base == AddrBase::Reg || b.addr.base == AddrBase::Reg) return false;
  if (space_of(a) != space_of(b)) return true;
  // Two classes of the boundary pool are disjoint windows (accesses stay inside theirs).
  if (a.addr.base == AddrBase::Class && b.addr.base == AddrBase::Class &&
      a.addr.base_id != b.addr.base_id)
    return true;
  const bool same_base = a.addr.base == b.addr.base && a.addr.base_id == b.addr.base_id;
  const bool same_index = a.addr.index == b.addr.index && a.index_version == b.index_version &&
                          (a.addr.index == kNoReg || a.addr.scale == b.addr.scale);
  if (!same_base || !same_index) return false;
  return a.addr.disp + sa <= b.addr.disp || b.addr.disp + sb <= a.addr.disp;
}

class Forwarding {
public:
  explicit Forwarding(Kernel &k) : k_(k), version_(kNumSlots, 0) {}

  bool run() {
    const Cfg cfg = build_cfg(k_);
    bool changed = false;
    for (const BasicBlock &block : cfg.blocks) {
      known_.clear();
      for (uint32_t i = block.begin; i < block.end; ++i) changed |= visit(k_.insts[i]);
    }
    return changed;
  }

private:
  Location location(const Address &a, bool shared) const {
    Location l{a, 0, 0, shared};
    if (a.base == AddrBase::Reg) l.base_version = version_[a.base_id];
    if (a.index != kNoReg && !is_special(a.index)) l.index_version = version_[a.index];
    return l;
  }

  uint32_t version(Reg r) const { return is_special(r) ? 0 : version_[r]; }

  bool visit(Instruction &inst) {
    const bool load = inst.op == Opcode::Ld || inst.op == Opcode::Lds;
    const bool store = inst.op == Opcode::St || inst.op == Opcode::Sts;
    const bool shared = inst.op == Opcode::Lds || inst.op == Opcode::Sts;
    bool changed = false;
    if (load && !inst.guard.present) {
      const Location at = location(inst.operands[1].addr, shared);
      for (const Known &v : known_)
        if (v.at == at && v.type == inst.type && version(v.value) == v.value_version) {
          inst = detail::mov(inst, inst.operands[0].index, v.value, inst.type);
          changed = true;
          break;
        }
    }
    const OpcodeInfo &row = inst.info();
    if (store) {
      const Location at = location(inst.operands[0].addr, shared);
      const uint32_t size = type_size(inst.type);
      std::erase_if(known_, [&](const Known &v) { return !apart(v.at, v.size, at, size); });
    } else if ((row.flags & (kFlagWritesMemory | kFlagBarrier | kFlagEffect)) != 0) {
      known_.clear();
    }
    // Record what this instruction leaves in a register, with the versions before its
    // definitions (a load into its own index register describes the old address).
    std::optional<Known> fact;
    if (!inst.guard.present && store) {
      fact = Known{location(inst.operands[0].addr, shared), inst.type, type_size(inst.type),
                   inst.operands[1].index, 0};
    } else if (!inst.guard.present && (inst.op == Opcode::Ld || inst.op == Opcode::Lds)) {
      fact = Known{location(inst.operands[1].addr, shared), inst.type, type_size(inst.type),
                   inst.operands[0].index, 0};
    }
    instruction_defs(inst, defs_);
    for (const RegAccess &d : defs_)
      if (d.pred || !is_special(d.reg)) ++version_[slot_of(d)];
    if (fact) {
      fact->value_version = version(fact->value);
      known_.push_back(*fact);
    }
    return changed;
  }

  Kernel &k_;
  std::vector<uint32_t> version_;
  std::vector<Known> known_;
  std::vector<RegAccess> defs_;
};

} // namespace

bool forward_memory(Kernel &k) {
  return Forwarding(k).run();
}

} // namespace hologram::opt
