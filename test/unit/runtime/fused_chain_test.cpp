// Element-wise chains on the CPU backend (runtime/cpu/fused_chain.cpp): random chains over
// views of one buffer that are the same array, disjoint arrays or partly overlapping ones must
// leave exactly what the interpreter leaves running the instructions one after another; the
// chain is fused exactly when the arrays allow it; a fused chain gives every element the bits
// that the same operations give one launch at a time; a failing instruction of a chain is
// the one the error names.
#include "cpu/library_operands.h"
#include "hologram/runtime/backend.h"
#include "hologram/runtime/cpu.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

using namespace hologram;

namespace {

/// A random chain over up to four views of one buffer and its expectation.
struct RandomChain {
  std::string text;              ///< the kernel: `chain`
  std::vector<uint64_t> offsets; ///< per array parameter: element offset of its view
  std::vector<bool> written;     ///< per array parameter: some operation writes it
  std::vector<bool> used;        ///< per array parameter: some operation reads or writes it
  uint64_t n = 0;
  bool reduces = false;
  bool fusible = false; ///< every written view is the same as or apart from every other
};

/// Element offsets of the views: 0, n and 2n are apart from each other; n/3 and n + n/2 overlap
/// two of them partly.
std::vector<uint64_t> view_offsets(uint64_t n) {
  return {0, n, 2 * n, n / 3, n + n / 2};
}

bool overlaps_partly(uint64_t a, uint64_t b, uint64_t n) {
  return a != b && a < b + n && b < a + n;
}

/// A chain of 2 to 5 element-wise operations of `type` (i32 or f32) over four views, maybe
/// ended by a reduction. An operation never overlaps its own output partly with an input
/// (docs/isa.md leaves that unspecified); operations may overlap each other's arrays.
RandomChain random_chain(std::mt19937 &rng, const std::string &type, uint64_t n) {
  RandomChain c;
  c.n = n;
  const auto all = view_offsets(n);
  auto pick = [&](size_t k) { return static_cast<size_t>(rng() % k); };
  for (int p = 0; p < 4; ++p) c.offsets.push_back(all[pick(all.size())]);
  c.written.assign(4, false);
  c.used.assign(4, false);
  const bool fp = type == "f32";
  const std::vector<std::string> unary =
      fp ? std::vector<std::string>{"neg", "abs", "floor", "relu", "ceil", "trunc"}
         : std::vector<std::string>{"neg", "abs", "relu"};
  const std::vector<std::string> binary = {"add", "sub", "mul", "min", "max"};
  std::ostringstream body;
  // Parameters an operation writing `d` may read: d itself, or a view apart from it.
  auto readable = [&](size_t d) {
    std::vector<size_t> out;
    for (size_t p = 0; p < 4; ++p)
      if (!overlaps_partly(c.offsets[p], c.offsets[d], n)) out.push_back(p);
    return out;
  };
  const size_t ops = 2 + pick(4);
  for (size_t i = 0; i < ops; ++i) {
    const size_t d = pick(4);
    const auto src = readable(d);
    const size_t a = src[pick(src.size())], b = src[pick(src.size())];
    c.written[d] = c.used[d] = c.used[a] = true;
    const size_t kind = pick(fp ? 3 : 2);
    if (kind == 0) {
      body << "  map." << unary[pick(unary.size())] << "." << type << " %a" << d << ", %a" << a
           << ", r0\n";
    } else if (kind == 1) {
      c.used[b] = true;
      body << "  map2." << binary[pick(binary.size())] << "." << type << " %a" << d << ", %a" << a
           << ", %a" << b << ", r0\n";
    } else {
      body << "  axpy." << type << " %a" << d << ", %a" << a << ", r0, r1\n";
    }
  }
  c.reduces = pick(2) == 0;
  if (c.reduces) {
    // Sums of floats reassociate; min and max do not, nor do integer sums.
    const char *op = fp ? (pick(2) ? "min" : "max") : "add";
    const size_t src = pick(4);
    c.used[src] = true;
    body << "  reduce_all." << op << "." << type << " r2, %a" << src << ", r0\n"
         << "  mov.imm.u64 r3, 0\n"
         << "  st." << type << " [%out + r3*4], r2\n";
  }
  std::ostringstream text;
  text << ".kernel chain\n";
  for (int p = 0; p < 4; ++p)
    text << ".param %a" << p << " : buffer<" << type << "> "
         << (c.written[p] ? "readwrite" : "read") << "\n";
  text << ".param %out : buffer<" << type << "> write\n"
       << ".param %n : u64\n"
       << ".param %alpha : f32\n"
       << "  param.u64 r0, %n\n";
  if (fp) text << "  param.f32 r1, %alpha\n";
  text << body.str();
  c.text = text.str();
  c.fusible = true;
  for (size_t p = 0; p < 4; ++p)
    for (size_t q = 0; q < 4; ++q)
      if (p != q && c.used[p] && c.used[q] && (c.written[p] || c.written[q]) &&
          overlaps_partly(c.offsets[p], c.offsets[q], n))
        c.fusible = false;
  return c;
}

struct ChainRun {
  std::vector<uint32_t> memory; ///< the whole buffer the views share, as bits
  uint32_t result = 0;
  LibraryPathCounts paths;
};

ChainRun run_chain(const std::string &backend, const isa::Kernel &k, const RandomChain &c,
                   const std::vector<uint32_t> &init) {
  auto b = create_backend(Preference::parse(backend));
  auto mem = b->allocate_buffer(init.size() * 4), out = b->allocate_buffer(4);
  b->write<uint32_t>(mem, init);
  b->write<uint32_t>(out, std::vector<uint32_t>{0});
  std::vector<KernelArg> args;
  for (uint64_t off : c.offsets) args.push_back(KernelArg::buffer(mem, off * 4, c.n * 4));
  args.push_back(KernelArg::buffer(out));
  args.push_back(KernelArg::u64(c.n));
  args.push_back(KernelArg::f32(-1.5f));
  b->execute_program(k, LaunchConfig::linear(1), args);
  return {b->read<uint32_t>(mem), b->read<uint32_t>(out)[0], b->library_path_counts()};
}

/// Whether every operation of the run took `path`, and no other.
bool all_took(const LibraryPathCounts &paths, const std::string &path) {
  for (const auto &[key, count] : paths)
    if (key.substr(key.find(':') + 1) != path) return false;
  return !paths.empty();
}

} // namespace

