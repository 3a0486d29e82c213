// hologram-math-sweep: the error of the CPU's f32 vector functions over every one of the 2^32
// f32 inputs, at every x86 level this CPU runs, against a f64 reference:
//  - the library's (exp, sigmoid, silu of `map`, runtime/cpu/vector_math.h);
//  - the compiled ones that the x86 lowering inlines (exp, exp2, log, log2, log10, tanh,
//    sigmoid, erf, sin, cos; lib/codegen/llvm/math.cpp), run as kernels through the CPU backend;
//  - and, on 2^24 sampled inputs (or pairs) each, its f64 functions (exp, exp2, log, log2,
//    log10, sigmoid, sin, cos, tan, tanh, erf, pow, atan2) and its f32 pow and atan2, against a
//    long double reference.
// Prints the worst error and where it occurs; exits 1 when a bound is exceeded. Arguments name
// the functions to sweep (all when none); --compiled leaves out the library's, --library runs
// only the library's, --f64 runs only the sampled f64 functions, --level=N (2, 3, 4) only that
// x86 level. Run by scripts/math-sweep.sh (about half an hour on 2 cores; not part of the unit
// tests).
#include "library_math.h"

#include "hologram/driver/cpu_output.h"
#include "hologram/isa/text.h"
#include "hologram/runtime/backend.h"
#include "hologram/support/file_io.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace hologram;
using namespace hologram::runtime;
using namespace hologram::runtime::test;

namespace {

/// Inputs per evaluation.
constexpr uint64_t kBlock = 1 << 16;

struct Worst {
  double ulps = 0;
  float x = 0;
};

/// Evaluates the function under test on n inputs.
using Evaluate = std::function<void(const float *x, float *y, uint64_t n)>;

/// The worst error over the inputs with bit patterns [lo, hi).
Worst sweep(const Evaluate &eval, double (*exact)(double), uint64_t lo, uint64_t hi) {
  std::vector<float> x(kBlock), y(kBlock);
  Worst w;
  for (uint64_t start = lo; start < hi; start += kBlock) {
    const uint64_t n = std::min(kBlock, hi - start);
    for (uint64_t i = 0; i < n; ++i) x[i] = std::bit_cast<float>(static_cast<uint32_t>(start + i));
    eval(x.data(), y.data(), n);
    for (uint64_t i = 0; i < n; ++i) {
      const double e = ulp_error(y[i], exact(x[i]));
      if (e > w.ulps) w = {e, x[i]};
    }
  }
  return w;
}

/// Sweeps all 2^32 inputs on every core: `make_eval` gives each thread its own evaluator.
Worst sweep_all(const std::function<Evaluate()> &make_eval, double (*exact)(double)) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<Worst> part(threads);
  std::vector<std::thread> pool;
  const uint64_t all = uint64_t{1} << 32;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      part[t] = sweep(make_eval(), exact, all * t / threads, all * (t + 1) / threads);
    });
  for (auto &th : pool) th.join();
  Worst w;
  for (const Worst &p : part)
    if (p.ulps > w.ulps) w = p;
  return w;
}

bool report(const char *kind, const char *name, int level, const Worst &w, double bound) {
  const bool pass = w.ulps <= bound;
  std::printf("%-8s %-8s f32 x86-64-v%d: worst %.3f ulp at x = %a (%.9g); bound %.0f: %s\n", kind,
              name, level, w.ulps, static_cast<double>(w.x), static_cast<double>(w.x), bound,
              pass ? "ok" : "EXCEEDED");
  std::fflush(stdout);
  return pass;
}

/// A function the x86 lowering inlines, its bound (SPEC §3.4) and its f64 reference.
struct CompiledFunction {
  const char *name;
  double ulps;
  double (*exact)(double);
};

const CompiledFunction kCompiled[] = {
    {"exp", 2, [](double x) { return std::exp(x); }},
    {"exp2", 2, [](double x) { return std::exp2(x); }},
    {"log", 2, [](double x) { return std::log(x); }},
    {"log2", 2, [](double x) { return std::log2(x); }},
    {"log10", 4, [](double x) { return std::log10(x); }},
    {"tanh", 4, [](double x) { return std::tanh(x); }},
    {"erf", 4, [](double x) { return std::erf(x); }},
    {"sin", 4, [](double x) { return std::sin(x); }},
    {"cos", 4, [](double x) { return std::cos(x); }},
    {"tan", 4, [](double x) { return std::tan(x); }},
    // Exactly 0 once exp(-x) overflows f32 (SPEC §3.4).
    {"sigmoid", 4,
     [](double x) {
       const double e = std::exp(-x);
       return e > std::numeric_limits<float>::max() ? 0.0 : 1.0 / (1.0 + e);
     }},
};

