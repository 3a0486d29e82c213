// Verifier rule family: operands. Operand kinds against the instruction table, accepted
// types, parameter and label resolution, addresses and memory spaces, writes to special
// registers, literal ranges, and the restrictions of whole-launch kernels.
#include "verify_context.h"

#include "hologram/isa/atlas.h"
#include "hologram/support/unreachable.h"

namespace hologram::isa::detail {

namespace {

OperandKind expected_kind(OperandRole role) {
  switch (role) {
  case OperandRole::DstPred:
  case OperandRole::SrcPred: return OperandKind::Pred;
  case OperandRole::LiteralT:
  case OperandRole::Count: return OperandKind::Imm;
  case OperandRole::Label: return OperandKind::Label;
  case OperandRole::ScalarParam:
  case OperandRole::BufferParam:
  case OperandRole::OptBufferParam:
  case OperandRole::MemParam: return OperandKind::Param;
  case OperandRole::Address: return OperandKind::Addr;
  case OperandRole::CvtDst:
  case OperandRole::CvtSrc:
  case OperandRole::DstT:
  case OperandRole::DstU32:
  case OperandRole::DstU64:
  case OperandRole::LoopCounter:
  case OperandRole::RegWindow:
  case OperandRole::SrcF64:
  case OperandRole::SrcT:
  case OperandRole::SrcU32:
  case OperandRole::SrcU64: return OperandKind::Reg;
  }
  unreachable_enum("OperandRole");
}

bool is_def_role(OperandRole r) {
  return r == OperandRole::DstT || r == OperandRole::DstU32 || r == OperandRole::DstU64 ||
         r == OperandRole::CvtDst || r == OperandRole::LoopCounter;
}

bool valid_reg(Reg r) {
  return r < 256 + (kNumSpecials - 4);
}

class OperandChecker {
public:
  OperandChecker(VerifyContext &cx, size_t i)
      : cx_(cx), k_(cx.kernel), i_(i), inst_(k_.insts[i]), row_(inst_.info()) {}

  void run() {
    if (!check_shape()) return;
    check_type();
    check_sub();
    for (size_t j = 0; j < inst_.operands.size(); ++j) check_operand(j);
    check_specific();
  }

private:
  void error(const std::string &msg, std::vector<std::string> notes = {}) {
    cx_.error_at(i_, msg, std::move(notes));
  }
  std::string mnem() const { return print_mnemonic(inst_); }

  bool check_shape() {
    if (inst_.operands.size() != row_.num_operands()) {
      error("'" + std::string(row_.mnemonic) + "' takes " + std::to_string(row_.num_operands()) +
            " operand(s), this one has " + std::to_string(inst_.operands.size()));
      return false;
    }
    for (size_t j = 0; j < inst_.operands.size(); ++j) {
      auto role = row_.role(j);
      auto kind = inst_.operands[j].kind;
      bool ok = kind == expected_kind(role) ||
                (role == OperandRole::OptBufferParam && kind == OperandKind::None);
      if (!ok) {
        error("operand " + std::to_string(j + 1) + " of '" + std::string(row_.mnemonic) +
              "' has the wrong kind");
        return false;
      }
    }
    if (inst_.guard.present && inst_.op != Opcode::Bra) {
      error("only 'bra' takes a predicate guard");
      return false;
    }
    return true;
  }

  void check_type() {
    if (inst_.op == Opcode::Cvt) {
      if (!is_numeric(inst_.type) || !is_numeric(inst_.type2))
        error("'cvt' converts between numeric types");
      return;
    }
    if (!row_.typed()) {
      if (inst_.type != Type::None) error("'" + std::string(row_.mnemonic) + "' takes no type");
      return;
    }
    if (row_.types.contains(inst_.type)) return;
    std::string t(type_name(inst_.type));
    if (is_storage_only(inst_.type)) {
      error("'" + mnem() + "': " + t + " is a storage type; arithmetic on it is not allowed",
            {"convert to f32 first: cvt.f32." + t});
    } else if (row_.types.bits() == types::kFloat.bits()) {
      error("'" + std::string(row_.mnemonic) + "' is defined on f32 and f64 only, not " + t);
    } else if (row_.types.bits() == types::kInt.bits()) {
      error("'" + std::string(row_.mnemonic) + "' is defined on integer types only, not " + t);
    } else {
      error("'" + std::string(row_.mnemonic) + "' does not accept type " + t);
    }
  }

