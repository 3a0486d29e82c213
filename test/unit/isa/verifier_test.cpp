// Every verifier rule: one program it accepts and one it rejects, with the diagnostic.
#include "test_util.h"

using namespace hologram;
using namespace hologram::test;

namespace {
const std::string kHead =
    ".kernel k\n.param %a : buffer<f32> readwrite\n.param %r : buffer<f32> read\n"
    ".param %w : buffer<f32> write\n.param %n : u32\n.param %p : pool\n";

struct Rule {
  const char *name;
  std::string good, bad;
  const char *message;
};

std::vector<Rule> rules() {
  return {
      {"type set of the instruction", "  mov.imm.f32 r1, 1.0\n  add.f32 r2, r1, r1\n",
       "  mov.imm.f16 r1, 0x3c00\n  add.f16 r2, r1, r1\n", "f16 is a storage type"},
      {"float-only instruction", "  mov.imm.f32 r1, 1.0\n  sqrt.f32 r2, r1\n",
       "  mov.imm.i32 r1, 1\n  sqrt.i32 r2, r1\n", "defined on f32 and f64 only"},
      {"integer-only instruction", "  mov.imm.u32 r1, 1\n  xor.u32 r2, r1, r1\n",
       "  mov.imm.f32 r1, 1.0\n  xor.f32 r2, r1, r1\n", "integer types only"},
      {"unordered comparison on integers", "  mov.imm.f32 r1, 1.0\n  setltu.f32 p0, r1, r1\n",
       "  mov.imm.i32 r1, 1\n  setltu.i32 p0, r1, r1\n", "only defined on floats"},
      {"write to a special register", "  mov.u32 r1, %lane.x\n", "  mov.imm.u32 r252, 1\n",
       "read-only special register"},
      {"special register type", "  cvt.u32.u64 r1, %gid\n", "  add.u32 r1, %gid, %gid\n",
       "'%gid' is u64, but it is read as u32"},
      {"undefined label", "  bra @x\n@x:\n  exit\n", "  bra @y\n@x:\n  exit\n",
       "undefined label '@y'"},
      {"scalar parameter type", "  param.u32 r1, %n\n", "  param.i32 r1, %n\n",
       "reads %n as i32, but it is declared u32"},
      {"param on a buffer", "  param.u32 r1, %n\n", "  param.f32 r1, %a\n",
       "reads scalar parameters"},
      {"buffer element type", "  ld.f32 r1, [%a + %gid*4]\n", "  ld.u32 r1, [%a + %gid*4]\n",
       "but it is buffer<f32>"},
      {"index scale", "  ld.f32 r1, [%a + %gid*4]\n", "  ld.f32 r1, [%a + %gid*8]\n",
       "does not match the element size 4"},
      {"store to a read-only buffer", "  mov.imm.f32 r1, 1.0\n  st.f32 [%w + %gid*4], r1\n",
       "  mov.imm.f32 r1, 1.0\n  st.f32 [%r + %gid*4], r1\n", "declared read-only"},
      {"load from a write-only buffer", "  ld.f32 r1, [%r + %gid*4]\n",
       "  ld.f32 r1, [%w + %gid*4]\n", "declared write-only"},
      {"shared memory through ld", "  cvt.u64.u32 r2, %lane.x\n  lds.f32 r1, [shared + r2*4]\n",
       "  cvt.u64.u32 r2, %lane.x\n  ld.f32 r1, [shared + r2*4]\n", "accessed with lds/sts"},
      {"index register type", "  cvt.u64.u32 r2, %lane.x\n  ld.f32 r1, [%a + r2*4]\n",
       "  mov.u32 r2, %lane.x\n  ld.f32 r1, [%a + r2*4]\n", "r2 is read as u64 but may hold u32"},
      {"definite initialisation", "  mov.imm.f32 r1, 1.0\n  add.f32 r2, r1, r1\n",
       "  add.f32 r2, r1, r1\n", "r1 may be read before it is written"},
      {"initialisation on every path",
       "  param.u32 r1, %n\n  mov.imm.f32 r5, 0.0\n  mov.imm.u32 r9, 0\n  seteq.u32 p0, r1, r9\n"
       "  bra p0 @skip\n  mov.imm.f32 r5, 1.0\n@skip:\n  add.f32 r6, r5, r5\n",
       "  param.u32 r1, %n\n  mov.imm.u32 r9, 0\n  seteq.u32 p0, r1, r9\n"
       "  bra p0 @skip\n  mov.imm.f32 r5, 1.0\n@skip:\n  add.f32 r6, r5, r5\n",
       "r5 may be read before it is written"},
      {"reaching definition types",
       "  mov.imm.f32 r1, 1.0\n  mov.imm.i32 r1, 2\n  add.i32 r2, r1, r1\n",
       "  param.u32 r9, %n\n  mov.imm.u32 r8, 0\n  seteq.u32 p0, r9, r8\n  mov.imm.f32 r1, 1.0\n"
       "  bra p0 @j\n  mov.imm.i32 r1, 2\n@j:\n  add.i32 r2, r1, r1\n",
       "r1 is read as i32 but may hold f32"},
      {"predicate initialisation",
       "  mov.imm.u32 r1, 0\n  seteq.u32 p1, r1, r1\n  bra p1 @e\n@e:\n  exit\n",
       "  bra p1 @e\n@e:\n  exit\n", "p1 may be read before it is written"},
      {"reducible control flow", "  param.u32 r1, %n\n@h:\n  loop r1, @h\n",
       "  param.u32 r1, %n\n  mov.imm.u32 r2, 0\n  seteq.u32 p0, r1, r2\n  bra p0 @b\n@a:\n"
       "  bra p0 @b\n  exit\n@b:\n  bra p0 @a\n",
       "irreducible control flow"},
      {"ret outside a call", "  call @f\n  exit\n@f:\n  ret\n", "  ret\n",
       "'ret' is reachable outside"},
      {"recursion", "  call @f\n  exit\n@f:\n  call @g\n  ret\n@g:\n  ret\n",
       "  call @f\n  exit\n@f:\n  call @f\n  ret\n", "recursive call"},
      {"pool.alloc is freed", "  pool.alloc r1, 64\n  pool.free r1\n", "  pool.alloc r1, 64\n",
       "not freed on every path"},
      {"pool.free of a non-handle", "  pool.alloc r1, 64\n  pool.free r1\n",
       "  pool.alloc r1, 64\n  pool.free r1\n  mov.imm.u64 r2, 5\n  pool.free r2\n",
       "needs a handle produced by pool.alloc"},
      {"double free", "  pool.alloc r1, 64\n  mov.u64 r2, r1\n  pool.free r2\n",
       "  pool.alloc r1, 64\n  pool.free r1\n  pool.free r1\n", "may already be freed"},
      {"use after free",
       "  pool.alloc r1, 8\n  mov.imm.u64 r2, 0\n  pool.ld.u32 r3, [r1 + r2]\n  pool.free r1\n",
       "  pool.alloc r1, 8\n  mov.imm.u64 r2, 0\n  pool.free r1\n  pool.ld.u32 r3, [r1 + r2]\n",
       "used after pool.free"},
      {"barrier under uniform control",
       "  param.u32 r1, %n\n  mov.imm.u32 r2, 0\n  seteq.u32 p0, r1, r2\n  bra p0 @e\n  bar.sync "
       "0\n@e:\n  exit\n",
       "  mov.imm.u32 r2, 0\n  seteq.u32 p0, %lane.x, r2\n  bra p0 @e\n  bar.sync 0\n@e:\n  exit\n",
       "bar.sync is under lane-varying control flow"},
      {"barrier in a lane-varying loop", "  param.u32 r1, %n\n@h:\n  bar.sync 0\n  loop r1, @h\n",
       "  mov.u32 r1, %lane.x\n@h:\n  bar.sync 0\n  loop r1, @h\n", "lane-varying control flow"},
      {"barrier under a branch on an atomic's result",
       "  mov.imm.u64 r9, 0\n  mov.imm.u32 r2, 1\n  atom.add.u32 r3, [%p + r9], r2\n  bar.sync 0\n",
       "  mov.imm.u64 r9, 0\n  mov.imm.u32 r2, 1\n  atom.add.u32 r3, [%p + r9], r2\n  mov.imm.u32 "
       "r4, 2\n"
       "  setlt.u32 p0, r3, r4\n  bra p0 @e\n  bar.sync 0\n@e:\n  exit\n",
       "bar.sync is under lane-varying control flow"},
      {"neighbour index", "  mov.imm.u32 r1, 3\n  nbr.get r2, r1, 4\n",
       "  mov.imm.u32 r1, 3\n  nbr.get r2, r1, 5\n", "out of range (0..4)"},
      {"barrier id", "  bar.sync 15\n", "  bar.sync 16\n", "barrier id 16"},
      {"register window",
       "  mov.imm.i32 r250, 1\n  mov.imm.i32 r251, 1\n  reduce.add.i32 r1, r250, 2\n",
       "  mov.imm.i32 r250, 1\n  mov.imm.i32 r251, 1\n  reduce.add.i32 r1, r250, 3\n",
       "runs past r251"},
      {"whole-launch kernel uses no lane ids",
       "  param.u32 r1, %n\n  cvt.u64.u32 r2, r1\n  map.exp.f32 %a, %a, r2\n",
       "  map.exp.f32 %a, %a, %gid\n", "no meaning in a whole-launch kernel"},
      {"library op buffer type",
       "  param.u32 r1, %n\n  cvt.u64.u32 r2, r1\n  silu.f32 %a, %r, r2\n",
       "  param.u32 r1, %n\n  cvt.u64.u32 r2, r1\n  silu.f64 %a, %r, r2\n", "works on f64 arrays"},
      {"bitwise atomics on floats",
       "  mov.imm.u64 r9, 0\n  mov.imm.f32 r2, 1.0\n  atom.add.f32 r1, [%a + r9], r2\n",
       "  mov.imm.u64 r9, 0\n  mov.imm.f32 r2, 1.0\n  atom.xor.f32 r1, [%a + r9], r2\n",
       "bitwise atomics"},
      {"atomics on 8-bit types",
       "  mov.imm.u64 r9, 0\n  mov.imm.u32 r2, 1\n  atom.add.u32 r1, [%p + r9], r2\n",
       "  mov.imm.u64 r9, 0\n  mov.imm.u8 r2, 1\n  atom.add.u8 r1, [%p + r9], r2\n",
       "does not accept type u8"},
  };
}
} // namespace