/// How a sampled operand is drawn: uniform in [lo, hi], or (lo = hi = 0) uniform over the bit
/// patterns of the positive doubles, or (log_scale) of either sign with a magnitude whose
/// logarithm is uniform in [log lo, log hi], so every binade between them gets as many.
struct Range {
  double lo, hi;
  bool log_scale = false;
  double draw(uint64_t bits) const {
    const double u = static_cast<double>(bits >> 11) * 0x1p-53;
    if (log_scale)
      return std::copysign(std::exp2(std::log2(lo) + (std::log2(hi) - std::log2(lo)) * u),
                           (bits & 1) ? -1.0 : 1.0);
    return lo == hi ? std::bit_cast<double>(bits & 0x7fefffffffffffffull) : lo + (hi - lo) * u;
  }
};

/// A compiled f64 function, sampled: its bound (SPEC §3.4: 1 ulp of the correctly rounded
/// value, 4 for sigmoid), a long double reference, and how its operands are drawn (a second
/// range for pow and atan2).
struct SampledFunction {
  const char *name;
  double ulps;
  long double (*exact)(long double, long double);
  Range x;
  std::optional<Range> y = std::nullopt;
  bool single = false; ///< an f32 function (its operands drawn in f64, then rounded)
  [[nodiscard]] const char *type() const { return single ? "f32" : "f64"; }
};

const SampledFunction kSampled[] = {
    {"exp", 1, [](long double x, long double) { return expl(x); }, {-746, 710}},
    {"exp2", 1, [](long double x, long double) { return exp2l(x); }, {-1076, 1025}},
    {"log", 1, [](long double x, long double) { return logl(x); }, {0, 0}},
    {"log2", 1, [](long double x, long double) { return log2l(x); }, {0, 0}},
    {"log10", 1, [](long double x, long double) { return log10l(x); }, {0, 0}},
    // Exactly 0 once exp(-x) overflows f64 (SPEC §3.4).
    {"sigmoid",
     4,
     [](long double x, long double) {
       const long double e = expl(-x);
       return e > std::numeric_limits<double>::max() ? 0.0L : 1 / (1 + e);
     },
     {-750, 750}},
    // Inline below 2^19, SLEEF from there: a chunk with a lane beyond takes SLEEF's path.
    {"sin", 1, [](long double x, long double) { return sinl(x); }, {0x1p-30, 0x1p20, true}},
    {"cos", 1, [](long double x, long double) { return cosl(x); }, {0x1p-30, 0x1p20, true}},
    {"tan", 1, [](long double x, long double) { return tanl(x); }, {0x1p-30, 0x1p20, true}},
    {"tanh", 1, [](long double x, long double) { return tanhl(x); }, {0x1p-30, 30, true}},
    {"erf", 1, [](long double x, long double) { return erfl(x); }, {0x1p-30, 7, true}},
    // |y log x| up to about 700: most results in range, some overflowing or underflowing.
    {"pow",
     1,
     [](long double x, long double y) { return powl(x, y); },
     {0x1p-20, 0x1p20, true},
     Range{-50, 50}},
    // x around 1 (log|x| = k ln 2 + log m, k = 0 or -1, m far from 1) and |y| up to 2000, so
    // y log x reaches ±700: the error of log|x| weighs 2000 times.
    {"pow",
     1,
     [](long double x, long double y) { return powl(x, y); },
     {0.7, 1.42},
     Range{-2000, 2000}},
    {"atan2",
     1,
     [](long double y, long double x) { return atan2l(y, x); },
     {0x1p-30, 0x1p30, true},
     Range{0x1p-30, 0x1p30, true}},
    // The f32 binary functions (the unary ones are swept over every input above).
    {"pow",
     4,
     [](long double x, long double y) { return powl(x, y); },
     {0x1p-20, 0x1p20, true},
     Range{-20, 20},
     true},
    {"atan2",
     4,
     [](long double y, long double x) { return atan2l(y, x); },
     {0x1p-30, 0x1p30, true},
     Range{0x1p-30, 0x1p30, true},
     true},
};

/// y = name(x) over buffers of type t (f32 or f64), for every compiled function.
std::string kernel_text(const char *name, const char *t) {
  const std::string ty = t, size = ty == "f32" ? "4" : "8";
  return ".kernel " + std::string(name) + "_" + ty + "\n.param %x : buffer<" + ty +
         "> read\n.param %y : buffer<" + ty + "> write\n  ld." + ty + " r0, [%x + %gid*" + size +
         "]\n  " + name + "." + ty + " r1, r0\n  st." + ty + " [%y + %gid*" + size + "], r1\n";
}