  void check_sub() {
    if (row_.sub == SubKind::None) return;
    if (inst_.sub >= sub_count(row_.sub)) {
      error("invalid sub-operation for '" + std::string(row_.mnemonic) + "'");
      return;
    }
    if (row_.sub == SubKind::Cmp && is_unordered(static_cast<CmpCode>(inst_.sub)) &&
        !is_float(inst_.type))
      error("the unordered comparison '" + mnem() + "' is only defined on floats",
            {"use the ordered form (set" +
             std::string(cmp_name(static_cast<CmpCode>(inst_.sub - 6))) + ") on integers"});
    if (row_.sub == SubKind::AtomicOp && is_float(inst_.type)) {
      auto a = static_cast<AtomicOp>(inst_.sub);
      if (a == AtomicOp::And || a == AtomicOp::Or || a == AtomicOp::Xor)
        error("'" + mnem() + "': bitwise atomics are defined on integer types only");
    }
    if (row_.sub == SubKind::MapUnary && is_int(inst_.type)) {
      auto m = static_cast<MapUnaryOp>(inst_.sub);
      if (m != MapUnaryOp::Abs && m != MapUnaryOp::Neg && m != MapUnaryOp::Relu)
        error("'" + mnem() + "' is defined on f32 and f64 only");
    }
    if (row_.sub == SubKind::MapBinary && is_int(inst_.type)) {
      auto m = static_cast<MapBinaryOp>(inst_.sub);
      if (m == MapBinaryOp::Pow || m == MapBinaryOp::Atan2)
        error("'" + mnem() + "' is defined on f32 and f64 only");
    }
  }

  const Param *param_at(size_t j) {
    unsigned p = inst_.operands[j].index;
    if (p >= k_.params.size()) {
      error("operand " + std::to_string(j + 1) + " names parameter #" + std::to_string(p) +
            ", which does not exist");
      return nullptr;
    }
    return &k_.params[p];
  }

  void check_operand(size_t j) {
    const Operand &op = inst_.operands[j];
    auto role = row_.role(j);
    switch (op.kind) {
    case OperandKind::Reg:
      if (!valid_reg(op.index)) {
        error("invalid register number " + std::to_string(op.index));
        return;
      }
      if (is_def_role(role) && is_special(op.index))
        error("'" + reg_name(op.index) + "' is a read-only special register",
              {"special registers (r252..r255 and the %-names) cannot be written"});
      if (role == OperandRole::RegWindow) {
        uint64_t n = inst_.operands[j + 1].imm;
        if (op.index + n > kFirstSpecialReg)
          error("the register window r" + std::to_string(op.index) + ".. of " + std::to_string(n) +
                " registers runs past r251");
      }
      return;
    case OperandKind::Pred:
      if (op.index >= kNumPreds) error("invalid predicate number " + std::to_string(op.index));
      return;
    case OperandKind::Label:
      if (op.index >= k_.labels.size()) {
        error("invalid label reference");
      } else if (k_.labels[op.index].target == kUndefinedLabel) {
        std::vector<std::string> defined;
        for (const auto &l : k_.labels)
          if (l.target != kUndefinedLabel) defined.push_back(l.name);
        auto near = closest_match(k_.labels[op.index].name, defined);
        error("undefined label '@" + k_.labels[op.index].name + "'",
              near.empty() ? std::vector<std::string>{}
                           : std::vector<std::string>{"did you mean '@" + near + "'?"});
      } else if (k_.labels[op.index].target > k_.insts.size()) {
        error("label '@" + k_.labels[op.index].name + "' points past the end of the kernel");
      }
      return;
    case OperandKind::Imm: check_literal(j, role, op.imm); return;
    case OperandKind::Param: check_param_operand(j, role); return;
    case OperandKind::Addr: check_address(op.addr); return;
    case OperandKind::None: return;
    }
  }

  void check_literal(size_t j, OperandRole role, uint64_t v) {
    if (role == OperandRole::LiteralT) {
      unsigned bits = type_bits(inst_.type);
      if (bits < 64 && (v >> bits) != 0)
        error("literal bits 0x" + std::to_string(v) + " do not fit in " +
              std::string(type_name(inst_.type)));
      return;
    }
    (void)j;
  }

