// The optimiser's passes keep the data effect: random programs (arithmetic of several types,
// constants, copies, repeated computations, conversions, divisions by zero, loads, stores,
// forward branches and counted loops) give bit-identical memory on the interpreter before and after
// the -O1 and -O2 pipelines, and the optimised program still verifies. Plus the pass manager's
// registry.
#include "hologram/frontend/circuit.h"
#include "hologram/interp/interpreter.h"
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"
#include "hologram/opt/pass_manager.h"
#include "runtime/random_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace hologram;

namespace {

constexpr int kLanes = 4, kSlots = 16;

/// A random kernel: i32 registers r1..r8, f32 r9..r16, u32 shift amounts r17..r18, the lane's
/// u64 element index r19; every register is written before the body reads it.
std::string random_program(std::mt19937 &rng, int length) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto ireg = [&] { return "r" + std::to_string(pick(1, 8)); };
  auto freg = [&] { return "r" + std::to_string(pick(9, 16)); };
  std::string s = ".kernel k\n.param %a : buffer<i32> readwrite\n"
                  ".param %f : buffer<f32> readwrite\n"
                  "  cvt.u64.u32 r19, %lane.x\n  mul.u64 r19, r19, r20\n";
  s.insert(s.find("  mul.u64"), "  mov.imm.u64 r20, 16\n");
  for (int r = 1; r <= 8; ++r)
    s += "  mov.imm.i32 r" + std::to_string(r) + ", " + std::to_string(pick(-5, 9)) + "\n";
  for (int r = 9; r <= 16; ++r)
    s += "  mov.imm.f32 r" + std::to_string(r) + ", " + std::to_string(pick(-4, 8)) + ".5\n";
  s += "  mov.imm.u32 r17, 3\n  mov.imm.u32 r18, 35\n";
  static const char *kIntBinary[] = {"add", "sub", "mul", "div", "rem",
                                     "min", "max", "and", "or",  "xor"};
  static const char *kFloatBinary[] = {"add", "sub", "mul", "div", "min", "max"};
  static const char *kFloatUnary[] = {"sqrt", "exp", "floor", "neg", "abs", "tanh"};
  int labels = 0, loops = 0, loop_left = -1;
  std::vector<std::pair<int, int>> pending; // (label, instructions left before it)
  for (int i = 0; i < length; ++i) {
    const std::string d = ireg(), e = freg();
    switch (pick(0, 15)) {
    case 0: s += "  mov.imm.i32 " + d + ", " + std::to_string(pick(-3, 3)) + "\n"; break;
    case 1: s += "  mov.i32 " + d + ", " + ireg() + "\n"; break;
    case 2:
    case 3:
      s += "  " + std::string(kIntBinary[pick(0, 9)]) + ".i32 " + d + ", " + ireg() + ", " +
           ireg() + "\n";
      break;
    case 4: s += "  mad.i32 " + d + ", " + ireg() + ", " + ireg() + ", " + ireg() + "\n"; break;
    case 5:
      s += "  shl.i32 " + d + ", " + ireg() + ", r" + std::to_string(pick(17, 18)) + "\n";
      break;
    case 6:
    case 7:
      s += "  " + std::string(kFloatBinary[pick(0, 5)]) + ".f32 " + e + ", " + freg() + ", " +
           freg() + "\n";
      break;
    case 8:
      s += "  " + std::string(kFloatUnary[pick(0, 5)]) + ".f32 " + e + ", " + freg() + "\n";
      break;
    case 9: s += "  cvt.f32.i32 " + e + ", " + ireg() + "\n"; break;
    case 10: s += "  cvt.i32.f32 " + d + ", " + freg() + "\n"; break;
    case 11:
      s += "  st.i32 [%a + r19*4 + " + std::to_string(4 * pick(0, kSlots - 1)) + "], " + ireg() +
           "\n";
      s += "  st.f32 [%f + r19*4 + " + std::to_string(4 * pick(0, kSlots - 1)) + "], " + freg() +
           "\n";
      break;
    case 12:
      s += "  ld.i32 " + d + ", [%a + r19*4 + " + std::to_string(4 * pick(0, 3)) + "]\n";
      break;
    case 13:
      s += "  setlt.i32 p0, " + ireg() + ", " + ireg() + "\n  bra p0 @L" + std::to_string(labels) +
           "\n";
      pending.push_back({labels++, pick(1, 6)});
      break;
    case 15: // an induction variable and a product of it (strength reduction's pattern)
      s += "  add.i32 " + d + ", " + d + ", " + ireg() + "\n  mul.i32 " + ireg() + ", " + d + ", " +
           ireg() + "\n";
      break;
    case 14: // a counted loop around the next few instructions (one open at a time)
      if (loop_left >= 0) break;
      for (const auto &[label, left] : pending) s += "@L" + std::to_string(label) + ":\n";
      pending.clear(); // no branch from outside lands inside the loop
      s += "  mov.imm.u32 r21, " + std::to_string(pick(0, 3)) + "\n@W" + std::to_string(loops) +
           ":\n";
      loop_left = pick(2, 8);
      break;
    }
    if (loop_left >= 0 && loop_left-- == 0) s += "  loop r21, @W" + std::to_string(loops++) + "\n";
    for (auto &[label, left] : pending)
      if (left-- == 0) s += "@L" + std::to_string(label) + ":\n";
    std::erase_if(pending, [](const auto &p) { return p.second < 0; });
  }
  if (loop_left >= 0) s += "  loop r21, @W" + std::to_string(loops) + "\n";
  for (const auto &[label, left] : pending) s += "@L" + std::to_string(label) + ":\n";
  for (int r = 1; r <= 8; ++r)
    s +=
        "  st.i32 [%a + r19*4 + " + std::to_string(4 * (r + 7)) + "], r" + std::to_string(r) + "\n";
  for (int r = 9; r <= 16; ++r)
    s +=
        "  st.f32 [%f + r19*4 + " + std::to_string(4 * (r - 1)) + "], r" + std::to_string(r) + "\n";
  return s + "  exit\n";
}