TEST(FusedChains, RandomChainsLeaveWhatTheInterpreterLeaves) {
  std::mt19937 rng(20261126);
  int fused = 0, unfused = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const std::string type = trial % 2 ? "f32" : "i32";
    // Across ranges of a part (8 KiB each) and across the thread pool's parts (16K elements).
    const uint64_t sizes[] = {5, 700, 2049, 5000, 40000};
    const uint64_t n = sizes[rng() % 5];
    const RandomChain c = random_chain(rng, type, n);
    auto m = test::parse_ok(c.text);
    std::vector<uint32_t> init(3 * n + n / 2 + 8);
    for (auto &v : init)
      v = type == "f32" ? std::bit_cast<uint32_t>(static_cast<float>(rng() % 2001) / 100 - 10)
                        : static_cast<uint32_t>(rng() % 2001) - 1000;
    const ChainRun want = run_chain("interp", m.kernels[0], c, init);
    const ChainRun got = run_chain("cpu", m.kernels[0], c, init);
    ASSERT_EQ(got.memory, want.memory) << "trial " << trial << "\n" << c.text;
    EXPECT_EQ(got.result, want.result) << "trial " << trial << "\n" << c.text;
    // Fused exactly when the views allow it (n = 5 included: a chain is fused however short).
    EXPECT_EQ(all_took(got.paths, "fused"), c.fusible) << "trial " << trial << "\n" << c.text;
    (c.fusible ? fused : unfused)++;
  }
  // The seed reaches both kinds of chain.
  EXPECT_GT(fused, 10);
  EXPECT_GT(unfused, 10);
}

