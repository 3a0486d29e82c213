// Circuits: canonicalisation keeps the data effect (a randomized property test on the
// interpreter), the printer round-trips, and transforms act per class.
#include "hologram/frontend/circuit.h"
#include "hologram/interp/interpreter.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace hologram;
using namespace hologram::frontend;

namespace {

std::string random_circuit(std::mt19937 &rng) {
  // Few classes, so ops interact (dead writes, involutions, repeated marks).
  auto cls = [&] { return "c0" + std::to_string(rng() % 6); };
  std::string s;
  int n = 1 + static_cast<int>(rng() % 8);
  for (int i = 0; i < n; ++i) {
    if (i) s += " . ";
    switch (rng() % 9) {
    case 0: s += "copy@" + cls() + "->" + cls(); break;
    case 1: s += "swap@" + cls() + "<->" + cls(); break;
    case 2: s += "merge@" + cls() + "[" + cls() + "," + cls() + "]"; break;
    case 3: s += "split@" + cls() + "[" + cls() + "," + cls() + "]"; break;
    case 4:
      s += "merge@c[0" + std::to_string(rng() % 3) + "..0" + std::to_string(3 + rng() % 3) + "]";
      break;
    case 5: s += "quote@" + cls() + " . evaluate@" + cls(); break;
    default: s += "mark@" + cls(); break;
    }
  }
  std::string transform;
  if (rng() % 4 == 0) transform += "R+" + std::to_string(rng() % 4);
  if (rng() % 4 == 0) transform += "~";
  return transform.empty() ? s : transform + "@ " + s;
}

std::vector<std::byte> run(const Circuit &c, const std::vector<std::byte> &pool) {
  DiagnosticEngine d;
  CircuitOptions o;
  o.element = isa::Type::I32; // integers: exact, so any difference is a real one
  auto m = lower_circuit(c, o, "p.circuit", d);
  EXPECT_TRUE(m) << d.to_string();
  interp::AtlasState atlas;
  atlas.boundary = pool;
  auto st = interp::run_kernel(
      m->kernels[0], LaunchConfig::linear(circuit_elements_per_class(o.element), 256), {}, atlas);
  EXPECT_TRUE(st.is_ok()) << st.message();
  return atlas.boundary;
}

} // namespace

TEST(Circuit, CanonicalisationKeepsTheDataEffect) {
  std::mt19937 rng(12345);
  std::vector<std::byte> pool(atlas::kBoundaryPoolBytes);
  for (auto &b : pool) b = static_cast<std::byte>(rng());
  int shortened = 0;
  for (int trial = 0; trial < 150; ++trial) {
    std::string text = random_circuit(rng);
    DiagnosticEngine d;
    auto c = parse_circuit(text, "p.circuit", d);
    ASSERT_TRUE(c) << text << "\n" << d.to_string();
    std::vector<RewriteNote> notes;
    Circuit canon = canonicalize(*c, &notes);
    EXPECT_LE(canon.op_count(), std::max<size_t>(c->op_count(), 1) + 3) << text;
    shortened += canon.op_count() < c->op_count();
    EXPECT_EQ(run(*c, pool), run(canon, pool))
        << "circuit: " << text << "\ncanonical: " << print_circuit(canon);
    // The canonical text parses back to the same circuit, and is a fixed point.
    auto back = parse_circuit(print_circuit(canon), "canon.circuit", d);
    ASSERT_TRUE(back) << print_circuit(canon) << "\n" << d.to_string();
    EXPECT_EQ(back->branches, canon.branches) << print_circuit(canon);
    EXPECT_EQ(print_circuit(canonicalize(*back)), print_circuit(canon));
  }
  EXPECT_GT(shortened, 20); // the rules do fire on random input
}

TEST(Circuit, SplitRangesRoundTrip) {
  // Found by fuzz_circuit: a mirrored range leaves a one-class run (c88) that must print as a
  // plain marker and parse back to the same op.
  for (const char *text : {"quote@c[5..80]~", "~@ merge@c[5..80]", "T+3@ mark@c[1..30]"}) {
    DiagnosticEngine d;
    auto c = parse_circuit(text, "t.circuit", d);
    ASSERT_TRUE(c) << d.to_string();
    Circuit canon = canonicalize(*c);
    auto back = parse_circuit(print_circuit(canon), "canon.circuit", d);
    ASSERT_TRUE(back) << print_circuit(canon);
    EXPECT_EQ(back->branches, canon.branches) << text << " -> " << print_circuit(canon);
  }
}

TEST(Circuit, TransformsActOnEveryClassOfARange) {
  DiagnosticEngine d;
  auto c = parse_circuit("~@ merge@c[6..9]", "t.circuit", d);
  ASSERT_TRUE(c);
  // 6, 7 have d = 0 (fixed); 8, 9 have d = 1 and mirror to 16, 17.
  EXPECT_EQ(c->branches[0][0].classes, (std::vector<uint32_t>{6, 7, 16, 17}));
}

TEST(Circuit, RangesAreInclusiveAndClassZeroPaddingIsOptional) {
  DiagnosticEngine d;
  auto c = parse_circuit("merge@c[3..5] . mark@c5 . mark@c05", "t.circuit", d);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->branches[0][0].classes, (std::vector<uint32_t>{3, 4, 5}));
  EXPECT_EQ(c->branches[0][1], c->branches[0][2]);
}

TEST(Circuit, DeeplyNestedGroupsAreAnErrorNotACrash) {
  DiagnosticEngine d;
  EXPECT_FALSE(parse_circuit(std::string(100000, '(') + "mark@c00", "deep.circuit", d));
  EXPECT_NE(d.to_string().find("more than 200 levels"), std::string::npos);
}