/// The two arrays after one launch of kLanes lanes.
std::vector<uint32_t> run(const isa::Kernel &k) {
  std::vector<int32_t> a(kLanes * kSlots, 7);
  std::vector<float> f(kLanes * kSlots, 0.25f);
  std::vector<interp::ArgValue> args = {interp::ArgValue::buffer_of(a),
                                        interp::ArgValue::buffer_of(f)};
  interp::AtlasState atlas;
  LaunchConfig launch;
  launch.grid = {1, 1, 1};
  launch.block = {kLanes, 1, 1};
  auto st = interp::run_kernel(k, launch, args, atlas);
  EXPECT_TRUE(st) << st.message();
  std::vector<uint32_t> bits(a.size() + f.size());
  std::memcpy(bits.data(), a.data(), a.size() * 4);
  std::memcpy(bits.data() + a.size(), f.data(), f.size() * 4);
  return bits;
}

TEST(Passes, RandomArithmeticOfEveryTypeKeepsItsDataEffect) {
  // test::random_typed_kernel's programs (every numeric type, conversions, compares and
  // selects over edge values) on the interpreter before and after -O1 and -O2. Until
  // 2026-11-29 CSE shared a sel with an earlier one of the same registers across a write of
  // its predicate.
  std::mt19937 rng(test::random_seed(20261201));
  auto interp = create_backend(Preference::parse("interp"));
  const LaunchConfig config = LaunchConfig::linear(8, 8);
  for (int trial = 0; trial < test::random_trials(150); ++trial) {
    const std::string text = test::random_typed_kernel(rng, 20 + trial % 60);
    const isa::Module m = test::parse_ok(text);
    const auto inputs = test::random_kernel_inputs(rng, 8);
    auto run = [&](const isa::Kernel &k) {
      return test::run_random_typed_kernel(
          *interp, inputs, [&](auto args) { interp->execute_program(k, config, args); });
    };
    const auto before = run(m.kernels[0]);
    for (unsigned level : {1u, 2u}) {
      isa::Module o = m;
      opt::PassOptions po;
      po.level = level;
      DiagnosticEngine diags;
      ASSERT_TRUE(opt::optimize(o, po, diags)) << diags.to_string() << "\n" << text;
      EXPECT_EQ(test::random_kernel_mismatch(run(o.kernels[0]), before), "")
          << "-O" << level << " changed the result of\n"
          << text << "\ninto\n"
          << isa::print_module(o);
    }
  }
}

TEST(Passes, RandomProgramsKeepTheirDataEffect) {
  std::mt19937 rng(test::random_seed(20261124));
  int changed = 0, hoists = 0, reductions = 0;
  for (int trial = 0; trial < test::random_trials(300); ++trial) {
    const std::string text = random_program(rng, 10 + trial % 40);
    DiagnosticEngine diags;
    auto m = isa::parse_module(text, "random.hasm", diags);
    ASSERT_TRUE(m && isa::verify_module(*m, diags)) << diags.to_string() << "\n" << text;
    const auto before = run(m->kernels[0]);
    isa::Kernel hoisted = m->kernels[0];
    hoists += opt::hoist_loop_invariants(hoisted);
    isa::Kernel reduced = m->kernels[0];
    reductions += opt::reduce_strength(reduced);
    for (unsigned level : {1u, 2u}) {
      isa::Module o = *m;
      opt::PassOptions po;
      po.level = level;
      ASSERT_TRUE(opt::optimize(o, po, diags)) << diags.to_string() << "\n" << text;
      changed += o.kernels[0].insts.size() != m->kernels[0].insts.size();
      ASSERT_EQ(run(o.kernels[0]), before) << "-O" << level << " changed the result of\n"
                                           << text << "\ninto\n"
                                           << isa::print_module(o);
    }
  }
  EXPECT_GT(changed, 300);   // the passes had work to do in most programs
  EXPECT_GT(hoists, 30);     // and loops had invariants to move
  EXPECT_GT(reductions, 10); // and products of induction variables to reduce
}

