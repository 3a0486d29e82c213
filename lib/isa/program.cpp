// Special registers, parameters, and kernel-level helpers of the program representation.
#include "hologram/isa/program.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <stdexcept>

namespace hologram::isa {

const Operand &operand_named(const Instruction &inst, std::string_view name) {
  // The table's names split once (operand_names), not at each call: the runtime's plans read
  // a whole-launch instruction's operands by name at every launch.
  const auto names = operand_names(inst.op);
  const auto at = static_cast<size_t>(std::ranges::find(names, name) - names.begin());
  if (at >= names.size() || at >= inst.operands.size())
    throw std::logic_error("'" + std::string(inst.info().mnemonic) + "' has no operand '" +
                           std::string(name) + "'");
  return inst.operands[at];
}

namespace {
struct SpecialInfo {
  std::string_view name;
  Type type;
  bool varies_in_block;
  bool tells_block; // see special_tells_block
};
constexpr std::array<SpecialInfo, kNumSpecials> kSpecials = {{
    {"%lane.x", Type::U32, true, true},
    {"%block.x", Type::U32, false, true},
    {"%bdim.x", Type::U32, false, false},
    {"%gid", Type::U64, true, false},
    {"%lane.y", Type::U32, true, true},
    {"%lane.z", Type::U32, true, true},
    {"%block.y", Type::U32, false, true},
    {"%block.z", Type::U32, false, true},
    {"%bdim.y", Type::U32, false, false},
    {"%bdim.z", Type::U32, false, false},
    {"%gdim.x", Type::U32, false, false},
    {"%gdim.y", Type::U32, false, false},
    {"%gdim.z", Type::U32, false, false},
    {"%gid.x", Type::U64, true, true},
    {"%gid.y", Type::U64, true, true},
    {"%gid.z", Type::U64, true, true},
    {"%gsize", Type::U64, false, false},
}};
} // namespace

std::string_view special_name(Special s) {
  return kSpecials[static_cast<size_t>(s)].name;
}
Type special_type(Special s) {
  return kSpecials[static_cast<size_t>(s)].type;
}
bool special_varies_in_block(Special s) {
  return kSpecials[static_cast<size_t>(s)].varies_in_block;
}
bool special_tells_block(Special s) {
  return kSpecials[static_cast<size_t>(s)].tells_block;
}
std::optional<Special> parse_special(std::string_view name) {
  for (size_t i = 0; i < kSpecials.size(); ++i)
    if (kSpecials[i].name == name) return static_cast<Special>(i);
  return std::nullopt;
}

std::string_view access_name(Access a) {
  switch (a) {
  case Access::Read: return "read";
  case Access::Write: return "write";
  case Access::ReadWrite: return "readwrite";
  }
  return "readwrite";
}

std::optional<unsigned> Kernel::find_param(std::string_view n) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == n) return static_cast<unsigned>(i);
  return std::nullopt;
}

std::optional<unsigned> Kernel::find_label(std::string_view n) const {
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i].name == n) return static_cast<unsigned>(i);
  return std::nullopt;
}

bool Kernel::uses_atlas_state() const {
  for (const auto &inst : insts) {
    if (inst.info().family == OpFamily::Atlas) return true;
    for (const auto &op : inst.operands)
      if (op.kind == OperandKind::Addr &&
          (op.addr.base == AddrBase::Class || op.addr.base == AddrBase::Boundary))
        return true;
  }
  return false;
}

bool Kernel::is_launch_level() const {
  return std::any_of(insts.begin(), insts.end(),
                     [](const Instruction &i) { return i.info().launch_level(); });
}

void Kernel::canonicalize_labels() {
  std::vector<unsigned> order(labels.size());
  std::iota(order.begin(), order.end(), 0u);
  // By target, then in definition order (the index breaks ties, so the order is total).
  std::sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    const Label &la = labels[a], &lb = labels[b];
    bool ua = la.target == kUndefinedLabel, ub = lb.target == kUndefinedLabel;
    if (ua != ub) return ub;
    if (ua) return la.name < lb.name || (la.name == lb.name && a < b);
    return la.target < lb.target || (la.target == lb.target && a < b);
  });
  std::vector<unsigned> renumber(labels.size());
  std::vector<Label> sorted;
  sorted.reserve(labels.size());
  for (unsigned i = 0; i < order.size(); ++i) {
    renumber[order[i]] = i;
    sorted.push_back(std::move(labels[order[i]]));
  }
  labels = std::move(sorted);
  for (auto &inst : insts)
    for (auto &op : inst.operands)
      if (op.kind == OperandKind::Label) op.index = static_cast<uint16_t>(renumber[op.index]);
}

bool Kernel::same_as(const Kernel &o) const {
  if (name != o.name || params != o.params || labels != o.labels ||
      shared_bytes != o.shared_bytes || insts.size() != o.insts.size())
    return false;
  for (size_t i = 0; i < insts.size(); ++i)
    if (!insts[i].same_as(o.insts[i])) return false;
  return true;
}

const Kernel *Module::find_kernel(std::string_view n) const {
  for (const auto &k : kernels)
    if (k.name == n) return &k;
  return nullptr;
}

Status kernel_error(ErrorCode code, const std::string &source, const Kernel &kernel, SourceLoc loc,
                    std::string message) {
  Diagnostic d;
  d.file = source;
  d.loc = loc;
  d.kernel = kernel.name;
  d.message = std::move(message);
  d.notes.push_back("in kernel '" + kernel.name + "'");
  return {code, std::move(d)};
}

bool Module::same_as(const Module &o) const {
  if (kernels.size() != o.kernels.size()) return false;
  for (size_t i = 0; i < kernels.size(); ++i)
    if (!kernels[i].same_as(o.kernels[i])) return false;
  return true;
}

} // namespace hologram::isa
