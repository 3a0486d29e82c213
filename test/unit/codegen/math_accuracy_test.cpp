// The compiled x86 transcendentals meet SPEC §3.4's accuracy bounds over wide domains,
// measured against long double evaluation rounded once (as good as correctly rounded for
// these purposes): f32 exp, exp2, log, log2, sqrt within 2 ulp, the others within 4; f64
// within 1 ulp for the functions libm has, within 4 for sigmoid and rsqrt, which it has not.
#include "hologram/codegen/cpu.h"
#include "hologram/driver/cpu_output.h"
#include "hologram/isa/text.h"
#include "hologram/runtime/backend.h"
#include "hologram/support/file_io.h"
#include "runtime/library_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <unistd.h>
#include <vector>

using namespace hologram;

namespace {

struct MathOp {
  const char *name;
  double lo, hi;
  uint32_t f32_ulps, f64_ulps;
  long double (*exact)(long double, long double);
  double y_lo = -4, y_hi = 4; ///< the second operand's range (pow, atan2)
};

constexpr MathOp kOps[] = {
    {"exp", -80, 80, 2, 1, [](long double x, long double) { return expl(x); }},
    // Around and past the range where e^x and 2^k are normal (|x| <= 86.5 for f32, 708 for
    // f64), which the row above stays in: the general path with its clamps, subnormal results
    // and overflow, and the edge between the two paths.
    {"exp", -90, 90, 2, 1, [](long double x, long double) { return expl(x); }},
    {"exp", -745, 709.7, 2, 1, [](long double x, long double) { return expl(x); }},
    {"exp2", -120, 120, 2, 1, [](long double x, long double) { return exp2l(x); }},
    {"log", 1e-30, 1e30, 2, 1, [](long double x, long double) { return logl(x); }},
    // f32 subnormals (and the normal numbers just above them): the rare path, scaled by 2^23.
    {"log", 1.5e-45, 1e-36, 2, 1, [](long double x, long double) { return logl(x); }},
    {"log2", 1e-30, 1e30, 2, 1, [](long double x, long double) { return log2l(x); }},
    {"log10", 1e-30, 1e30, 4, 1, [](long double x, long double) { return log10l(x); }},
    {"sqrt", 0, 1e30, 2, 1, [](long double x, long double) { return sqrtl(x); }},
    {"rsqrt", 1e-30, 1e30, 4, 4, [](long double x, long double) { return 1.0L / sqrtl(x); }},
    {"sin", -1e4, 1e4, 4, 1, [](long double x, long double) { return sinl(x); }},
    {"cos", -1e4, 1e4, 4, 1, [](long double x, long double) { return cosl(x); }},
    {"tan", -100, 100, 4, 1, [](long double x, long double) { return tanl(x); }},
    {"tanh", -20, 20, 4, 1, [](long double x, long double) { return tanhl(x); }},
    {"sigmoid", -90, 90, 4, 4, [](long double x, long double) { return 1.0L / (1.0L + expl(-x)); }},
    {"erf", -6, 6, 4, 1, [](long double x, long double) { return erfl(x); }},
    {"pow", 0, 20, 4, 1, [](long double x, long double y) { return powl(x, y); }},
    // x around 1, where log|x| = k ln 2 + log m has k = 0 or -1 and m far from 1, and |y| up
    // to 2000, so that y log|x| reaches ±700: the error of f64 log|x| weighs 2000 times.
    {"pow", 0.7, 1.42, 4, 1, [](long double x, long double y) { return powl(x, y); }, -2000, 2000},
    {"atan2", -50, 50, 4, 1, [](long double x, long double y) { return atan2l(x, y); }}};

bool binary(const char *name) {
  return !std::strcmp(name, "pow") || !std::strcmp(name, "atan2");
}

std::string kernels() {
  std::string text;
  for (const char *t : {"f32", "f64"})
    for (const auto &op : kOps) {
      if (&op != std::find_if(std::begin(kOps), std::end(kOps),
                              [&](const MathOp &o) { return !std::strcmp(o.name, op.name); }))
        continue; // a second range of an operation: the same kernel
      std::string s = std::strcmp(t, "f32") ? "8" : "4";
      text += std::string(".kernel ") + op.name + "_" + t + "\n.param %x : buffer<" + t +
              "> read\n.param %y : buffer<" + t + "> read\n.param %o : buffer<" + t +
              "> write\n  ld." + t + " r0, [%x + %gid*" + s + "]\n  ld." + t + " r1, [%y + %gid*" +
              s + "]\n  " + op.name + "." + t + " r2, r0" + (binary(op.name) ? ", r1" : "") +
              "\n  st." + t + " [%o + %gid*" + s + "], r2\n";
    }
  return text;
}

template <typename T> uint64_t ulps(T a, T b) {
  if ((std::isnan(a) && std::isnan(b)) || a == b) return 0;
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  __extension__ typedef __int128 Wide;
  auto key = [](T v) {
    Wide k = std::bit_cast<I>(v);
    return k < 0 ? Wide{std::numeric_limits<I>::min()} - k : k;
  };
  Wide d = key(a) - key(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

std::string show(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

/// The kernel's outputs for inputs x (and y).
template <typename T>
std::vector<T> run(Backend &b, ModuleHandle m, const isa::Kernel &k, const std::vector<T> &x,
                   const std::vector<T> &y) {
  const size_t n = x.size();
  auto bx = b.allocate_buffer(n * sizeof(T)), by = b.allocate_buffer(n * sizeof(T)),
       bo = b.allocate_buffer(n * sizeof(T));
  b.write<T>(bx, x);
  b.write<T>(by, y);
  KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::buffer(bo)};
  b.launch(m, k.name, LaunchConfig::linear(n, 256), args);
  auto out = b.read<T>(bo);
  for (auto h : {bx, by, bo}) b.free_buffer(h);
  return out;
}

template <typename T>
uint64_t worst_error(Backend &b, ModuleHandle m, const isa::Kernel &k, const MathOp &op,
                     std::string &where) {
  static_assert(sizeof(long double) > sizeof(double), "needs x87 extended precision");
  const uint32_t n = 1 << 14;
  std::vector<T> x(n), y(n);
  runtime::test::XorShift64 rng{0x2545F4914F6CDD1Dull};
  auto next = [&] { return static_cast<double>(rng.next() >> 11) / 9007199254740992.0; };
  const bool logscale = op.lo > 0 && op.hi / op.lo > 1e6;
  for (uint32_t i = 0; i < n; ++i) {
    double u = next();
    x[i] = static_cast<T>(logscale
                              ? std::exp(std::log(op.lo) + u * (std::log(op.hi) - std::log(op.lo)))
                              : op.lo + (op.hi - op.lo) * u);
    y[i] = static_cast<T>(op.y_lo + (op.y_hi - op.y_lo) * next());
  }
  auto got = run(b, m, k, x, y);
  std::vector<T> want(n);
  for (uint32_t i = 0; i < n; ++i) {
    long double e = op.exact(x[i], y[i]);
    // sigmoid saturates to exactly 0 once exp(-x) overflows T (docs/isa.md).
    if (!std::strcmp(op.name, "sigmoid") &&
        expl(-static_cast<long double>(x[i])) > std::numeric_limits<T>::max())
      e = 0;
    want[i] = static_cast<T>(e);
  }
  uint64_t worst = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (uint64_t u = ulps(got[i], want[i]); u > worst) {
      worst = u;
      where = "x=" + show(x[i]) + " y=" + show(y[i]) + ": " + show(got[i]) + " vs " + show(want[i]);
    }
  return worst;
}

/// Compiles m for each x86 level this CPU runs (v4, with its own exp scaling by vscalefps,
/// where it has AVX-512; the assembly golden test codegen/x86/inline_exp.hasm covers v4's
/// code elsewhere), loads it on the CPU backend and calls fn(target, backend, module).
template <typename F> void on_each_level(const isa::Module &m, F &&fn) {
  std::vector<std::string> targets{"x86-64-v2", "x86-64-v3"};
  if (codegen::host_cpu_level() == "x86-64-v4") targets.push_back("x86-64-v4");
  for (const std::string &target : targets) {
    driver::CpuOutputOptions o;
    o.targets = {target};
    o.module_name = "math";
    auto bytes = driver::emit_cpu_output(m, o, "shared");
    ASSERT_TRUE(bytes) << bytes.message();
    std::string path = (std::filesystem::temp_directory_path() /
                        ("hologram-math-" + std::to_string(getpid()) + "-" + target + ".so"))
                           .string();
    ASSERT_TRUE(write_file_atomic(path, *bytes).is_ok());
    auto b = create_backend(Preference::parse("cpu"));
    fn(target, *b, b->load_module(path));
    std::filesystem::remove(path);
  }
}

TEST(CompiledMath, MeetsTheAccuracyBoundsOfTheSpec) {
  DiagnosticEngine diags;
  auto m = isa::parse_module(kernels(), "math.hasm", diags);
  ASSERT_TRUE(m) << diags.to_string();
  on_each_level(*m, [&](const std::string &target, Backend &b, ModuleHandle mod) {
    for (const auto &op : kOps) {
      std::string where;
      const auto *k32 = m->find_kernel(std::string(op.name) + "_f32");
      uint64_t e32 = worst_error<float>(b, mod, *k32, op, where);
      EXPECT_LE(e32, op.f32_ulps) << target << " f32 " << op.name << " at " << where;
      const auto *k64 = m->find_kernel(std::string(op.name) + "_f64");
      uint64_t e64 = worst_error<double>(b, mod, *k64, op, where);
      EXPECT_LE(e64, op.f64_ulps) << target << " f64 " << op.name << " at " << where;
    }
  });
}

// pow and atan2 (inline at every level, f32 evaluated in f64, f64 in double-double) give C99's
// results on the special values: every pair of zeros, ones, halves, odd and even integers,
// non-integers, huge and tiny values, infinities, NaN and a subnormal, of both signs. NaN must
// be NaN, zeros and infinities exact with their signs, and the rest within the SPEC's bound
// (4 ulp for f32, 1 for f64) of libm's result.
template <typename T> void expect_c99_special_values(const isa::Module &m, const char *type) {
  const T inf = std::numeric_limits<T>::infinity();
  const T huge = sizeof(T) == 4 ? T(1e30) : T(1e300),
          subnormal = sizeof(T) == 4 ? T(1e-40) : T(1e-310);
  std::vector<T> values{0, 1, 0.5, 2, 3, 2.5, huge, subnormal, inf, T(0.3), T(1e7)};
  for (size_t i = 0, n = values.size(); i < n; ++i) values.push_back(-values[i]);
  values.push_back(std::numeric_limits<T>::quiet_NaN());
  std::vector<T> x, y;
  for (T a : values)
    for (T c : values) {
      x.push_back(a);
      y.push_back(c);
    }
  // The kernels have no bound test: whole blocks of 256 lanes.
  while (x.size() % 256) {
    x.push_back(1);
    y.push_back(1);
  }
  const uint64_t bound = sizeof(T) == 4 ? 4 : 1;
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  on_each_level(m, [&](const std::string &target, Backend &b, ModuleHandle mod) {
    for (const char *name : {"pow", "atan2"}) {
      const bool pow = !std::strcmp(name, "pow");
      auto got = run(b, mod, *m.find_kernel(std::string(name) + "_" + type), x, y);
      for (size_t i = 0; i < x.size(); ++i) {
        const double xd = x[i], yd = y[i];
        const T want = static_cast<T>(pow ? std::pow(xd, yd) : std::atan2(xd, yd));
        const std::string at = target + " " + name + "." + type + "(" + show(x[i]) + ", " +
                               show(y[i]) + ") = " + show(got[i]) + ", want " + show(want);
        if (std::isnan(want) || std::isinf(want) || want == 0) {
          const Bits mask = std::isnan(want) ? 0 : ~Bits{0};
          EXPECT_EQ(std::bit_cast<Bits>(got[i]) & mask, std::bit_cast<Bits>(want) & mask) << at;
          EXPECT_EQ(std::isnan(got[i]), std::isnan(want)) << at;
        } else {
          EXPECT_LE(ulps(got[i], want), bound) << at;
        }
      }
    }
  });
}

TEST(CompiledMath, PowAndAtan2FollowC99OnSpecialValues) {
  DiagnosticEngine diags;
  auto m = isa::parse_module(kernels(), "math.hasm", diags);
  ASSERT_TRUE(m) << diags.to_string();
  expect_c99_special_values<float>(*m, "f32");
  expect_c99_special_values<double>(*m, "f64");
}

// The values a user checks first come out exact at every level, f32 and f64: exp(0) = 1,
// exp2 of an integer, log(1) = 0, log2 of a power of two, sin(0) = 0, cos(0) = 1, sin of π/2
// rounded = 1, cos of π rounded = -1 (their true values round to those), tanh(0) = erf(0) = 0,
// sigmoid(0) = 1/2, pow(2, 10) = 1024, atan2(0, 1) = 0. An evaluation that gives
// cos(0) = 0.99999994 is within SPEC §3.4's bound, but not what a user expects of cos(0).
template <typename T>
void expect_notable_values(Backend &b, ModuleHandle mod, const isa::Module &m,
                           const std::string &target, const char *type) {
  struct Case {
    const char *op;
    T x, y, want;
  };
  const T half_pi = static_cast<T>(1.5707963267948966), pi = static_cast<T>(3.141592653589793);
  const Case cases[] = {
      {"exp", 0, 0, 1},       {"exp2", 10, 0, 1024},  {"exp2", -3, 0, 0.125}, {"log", 1, 0, 0},
      {"log2", 1024, 0, 10},  {"log2", 0.25, 0, -2},  {"sin", 0, 0, 0},       {"cos", 0, 0, 1},
      {"sin", half_pi, 0, 1}, {"cos", pi, 0, -1},     {"tan", 0, 0, 0},       {"tanh", 0, 0, 0},
      {"erf", 0, 0, 0},       {"sigmoid", 0, 0, 0.5}, {"pow", 2, 10, 1024},   {"atan2", 0, 1, 0}};
  for (const Case &c : cases) {
    const auto *k = m.find_kernel(std::string(c.op) + "_" + type);
    ASSERT_NE(k, nullptr) << c.op;
    // Whole blocks of 256 (run's launch): the kernels have no bound check.
    const std::vector<T> got =
        run<T>(b, mod, *k, std::vector<T>(256, c.x), std::vector<T>(256, c.y));
    EXPECT_EQ(got[0], c.want) << target << " " << type << " " << c.op << "(" << show(c.x)
                              << (binary(c.op) ? ", " + show(c.y) : std::string())
                              << ") = " << show(got[0]);
  }
}

TEST(CompiledMath, NotableValuesAreExact) {
  DiagnosticEngine diags;
  auto m = isa::parse_module(kernels(), "math.hasm", diags);
  ASSERT_TRUE(m) << diags.to_string();
  on_each_level(*m, [&](const std::string &target, Backend &b, ModuleHandle mod) {
    expect_notable_values<float>(b, mod, *m, target, "f32");
    expect_notable_values<double>(b, mod, *m, target, "f64");
  });
}

// A uniform value (a scalar parameter, computed once for the launch) and a lane holding the same
// value get the same bits from f32 exp, sigmoid, tanh, log, log2 and log10 at every level: the
// scalar evaluation goes by the lanes' tables (exp by quarters at v3 and by sixteenths at v4,
// the logarithms by their tables at v4) and scales the same way, so a kernel does not change
// its result when the compiler finds a value uniform. The values cover both signs, each way of
// exp (normal results, subnormal ones, overflow) and NaN.
TEST(CompiledMath, AUniformValueGetsTheBitsOfALane) {
  const char *const ops[] = {"exp", "sigmoid", "tanh", "log", "log2", "log10"};
  std::string text;
  for (const char *op : ops)
    text += std::string(".kernel uniform_") + op +
            "\n.param %x : buffer<f32> read\n.param %v : f32\n.param %o : buffer<f32> write\n"
            ".param %u : buffer<f32> write\n  ld.f32 r0, [%x + %gid*4]\n  " +
            op + ".f32 r1, r0\n  st.f32 [%o + %gid*4], r1\n  param.f32 r2, %v\n  " + op +
            ".f32 r3, r2\n  st.f32 [%u + %gid*4], r3\n";
  DiagnosticEngine diags;
  auto m = isa::parse_module(text, "uniform.hasm", diags);
  ASSERT_TRUE(m) << diags.to_string();
  const float values[] = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          0.02f,
                          -0.02f,
                          0.7f,
                          -0.7f,
                          5.199209f,
                          -16.6357f,
                          22.0292f,
                          -22.0292f,
                          86.5f,
                          -86.5f,
                          88.72283f,
                          88.72284f,
                          -95.0f,
                          -103.97208f,
                          -104.0f,
                          -105.0f,
                          -200.0f,
                          200.0f,
                          1e-30f,
                          -1e-30f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  on_each_level(*m, [&](const std::string &target, Backend &b, ModuleHandle mod) {
    const size_t n = 256; // one block: the kernels have no bound check
    auto bx = b.allocate_buffer(n * 4), bo = b.allocate_buffer(n * 4),
         bu = b.allocate_buffer(n * 4);
    for (const char *op : ops)
      for (const float v : values) {
        b.write<float>(bx, std::vector<float>(n, v));
        KernelArg args[] = {KernelArg::buffer(bx), KernelArg::f32(v), KernelArg::buffer(bo),
                            KernelArg::buffer(bu)};
        b.launch(mod, std::string("uniform_") + op, LaunchConfig::linear(n, n), args);
        const float lane = b.read<float>(bo)[0], uniform = b.read<float>(bu)[0];
        if (std::isnan(lane) && std::isnan(uniform)) continue;
        EXPECT_EQ(std::bit_cast<uint32_t>(lane), std::bit_cast<uint32_t>(uniform))
            << target << " " << op << "(" << show(v) << "): a lane " << show(lane) << ", uniform "
            << show(uniform);
      }
    for (auto h : {bx, bo, bu}) b.free_buffer(h);
  });
}

// At x86-64-v3 and v4 the library's f32 exp and sigmoid (runtime/cpu/vector_math.h) go by
// quarters and by sixteenths with the operations of the compiled ones (docs/isa.md): `map.exp`
// and a kernel's `exp` give the same bits, on every 4093rd bit pattern (each sign and exponent,
// NaN and infinities), at each of the two levels this CPU runs.
TEST(CompiledMath, LibraryExpAndSigmoidHaveTheBitsOfCompiledOnesAtV3AndV4) {
  const std::vector<int> levels = runtime::test::runnable_levels();
  if (std::find(levels.begin(), levels.end(), 3) == levels.end())
    GTEST_SKIP() << "this CPU does not run x86-64-v3";
  DiagnosticEngine diags;
  auto m = isa::parse_module(kernels(), "math.hasm", diags);
  ASSERT_TRUE(m) << diags.to_string();
  std::vector<float> x;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4093)
    x.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  // The kernels have no bound check: whole blocks of 256 (run's launch), the last padded with
  // the edges of exp's two ways and its range.
  for (size_t i = 0; x.size() % 256; ++i) {
    const float edges[] = {86.5f, -86.5f, 88.72283f, 88.72284f, -103.97208f, -104.0f, -105.0f};
    x.push_back(edges[i % std::size(edges)]);
  }
  for (const int level : {3, 4}) {
    if (std::find(levels.begin(), levels.end(), level) == levels.end()) continue;
    SCOPED_TRACE("x86-64-v" + std::to_string(level));
    driver::CpuOutputOptions o;
    o.targets = {"x86-64-v" + std::to_string(level)};
    o.module_name = "math";
    auto bytes = driver::emit_cpu_output(*m, o, "shared");
    ASSERT_TRUE(bytes) << bytes.message();
    const std::string path =
        (std::filesystem::temp_directory_path() / ("hologram-math-" + std::to_string(getpid()) +
                                                   "-library-v" + std::to_string(level) + ".so"))
            .string();
    ASSERT_TRUE(write_file_atomic(path, *bytes).is_ok());
    auto b = create_backend(Preference::parse("cpu"));
    const ModuleHandle mod = b->load_module(path);
    for (const auto op : {isa::MapUnaryOp::Exp, isa::MapUnaryOp::Sigmoid}) {
      const std::string name = op == isa::MapUnaryOp::Exp ? "exp" : "sigmoid";
      const std::vector<float> compiled = run<float>(*b, mod, *m->find_kernel(name + "_f32"), x, x);
      std::vector<float> library(x.size());
      runtime::test::run_map(level, runtime::map_kind(op), x.data(), library.data(), x.size());
      size_t differ = 0, first = 0;
      for (size_t i = 0; i < x.size(); ++i)
        if (std::bit_cast<uint32_t>(compiled[i]) != std::bit_cast<uint32_t>(library[i]) &&
            !(std::isnan(compiled[i]) && std::isnan(library[i])) && differ++ == 0)
          first = i;
      EXPECT_EQ(differ, 0u) << name << ": first at x = " << show(x[first]) << ": compiled "
                            << show(compiled[first]) << ", library " << show(library[first]);
    }
    std::filesystem::remove(path);
  }
}

// The SPIR-V backends evaluate f32 math in f64 with their own reductions and round once, and
// f64 math in double-double (docs/spirv.md): the same bounds on Vulkan and OpenCL, and
// sin/cos/tan over the whole f32 and f64 ranges (the reductions are exact).
TEST(SpirvMath, MeetsTheAccuracyBoundsOfTheSpec) {
  setenv("XDG_RUNTIME_DIR", "/tmp", 0);
  DiagnosticEngine diags;
  auto m = isa::parse_module(kernels(), "math.hasm", diags);
  ASSERT_TRUE(m) << diags.to_string();
  driver::CpuOutputOptions o;
  o.targets = {"vulkan1.1", "opencl1.2"};
  o.module_name = "math";
  auto bytes = driver::emit_cpu_output(*m, o, "bundle");
  ASSERT_TRUE(bytes) << bytes.message();
  std::string path = (std::filesystem::temp_directory_path() /
                      ("hologram-math-spirv-" + std::to_string(getpid()) + ".hgb"))
                         .string();
  ASSERT_TRUE(write_file_atomic(path, *bytes).is_ok());
  for (const char *backend : {"vulkan", "opencl"}) {
    auto b = create_backend(Preference::parse(backend));
    auto mod = b->load_module(path);
    for (const auto &op : kOps) {
      std::string where;
      const auto *k32 = m->find_kernel(std::string(op.name) + "_f32");
      EXPECT_LE(worst_error<float>(*b, mod, *k32, op, where), op.f32_ulps)
          << backend << " f32 " << op.name << " at " << where;
      const auto *k64 = m->find_kernel(std::string(op.name) + "_f64");
      EXPECT_LE(worst_error<double>(*b, mod, *k64, op, where), op.f64_ulps)
          << backend << " f64 " << op.name << " at " << where;
      bool trig = !std::strcmp(op.name, "sin") || !std::strcmp(op.name, "cos") ||
                  !std::strcmp(op.name, "tan");
      if (!trig) continue;
      MathOp wide = op;
      wide.lo = 1e4;
      wide.hi = 3e38;
      EXPECT_LE(worst_error<float>(*b, mod, *k32, wide, where), op.f32_ulps)
          << backend << " f32 " << op.name << " (to 3e38) at " << where;
      wide.hi = 1e308;
      EXPECT_LE(worst_error<double>(*b, mod, *k64, wide, where), op.f64_ulps)
          << backend << " f64 " << op.name << " (to 1e308) at " << where;
    }
  }
  std::filesystem::remove(path);
}

} // namespace