TEST(Verifier, EveryRuleAcceptsAndRejects) {
  for (const auto &r : rules()) {
    EXPECT_EQ(verify_text(kHead + r.good), "") << r.name;
    std::string diags = verify_text(kHead + r.bad);
    EXPECT_NE(diags.find(r.message), std::string::npos) << r.name << ": got\n" << diags;
    EXPECT_NE(diags.find("test.hasm:"), std::string::npos) << r.name;
  }
}

TEST(Verifier, UninitialisedReadNamesThePath) {
  std::string text = kHead +
                     "  param.u32 r1, %n\n  mov.imm.u32 r9, 0\n  seteq.u32 p0, r1, r9\n"
                     "  bra p0 @skip\n  mov.imm.f32 r5, 1.0\n@skip:\n  add.f32 r6, r5, r5\n";
  std::string d = verify_text(text);
  EXPECT_NE(d.find("test.hasm:13:3: error: r5 may be read before it is written"), std::string::npos)
      << d;
  EXPECT_NE(d.find("entry -> @skip (line 13)"), std::string::npos) << d;
}

TEST(Verifier, CallDepthLimit) {
  std::string text = ".kernel k\n  call @f0\n  exit\n";
  for (int i = 0; i < 70; ++i)
    text += "@f" + std::to_string(i) + ":\n  call @f" + std::to_string(i + 1) + "\n  ret\n";
  text += "@f70:\n  ret\n";
  EXPECT_NE(verify_text(text).find("nests calls 71 deep"), std::string::npos) << verify_text(text);
}

