// The .hasm text format: parse/print round trips and syntax errors with positions.
#include "test_util.h"

#include <fstream>
#include <sstream>

using namespace hologram;
using namespace hologram::test;

namespace {
const char *kVectorAdd = R"(.kernel vector_add
.param %a : buffer<f32> read
.param %b : buffer<f32> read
.param %c : buffer<f32> write
.param %n : u32
  param.u32      r1, %n
  cvt.u64.u32    r2, r1
  setge.u64      p0, %gid, r2
  bra p0         @done
  ld.f32         r3, [%a + %gid*4]
  ld.f32         r4, [%b + %gid*4]
  add.f32        r5, r3, r4
  st.f32         [%c + %gid*4], r5
@done:
  exit
)";

std::string roundtrip(const std::string &text) {
  return isa::print_module(parse_ok(text));
}
} // namespace

TEST(Text, SpecExampleIsAlreadyCanonical) {
  EXPECT_EQ(roundtrip(kVectorAdd), kVectorAdd);
}

TEST(Text, CanonicalFormIsAFixedPoint) {
  std::string messy = ".kernel  k ; comment\n.param %x:buffer<i32>\n@top: mov.imm.i32 r1,0x10\n"
                      "  bra !p0 @top   ; loop\n";
  // p0 is uninitialised, but the text format does not care about typing.
  std::string once = roundtrip(messy);
  EXPECT_EQ(roundtrip(once), once);
  EXPECT_NE(once.find("mov.imm.i32    r1, 16"), std::string::npos) << once;
  EXPECT_NE(once.find("bra !p0        @top"), std::string::npos) << once;
  EXPECT_NE(once.find("buffer<i32> readwrite"), std::string::npos) << once;
}

TEST(Text, EveryOpcodeRoundTrips) {
  // One instruction of each table row, built generically from its signature.
  for (const auto &row : isa::opcode_table()) {
    isa::KernelBuilder b("k");
    Type t = row.typed() ? (row.types.contains(Type::F32) ? Type::F32 : Type::I32) : Type::None;
    unsigned buf = b.buffer("buf", t == Type::None ? Type::U32 : t);
    unsigned pool = b.pool("pl");
    unsigned sc = b.scalar("s", t == Type::None ? Type::U32 : t);
    unsigned lab = b.label("l");
    b.bind(lab);
    std::vector<isa::Operand> ops;
    for (size_t i = 0; i < row.num_operands(); ++i) {
      switch (row.role(i)) {
      case isa::OperandRole::DstPred:
      case isa::OperandRole::SrcPred: ops.push_back(isa::P(i)); break;
      case isa::OperandRole::LiteralT:
        ops.push_back(isa::N(t == Type::F32 ? isa::f32_bits(1.5f) : 7));
        break;
      case isa::OperandRole::Count: ops.push_back(isa::N(1)); break;
      case isa::OperandRole::Label: ops.push_back(isa::Operand::label(lab)); break;
      case isa::OperandRole::ScalarParam: ops.push_back(isa::Operand::param(sc)); break;
      case isa::OperandRole::MemParam:
      case isa::OperandRole::BufferParam: ops.push_back(isa::Operand::param(buf)); break;
      case isa::OperandRole::OptBufferParam: ops.push_back(isa::Operand::none()); break;
      case isa::OperandRole::Address:
        ops.push_back(
            row.opcode == isa::Opcode::PoolLd || row.opcode == isa::Opcode::PoolSt
                ? isa::Operand::address({isa::AddrBase::Pool, static_cast<uint16_t>(pool), 5, 1, 8})
                : isa::mem(buf, 5, 4, -4));
        break;
      case isa::OperandRole::CvtDst:
      case isa::OperandRole::CvtSrc:
      case isa::OperandRole::DstT:
      case isa::OperandRole::DstU32:
      case isa::OperandRole::DstU64:
      case isa::OperandRole::LoopCounter:
      case isa::OperandRole::RegWindow:
      case isa::OperandRole::SrcF64:
      case isa::OperandRole::SrcT:
      case isa::OperandRole::SrcU32:
      case isa::OperandRole::SrcU64: ops.push_back(isa::R(10 + i)); break;
      }
    }
    auto &inst = b.emit(row.opcode, t, {});
    inst.operands = ops;
    if (row.opcode == isa::Opcode::Cvt) inst.type2 = Type::U8;
    isa::Module m;
    m.kernels.push_back(b.finish());
    std::string text = isa::print_module(m);
    DiagnosticEngine d;
    auto back = isa::parse_module(text, "rt.hasm", d);
    ASSERT_TRUE(back.has_value()) << row.mnemonic << ":\n" << text << d.to_string();
    EXPECT_TRUE(back->same_as(m)) << row.mnemonic << ":\n"
                                  << text << "\nreprinted:\n"
                                  << isa::print_module(*back);
    EXPECT_EQ(isa::print_module(*back), text);
  }
}