/// A random circuit of data steps over a few classes, so that steps read what earlier ones
/// wrote (the shapes memory forwarding fuses): copies, swaps, merges, splits and ranges.
std::string random_circuit(std::mt19937 &rng) {
  auto cls = [&] { return "c0" + std::to_string(rng() % 5); };
  std::string s;
  const int n = 2 + static_cast<int>(rng() % 9);
  for (int i = 0; i < n; ++i) {
    if (i) s += rng() % 12 == 0 ? " || " : " . ";
    switch (rng() % 5) {
    case 0: s += "copy@" + cls() + "->" + cls(); break;
    case 1: s += "swap@" + cls() + "<->" + cls(); break;
    case 2: s += "merge@" + cls() + "[" + cls() + "," + cls() + "]"; break;
    case 3: s += "split@" + cls() + "[" + cls() + "," + cls() + "]"; break;
    default:
      s += "merge@c[0" + std::to_string(rng() % 2) + "..0" + std::to_string(2 + rng() % 3) + "]";
    }
  }
  return s;
}

TEST(Passes, RandomCircuitsKeepTheirDataEffectWhenTheirStepsFuse) {
  std::mt19937 rng(test::random_seed(20261125));
  std::vector<std::byte> pool(atlas::kBoundaryPoolBytes);
  for (auto &b : pool) b = static_cast<std::byte>(rng() % 64); // small values: no f32 overflow
  int fused = 0, circuits = 0;
  for (int trial = 0; trial < test::random_trials(200); ++trial) {
    const std::string text = random_circuit(rng);
    DiagnosticEngine d;
    auto c = frontend::parse_circuit(text, "r.circuit", d);
    if (!c) continue; // parallel branches that touch the same class are an error
    for (isa::Type t : {isa::Type::I32, isa::Type::F32}) {
      frontend::CircuitOptions o;
      o.element = t;
      auto m = frontend::lower_circuit(*c, o, "r.circuit", d);
      ASSERT_TRUE(m) << text << "\n" << d.to_string();
      isa::Module fused_module = *m;
      opt::PassOptions po;
      ASSERT_TRUE(opt::optimize(fused_module, po, d)) << d.to_string();
      auto run_on = [&](const isa::Module &mod) {
        interp::AtlasState atlas;
        atlas.boundary = pool;
        const auto launch = LaunchConfig::linear(frontend::circuit_elements_per_class(t), 256);
        auto st = interp::run_kernel(mod.kernels[0], launch, {}, atlas);
        EXPECT_TRUE(st) << st.message();
        return atlas.boundary;
      };
      ASSERT_EQ(run_on(*m), run_on(fused_module)) << "circuit: " << text << "\n-O2:\n"
                                                  << isa::print_module(fused_module);
      auto loads = [](const isa::Module &mod) {
        return std::count_if(mod.kernels[0].insts.begin(), mod.kernels[0].insts.end(),
                             [](const isa::Instruction &i) { return i.op == isa::Opcode::Ld; });
      };
      fused += loads(fused_module) < loads(*m);
      ++circuits;
    }
  }
  EXPECT_GT(circuits, 250);       // most parse (parallel branches must touch different classes)
  EXPECT_GT(fused, circuits / 3); // forwarding had work to do in many of them
}