  void check_param_operand(size_t j, OperandRole role) {
    const Param *p = param_at(j);
    if (!p) return;
    std::string name = "%" + p->name;
    switch (role) {
    case OperandRole::ScalarParam:
      if (p->kind != ParamKind::Scalar) {
        error("'param' reads scalar parameters; " + name + " is a " +
              (p->kind == ParamKind::Buffer ? "buffer" : "pool"));
      } else if (p->type != inst_.type) {
        error("'" + mnem() + "' reads " + name + " as " + std::string(type_name(inst_.type)) +
                  ", but it is declared " + std::string(type_name(p->type)),
              {"use param." + std::string(type_name(p->type))});
      }
      return;
    case OperandRole::MemParam:
      if (p->kind == ParamKind::Scalar)
        error("'addr' needs a buffer or pool parameter; " + name + " is a scalar");
      return;
    case OperandRole::BufferParam:
    case OperandRole::OptBufferParam:
      if (p->kind != ParamKind::Buffer) {
        error("operand " + std::to_string(j + 1) + " of '" + mnem() + "' must be a buffer; " +
              name + " is not");
      } else if (p->type != inst_.type) {
        error("'" + mnem() + "' works on " + std::string(type_name(inst_.type)) + " arrays, but " +
              name + " is buffer<" + std::string(type_name(p->type)) + ">");
      }
      return;
    case OperandRole::Address:
    case OperandRole::Count:
    case OperandRole::CvtDst:
    case OperandRole::CvtSrc:
    case OperandRole::DstPred:
    case OperandRole::DstT:
    case OperandRole::DstU32:
    case OperandRole::DstU64:
    case OperandRole::Label:
    case OperandRole::LiteralT:
    case OperandRole::LoopCounter:
    case OperandRole::RegWindow:
    case OperandRole::SrcF64:
    case OperandRole::SrcPred:
    case OperandRole::SrcT:
    case OperandRole::SrcU32:
    case OperandRole::SrcU64: return;
    }
  }

  void check_address(const Address &a) {
    bool load = row_.flags & kFlagReadsMemory, store = row_.flags & kFlagWritesMemory;
    if (inst_.op == Opcode::Addr) return;
    bool shared_op = inst_.op == Opcode::Lds || inst_.op == Opcode::Sts;
    bool pool_op = row_.pool_access();
    if (shared_op && a.base != AddrBase::Shared)
      error("'" + mnem() + "' accesses shared memory; the address must be [shared + ...]");
    if (!shared_op && a.base == AddrBase::Shared && inst_.op != Opcode::Atom &&
        inst_.op != Opcode::AtomCas && inst_.op != Opcode::ReduceMem)
      error("shared memory is accessed with lds/sts",
            {"use '" +
             std::string(inst_.op == Opcode::St || inst_.op == Opcode::PoolSt ? "sts" : "lds") +
             "." + std::string(type_name(inst_.type)) + "'"});
    if (pool_op && a.base != AddrBase::Pool && a.base != AddrBase::Reg)
      error("'" + mnem() + "' needs a pool address: [%pool:NAME + offset] or [rHandle + offset]");
    if (a.index != kNoReg && !valid_reg(a.index)) error("invalid index register");
    if (a.base == AddrBase::Reg && !valid_reg(a.base_id)) error("invalid base register");
    unsigned elem = type_size(inst_.type);
    switch (a.base) {
    case AddrBase::Param:
    case AddrBase::Pool: {
      if (a.base_id >= k_.params.size()) {
        error("address names parameter #" + std::to_string(a.base_id) + ", which does not exist");
        return;
      }
      const Param &p = k_.params[a.base_id];
      std::string name = "%" + p.name;
      if (a.base == AddrBase::Pool) {
        if (p.kind != ParamKind::Pool) error(name + " is not a pool");
        break;
      }
      if (p.kind != ParamKind::Buffer) {
        error(name + " is not a buffer",
              {p.kind == ParamKind::Pool ? "write [%pool:" + p.name + " + ...]"
                                         : "scalars are read with 'param'"});
        return;
      }
      if (p.type != inst_.type)
        error("'" + mnem() + "' accesses " + name + " as " + std::string(type_name(inst_.type)) +
              ", but it is buffer<" + std::string(type_name(p.type)) + ">");
      if (load && p.access == Access::Write)
        error("'" + mnem() + "' reads " + name + ", which is declared write-only");
      if (store && p.access == Access::Read)
        error("'" + mnem() + "' writes " + name + ", which is declared read-only");
      elem = type_size(p.type);
      break;
    }
    case AddrBase::Class:
      if (a.base_id >= atlas::kNumClasses)
        error("class " + std::to_string(a.base_id) + " is out of range (0..95)");
      break;
    case AddrBase::Boundary:
      if (a.disp < 0 || static_cast<uint64_t>(a.disp) >= atlas::kBoundaryPoolBytes)
        error("phi coordinate outside the boundary pool");
      break;
    case AddrBase::Shared:
    case AddrBase::Reg: break;
    }
    if (a.index != kNoReg && a.scale != 1 && a.scale != elem)
      error("index scale " + std::to_string(a.scale) + " does not match the element size " +
                std::to_string(elem),
            {"write [base + rI*" + std::to_string(elem) +
             "] for an element index, or [base + rI] for a byte offset"});
  }