TEST(Text, AddressModesRoundTrip) {
  std::string text = R"(.kernel k
.param %a : buffer<u32> readwrite
.param %p : pool
  ld.u32         r1, [%a + %gid*4]
  ld.u32         r2, [%a + r9]
  ld.u32         r3, [%a + r9 + 12]
  ld.u32         r4, [%a - 4]
  ld.u32         r5, [%pool:p + r9]
  lds.u32        r6, [shared + r9*4]
  ld.u32         r7, [class 5 + r9]
  ld.u32         r8, [phi 5,2,3]
  ld.u32         r10, [r11 + 16]
  pool.ld.u32    r12, [r13 + r9]
)";
  EXPECT_EQ(roundtrip(text), text);
}

TEST(Text, LiteralsRoundTripExactly) {
  for (float f : {0.1f, -0.0f, 1e-45f, 3.4028235e38f, 1.0f / 3.0f, 16777216.0f}) {
    std::string s = isa::format_literal(Type::F32, isa::f32_bits(f));
    auto back = isa::parse_literal(Type::F32, s);
    ASSERT_TRUE(back) << s << ": " << back.message();
    EXPECT_EQ(*back, isa::f32_bits(f)) << s;
  }
  EXPECT_EQ(isa::format_literal(Type::F32, 0x7fc00000), "0x7fc00000");
  EXPECT_EQ(isa::format_literal(Type::F64, isa::f64_bits(2.0)), "2.0");
  EXPECT_EQ(isa::format_literal(Type::I8, 0xff), "-1");
  EXPECT_EQ(*isa::parse_literal(Type::I32, "-2147483648"), 0x80000000u);
  EXPECT_FALSE(isa::parse_literal(Type::I32, "2147483648"));
  EXPECT_FALSE(isa::parse_literal(Type::U8, "-1"));
  EXPECT_FALSE(isa::parse_literal(Type::U8, "0x100"));
  EXPECT_FALSE(isa::parse_literal(Type::F32, "1e50"));
  EXPECT_EQ(*isa::parse_literal(Type::F16, "1.0"), 0x3c00u);
  EXPECT_EQ(*isa::parse_literal(Type::F32, "-inf"), 0xff800000u);
}

TEST(Text, SpecialRegisterAliases) {
  auto m =
      parse_ok(".kernel k\n.param %o : buffer<u32> write\n  mov.u32 r1, r252\n  st.u32 [%o], r1\n");
  EXPECT_EQ(isa::print_module(m).find("r252"), std::string::npos);
  EXPECT_NE(isa::print_module(m).find("mov.u32        r1, %lane.x"), std::string::npos);
}

struct SyntaxCase {
  std::string_view text;
  const char *message;
  uint32_t line, col;
};