TEST(Verifier, CallDepthLimitIsExactlyTheReturnStack) {
  // `depth` nested calls; the innermost function stores 7.
  auto chain = [](int depth) {
    std::string text = ".kernel k\n.param %out : buffer<u32> write\n  call @f1\n  exit\n";
    for (int i = 1; i < depth; ++i)
      text += "@f" + std::to_string(i) + ":\n  call @f" + std::to_string(i + 1) + "\n  ret\n";
    return text + "@f" + std::to_string(depth) +
           ":\n  mov.imm.u32 r1, 7\n  st.u32 [%out], r1\n  ret\n";
  };
  EXPECT_EQ(verify_text(chain(64)), "");
  EXPECT_NE(verify_text(chain(65)).find("nests calls 65 deep"), std::string::npos)
      << verify_text(chain(65));
  // The interpreter's return stack holds the 64 calls the verifier allows.
  std::vector<uint32_t> out(1);
  auto st = run_text(chain(64), {}, {interp::ArgValue::buffer_of(out)});
  EXPECT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(out[0], 7u);
}

TEST(Verifier, BuilderProgramsAreVerifiedToo) {
  isa::KernelBuilder b("k");
  unsigned out = b.buffer("out", Type::F32, isa::Access::Write);
  b.emit(isa::Opcode::St, Type::F32,
         {isa::mem(out, isa::special_reg(isa::Special::Gid), 4), isa::R(3)});
  isa::Module m;
  m.kernels.push_back(b.finish());
  DiagnosticEngine d;
  EXPECT_FALSE(isa::verify_module(m, d));
  EXPECT_NE(d.to_string().find("r3 may be read before it is written"), std::string::npos)
      << d.to_string();
}