TEST(FusedChains, AFusedChainGivesTheBitsOfOneLaunchPerOperation) {
  // Transcendentals, evaluated by the vector kernels of f32 and f64, element by element: a
  // range boundary of the fused chain changes no bit.
  for (const std::string type : {"f32", "f64"}) {
    const std::string chained = ".kernel chain\n.param %x : buffer<" + type +
                                "> read\n.param %y : buffer<" + type +
                                "> readwrite\n.param %n : u64\n  param.u64 r0, %n\n";
    const std::string ops[] = {
        "  map.exp." + type + " %y, %x, r0\n", "  map2.atan2." + type + " %y, %y, %x, r0\n",
        "  gelu." + type + " %y, %y, r0\n", "  map.sigmoid." + type + " %y, %y, r0\n"};
    std::string all = chained;
    for (const auto &op : ops) all += op;
    const uint64_t n = 50001;
    const size_t bytes = type == "f32" ? 4 : 8;
    std::vector<double> xs(n);
    for (uint64_t i = 0; i < n; ++i) xs[i] = std::sin(static_cast<double>(i)) * 4;
    auto b = create_backend(Preference::parse("cpu"));
    auto run = [&](const std::vector<std::string> &kernels) {
      auto x = b->allocate_buffer(n * bytes), y = b->allocate_buffer(n * bytes);
      std::vector<std::byte> init(n * bytes);
      for (uint64_t i = 0; i < n; ++i) {
        if (type == "f32") {
          const float v = static_cast<float>(xs[i]);
          std::memcpy(init.data() + i * 4, &v, 4);
        } else {
          std::memcpy(init.data() + i * 8, &xs[i], 8);
        }
      }
      b->copy_to_buffer(x, 0, init);
      KernelArg args[] = {KernelArg::buffer(x), KernelArg::buffer(y), KernelArg::u64(n)};
      for (const auto &text : kernels)
        b->execute_program(test::parse_ok(text).kernels[0], LaunchConfig::linear(1), args);
      std::vector<std::byte> out(n * bytes);
      b->copy_from_buffer(y, 0, out);
      return out;
    };
    const auto fused = run({all});
    EXPECT_EQ(b->library_path_counts().at("gelu:fused"), 1u) << type;
    std::vector<std::string> one_each;
    for (const auto &op : ops) one_each.push_back(chained + op);
    EXPECT_EQ(run(one_each), fused) << type;
  }
}