TEST(Text, SyntaxErrorsHavePositions) {
  const SyntaxCase cases[] = {
      {".kernel k\n  ad.f32 r1, r2, r3\n", "unknown instruction 'ad.f32'", 2, 3},
      {".kernel k\n  add.f33 r1, r2, r3\n", "unknown type 'f33'", 2, 3},
      {".kernel k\n  add r1, r2, r3\n", "needs one type suffix", 2, 3},
      {".kernel k\n  add.f32 r1, r2\n", "expects 3 operand(s), got 2", 2, 3},
      {".kernel k\n  add.f32 r1, r2, r300\n", "register 'r300' is out of range", 2, 19},
      {".kernel k\n  setlt.f32 p16, r1, r2\n", "predicate 'p16' is out of range", 2, 13},
      {".kernel k\n  mov.imm.u8 r1, 300\n", "out of range for u8", 2, 18},
      {".kernel k\n  ld.f32 r1, [%nope + r2]\n", "unknown parameter '%nope'", 2, 15},
      {".kernel k\n@a:\n@a:\n  exit\n", "label '@a' is defined twice", 3, 1},
      {"  exit\n", "expected '.kernel NAME'", 1, 3},
      {".kernel k\n  exit $\n", "unexpected character '$'", 2, 8},
      {std::string_view(".kernel k\n  exit \0\n", 19), "unexpected byte 0x00", 2, 8},
      {".kernel k\n  exit \xc3\xa9\n", "unexpected byte 0xc3", 2, 8},
      {".kernel k\n.param %gid : u32\n", "reserved name", 2, 8},
      {".kernel k\n.param %a : buffer<f32> sometimes\n", "unknown access 'sometimes'", 2, 25},
      {".kernel k\n  ld.f32 r1, [phi 96,0,0]\n", "class 0..95", 2, 19},
      {".kernel k\n  atom.mul.u32 r1, [r2], r3\n", "unknown operation 'mul'", 2, 3},
      {".kernel k\n  memfence r1\n", "needs a sub-operation", 2, 3},
      {".kernel k\n.kernel k\n", "kernel 'k' is defined twice", 2, 9},
      {".kernel k\n.krnel j\n", "unknown directive '.krnel'", 2, 1},
  };
  for (const auto &c : cases) {
    DiagnosticEngine d;
    auto m = isa::parse_module(c.text, "s.hasm", d);
    EXPECT_FALSE(m.has_value()) << c.text;
    ASSERT_FALSE(d.diagnostics().empty()) << c.text;
    const auto &diag = d.diagnostics()[0];
    EXPECT_NE(diag.message.find(c.message), std::string::npos) << c.text << " => " << diag.message;
    EXPECT_EQ(diag.loc.line, c.line) << c.text << " => " << d.to_string();
    EXPECT_EQ(diag.loc.col, c.col) << c.text << " => " << d.to_string();
  }
}

TEST(Text, DidYouMeanSuggestions) {
  DiagnosticEngine d;
  isa::parse_module(".kernel k\n  sqtr.f32 r1, r2\n", "s.hasm", d);
  EXPECT_NE(d.to_string().find("did you mean 'sqrt'?"), std::string::npos) << d.to_string();
}

TEST(Table, PoolAccessesReadOrWriteThroughAnAddress) {
  // The back ends and the verifier take a pool access's address to name a pool (or a pool's
  // handle in a register): each such row has one address operand and touches memory.
  size_t rows = 0;
  for (const auto &row : isa::opcode_table()) {
    if (!row.pool_access()) continue;
    ++rows;
    size_t addresses = 0;
    for (size_t i = 0; i < row.num_operands(); ++i)
      addresses += row.role(i) == isa::OperandRole::Address;
    EXPECT_EQ(addresses, 1u) << row.mnemonic;
    EXPECT_TRUE(row.flags & (isa::kFlagReadsMemory | isa::kFlagWritesMemory)) << row.mnemonic;
  }
  EXPECT_EQ(rows, 2u); // pool.ld, pool.st
}

TEST(Docs, IsaReferenceListsEveryInstruction) {
  auto doc = read_file_for_test("docs/isa.md");
  ASSERT_TRUE(doc.has_value());
  for (const auto &row : isa::opcode_table())
    EXPECT_NE(doc->find("| `" + std::string(row.mnemonic) + "` |"), std::string::npos)
        << row.mnemonic << " is missing from docs/isa.md";
}

TEST(Docs, IsaReferenceTablesAreGeneratedFromTheTable) {
  auto doc = read_file_for_test("docs/isa.md");
  ASSERT_TRUE(doc.has_value());
  const std::string begin = "<!-- BEGIN GENERATED: hologram-info --isa-reference";
  auto start = doc->find(begin);
  ASSERT_NE(start, std::string::npos);
  start = doc->find("-->\n\n", start) + 5;
  auto end = doc->find("\n<!-- END GENERATED -->", start);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(doc->substr(start, end - start), isa::instruction_reference_markdown())
      << "docs/isa.md is stale: run scripts/gen-docs.sh";
}