/// A random whole-launch kernel: element-wise operations on three i32 arrays of 64 elements,
/// counting in r0 or r1 (each 64 or 48, from %n or %m), with pure instructions between them
/// that read parameters, redefine the counts or compute a scale, and reductions whose values
/// are stored: the shapes fuse-elementwise gathers into chains, and the ones it must not.
std::string random_elementwise_program(std::mt19937 &rng) {
  std::string s =
      ".kernel k\n.param %a0 : buffer<i32> readwrite\n"
      ".param %a1 : buffer<i32> readwrite\n.param %a2 : buffer<i32> readwrite\n"
      ".param %out : buffer<i32> readwrite\n.param %n : u64\n.param %m : u64\n"
      "  param.u64 r0, %n\n  param.u64 r1, %m\n  mov.imm.u64 r9, 0\n  mov.imm.u64 r8, 0\n";
  auto arr = [&] { return "%a" + std::to_string(rng() % 3); };
  auto count = [&] { return rng() % 2 ? std::string("r0") : std::string("r1"); };
  const char *unary[] = {"neg", "abs", "relu"};
  const char *binary[] = {"add", "sub", "mul", "min", "max"};
  const int length = 4 + static_cast<int>(rng() % 12);
  for (int i = 0; i < length; ++i) {
    switch (rng() % 6) {
    case 0:
    case 1:
      s += std::string("  map.") + unary[rng() % 3] + ".i32 " + arr() + ", " + arr() + ", " +
           count() + "\n";
      break;
    case 2:
      s += std::string("  map2.") + binary[rng() % 5] + ".i32 " + arr() + ", " + arr() + ", " +
           arr() + ", " + count() + "\n";
      break;
    case 3: s += "  param.u64 " + count() + (rng() % 2 ? ", %n\n" : ", %m\n"); break;
    case 4: s += "  add.u64 r8, r8, " + count() + "\n"; break;
    default:
      s += "  reduce_all.add.i32 r5, " + arr() + ", " + count() +
           "\n  st.i32 [%out + r9*4], r5\n  mov.imm.u64 r9, " + std::to_string(rng() % 8) + "\n";
    }
  }
  return s;
}

TEST(Passes, RandomElementwiseProgramsKeepTheirDataEffectWhenTheirChainsGather) {
  std::mt19937 rng(test::random_seed(20261126));
  int gathered = 0;
  for (int trial = 0; trial < test::random_trials(300); ++trial) {
    const std::string text = random_elementwise_program(rng);
    DiagnosticEngine diags;
    auto m = isa::parse_module(text, "random.hasm", diags);
    ASSERT_TRUE(m && isa::verify_module(*m, diags)) << diags.to_string() << "\n" << text;
    auto run_on = [&](const isa::Kernel &k) {
      std::vector<int32_t> arrays[4];
      for (int a = 0; a < 4; ++a)
        for (int i = 0; i < 64; ++i) arrays[a].push_back((i * 37 + a * 11) % 41 - 20);
      std::vector<interp::ArgValue> args;
      for (auto &a : arrays) args.push_back(interp::ArgValue::buffer_of(a));
      args.push_back(interp::ArgValue::scalar(64));
      args.push_back(interp::ArgValue::scalar(48));
      interp::AtlasState atlas;
      auto st = interp::run_kernel(k, LaunchConfig::linear(1), args, atlas);
      EXPECT_TRUE(st) << st.message();
      std::vector<int32_t> all;
      for (auto &a : arrays) all.insert(all.end(), a.begin(), a.end());
      return all;
    };
    const auto before = run_on(m->kernels[0]);
    isa::Kernel moved = m->kernels[0];
    if (opt::gather_elementwise_chains(moved)) {
      ++gathered;
      isa::Module check{m->source_name, {moved}};
      ASSERT_TRUE(isa::verify_module(check, diags)) << diags.to_string();
      ASSERT_EQ(run_on(moved), before) << "fuse-elementwise changed the result of\n"
                                       << text << "\ninto\n"
                                       << isa::print_module(check);
    }
    isa::Module o = *m;
    ASSERT_TRUE(opt::optimize(o, opt::PassOptions{}, diags)) << diags.to_string() << "\n" << text;
    ASSERT_EQ(run_on(o.kernels[0]), before) << "-O2 changed the result of\n"
                                            << text << "\ninto\n"
                                            << isa::print_module(o);
  }
  EXPECT_GT(gathered, 50); // the pass had instructions to move in many programs
}

TEST(Passes, PipelinesAndRegistry) {
  EXPECT_TRUE(opt::pipeline(0).empty());
  std::vector<std::string_view> o1, o2;
  for (const auto *p : opt::pipeline(1)) o1.push_back(p->name);
  for (const auto *p : opt::pipeline(2)) o2.push_back(p->name);
  EXPECT_EQ(o1, (std::vector<std::string_view>{"constant-fold", "copy-propagation", "dce"}));
  EXPECT_EQ(o2, (std::vector<std::string_view>{"constant-fold", "copy-propagation", "cse", "licm",
                                               "strength-reduce", "memory-forwarding",
                                               "fuse-elementwise", "dce"}));
  EXPECT_EQ(opt::pipeline(3).size(), o2.size());
  for (const auto &p : opt::all_passes()) EXPECT_EQ(opt::find_pass(p.name), &p);
  EXPECT_EQ(opt::find_pass("no-such-pass"), nullptr);
}

} // namespace
