// The type-generic instructions on every type they accept: moves, loads and stores, cvt for
// every ordered pair of numeric types, set/sel, atomics and reductions.
#include "test_util.h"

using namespace hologram;
using namespace hologram::test;

namespace {
std::vector<Type> numeric_types() {
  std::vector<Type> v;
  for (int t = 1; t < isa::kNumTypes; ++t)
    if (isa::is_numeric(static_cast<Type>(t))) v.push_back(static_cast<Type>(t));
  return v;
}
/// The bits of the value 3 in type t.
uint64_t three(Type t) {
  return isa::is_float(t) ? isa::float_bits(t, 3.0) : 3;
}
} // namespace

TEST(Types, MoveLoadStoreOnAllTwelveTypes) {
  for (Type t : numeric_types()) {
    std::string n = tn(t);
    std::string text = ".kernel k\n.param %o : buffer<" + n + "> readwrite\n  mov.imm." + n +
                       " r1, " + isa::format_literal(t, three(t)) + "\n  mov." + n +
                       " r2, r1\n  st." + n + " [%o], r2\n  ld." + n +
                       " r3, [%o]\n  mov.imm.u32 r4, 1\n  mov.imm.u32 r5, 1\n"
                       "  seteq.u32 p0, r4, r5\n  sel." +
                       n + " r6, p0, r3, r1\n  mov.imm.u64 r7, " +
                       std::to_string(isa::type_size(t)) + "\n  st." + n + " [%o + r7], r6\n";
    std::vector<std::byte> out(2 * isa::type_size(t));
    auto st = run_text(text, {}, {interp::ArgValue::buffer(out)});
    ASSERT_TRUE(st.is_ok()) << n << ": " << st.message();
    for (unsigned half = 0; half < 2; ++half) {
      uint64_t got = 0;
      std::memcpy(&got, out.data() + half * isa::type_size(t), isa::type_size(t));
      EXPECT_EQ(got, three(t)) << n;
    }
  }
}

TEST(Types, CvtEveryOrderedPair) {
  int pairs = 0;
  for (Type d : numeric_types())
    for (Type s : numeric_types()) {
      std::string dn = tn(d), sn = tn(s);
      std::string text = ".kernel k\n.param %o : buffer<" + dn + "> write\n  mov.imm." + sn +
                         " r1, " + isa::format_literal(s, three(s)) + "\n  cvt." + dn + "." + sn +
                         " r2, r1\n  st." + dn + " [%o], r2\n";
      std::vector<std::byte> out(isa::type_size(d));
      auto st = run_text(text, {}, {interp::ArgValue::buffer(out)});
      ASSERT_TRUE(st.is_ok()) << dn << "." << sn << ": " << st.message();
      uint64_t got = 0;
      std::memcpy(&got, out.data(), isa::type_size(d));
      EXPECT_EQ(got, three(d)) << "cvt." << dn << "." << sn;
      ++pairs;
    }
  EXPECT_EQ(pairs, 144);
}

TEST(Types, SetOnEveryNumericType) {
  for (Type t : numeric_types()) {
    if (isa::is_storage_only(t)) continue;
    std::string n = tn(t);
    for (const char *cc : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      auto out = run_out<uint32_t>("  mov.imm." + n + " r1, " + isa::format_literal(t, three(t)) +
                                   "\n  set" + cc + "." + n +
                                   " p0, r1, r1\n  mov.imm.u32 r2, 1\n  mov.imm.u32 r3, 0\n"
                                   "  sel.u32 r4, p0, r2, r3\n  st.u32 [%out], r4\n");
      bool want = std::string(cc) == "eq" || std::string(cc) == "le" || std::string(cc) == "ge";
      EXPECT_EQ(out[0] != 0, want) << "set" << cc << "." << n;
    }
  }
}

TEST(Types, AtomicsAndReductionsOnEveryAcceptedType) {
  for (Type t : numeric_types()) {
    std::string n = tn(t);
    if (isa::types::kAtomic.contains(t)) {
      // 8 lanes add 3 each to a zeroed cell: 24.
      std::string text = ".kernel k\n.param %o : buffer<" + n +
                         "> readwrite\n  mov.imm.u64 r1, 0\n  mov.imm." + n + " r2, " +
                         isa::format_literal(t, three(t)) + "\n  atom.add." + n +
                         " r3, [%o + r1], r2\n";
      std::vector<std::byte> out(isa::type_size(t));
      ASSERT_TRUE(
          run_text(text, LaunchConfig::linear(8, 4), {interp::ArgValue::buffer(out)}).is_ok())
          << n;
      uint64_t got = 0;
      std::memcpy(&got, out.data(), isa::type_size(t));
      EXPECT_EQ(got, isa::is_float(t) ? isa::float_bits(t, 24.0) : 24u) << "atom.add." << n;
    }
    if (isa::types::kNumeric.contains(t)) {
      std::string lit3 = isa::format_literal(t, three(t));
      std::string text = ".kernel k\n.param %o : buffer<" + n + "> readwrite\n  mov.imm." + n +
                         " r10, " + lit3 + "\n  mov.imm." + n + " r11, " + lit3 +
                         "\n  reduce.add." + n + " r1, r10, 2\n  st." + n +
                         " [%o], r1\n  mov.imm.u64 r2, 1\n  reduce.mul." + n +
                         " r3, [%o], r2\n  st." + n + " [%o], r3\n";
      std::vector<std::byte> out(isa::type_size(t));
      ASSERT_TRUE(run_text(text, {}, {interp::ArgValue::buffer(out)}).is_ok()) << n;
      uint64_t got = 0;
      std::memcpy(&got, out.data(), isa::type_size(t));
      EXPECT_EQ(got, isa::is_float(t) ? isa::float_bits(t, 6.0) : 6u) << "reduce." << n;
    }
  }
}
