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

/// A chain of data ops over only three classes, each op's operands drawn mostly from the
/// classes earlier ops wrote: copy, merge and split whose results a later op reads as either
/// operand, then overwrites (the shapes where a dead-write rule must see every read).
std::string random_chain(std::mt19937 &rng) {
  std::vector<int> written;
  auto cls = [&] {
    int c = !written.empty() && rng() % 3 != 0 ? written[rng() % written.size()]
                                               : static_cast<int>(rng() % 3);
    return "c0" + std::to_string(c);
  };
  auto wrote = [&](const std::string &c) { written.push_back(c[2] - '0'); };
  std::string s;
  int n = 3 + static_cast<int>(rng() % 8);
  for (int i = 0; i < n; ++i) {
    if (i) s += " . ";
    std::string a = cls(), b = cls(), c = cls();
    switch (rng() % 4) {
    case 0:
      s += "copy@" + a + "->" + b;
      wrote(b);
      break;
    case 1:
      s += "merge@" + a + "[" + b + "," + c + "]";
      wrote(c);
      break;
    case 2:
      s += "split@" + a + "[" + b + "," + c + "]";
      wrote(c);
      break;
    default:
      s += "swap@" + a + "<->" + b;
      wrote(a);
      wrote(b);
      break;
    }
  }
  return s;
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

/// Canonicalises random circuits from `generate` and checks on the interpreter that each
/// keeps its data effect and that the canonical form is a fixed point; returns how many got
/// shorter.
int check_canonicalisation(std::string (*generate)(std::mt19937 &), int trials) {
  std::mt19937 rng(12345);
  std::vector<std::byte> pool(atlas::kBoundaryPoolBytes);
  for (auto &b : pool) b = static_cast<std::byte>(rng());
  int shortened = 0;
  for (int trial = 0; trial < trials; ++trial) {
    std::string text = generate(rng);
    DiagnosticEngine d;
    auto c = parse_circuit(text, "p.circuit", d);
    EXPECT_TRUE(c) << text << "\n" << d.to_string();
    if (!c) continue;
    std::vector<RewriteNote> notes;
    Circuit canon = canonicalize(*c, &notes);
    EXPECT_LE(canon.op_count(), std::max<size_t>(c->op_count(), 1) + 3) << text;
    shortened += canon.op_count() < c->op_count();
    EXPECT_EQ(run(*c, pool), run(canon, pool))
        << "circuit: " << text << "\ncanonical: " << print_circuit(canon);
    // The canonical text parses back to the same circuit, and is a fixed point.
    auto back = parse_circuit(print_circuit(canon), "canon.circuit", d);
    EXPECT_TRUE(back) << print_circuit(canon) << "\n" << d.to_string();
    if (!back) continue;
    EXPECT_EQ(back->branches, canon.branches) << print_circuit(canon);
    EXPECT_EQ(print_circuit(canonicalize(*back)), print_circuit(canon));
  }
  return shortened;
}

} // namespace

TEST(Circuit, CanonicalisationKeepsTheDataEffect) {
  EXPECT_GT(check_canonicalisation(random_circuit, 150), 20); // the rules do fire
}

TEST(Circuit, CanonicalisationKeepsTheDataEffectOnChainsThatReuseClasses) {
  EXPECT_GT(check_canonicalisation(random_chain, 300), 20);
}

TEST(Circuit, AWriteReadByAMergesSecondOperandIsNotDead) {
  // merge@c02[c01,c03] reads c01 before the second copy overwrites it: the first copy stays.
  DiagnosticEngine d;
  auto c = parse_circuit("copy@c00->c01 . merge@c02[c01,c03] . copy@c04->c01", "p.circuit", d);
  ASSERT_TRUE(c) << d.to_string();
  Circuit canon = canonicalize(*c);
  EXPECT_EQ(canon.op_count(), 3u) << print_circuit(canon);
  std::vector<std::byte> pool(atlas::kBoundaryPoolBytes);
  std::mt19937 rng(7);
  for (auto &b : pool) b = static_cast<std::byte>(rng());
  EXPECT_EQ(run(*c, pool), run(canon, pool)) << print_circuit(canon);
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