TEST(FusedChains, AMapAndTheMap2ThatReadsItRunInOnePassWithTheSameBits) {
  // A map with an f32 vector function and a map2 (add, sub, mul, div) that reads its output
  // run as one loop (library map_then_map2): every element gets the bits of the two run one
  // launch each, whichever operand of the map2 the map's output is, and whether the map2
  // writes it over, writes another array, or reads it twice.
  const uint64_t n = 50001; // several ranges and parts, and a partial last vector
  std::vector<float> x(n), b(n);
  for (uint64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(std::sin(static_cast<double>(i)) * 100); // both sides of -86.5
    b[i] = static_cast<float>(std::cos(static_cast<double>(i)) * 3);
  }
  const float specials[] = {0.0f,   -0.0f,   INFINITY, -INFINITY, NAN,
                            1e-40f, -1e-40f, -104.0f,  -200.0f,   88.5f};
  std::copy(std::begin(specials), std::end(specials), x.begin());
  std::copy(std::begin(specials), std::end(specials), b.begin() + 20);
  const std::string head = ".kernel chain\n.param %x : buffer<f32> readwrite\n"
                           ".param %t : buffer<f32> readwrite\n.param %b : buffer<f32> readwrite\n"
                           ".param %y : buffer<f32> readwrite\n.param %n : u64\n"
                           "  param.u64 r0, %n\n";
  // The map2's destination, first and second operand; %t is the map's output.
  const char *shapes[][3] = {{"%t", "%t", "%b"},
                             {"%y", "%b", "%t"},
                             {"%y", "%t", "%t"},
                             {"%x", "%t", "%x"},
                             {"%b", "%b", "%t"}};
  auto b_end = create_backend(Preference::parse("cpu"));
  auto run = [&](const std::vector<std::string> &kernels) {
    auto bx = b_end->allocate_buffer(n * 4), bt = b_end->allocate_buffer(n * 4),
         bb = b_end->allocate_buffer(n * 4), by = b_end->allocate_buffer(n * 4);
    b_end->write<float>(bx, x);
    b_end->write<float>(bt, std::vector<float>(n, 7.0f));
    b_end->write<float>(bb, b);
    b_end->write<float>(by, std::vector<float>(n, 9.0f));
    KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(bt), KernelArg::buffer(bb),
                        KernelArg::buffer(by), KernelArg::u64(n)};
    for (const auto &text : kernels)
      b_end->execute_program(test::parse_ok(text).kernels[0], LaunchConfig::linear(1), args);
    std::vector<uint32_t> all;
    for (auto buf : {bx, bt, bb, by}) {
      auto v = b_end->read<uint32_t>(buf);
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  int cases = 0;
  for (const std::string map :
       {"map.exp.f32 %t, %x", "map.sigmoid.f32 %t, %x", "silu.f32 %t, %x", "silu.f32 %t, %t"})
    for (const std::string op : {"add", "sub", "mul", "div"})
      for (const auto &shape : shapes) {
        const std::string first = "  " + map + ", r0\n";
        const std::string second =
            "  map2." + op + ".f32 " + shape[0] + ", " + shape[1] + ", " + shape[2] + ", r0\n";
        auto fused_count = [&] {
          const auto counts = b_end->library_path_counts();
          const auto it = counts.find("map2:fused-pair");
          return it == counts.end() ? uint64_t{0} : it->second;
        };
        const uint64_t before = fused_count();
        const auto fused = run({head + first + second});
        EXPECT_EQ(fused_count(), before + 1) << first << second;
        EXPECT_EQ(run({head + first, head + second}), fused) << first << second;
        ++cases;
      }
  EXPECT_EQ(cases, 80);
}

TEST(FusedChains, TheErrorNamesTheInstructionOfTheChainThatFailed) {
  // The second operation's array is too short: the chain runs one instruction at a time and
  // the reference reports the second, with its line.
  auto m = test::parse_ok(R"(.kernel chain
.param %x : buffer<f32> readwrite
.param %y : buffer<f32> readwrite
.param %n : u64
  param.u64 r0, %n
  map.neg.f32 %x, %x, r0
  map2.add.f32 %y, %y, %x, r0
)");
  auto b = create_backend(Preference::parse("cpu"));
  auto x = b->allocate_buffer(64 * 4), y = b->allocate_buffer(32 * 4);
  b->write<float>(x, std::vector<float>(64, 1.0f));
  KernelArg args[] = {KernelArg::buffer(x), KernelArg::buffer(y), KernelArg::u64(64)};
  std::string msg;
  EXPECT_EQ(
      test::code_of([&] { b->execute_program(m.kernels[0], LaunchConfig::linear(1), args); }, &msg),
      ErrorCode::OutOfBounds);
  EXPECT_NE(msg.find("line 7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("map2"), std::string::npos) << msg;
  // The first one ran (unfused: x is negated), and nothing was half fused.
  EXPECT_EQ(b->read<float>(x)[63], -1.0f);
}

// A chain's elements (and a library op's rows) split into equal parts for the thread pool:
// a multiple of the threads, so that each thread gets the same share (5 parts on 2 threads
// would be 3 against 2), at least `grain` units each, at most 4 a thread.
TEST(FusedChains, PartsAreEqualSharesOfTheThreads) {
  using runtime::library::parts_of;
  struct Case {
    unsigned threads;
    uint64_t n, grain, parts;
  };
  for (const Case &c :
       {Case{2, 288, 56, 4}, Case{2, 288, 288, 1}, Case{2, 1 << 20, 16384, 8},
        Case{2, 3 * 16384, 16384, 2}, Case{4, 5 * 16384, 16384, 4}, Case{4, 3 * 16384, 16384, 3},
        Case{1, 5 * 16384, 16384, 4}, Case{3, 10, 0, 9}}) {
    runtime::set_cpu_threads(c.threads);
    EXPECT_EQ(parts_of(c.n, c.grain), c.parts)
        << c.threads << " threads, " << c.n << " units, grain " << c.grain;
  }
  runtime::set_cpu_threads(0);
}
