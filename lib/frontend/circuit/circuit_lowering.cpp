// Lowering of circuits to one Atlas ISA kernel over the boundary pool (SPEC §6.2): one lane per
// element index of a class; every op acts on the same element index of its classes, so the
// lanes are independent and the kernel needs no barriers.
#include "hologram/frontend/circuit.h"
#include "hologram/isa/atlas.h"
#include "hologram/isa/builder.h"
#include "hologram/isa/verifier.h"

namespace hologram::frontend {

uint32_t circuit_elements_per_class(isa::Type t) {
  return atlas::kClassBytes / isa::type_size(t);
}

namespace {

using isa::Opcode;
using isa::Type;

class CircuitLowering {
public:
  explicit CircuitLowering(const CircuitOptions &opts) : b_(opts.kernel_name), t_(opts.element) {}

  isa::Kernel run(const Circuit &c) {
    const uint32_t size = isa::type_size(t_);
    // r1 = elements per class, r2 = byte offset of this lane's element in a class,
    // r3 = elements per page, r4 = 256 (page size).
    b_.mov_imm_bits(Type::U64, 1, circuit_elements_per_class(t_));
    unsigned done = b_.label("done");
    b_.emit_sub(Opcode::Set, static_cast<uint8_t>(isa::CmpCode::Ge), Type::U64,
                {isa::P(0), isa::Sp(isa::Special::Gid), isa::R(1)});
    b_.bra(done, 0);
    b_.mov_imm_bits(Type::U64, 5, size);
    b_.emit(Opcode::Mul, Type::U64, {isa::R(2), isa::Sp(isa::Special::Gid), isa::R(5)});
    bool paged = false;
    for (const auto &branch : c.branches)
      for (const auto &op : branch) paged |= !op.range && op.a.page >= 0;
    if (paged) { // p1: this lane's element lies in the first page's worth of elements
      b_.mov_imm_bits(Type::U64, 3, atlas::kBytesPerPage / size);
      b_.emit_sub(Opcode::Set, static_cast<uint8_t>(isa::CmpCode::Lt), Type::U64,
                  {isa::P(1), isa::Sp(isa::Special::Gid), isa::R(3)});
    }
    for (const auto &branch : c.branches)
      for (const auto &op : branch) lower(op);
    b_.bind(done);
    b_.emit(Opcode::Exit, Type::None, {});
    return b_.finish();
  }

private:
  /// The address of this lane's element in `r`: [class k + r2] or, for a page, the page's
  /// window (only lanes below the elements per page take part; see `paged`).
  isa::Operand addr(const ClassRef &r) {
    isa::Address a;
    a.base = isa::AddrBase::Class;
    a.base_id = static_cast<uint16_t>(r.cls);
    a.index = 2;
    a.disp = r.page >= 0 ? static_cast<int64_t>(r.page) * atlas::kBytesPerPage : 0;
    return isa::Operand::address(a);
  }
  void load(isa::Reg d, const ClassRef &r) { b_.emit(Opcode::Ld, t_, {isa::R(d), addr(r)}); }
  void store(const ClassRef &r, isa::Reg s) { b_.emit(Opcode::St, t_, {addr(r), isa::R(s)}); }

  /// d = x op y in the element type (f16/bf16 compute in f32 and round back).
  void arith(Opcode op, isa::Reg d, isa::Reg x, isa::Reg y) {
    if (!isa::is_storage_only(t_)) {
      b_.emit(op, t_, {isa::R(d), isa::R(x), isa::R(y)});
      return;
    }
    b_.emit_cvt(Type::F32, t_, 20, x);
    b_.emit_cvt(Type::F32, t_, 21, y);
    b_.emit(op, Type::F32, {isa::R(22), isa::R(20), isa::R(21)});
    b_.emit_cvt(t_, Type::F32, d, 22);
  }

  void lower(const CircuitOp &op) {
    if (op.gen == Generator::Mark || op.gen == Generator::Quote || op.gen == Generator::Evaluate)
      return;
    // An op on single pages runs only in the lanes below the elements of one page.
    bool paged = !op.range && op.a.page >= 0;
    unsigned skip = 0;
    if (paged) {
      skip = b_.label("skip" + std::to_string(counter_++));
      b_.bra(skip, 1, /*negate=*/true);
    }
    switch (op.gen) {
    case Generator::Copy:
      load(10, op.a);
      store(op.b, 10);
      break;
    case Generator::Swap:
      load(10, op.a);
      load(11, op.b);
      store(op.a, 11);
      store(op.b, 10);
      break;
    case Generator::Merge:
      if (op.range) {
        for (uint32_t k : op.classes) {
          ClassRef r{k, -1};
          load(10, r);
          arith(Opcode::Add, 10, 10, 10);
          store(r, 10);
        }
        break;
      }
      [[fallthrough]];
    case Generator::Split:
      load(10, op.a);
      load(11, op.b);
      arith(op.gen == Generator::Merge ? Opcode::Add : Opcode::Sub, 12, 10, 11);
      store(op.c, 12);
      break;
    case Generator::Evaluate:
    case Generator::Mark:
    case Generator::Quote: break;
    }
    if (paged) b_.bind(skip);
  }

  isa::KernelBuilder b_;
  Type t_;
  unsigned counter_ = 0;
};

} // namespace

std::optional<isa::Module> lower_circuit(const Circuit &c, const CircuitOptions &opts,
                                         const std::string &file, DiagnosticEngine &diags) {
  if (!isa::is_numeric(opts.element)) {
    diags.error(file, {}, "--circuit-type must be a numeric type");
    return std::nullopt;
  }
  CircuitLowering lowering(opts);
  isa::Module m;
  m.source_name = file;
  m.kernels.push_back(lowering.run(c));
  DiagnosticEngine internal;
  if (!isa::verify_module(m, internal)) {
    diags.error(file, {},
                "internal compiler error: the ISA generated for this circuit does not verify",
                {internal.to_string()});
    return std::nullopt;
  }
  return m;
}

std::optional<isa::Module> compile_circuit(std::string_view text, const std::string &file,
                                           const CircuitOptions &opts, DiagnosticEngine &diags) {
  auto c = parse_circuit(text, file, diags);
  if (!c) return std::nullopt;
  return lower_circuit(opts.canonicalize ? canonicalize(*c) : *c, opts, file, diags);
}

} // namespace hologram::frontend