/// o = name(x, y) over buffers of type t.
std::string binary_kernel_text(const char *name, const char *t) {
  const std::string ty = t, size = ty == "f32" ? "4" : "8";
  return ".kernel " + std::string(name) + "_" + ty + "\n.param %x : buffer<" + ty +
         "> read\n.param %y : buffer<" + ty + "> read\n.param %o : buffer<" + ty +
         "> write\n  ld." + ty + " r0, [%x + %gid*" + size + "]\n  ld." + ty + " r1, [%y + %gid*" +
         size + "]\n  " + name + "." + ty + " r2, r0, r1\n  st." + ty + " [%o + %gid*" + size +
         "], r2\n";
}

/// A shared object with kernels `<name>_f32` for every compiled function and `<name>_f64` for
/// every sampled one, for one x86 level; its path.
std::string compile_kernels(int level) {
  std::string text;
  for (const auto &fn : kCompiled) text += kernel_text(fn.name, "f32");
  std::set<std::string> sampled; // a function sampled over two ranges has one kernel
  for (const auto &fn : kSampled)
    if (sampled.insert(std::string(fn.name) + fn.type()).second)
      text += fn.y ? binary_kernel_text(fn.name, fn.type()) : kernel_text(fn.name, fn.type());
  DiagnosticEngine diags;
  auto m = isa::parse_module(text, "sweep.hasm", diags);
  driver::CpuOutputOptions o;
  o.targets = {"x86-64-v" + std::to_string(level)};
  o.module_name = "sweep";
  if (!m) {
    std::fprintf(stderr, "hologram-math-sweep: cannot parse the kernels: %s\n",
                 diags.to_string().c_str());
    std::exit(2);
  }
  auto bytes = driver::emit_cpu_output(*m, o, "shared");
  if (!bytes) {
    std::fprintf(stderr, "hologram-math-sweep: cannot compile the kernels: %s\n",
                 bytes.status().describe().c_str());
    std::exit(2);
  }
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("hologram-math-sweep-" + std::to_string(getpid()) + "-v" + std::to_string(level) + ".so"))
          .string();
  if (auto st = write_file_atomic(path, *bytes); !st) {
    std::fprintf(stderr, "hologram-math-sweep: %s\n", st.message().c_str());
    std::exit(2);
  }
  return path;
}

/// Runs kernel `name` of the shared object at `path` on one backend of its own.
template <typename T>
std::function<void(const T *, T *, uint64_t)> compiled_evaluator(const std::string &path,
                                                                 const std::string &name) {
  auto backend = std::shared_ptr<Backend>(create_backend(Preference::parse("cpu")));
  ModuleHandle module = backend->load_module(path);
  BufferHandle bx = backend->allocate_buffer(kBlock * sizeof(T));
  BufferHandle by = backend->allocate_buffer(kBlock * sizeof(T));
  return [backend, module, name, bx, by](const T *x, T *y, uint64_t n) {
    backend->write<T>(bx, std::span<const T>(x, n));
    KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(by)};
    backend->launch(module, name, LaunchConfig::linear(static_cast<uint32_t>(n), 256), args);
    const std::vector<T> out = backend->read<T>(by);
    std::copy_n(out.begin(), n, y);
  };
}

/// Runs binary kernel `name` (o = name(x, y)) of the shared object at `path`.
template <typename T>
std::function<void(const T *, const T *, T *, uint64_t)> binary_evaluator(const std::string &path,
                                                                          const std::string &name) {
  auto backend = std::shared_ptr<Backend>(create_backend(Preference::parse("cpu")));
  ModuleHandle module = backend->load_module(path);
  std::array<BufferHandle, 3> b;
  for (auto &h : b) h = backend->allocate_buffer(kBlock * sizeof(T));
  return [backend, module, name, b](const T *x, const T *y, T *o, uint64_t n) {
    backend->write<T>(b[0], std::span<const T>(x, n));
    backend->write<T>(b[1], std::span<const T>(y, n));
    KernelArg args[] = {KernelArg::buffer(b[0]), KernelArg::buffer(b[1]), KernelArg::buffer(b[2])};
    backend->launch(module, name, LaunchConfig::linear(static_cast<uint32_t>(n), 256), args);
    const std::vector<T> out = backend->read<T>(b[2]);
    std::copy_n(out.begin(), n, o);
  };
}

