// Benchmarks of SPEC §14: each workload runs through hologram-cc output (the generated
// header's entry points, statically linked) and through its peers in the same process, single
// threaded and on all cores. bench/report.py turns the JSON output into the ratio table of
// docs/performance.md.
#include "bench.h"
#include "data.h"
#include "hologram/runtime/cpu.h"
#include "peers/peers.h"

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

extern "C" void openblas_set_num_threads(int);

namespace {

std::vector<float> data(size_t n, float lo = -1, float hi = 1) {
  return bench_data(n, lo, hi);
}

void check(int rc) {
  if (rc != 0) {
    std::fprintf(stderr, "hologram kernel failed: %s\n", hg_cpu_last_error());
    std::abort();
  }
}

/// Runs f over [0, n) split across every hardware thread (peers' "all cores" rows).
void split(size_t n, const std::function<void(size_t, size_t)> &f) {
  unsigned t = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < t; ++i) threads.emplace_back([&, i] { f(n * i / t, n * (i + 1) / t); });
  for (auto &th : threads) th.join();
}

/// Registers "<workload>/<size>/<impl>" with bytes or flops per iteration.
void add(const std::string &name, const std::function<void()> &body, double bytes, double flops,
         bool single_thread_hologram = false) {
  benchmark::RegisterBenchmark(
      name.c_str(),
      [=](benchmark::State &st) {
        hologram::runtime::set_cpu_threads(single_thread_hologram ? 1 : 0);
        for (auto _ : st) body();
        if (bytes > 0) st.SetBytesProcessed(static_cast<int64_t>(bytes) * st.iterations());
        if (flops > 0)
          st.counters["FLOPS"] =
              benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
        hologram::runtime::set_cpu_threads(0);
      })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

void register_all() {
  for (size_t n : {size_t{1} << 16, size_t{1} << 24}) {
    auto a = std::make_shared<std::vector<float>>(data(n)),
         b = std::make_shared<std::vector<float>>(data(n)),
         c = std::make_shared<std::vector<float>>(n);
    std::string sz = std::to_string(n);
    const double bytes = 12.0 * n;
    auto u = static_cast<uint32_t>(n);
    add(
        "vector_add/" + sz + "/hologram_1t",
        [=] { check(vector_add(a->data(), b->data(), c->data(), u, nullptr)); }, bytes, 0, true);
    add(
        "vector_add/" + sz + "/hologram_mt",
        [=] { check(vector_add(a->data(), b->data(), c->data(), u, nullptr)); }, bytes, 0);
    add(
        "vector_add/" + sz + "/clang_O3_1t",
        [=] { peer_vector_add(a->data(), b->data(), c->data(), n); }, bytes, 0);
    add(
        "vector_add/" + sz + "/clang_O3_mt",
        [=] {
          split(n, [&](size_t lo, size_t hi) {
            peer_vector_add(a->data() + lo, b->data() + lo, c->data() + lo, hi - lo);
          });
        },
        bytes, 0);
    add(
        "saxpy/" + sz + "/hologram_1t",
        [=] { check(saxpy(a->data(), c->data(), 0.5f, u, nullptr)); }, bytes, 2.0 * n, true);
    add(
        "saxpy/" + sz + "/hologram_mt",
        [=] { check(saxpy(a->data(), c->data(), 0.5f, u, nullptr)); }, bytes, 2.0 * n);
    add(
        "saxpy/" + sz + "/clang_O3_1t", [=] { peer_saxpy(a->data(), c->data(), 0.5f, n); }, bytes,
        2.0 * n);
    add(
        "saxpy/" + sz + "/clang_O3_mt",
        [=] {
          split(n, [&](size_t lo, size_t hi) {
            peer_saxpy(a->data() + lo, c->data() + lo, 0.5f, hi - lo);
          });
        },
        bytes, 2.0 * n);
  }
  {
    const size_t n = size_t{1} << 24;
    auto a = std::make_shared<std::vector<float>>(n),
         b = std::make_shared<std::vector<float>>(data(n)),
         c = std::make_shared<std::vector<float>>(data(n));
    auto u = static_cast<uint32_t>(n);
    const double bytes = 12.0 * n;
    add(
        "stream_triad/16777216/hologram_1t",
        [=] { check(triad(a->data(), b->data(), c->data(), 3.0f, u, nullptr)); }, bytes, 0, true);
    add(
        "stream_triad/16777216/hologram_mt",
        [=] { check(triad(a->data(), b->data(), c->data(), 3.0f, u, nullptr)); }, bytes, 0);
    add(
        "stream_triad/16777216/clang_O3_1t",
        [=] { peer_triad(a->data(), b->data(), c->data(), 3.0f, n); }, bytes, 0);
    add(
        "stream_triad/16777216/clang_O3_mt",
        [=] {
          split(n, [&](size_t lo, size_t hi) {
            peer_triad(a->data() + lo, b->data() + lo, c->data() + lo, 3.0f, hi - lo);
          });
        },
        bytes, 0);
  }
  {
    const size_t n = size_t{1} << 20;
    auto x = std::make_shared<std::vector<float>>(data(n, -8, 8)),
         y = std::make_shared<std::vector<float>>(n);
    auto u = static_cast<uint32_t>(n);
    add(
        "sigmoid_map/1048576/hologram_1t",
        [=] { check(sigmoid_map(x->data(), y->data(), u, nullptr)); }, 8.0 * n, 0, true);
    add(
        "sigmoid_map/1048576/hologram_mt",
        [=] { check(sigmoid_map(x->data(), y->data(), u, nullptr)); }, 8.0 * n, 0);
    add(
        "sigmoid_map/1048576/clang_O3_fastmath_1t", [=] { peer_sigmoid(x->data(), y->data(), n); },
        8.0 * n, 0);
    add(
        "exp_map/1048576/hologram_1t", [=] { check(exp_map(x->data(), y->data(), u, nullptr)); },
        8.0 * n, 0, true);
    add(
        "exp_map/1048576/hologram_mt", [=] { check(exp_map(x->data(), y->data(), u, nullptr)); },
        8.0 * n, 0);
    add(
        "exp_map/1048576/clang_O3_fastmath_1t", [=] { peer_exp(x->data(), y->data(), n); }, 8.0 * n,
        0);
  }
  {
    const size_t n = size_t{1} << 24;
    auto x = std::make_shared<std::vector<float>>(data(n)),
         y = std::make_shared<std::vector<float>>(data(n));
    auto out = std::make_shared<std::vector<float>>(1);
    auto u = static_cast<uint32_t>(n);
    add(
        "sum/16777216/hologram_1t", [=] { check(sum(x->data(), out->data(), u, nullptr)); },
        4.0 * n, 0, true);
    add(
        "sum/16777216/hologram_mt", [=] { check(sum(x->data(), out->data(), u, nullptr)); },
        4.0 * n, 0);
    add(
        "sum/16777216/clang_O3_fastmath_1t",
        [=] { benchmark::DoNotOptimize(peer_sum(x->data(), n)); }, 4.0 * n, 0);
    add(
        "dot/16777216/hologram_1t",
        [=] { check(dot(x->data(), y->data(), out->data(), u, nullptr)); }, 8.0 * n, 2.0 * n, true);
    add(
        "dot/16777216/hologram_mt",
        [=] { check(dot(x->data(), y->data(), out->data(), u, nullptr)); }, 8.0 * n, 2.0 * n);
    add(
        "dot/16777216/clang_O3_fastmath_1t",
        [=] { benchmark::DoNotOptimize(peer_dot(x->data(), y->data(), n)); }, 8.0 * n, 2.0 * n);
    add(
        "dot/16777216/openblas_1t",
        [=] {
          openblas_set_num_threads(1);
          benchmark::DoNotOptimize(cblas_sdot(static_cast<int>(n), x->data(), 1, y->data(), 1));
        },
        8.0 * n, 2.0 * n);
  }
  {
    const size_t rows = 4096, cols = 1024;
    auto x = std::make_shared<std::vector<float>>(data(rows * cols, -4, 4)),
         y = std::make_shared<std::vector<float>>(rows * cols),
         g = std::make_shared<std::vector<float>>(data(cols, 0.5f, 1.5f));
    const double bytes = 8.0 * rows * cols;
    add(
        "softmax_rows/4096x1024/hologram_1t",
        [=] { check(softmax_rows(x->data(), y->data(), rows, cols, nullptr)); }, bytes, 0, true);
    add(
        "softmax_rows/4096x1024/hologram_mt",
        [=] { check(softmax_rows(x->data(), y->data(), rows, cols, nullptr)); }, bytes, 0);
    add(
        "softmax_rows/4096x1024/clang_O3_1t",
        [=] { peer_softmax_rows(x->data(), y->data(), rows, cols); }, bytes, 0);
    add(
        "rmsnorm_rows/4096x1024/hologram_1t",
        [=] { check(rmsnorm_rows(x->data(), g->data(), y->data(), rows, cols, nullptr)); }, bytes,
        0, true);
    add(
        "rmsnorm_rows/4096x1024/hologram_mt",
        [=] { check(rmsnorm_rows(x->data(), g->data(), y->data(), rows, cols, nullptr)); }, bytes,
        0);
    add(
        "rmsnorm_rows/4096x1024/clang_O3_1t",
        [=] { peer_rmsnorm_rows(x->data(), g->data(), y->data(), rows, cols); }, bytes, 0);
  }
  for (size_t n : {size_t{512}, size_t{1024}}) {
    auto a = std::make_shared<std::vector<float>>(data(n * n)),
         b = std::make_shared<std::vector<float>>(data(n * n)),
         c = std::make_shared<std::vector<float>>(n * n);
    std::string sz = std::to_string(n);
    const double flops = 2.0 * n * n * n;
    auto u = static_cast<uint32_t>(n);
    auto blas = [=](int threads) {
      openblas_set_num_threads(threads);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n),
                  static_cast<int>(n), static_cast<int>(n), 1.0f, a->data(), static_cast<int>(n),
                  b->data(), static_cast<int>(n), 0.0f, c->data(), static_cast<int>(n));
    };
    const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    add(
        "gemm/" + sz + "/hologram_1t",
        [=] { check(gemm(a->data(), b->data(), c->data(), u, nullptr)); }, 0, flops, true);
    add(
        "gemm/" + sz + "/hologram_mt",
        [=] { check(gemm(a->data(), b->data(), c->data(), u, nullptr)); }, 0, flops);
    add(
        "gemm/" + sz + "/clang_O3_1t", [=] { peer_gemm(a->data(), b->data(), c->data(), n); }, 0,
        flops);
    add("gemm/" + sz + "/openblas_1t", [=] { blas(1); }, 0, flops);
    add("gemm/" + sz + "/openblas_mt", [=] { blas(all); }, 0, flops);
  }
}

} // namespace

int main(int argc, char **argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
