// Canonical binary encoding (LEB128 integers, length-prefixed strings) and the XXH3-128
// content hash over it.
#include "hologram/isa/encoding.h"

#include <xxhash.h>

#include <cstdio>

namespace hologram::isa {

namespace {
constexpr uint8_t kMagic[6] = {'H', 'G', 'I', 'S', 'A', 1};

class Writer {
public:
  void u8(uint8_t v) { out.push_back(v); }
  void uv(uint64_t v) {
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      out.push_back(b | (v ? 0x80 : 0));
    } while (v);
  }
  void sv(int64_t v) { uv((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void str(std::string_view s) {
    uv(s.size());
    out.insert(out.end(), s.begin(), s.end());
  }
  std::vector<uint8_t> out;
};

class Reader {
public:
  explicit Reader(std::span<const uint8_t> b) : bytes_(b) {}
  bool u8(uint8_t &v) {
    if (pos_ >= bytes_.size()) return fail("truncated");
    v = bytes_[pos_++];
    return true;
  }
  bool uv(uint64_t &v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = 0;
      if (!u8(b)) return false;
      v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return true;
    }
    return fail("malformed integer");
  }
  bool sv(int64_t &v) {
    uint64_t u;
    if (!uv(u)) return false;
    v = static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
    return true;
  }
  bool str(std::string &s) {
    uint64_t n;
    if (!uv(n)) return false;
    if (n > bytes_.size() - pos_) return fail("truncated string");
    s.assign(reinterpret_cast<const char *>(bytes_.data() + pos_), n);
    pos_ += n;
    return true;
  }
  template <typename T> bool bounded(T &out, uint64_t limit, const char *what) {
    uint64_t v;
    if (!uv(v)) return false;
    if (v >= limit) return fail(std::string("bad ") + what);
    out = static_cast<T>(v);
    return true;
  }
  bool fail(std::string msg) {
    if (error.empty()) error = msg + " at byte " + std::to_string(pos_);
    return false;
  }
  [[nodiscard]] bool at_end() const { return pos_ == bytes_.size(); }
  [[nodiscard]] size_t remaining() const { return bytes_.size() - pos_; }
  std::string error;

private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

void encode_operand(Writer &w, const Operand &op) {
  w.u8(static_cast<uint8_t>(op.kind));
  switch (op.kind) {
  case OperandKind::None: break;
  case OperandKind::Reg:
  case OperandKind::Pred:
  case OperandKind::Label:
  case OperandKind::Param: w.uv(op.index); break;
  case OperandKind::Imm: w.uv(op.imm); break;
  case OperandKind::Addr:
    w.u8(static_cast<uint8_t>(op.addr.base));
    w.uv(op.addr.base_id);
    w.uv(op.addr.index);
    w.uv(op.addr.scale);
    w.sv(op.addr.disp);
    break;
  }
}

bool decode_operand(Reader &r, Operand &op) {
  if (!r.bounded(op.kind, 7, "operand kind")) return false;
  switch (op.kind) {
  case OperandKind::None: return true;
  case OperandKind::Reg:
  case OperandKind::Pred:
  case OperandKind::Label:
  case OperandKind::Param: return r.bounded(op.index, 0x10000, "operand index");
  case OperandKind::Imm: return r.uv(op.imm);
  case OperandKind::Addr:
    return r.bounded(op.addr.base, 6, "address base") &&
           r.bounded(op.addr.base_id, 0x10000, "address base") &&
           r.bounded(op.addr.index, 0x10000, "index register") &&
           r.bounded(op.addr.scale, 0x100000000ull, "scale") && r.sv(op.addr.disp);
  }
  return false;
}
} // namespace

std::vector<uint8_t> encode_module(const Module &m) {
  Writer w;
  for (uint8_t b : kMagic) w.u8(b);
  w.uv(m.kernels.size());
  for (const auto &k : m.kernels) {
    w.str(k.name);
    w.uv(k.params.size());
    for (const auto &p : k.params) {
      w.str(p.name);
      w.u8(static_cast<uint8_t>(p.kind));
      w.u8(static_cast<uint8_t>(p.type));
      w.u8(static_cast<uint8_t>(p.access));
    }
    w.uv(k.labels.size());
    for (const auto &l : k.labels) {
      w.str(l.name);
      w.uv(l.target == kUndefinedLabel ? 0 : uint64_t{l.target} + 1);
    }
    w.uv(k.insts.size());
    for (const auto &inst : k.insts) {
      w.uv(static_cast<uint64_t>(inst.op));
      w.u8(static_cast<uint8_t>(inst.type));
      w.u8(static_cast<uint8_t>(inst.type2));
      w.u8(inst.sub);
      w.u8(static_cast<uint8_t>((inst.guard.present ? 1 : 0) | (inst.guard.negate ? 2 : 0)));
      w.u8(inst.guard.pred);
      w.uv(inst.operands.size());
      for (const auto &op : inst.operands) encode_operand(w, op);
    }
    w.uv(k.shared_bytes);
  }
  return std::move(w.out);
}

Expected<Module> decode_module(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  auto fail = [&]() -> Expected<Module> {
    return Status{ErrorCode::InvalidModule, r.error.empty() ? "malformed module" : r.error};
  };
  for (uint8_t b : kMagic) {
    uint8_t v = 0;
    if (!r.u8(v) || v != b) {
      r.fail("not an Atlas ISA module (bad magic or version)");
      return fail();
    }
  }
  Module m;
  uint64_t nk;
  if (!r.bounded(nk, 1u << 20, "kernel count")) return fail();
  for (uint64_t ki = 0; ki < nk; ++ki) {
    Kernel k;
    uint64_t n;
    if (!r.str(k.name) || !r.bounded(n, 1u << 16, "parameter count")) return fail();
    k.params.resize(n);
    for (auto &p : k.params)
      if (!r.str(p.name) || !r.bounded(p.kind, 3, "parameter kind") ||
          !r.bounded(p.type, kNumTypes, "parameter type") || !r.bounded(p.access, 3, "access"))
        return fail();
    if (!r.bounded(n, 1u << 16, "label count")) return fail();
    k.labels.resize(n);
    for (auto &l : k.labels) {
      uint64_t t;
      if (!r.str(l.name) || !r.bounded(t, 0xffffffffull, "label target")) return fail();
      l.target = t == 0 ? kUndefinedLabel : static_cast<uint32_t>(t - 1);
    }
    if (!r.bounded(n, 1u << 28, "instruction count")) return fail();
    k.insts.resize(n);
    for (auto &inst : k.insts) {
      uint8_t g = 0;
      uint64_t nops;
      if (!r.bounded(inst.op, kNumOpcodes, "opcode") ||
          !r.u8(reinterpret_cast<uint8_t &>(inst.type)) ||
          !r.u8(reinterpret_cast<uint8_t &>(inst.type2)) || !r.u8(inst.sub) || !r.u8(g) ||
          !r.u8(inst.guard.pred) || !r.bounded(nops, 64, "operand count"))
        return fail();
      if (static_cast<unsigned>(inst.type) >= kNumTypes ||
          static_cast<unsigned>(inst.type2) >= kNumTypes || g > 3 || inst.guard.pred >= kNumPreds) {
        r.fail("bad instruction header");
        return fail();
      }
      inst.guard.present = g & 1;
      inst.guard.negate = g & 2;
      inst.operands.resize(nops);
      for (auto &op : inst.operands)
        if (!decode_operand(r, op)) return fail();
    }
    if (!r.bounded(k.shared_bytes, (uint64_t{1} << 30) + 1, "shared size")) return fail();
    m.kernels.push_back(std::move(k));
  }
  if (!r.at_end()) {
    r.fail("trailing bytes");
    return fail();
  }
  return m;
}

namespace {
constexpr uint8_t kLocationsMagic[4] = {'H', 'G', 'L', 1};

/// Every location of m in one fixed order: kernel, parameters, labels, instructions.
template <typename M, typename F> void each_location(M &m, F &&f) {
  for (auto &k : m.kernels) {
    f(k.loc);
    for (auto &p : k.params) f(p.loc);
    for (auto &l : k.labels) f(l.loc);
    for (auto &i : k.insts) f(i.loc);
  }
}
} // namespace

std::vector<uint8_t> encode_module_with_locations(const Module &m) {
  const std::vector<uint8_t> body = encode_module(m);
  Writer w;
  w.uv(body.size());
  w.out.insert(w.out.end(), body.begin(), body.end());
  for (uint8_t b : kLocationsMagic) w.u8(b);
  each_location(m, [&](const SourceLoc &loc) {
    w.uv(loc.line);
    w.uv(loc.col);
  });
  return std::move(w.out);
}

Expected<Module> decode_module_with_locations(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  auto fail = [&](std::string why) -> Expected<Module> {
    return Status{ErrorCode::InvalidModule, std::move(why)};
  };
  uint64_t size = 0;
  if (!r.uv(size)) return fail(r.error);
  const size_t start = bytes.size() - r.remaining();
  if (size > r.remaining()) return fail("truncated module (" + std::to_string(size) + " bytes)");
  auto m = decode_module(bytes.subspan(start, size));
  if (!m) return m;
  Reader locs(bytes.subspan(start + size));
  for (uint8_t b : kLocationsMagic) {
    uint8_t v = 0;
    if (!locs.u8(v) || v != b) return fail("no source locations after the module");
  }
  bool ok = true;
  each_location(*m, [&](SourceLoc &loc) {
    ok = ok && locs.bounded(loc.line, 0x100000000ull, "line") &&
         locs.bounded(loc.col, 0x100000000ull, "column");
  });
  if (!ok) return fail("source locations: " + locs.error);
  if (!locs.at_end()) return fail("trailing bytes after the source locations");
  return m;
}

std::vector<uint8_t> encode_options(const CompileOptions &o) {
  Writer w;
  w.str("options/1");
  w.uv(o.opt_level);
  w.u8(static_cast<uint8_t>(o.fast_math | (o.bounds_check << 1) | (o.check_div << 2) |
                            (o.debug_info << 3)));
  for (uint32_t b : o.block) w.uv(b);
  w.uv(o.targets.size());
  for (const auto &t : o.targets) w.str(t);
  return std::move(w.out);
}

std::string ContentHash::hex() const {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return buf;
}

ContentHash content_hash(const Module &m, const CompileOptions &o) {
  auto body = encode_module(m);
  auto opts = encode_options(o);
  XXH3_state_t *state = XXH3_createState();
  XXH3_128bits_reset(state);
  XXH3_128bits_update(state, body.data(), body.size());
  XXH3_128bits_update(state, opts.data(), opts.size());
  XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return {h.high64, h.low64};
}

} // namespace hologram::isa