/// The worst error of sampled function `fn` (of type T) over 2^24 sampled inputs.
template <typename T>
std::pair<double, double> sample_of(const std::string &path, const SampledFunction &fn) {
  const std::string kernel = std::string(fn.name) + "_" + fn.type();
  std::function<void(const T *, T *, uint64_t)> unary;
  std::function<void(const T *, const T *, T *, uint64_t)> binary;
  if (fn.y)
    binary = binary_evaluator<T>(path, kernel);
  else
    unary = compiled_evaluator<T>(path, kernel);
  std::vector<T> x(kBlock), y(kBlock), out(kBlock);
  XorShift64 rng{0x9E3779B97F4A7C15ull};
  std::pair<double, double> worst{0, 0}; // ulps, x
  for (int block = 0; block < 256; ++block) {
    for (uint64_t i = 0; i < kBlock; ++i) {
      x[i] = static_cast<T>(fn.x.draw(rng.next()));
      if (fn.y) y[i] = static_cast<T>(fn.y->draw(rng.next()));
    }
    if (fn.y)
      binary(x.data(), y.data(), out.data(), kBlock);
    else
      unary(x.data(), out.data(), kBlock);
    for (uint64_t i = 0; i < kBlock; ++i)
      if (double e = ulp_error(out[i], fn.exact(x[i], y[i])); e > worst.first) worst = {e, x[i]};
  }
  return worst;
}

} // namespace

int main(int argc, char **argv) {
  setenv("HOLOGRAM_NUM_THREADS", "1", 0); // the sweep runs a thread per core itself
  // Arguments: function names (all when none); --compiled skips the library's functions,
  // --library runs only them, --f64 runs only the sampled ones (f64, and f32 pow and atan2).
  bool library = true, f32 = true, compiled = true;
  int only_level = 0;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--compiled"))
      library = false;
    else if (!std::strcmp(argv[i], "--library"))
      compiled = false;
    else if (!std::strcmp(argv[i], "--f64"))
      library = f32 = false;
    else if (!std::strncmp(argv[i], "--level=", 8)) {
      only_level = std::atoi(argv[i] + 8);
      if (only_level < 2 || only_level > 4) {
        std::fprintf(stderr, "hologram-math-sweep: --level takes 2, 3 or 4, not '%s'\n",
                     argv[i] + 8);
        return 2;
      }
    } else
      names.emplace_back(argv[i]);
  }
  auto wanted = [&](const char *name) {
    return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
  };
  bool ok = true;
  const std::vector<int> levels = runnable_levels();
  if (only_level && std::find(levels.begin(), levels.end(), only_level) == levels.end()) {
    std::fprintf(stderr, "hologram-math-sweep: this CPU does not run x86-64-v%d\n", only_level);
    return 2;
  }
  for (int level : levels) {
    if (only_level && level != only_level) continue;
    for (const auto &fn : library_functions()) {
      if (!library || !wanted(fn.name)) continue;
      const Worst w = sweep_all(
          [&] {
            return Evaluate(
                [&](const float *x, float *y, uint64_t n) { run_map(level, fn.kind, x, y, n); });
          },
          fn.exact);
      ok &= report("library", fn.name, level, w, fn.ulps);
    }
    if (!compiled) continue;
    const std::string path = compile_kernels(level);
    for (const auto &fn : kCompiled) {
      if (!f32 || !wanted(fn.name)) continue;
      const Worst w = sweep_all(
          [&] { return compiled_evaluator<float>(path, std::string(fn.name) + "_f32"); }, fn.exact);
      ok &= report("compiled", fn.name, level, w, fn.ulps);
    }
    for (const auto &fn : kSampled) {
      if (!wanted(fn.name)) continue;
      const auto [ulps, x] = fn.single ? sample_of<float>(path, fn) : sample_of<double>(path, fn);
      const bool pass = ulps <= fn.ulps;
      ok &= pass;
      char ranges[96] = "";
      if (fn.y)
        std::snprintf(ranges, sizeof ranges, " (x in [%g, %g], y in [%g, %g])", fn.x.lo, fn.x.hi,
                      fn.y->lo, fn.y->hi);
      std::printf("compiled %-8s %s x86-64-v%d%s: worst %.3f ulp over 2^24 samples at x = %a "
                  "(%.17g); bound %.0f: %s\n",
                  fn.name, fn.type(), level, ranges, ulps, x, x, fn.ulps, pass ? "ok" : "EXCEEDED");
      std::fflush(stdout);
    }
    std::filesystem::remove(path);
  }
  return ok ? 0 : 1;
}
