// hologram-math-sweep: the error of the CPU library's f32 vector functions (exp, sigmoid,
// silu) over every one of the 2^32 f32 inputs, at every x86 level this CPU runs, against a
// f64 reference. Prints the worst error and where it occurs; exits 1 when a bound is
// exceeded. Run by scripts/math-sweep.sh (minutes, not part of the unit tests).
#include "library_math.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <thread>

using namespace hologram::runtime;
using namespace hologram::runtime::test;

namespace {

struct Worst {
  double ulps = 0;
  float x = 0;
};

Worst sweep(int level, const LibraryFunction &fn, uint64_t lo, uint64_t hi) {
  constexpr uint64_t kBlock = 1 << 16;
  std::vector<float> x(kBlock), y(kBlock);
  Worst w;
  for (uint64_t start = lo; start < hi; start += kBlock) {
    const uint64_t n = std::min(kBlock, hi - start);
    for (uint64_t i = 0; i < n; ++i) x[i] = std::bit_cast<float>(static_cast<uint32_t>(start + i));
    run_map(level, fn.kind, x.data(), y.data(), n);
    for (uint64_t i = 0; i < n; ++i) {
      const double e = ulp_error(y[i], fn.exact(x[i]));
      if (e > w.ulps) w = {e, x[i]};
    }
  }
  return w;
}

} // namespace

int main() {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  bool ok = true;
  for (int level : runnable_levels())
    for (const auto &fn : library_functions()) {
      std::vector<Worst> part(threads);
      std::vector<std::thread> pool;
      const uint64_t all = uint64_t{1} << 32;
      for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back(
            [&, t] { part[t] = sweep(level, fn, all * t / threads, all * (t + 1) / threads); });
      for (auto &th : pool) th.join();
      Worst w;
      for (const Worst &p : part)
        if (p.ulps > w.ulps) w = p;
      const bool pass = w.ulps <= fn.ulps;
      ok &= pass;
      std::printf("%-8s f32 x86-64-v%d: worst %.3f ulp at x = %a (%.9g); bound %.0f: %s\n", fn.name,
                  level, w.ulps, static_cast<double>(w.x), static_cast<double>(w.x), fn.ulps,
                  pass ? "ok" : "EXCEEDED");
      std::fflush(stdout);
    }
  return ok ? 0 : 1;
}