  /// Ranges of the literals the signature cannot state (an `n` is any non-negative integer),
  /// each read by its name in the table.
  void check_specific() {
    using enum Opcode;
    auto imm = [&](size_t j) { return inst_.operands[j].imm; };
    auto neighbour = [&](size_t j) {
      if (imm(j) >= atlas::kMaxNeighbours)
        error("neighbour index " + std::to_string(imm(j)) + " is out of range (0..4)");
    };
    auto flag = [&](size_t j, const std::string &what) {
      if (imm(j) > 1) error(what + " is 0 or 1");
    };
    const Opcode op = inst_.op;
    if (op == NbrGet) neighbour(operand_index(NbrGet, "nbr"));
    if (op == NbrLd) neighbour(operand_index(NbrLd, "nbr"));
    if (op == NbrSt) neighbour(operand_index(NbrSt, "nbr"));
    if (op == BarSync && imm(operand_index(BarSync, "barrier")) >= 16)
      error("barrier id " + std::to_string(imm(operand_index(BarSync, "barrier"))) +
            " is out of range (0..15)");
    if (op == PoolAlloc) {
      const uint64_t bytes = imm(operand_index(PoolAlloc, "bytes"));
      if (bytes == 0 || bytes > (uint64_t{1} << 32))
        error("pool.alloc size must be between 1 byte and 4 GiB");
    }
    if (op == Gemm &&
        (imm(operand_index(Gemm, "transA")) > 1 || imm(operand_index(Gemm, "transB")) > 1))
      error("transpose flags of gemm are 0 or 1");
    if (op == BatchedGemm && (imm(operand_index(BatchedGemm, "transA")) > 1 ||
                              imm(operand_index(BatchedGemm, "transB")) > 1))
      error("transpose flags of batched_gemm are 0 or 1");
    if (op == Gemv) flag(operand_index(Gemv, "transA"), "the transpose flag of gemv");
    if (op == Attention) flag(operand_index(Attention, "causal"), "the causal flag of attention");
  }

  VerifyContext &cx_;
  const Kernel &k_;
  size_t i_;
  const Instruction &inst_;
  const OpcodeInfo &row_;
};

void check_launch_level(VerifyContext &cx) {
  const Kernel &k = cx.kernel;
  size_t whole = k.insts.size();
  for (size_t i = 0; i < k.insts.size(); ++i)
    if (k.insts[i].info().launch_level()) {
      whole = i;
      break;
    }
  if (whole == k.insts.size()) return;
  std::string why = "kernel '" + k.name + "' contains the whole-launch instruction '" +
                    print_mnemonic(k.insts[whole]) + "' (line " +
                    std::to_string(k.insts[whole].loc.line) + "), so it runs once per launch";
  std::vector<RegAccess> uses;
  for (size_t i = 0; i < k.insts.size(); ++i) {
    const auto &inst = k.insts[i];
    if (inst.op == Opcode::BarSync || inst.op == Opcode::Lds || inst.op == Opcode::Sts) {
      cx.error_at(i, "'" + print_mnemonic(inst) + "' cannot be used in a whole-launch kernel",
                  {why});
      continue;
    }
    instruction_uses(inst, uses);
    for (const auto &u : uses)
      if (!u.pred && is_special(u.reg) && special_varies_in_block(reg_special(u.reg))) {
        cx.error_at(i, "'" + reg_name(u.reg) + "' has no meaning in a whole-launch kernel", {why});
        break;
      }
  }
}

} // namespace

void verify_operands(VerifyContext &cx) {
  for (size_t i = 0; i < cx.kernel.insts.size(); ++i) OperandChecker(cx, i).run();
  if (cx.errors == 0) check_launch_level(cx);
}

} // namespace hologram::isa::detail
