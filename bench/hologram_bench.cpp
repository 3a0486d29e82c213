// Benchmarks of SPEC §14: each workload runs through hologram-cc output (the generated
// header's entry points, statically linked) and through its peers in the same process, single
// threaded and on all cores. Every row checks its result against a double-precision reference
// before it is timed (verify.h; `--verify` checks every row and times nothing).
// bench/report.py turns the JSON output into the ratio table of docs/performance.md.
#include "bench.h"
#include "data.h"
#include "forward.h"
#include "hl_exp.h"
#include "hl_exp_fast_exp.h"
#include "hl_exp_fast_exp_serial.h"
#include "hl_exp_serial.h"
#include "hl_gelu.h"
#include "hl_gelu_serial.h"
#include "hl_log.h"
#include "hl_log_fast_log.h"
#include "hl_log_fast_log_serial.h"
#include "hl_log_serial.h"
#include "hl_rmsnorm_rows.h"
#include "hl_rmsnorm_rows_serial.h"
#include "hl_saxpy.h"
#include "hl_saxpy_serial.h"
#include "hl_sigmoid.h"
#include "hl_sigmoid_fast_exp.h"
#include "hl_sigmoid_fast_exp_serial.h"
#include "hl_sigmoid_serial.h"
#include "hl_silu.h"
#include "hl_silu_serial.h"
#include "hl_sin.h"
#include "hl_sin_serial.h"
#include "hl_softmax_rows.h"
#include "hl_softmax_rows_serial.h"
#include "hl_softmax_rows_v2.h"
#include "hl_softmax_rows_v2_serial.h"
#include "hl_softmax_rows_v3.h"
#include "hl_softmax_rows_v3_serial.h"
#include "hl_sum.h"
#include "hl_sum_serial.h"
#include "hl_swiglu.h"
#include "hl_swiglu_serial.h"
#include "hl_tanh.h"
#include "hl_tanh_serial.h"
#include "hl_vector_add.h"
#include "hl_vector_add_serial.h"
#include "hologram/runtime/backend.h"
#include "hologram/runtime/cpu.h"
#include "hologram/runtime/stream.h"
#include "peers/peers.h"
#include "reference.h"
#include "verify.h"

#include <HalideBuffer.h>
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

extern "C" void openblas_set_num_threads(int);

namespace {

using Data = std::shared_ptr<std::vector<float>>;

std::vector<float> data(size_t n, float lo = -1, float hi = 1, uint64_t seed = 0) {
  return bench_data(n, lo, hi, seed);
}
Data shared(std::vector<float> v) {
  return std::make_shared<std::vector<float>>(std::move(v));
}

void check(int rc) {
  if (rc != 0) {
    std::fprintf(stderr, "hologram kernel failed: %s\n", hg_cpu_last_error());
    std::abort();
  }
}

/// Runs part(i, parts) for every i in [0, parts) at once, one on each core, on OpenMP's thread
/// team (peers/parallel.cpp): the peers' "all cores" rows.
void split_parts(const std::function<void(unsigned, unsigned)> &part) {
  peer_parallel(
      [](void *ctx, unsigned i, unsigned parts) {
        (*static_cast<const std::function<void(unsigned, unsigned)> *>(ctx))(i, parts);
      },
      const_cast<void *>(static_cast<const void *>(&part)));
}

/// Runs f over [0, n) in one contiguous share per core.
void split(size_t n, const std::function<void(size_t, size_t)> &f) {
  split_parts([&](unsigned i, unsigned t) { f(n * i / t, n * (i + 1) / t); });
}

/// The sum over every core's share of f(lo, hi), each share's partial result added at the end.
float split_sum(size_t n, const std::function<float(size_t, size_t)> &f) {
  std::mutex m;
  float total = 0;
  split_parts([&](unsigned i, unsigned t) {
    const float mine = f(n * i / t, n * (i + 1) / t);
    std::lock_guard lock(m);
    total += mine;
  });
  return total;
}

/// Registers "<workload>/<size>/<impl>" with bytes or flops per iteration; `check` runs the row
/// once and compares its result with the workload's reference before the row is timed.
void add(const std::string &name, const std::function<void()> &body, const RowCheck &check,
         double bytes, double flops, bool single_thread_hologram = false) {
  auto threads = [=] { hologram::runtime::set_cpu_threads(single_thread_hologram ? 1 : 0); };
  auto reset = [] { hologram::runtime::set_cpu_threads(0); };
  RowCheck checked = [=] {
    threads();
    std::string why = check();
    reset();
    return why;
  };
  add_checked_row(name, body, checked, bytes, flops, threads, reset);
}

/// A Halide buffer over a row's data: 1-D, or [cols, rows] with cols fastest.
using HalideBuffer = Halide::Runtime::Buffer<float>;
HalideBuffer halide_view(const Data &d) {
  return HalideBuffer(d->data(), static_cast<int>(d->size()));
}
HalideBuffer halide_view(const Data &d, size_t cols, size_t rows) {
  return HalideBuffer(d->data(), static_cast<int>(cols), static_cast<int>(rows));
}
void halide_check(int rc) {
  if (rc != 0) {
    std::fprintf(stderr, "Halide pipeline failed: %d\n", rc);
    std::abort();
  }
}

/// Registers "<prefix><impl>_1t" and "<prefix><impl>_mt": run(false) calls the pipeline's
/// serial build, run(true) its parallel one on Halide's thread pool (every core).
void add_halide(const std::string &prefix, const std::string &impl,
                const std::function<void(bool parallel)> &run,
                const std::function<RowCheck(const std::function<void()> &)> &check, double bytes,
                double flops) {
  for (bool parallel : {false, true}) {
    std::function<void()> body = [=] { run(parallel); };
    add_checked_row(prefix + impl + (parallel ? "_mt" : "_1t"), body, check(body), bytes, flops);
  }
}

/// A workload's reference, computed on first use and shared by all its rows.
using Reference = std::function<const Tolerances &()>;
Reference once(std::function<Tolerances()> compute) {
  auto cache = std::make_shared<std::optional<Tolerances>>();
  return [=]() -> const Tolerances & {
    if (!*cache) *cache = compute();
    return **cache;
  };
}

/// A check that fills `out` with NaN, runs `prepare` and `body` once, and compares `out` with
/// the reference.
template <typename T>
RowCheck outputs(
    const std::shared_ptr<std::vector<T>> &out, const std::function<void()> &body,
    const Reference &expected, const std::function<void()> &prepare = [] {}) {
  return [=] {
    std::fill(out->begin(), out->end(), std::numeric_limits<T>::quiet_NaN());
    prepare();
    body();
    return mismatches("output", *out, expected());
  };
}

/// Element-wise reference: want[i] = f(i), within `rel` of its magnitude (and `abs`).
Tolerances elementwise(size_t n, const std::function<double(size_t)> &f, double rel, double abs) {
  Tolerances e;
  e.want.resize(n);
  e.tol.resize(n);
  for (size_t i = 0; i < n; ++i) {
    e.want[i] = f(i);
    e.tol[i] = rel * std::fabs(e.want[i]) + abs;
  }
  return e;
}

/// A check of a row whose result is a returned value, against a sum computed in double.
RowCheck value(const std::function<double()> &run, const Data &x, const Data &y) {
  return [=] {
    double want = 0, mag = 0;
    for (size_t i = 0; i < x->size(); ++i) {
      const double t = y ? double{(*x)[i]} * (*y)[i] : (*x)[i];
      want += t;
      mag += std::fabs(t);
    }
    // Reassociated f32 sums: far inside the SPEC's n * eps * sum|x|, far outside a wrong sum.
    return mismatch("result", run(), want, 1e-5 * mag);
  };
}

constexpr double kEps = 1.1920928955078125e-07; // f32

void register_streams() {
  for (size_t n :
       {size_t{1} << 10, size_t{1} << 12, size_t{1} << 16, size_t{1} << 18, size_t{1} << 24}) {
    auto a = shared(data(n)), b = shared(data(n, -1, 1, 1)), c = shared(std::vector<float>(n));
    auto c0 = shared(data(n, -2, 2)); // saxpy's y before the checked run
    std::string sz = std::to_string(n);
    const double bytes = 12.0 * n;
    auto u = static_cast<uint32_t>(n);
    auto sum_ref = once([=] {
      return elementwise(n, [=](size_t i) { return double{(*a)[i]} + (*b)[i]; }, kEps, 0);
    });
    auto vadd = [&](const std::string &impl, std::function<void()> f, bool one = false) {
      add("vector_add/" + sz + "/" + impl, f, outputs(c, f, sum_ref), bytes, 0, one);
    };
    vadd(
        "hologram_1t", [=] { check(vector_add(a->data(), b->data(), c->data(), u, nullptr)); },
        true);
    vadd("hologram_mt", [=] { check(vector_add(a->data(), b->data(), c->data(), u, nullptr)); });
    vadd("clang_O3_1t", [=] { peer_vector_add(a->data(), b->data(), c->data(), n); });
    vadd("clang_O3_mt", [=] {
      split(n, [&](size_t lo, size_t hi) {
        peer_vector_add(a->data() + lo, b->data() + lo, c->data() + lo, hi - lo);
      });
    });
    add_halide(
        "vector_add/" + sz + "/", "halide",
        [=, ha = halide_view(a), hb = halide_view(b), hc = halide_view(c)](bool par) mutable {
          halide_check(par ? hl_vector_add(ha, hb, hc) : hl_vector_add_serial(ha, hb, hc));
        },
        [=](const std::function<void()> &f) { return outputs(c, f, sum_ref); }, bytes, 0);
    // y := 0.5 x + y from y = c0, rounded once (fma) or twice.
    auto saxpy_ref = once([=] {
      return elementwise(n, [=](size_t i) { return 0.5 * (*a)[i] + (*c0)[i]; }, 2 * kEps, 0);
    });
    auto restore = [=] { std::copy(c0->begin(), c0->end(), c->begin()); };
    auto saxpy_row = [&](const std::string &impl, std::function<void()> f, bool one = false) {
      add("saxpy/" + sz + "/" + impl, f, outputs(c, f, saxpy_ref, restore), bytes, 2.0 * n, one);
    };
    saxpy_row("hologram_1t", [=] { check(saxpy(a->data(), c->data(), 0.5f, u, nullptr)); }, true);
    saxpy_row("hologram_mt", [=] { check(saxpy(a->data(), c->data(), 0.5f, u, nullptr)); });
    saxpy_row("clang_O3_1t", [=] { peer_saxpy(a->data(), c->data(), 0.5f, n); });
    saxpy_row("clang_O3_mt", [=] {
      split(n, [&](size_t lo, size_t hi) {
        peer_saxpy(a->data() + lo, c->data() + lo, 0.5f, hi - lo);
      });
    });
    add_halide(
        "saxpy/" + sz + "/", "halide",
        [=, ha = halide_view(a), hc = halide_view(c)](bool par) mutable {
          halide_check(par ? hl_saxpy(ha, hc, 0.5f, hc) : hl_saxpy_serial(ha, hc, 0.5f, hc));
        },
        [=](const std::function<void()> &f) { return outputs(c, f, saxpy_ref, restore); }, bytes,
        2.0 * n);
  }
  {
    const size_t n = size_t{1} << 24;
    auto a = shared(std::vector<float>(n)), b = shared(data(n)), c = shared(data(n, -1, 1, 1));
    auto u = static_cast<uint32_t>(n);
    const double bytes = 12.0 * n;
    auto ref = once([=] {
      return elementwise(n, [=](size_t i) { return (*b)[i] + 3.0 * (*c)[i]; }, 2 * kEps, 0);
    });
    auto triad_row = [&](const std::string &impl, std::function<void()> f, bool one = false) {
      add("stream_triad/16777216/" + impl, f, outputs(a, f, ref), bytes, 0, one);
    };
    triad_row(
        "hologram_1t", [=] { check(triad(a->data(), b->data(), c->data(), 3.0f, u, nullptr)); },
        true);
    triad_row("hologram_mt",
              [=] { check(triad(a->data(), b->data(), c->data(), 3.0f, u, nullptr)); });
    triad_row("clang_O3_1t", [=] { peer_triad(a->data(), b->data(), c->data(), 3.0f, n); });
    triad_row("clang_O3_mt", [=] {
      split(n, [&](size_t lo, size_t hi) {
        peer_triad(a->data() + lo, b->data() + lo, c->data() + lo, 3.0f, hi - lo);
      });
    });
    triad_row("stream_nt_1t", [=] { peer_triad_nt(a->data(), b->data(), c->data(), 3.0f, n); });
    triad_row("stream_nt_mt", [=] {
      split(n, [&](size_t lo, size_t hi) {
        peer_triad_nt(a->data() + lo, b->data() + lo, c->data() + lo, 3.0f, hi - lo);
      });
    });
  }
}

/// `n` floats that end where a page the process may not touch begins (PROT_NONE): as an array
/// at the top of the heap, or at the end of an mmap, ends before pages that are not present.
class PageEnd {
public:
  explicit PageEnd(size_t n) : n_(n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    bytes_ = (n * sizeof(float) + page - 1) / page * page + page;
    void *p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(static_cast<char *>(p) + bytes_ - page, page, PROT_NONE)) {
      std::perror("mmap");
      std::abort();
    }
    base_ = p;
    data_ = reinterpret_cast<float *>(static_cast<char *>(p) + bytes_ - page) - n;
  }
  ~PageEnd() { munmap(base_, bytes_); }
  PageEnd(const PageEnd &) = delete;
  PageEnd &operator=(const PageEnd &) = delete;
  float *data() const { return data_; }
  std::span<const float> span() const { return {data_, n_}; }

private:
  size_t n_, bytes_ = 0;
  void *base_ = nullptr;
  float *data_ = nullptr;
};

/// vector_add of 1000 floats whose three arrays end where an inaccessible page begins: the
/// chunk that straddles the bound loads and stores under a mask, and at AVX-512 a masked
/// access that reaches into a page that is not present costs a fault-suppression assist
/// (docs/design.md, "Masked accesses at a page's end"). The plain loop has no masked access.
/// mt: hologram runs so small a launch on the calling thread; the loop is split per core.
void register_page_end() {
  const size_t n = 1000;
  auto a = std::make_shared<PageEnd>(n), b = std::make_shared<PageEnd>(n);
  auto c = std::make_shared<PageEnd>(n);
  const std::vector<float> da = data(n), db = data(n, -1, 1, 1);
  std::copy(da.begin(), da.end(), a->data());
  std::copy(db.begin(), db.end(), b->data());
  auto ref = once([=] {
    return elementwise(n, [=](size_t i) { return double{a->data()[i]} + b->data()[i]; }, kEps, 0);
  });
  auto row = [&](const std::string &impl, const std::function<void()> &f, bool one) {
    RowCheck checked = [=] {
      std::fill(c->data(), c->data() + n, std::numeric_limits<float>::quiet_NaN());
      f();
      return mismatches("output", c->span(), ref());
    };
    add("vector_add_page_end/1000/" + impl, f, checked, 12.0 * n, 0, one);
  };
  const auto u = static_cast<uint32_t>(n);
  for (bool one : {true, false})
    row(
        one ? "hologram_1t" : "hologram_mt",
        [=] { check(vector_add(a->data(), b->data(), c->data(), u, nullptr)); }, one);
  row("clang_O3_1t", [=] { peer_vector_add(a->data(), b->data(), c->data(), n); }, false);
  row(
      "clang_O3_mt",
      [=] {
        split(n, [&](size_t lo, size_t hi) {
          peer_vector_add(a->data() + lo, b->data() + lo, c->data() + lo, hi - lo);
        });
      },
      false);
}

/// f64 maps at 2^20: hologram's inline double-double functions against SLEEF's 1-ulp vector
/// functions (the same accuracy class; what the lowering called before), 1t and mt, and the
/// -ffast-math libmvec loop, whose f64 functions have no stated bound (relaxed). Checked
/// within 4 ulp of libm's f64 result, far outside any wrong value.
void register_f64_maps() {
  const size_t n = size_t{1} << 20;
  using Data64 = std::shared_ptr<std::vector<double>>;
  auto doubles = [&](float lo, float hi, uint64_t seed) {
    std::vector<float> f = bench_data(n, lo, hi, seed);
    return std::make_shared<std::vector<double>>(f.begin(), f.end());
  };
  auto x = doubles(-8, 8, 0), positive = doubles(0.01f, 8, 3), e = doubles(-8, 8, 1);
  auto wide = doubles(-1000, 1000, 2);
  auto y = std::make_shared<std::vector<double>>(n);
  const auto u = static_cast<uint32_t>(n);
  constexpr double kTol = 4 * 2.220446049250313e-16;
  using Kernel = int (*)(const double *, double *, uint32_t, const hg_launch *);
  using Unary = void (*)(const double *, double *, size_t);
  using Kernel2 = int (*)(const double *, const double *, double *, uint32_t, const hg_launch *);
  using Binary = void (*)(const double *, const double *, double *, size_t);
  auto rows = [&](const std::string &name, const Data64 &a, const Data64 &b,
                  double (*f)(double, double), std::function<void()> ours,
                  std::function<void(size_t, size_t)> sleef,
                  std::function<void(size_t, size_t)> libmvec) {
    const std::string prefix = name + "/1048576/";
    auto ref = once([=] {
      return elementwise(n, [=](size_t i) { return f((*a)[i], b ? (*b)[i] : 0.0); }, kTol, 1e-300);
    });
    auto row = [&](const std::string &impl, std::function<void()> body, bool one = false) {
      add(prefix + impl, body, outputs(y, body, ref), 16.0 * n, 0, one);
    };
    row("hologram_1t", ours, true);
    row("hologram_mt", ours);
    row("sleef_u10_1t", [=] { sleef(0, n); });
    row("sleef_u10_mt", [=] { split(n, sleef); });
    row("clang_O3_fastmath_libmvec_relaxed_1t", [=] { libmvec(0, n); });
    row("clang_O3_fastmath_libmvec_relaxed_mt", [=] { split(n, libmvec); });
  };
  auto unary = [&](const std::string &name, const Data64 &a, double (*f)(double, double),
                   Kernel kernel, Unary sleef, Unary libmvec) {
    rows(
        name, a, nullptr, f, [=] { check(kernel(a->data(), y->data(), u, nullptr)); },
        [=](size_t lo, size_t hi) { sleef(a->data() + lo, y->data() + lo, hi - lo); },
        [=](size_t lo, size_t hi) { libmvec(a->data() + lo, y->data() + lo, hi - lo); });
  };
  auto binary = [&](const std::string &name, const Data64 &a, const Data64 &b,
                    double (*f)(double, double), Kernel2 kernel, Binary sleef, Binary libmvec) {
    rows(
        name, a, b, f, [=] { check(kernel(a->data(), b->data(), y->data(), u, nullptr)); },
        [=](size_t lo, size_t hi) {
          sleef(a->data() + lo, b->data() + lo, y->data() + lo, hi - lo);
        },
        [=](size_t lo, size_t hi) {
          libmvec(a->data() + lo, b->data() + lo, y->data() + lo, hi - lo);
        });
  };
  unary(
      "sin_f64_map", x, [](double v, double) { return std::sin(v); }, sin_f64_map, sleef_sin_f64,
      peer_sin_f64);
  // Beyond 15 SLEEF's sin reduces in more steps; hologram's is the same to 2^19.
  unary(
      "sin_f64_map_wide", wide, [](double v, double) { return std::sin(v); }, sin_f64_map,
      sleef_sin_f64, peer_sin_f64);
  unary(
      "tanh_f64_map", x, [](double v, double) { return std::tanh(v); }, tanh_f64_map,
      sleef_tanh_f64, peer_tanh_f64);
  unary(
      "erf_f64_map", x, [](double v, double) { return std::erf(v); }, erf_f64_map, sleef_erf_f64,
      peer_erf_f64);
  binary(
      "pow_f64_map", positive, e, [](double v, double w) { return std::pow(v, w); }, pow_f64_map,
      sleef_pow_f64, peer_pow_f64);
  binary(
      "atan2_f64_map", x, e, [](double v, double w) { return std::atan2(v, w); }, atan2_f64_map,
      sleef_atan2_f64, peer_atan2_f64);
}

void register_maps_and_sums() {
  {
    const size_t n = size_t{1} << 20;
    auto x = shared(data(n, -8, 8)), y = shared(std::vector<float>(n));
    // log of positive inputs over five decades.
    auto positive = shared(data(n, 1e-3f, 1e2f, 7));
    auto u = static_cast<uint32_t>(n);
    using Kernel = int (*)(const float *, float *, uint32_t, const hg_launch *);
    using Peer = void (*)(const float *, float *, size_t);
    using Pipeline = int (*)(halide_buffer_t *, halide_buffer_t *);
    struct HalideVariant {
      const char *impl;
      Pipeline parallel, serial;
    };
    // One workload: y = f(in) through the hologram kernel (1t, mt), the clang -ffast-math
    // libmvec loop and each Halide pipeline, checked against f in f64 within rel·|y| + abs
    // (libmvec under -ffast-math is within a few ulp; 1e-5 relative leaves room for it).
    auto workload = [&](const std::string &name, const Data &in, double (*f)(double), double rel,
                        double abs, Kernel kernel, Peer peer,
                        std::initializer_list<HalideVariant> halide) {
      const std::string prefix = name + "/1048576/";
      auto ref = once(
          [=] { return elementwise(n, [=](size_t i) { return f(double{(*in)[i]}); }, rel, abs); });
      auto row = [&](const std::string &impl, std::function<void()> body, bool one = false) {
        add(prefix + impl, body, outputs(y, body, ref), 8.0 * n, 0, one);
      };
      auto ours = [=] { check(kernel(in->data(), y->data(), u, nullptr)); };
      row("hologram_1t", ours, true);
      row("hologram_mt", ours);
      row("clang_O3_fastmath_1t", [=] { peer(in->data(), y->data(), n); });
      row("clang_O3_fastmath_mt", [=] {
        split(n, [&](size_t lo, size_t hi) { peer(in->data() + lo, y->data() + lo, hi - lo); });
      });
      for (const HalideVariant &h : halide)
        add_halide(
            prefix, h.impl,
            [=, hx = halide_view(in), hy = halide_view(y)](bool par) mutable {
              halide_check((par ? h.parallel : h.serial)(hx, hy));
            },
            [=](const std::function<void()> &g) { return outputs(y, g, ref); }, 8.0 * n, 0);
    };
    // Halide's exp and log are its accurate ones; fast_exp and fast_log have no stated bound
    // (relaxed accuracy).
    workload("sigmoid_map", x, [](double v) { return 1 / (1 + std::exp(-v)); }, 1e-5, 0,
             sigmoid_map, peer_sigmoid,
             {{"halide", hl_sigmoid, hl_sigmoid_serial},
              {"halide_fast_exp_relaxed", hl_sigmoid_fast_exp, hl_sigmoid_fast_exp_serial}});
    workload("exp_map", x, [](double v) { return std::exp(v); }, 1e-5, 0, exp_map, peer_exp,
             {{"halide", hl_exp, hl_exp_serial},
              {"halide_fast_exp_relaxed", hl_exp_fast_exp, hl_exp_fast_exp_serial}});
    workload("silu_map", x, [](double v) { return v / (1 + std::exp(-v)); }, 1e-5, 1e-7, silu_map,
             peer_silu, {{"halide", hl_silu, hl_silu_serial}});
    // gelu's 1 + erf(x/sqrt 2) cancels for x below -2: an absolute term for f32 erf's error.
    workload("gelu_map", x, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); },
             1e-5, 1e-6, gelu_map, peer_gelu, {{"halide", hl_gelu, hl_gelu_serial}});
    workload("tanh_map", x, [](double v) { return std::tanh(v); }, 1e-5, 1e-7, tanh_map, peer_tanh,
             {{"halide", hl_tanh, hl_tanh_serial}});
    // sin over [-8, 8] (about five periods).
    workload("sin_map", x, [](double v) { return std::sin(v); }, 1e-5, 1e-7, sin_map, peer_sin,
             {{"halide", hl_sin, hl_sin_serial}});
    workload("log_map", positive, [](double v) { return std::log(v); }, 1e-5, 1e-6, log_map,
             peer_log,
             {{"halide", hl_log, hl_log_serial},
              {"halide_fast_log_relaxed", hl_log_fast_log, hl_log_fast_log_serial}});
  }
  {
    // y = silu(x)·g over 2^22 elements (three arrays of 16 MiB, beyond the caches): hologram's
    // two operations form an element-wise chain and run fused; the peers are one loop.
    const size_t n = size_t{1} << 22;
    auto x = shared(data(n, -8, 8)), g = shared(data(n, -2, 2, 1));
    auto y = shared(std::vector<float>(n));
    auto u = static_cast<uint32_t>(n);
    const std::string prefix = "swiglu/4194304/";
    auto ref = once([=] {
      return elementwise(
          n, [=](size_t i) { return (*x)[i] / (1 + std::exp(-double{(*x)[i]})) * (*g)[i]; }, 1e-5,
          1e-7);
    });
    auto row = [&](const std::string &impl, std::function<void()> body, bool one = false) {
      add(prefix + impl, body, outputs(y, body, ref), 12.0 * n, 0, one);
    };
    auto ours = [=] { check(swiglu(x->data(), g->data(), y->data(), u, nullptr)); };
    row("hologram_1t", ours, true);
    row("hologram_mt", ours);
    row("clang_O3_fastmath_1t", [=] { peer_swiglu(x->data(), g->data(), y->data(), n); });
    row("clang_O3_fastmath_mt", [=] {
      split(n, [&](size_t lo, size_t hi) {
        peer_swiglu(x->data() + lo, g->data() + lo, y->data() + lo, hi - lo);
      });
    });
    add_halide(
        prefix, "halide",
        [=, hx = halide_view(x), hg = halide_view(g), hy = halide_view(y)](bool par) mutable {
          halide_check(par ? hl_swiglu(hx, hg, hy) : hl_swiglu_serial(hx, hg, hy));
        },
        [=](const std::function<void()> &f) { return outputs(y, f, ref); }, 12.0 * n, 0);
  }
  {
    const size_t n = size_t{1} << 24;
    auto x = shared(data(n)), y = shared(data(n, -1, 1, 1));
    auto out = shared(std::vector<float>(1));
    auto u = static_cast<uint32_t>(n);
    auto holo_sum = [=] {
      check(sum(x->data(), out->data(), u, nullptr));
      return double{(*out)[0]};
    };
    auto holo_dot = [=] {
      check(dot(x->data(), y->data(), out->data(), u, nullptr));
      return double{(*out)[0]};
    };
    add("sum/16777216/hologram_1t", holo_sum, value(holo_sum, x, nullptr), 4.0 * n, 0, true);
    add("sum/16777216/hologram_mt", holo_sum, value(holo_sum, x, nullptr), 4.0 * n, 0);
    auto peer = [=] { return double{peer_sum(x->data(), n)}; };
    add(
        "sum/16777216/clang_O3_fastmath_1t", [=] { benchmark::DoNotOptimize(peer()); },
        value(peer, x, nullptr), 4.0 * n, 0);
    auto peer_mt = [=] {
      return double{
          split_sum(n, [&](size_t lo, size_t hi) { return peer_sum(x->data() + lo, hi - lo); })};
    };
    add(
        "sum/16777216/clang_O3_fastmath_mt", [=] { benchmark::DoNotOptimize(peer_mt()); },
        value(peer_mt, x, nullptr), 4.0 * n, 0);
    auto halide_total = std::make_shared<HalideBuffer>(HalideBuffer::make_scalar());
    auto halide_sum = [=, hx = halide_view(x)](bool par) mutable {
      halide_check(par ? hl_sum(hx, *halide_total) : hl_sum_serial(hx, *halide_total));
      return double{(*halide_total)()};
    };
    for (bool par : {false, true}) {
      std::function<double()> once_sum = [=]() mutable { return halide_sum(par); };
      add_checked_row(
          std::string("sum/16777216/halide_rfactor_") + (par ? "mt" : "1t"),
          [=] { benchmark::DoNotOptimize(once_sum()); }, value(once_sum, x, nullptr), 4.0 * n, 0);
    }
    add("dot/16777216/hologram_1t", holo_dot, value(holo_dot, x, y), 8.0 * n, 2.0 * n, true);
    add("dot/16777216/hologram_mt", holo_dot, value(holo_dot, x, y), 8.0 * n, 2.0 * n);
    auto peer_d = [=] { return double{peer_dot(x->data(), y->data(), n)}; };
    add(
        "dot/16777216/clang_O3_fastmath_1t", [=] { benchmark::DoNotOptimize(peer_d()); },
        value(peer_d, x, y), 8.0 * n, 2.0 * n);
    auto peer_d_mt = [=] {
      return double{split_sum(n, [&](size_t lo, size_t hi) {
        return peer_dot(x->data() + lo, y->data() + lo, hi - lo);
      })};
    };
    add(
        "dot/16777216/clang_O3_fastmath_mt", [=] { benchmark::DoNotOptimize(peer_d_mt()); },
        value(peer_d_mt, x, y), 8.0 * n, 2.0 * n);
    const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (int threads : {1, all}) {
      auto blas_dot = [=] {
        openblas_set_num_threads(threads);
        return double{cblas_sdot(static_cast<int>(n), x->data(), 1, y->data(), 1)};
      };
      add_checked_row(
          std::string("dot/16777216/openblas_") + (threads == 1 ? "1t" : "mt"),
          [=] { benchmark::DoNotOptimize(blas_dot()); }, value(blas_dot, x, y), 8.0 * n, 2.0 * n);
    }
  }
}

void register_rows() {
  const size_t rows = 4096, cols = 1024;
  auto x = shared(data(rows * cols, -4, 4)), y = shared(std::vector<float>(rows * cols)),
       g = shared(data(cols, 0.5f, 1.5f));
  const double bytes = 8.0 * rows * cols;
  auto softmax_ref = once([=] {
    Tolerances e;
    for (size_t r = 0; r < rows; ++r) {
      const float *row = x->data() + r * cols;
      double mx = -INFINITY, s = 0;
      for (size_t k = 0; k < cols; ++k) mx = std::max(mx, double{row[k]});
      for (size_t k = 0; k < cols; ++k) s += std::exp(row[k] - mx);
      for (size_t k = 0; k < cols; ++k) {
        e.want.push_back(std::exp(row[k] - mx) / s);
        e.tol.push_back(1e-5 * e.want.back() + 1e-9);
      }
    }
    return e;
  });
  auto row = [&](const std::string &name, Reference ref, std::function<void()> f,
                 bool one = false) { add(name, f, outputs(y, f, ref), bytes, 0, one); };
  row(
      "softmax_rows/4096x1024/hologram_1t", softmax_ref,
      [=] { check(softmax_rows(x->data(), y->data(), rows, cols, nullptr)); }, true);
  row("softmax_rows/4096x1024/hologram_mt", softmax_ref,
      [=] { check(softmax_rows(x->data(), y->data(), rows, cols, nullptr)); });
  row("softmax_rows/4096x1024/clang_O3_1t", softmax_ref,
      [=] { peer_softmax_rows(x->data(), y->data(), rows, cols); });
  row("softmax_rows/4096x1024/clang_O3_fastmath_1t", softmax_ref,
      [=] { peer_softmax_rows_fast(x->data(), y->data(), rows, cols); });
  row("softmax_rows/4096x1024/clang_O3_fastmath_mt", softmax_ref, [=] {
    split(rows, [&](size_t lo, size_t hi) {
      peer_softmax_rows_fast(x->data() + lo * cols, y->data() + lo * cols, hi - lo, cols);
    });
  });
  add_halide(
      "softmax_rows/4096x1024/", "halide",
      [=, hx = halide_view(x, cols, rows), hy = halide_view(y, cols, rows)](bool par) mutable {
        halide_check(par ? hl_softmax_rows(hx, hy) : hl_softmax_rows_serial(hx, hy));
      },
      [=](const std::function<void()> &f) { return outputs(y, f, softmax_ref); }, bytes, 0);
  // The per-level table's peers (scripts/bench.sh runs them only in the runs capped at their
  // level): the fast-math loop and Halide's pipeline built for x86-64-v2 and for x86-64-v3.
  using Fast = void (*)(const float *, float *, size_t, size_t);
  using Pipeline = int (*)(halide_buffer_t *, halide_buffer_t *);
  const struct {
    const char *level;
    Fast loop;
    Pipeline parallel, serial;
  } levels[] = {
      {"v2", level_v2::peer_softmax_rows_fast, hl_softmax_rows_v2, hl_softmax_rows_v2_serial},
      {"v3", level_v3::peer_softmax_rows_fast, hl_softmax_rows_v3, hl_softmax_rows_v3_serial}};
  for (const auto &l : levels) {
    const std::string loop = std::string("softmax_rows/4096x1024/clang_O3_fastmath_") + l.level;
    row(loop + "_1t", softmax_ref, [=] { l.loop(x->data(), y->data(), rows, cols); });
    row(loop + "_mt", softmax_ref, [=] {
      split(rows, [&](size_t lo, size_t hi) {
        l.loop(x->data() + lo * cols, y->data() + lo * cols, hi - lo, cols);
      });
    });
    add_halide(
        "softmax_rows/4096x1024/", std::string("halide_") + l.level,
        [=, hx = halide_view(x, cols, rows), hy = halide_view(y, cols, rows)](bool par) mutable {
          halide_check(par ? l.parallel(hx, hy) : l.serial(hx, hy));
        },
        [=](const std::function<void()> &f) { return outputs(y, f, softmax_ref); }, bytes, 0);
  }
}

/// rmsnorm and layernorm of `rows` rows of 1024: 4096 rows (16 MB, streamed to memory) and
/// 256 (1 MB, in the cache: the rows a model's norms usually have).
void register_norms(size_t rows) {
  const size_t cols = 1024;
  auto x = shared(data(rows * cols, -4, 4)), y = shared(std::vector<float>(rows * cols)),
       g = shared(data(cols, 0.5f, 1.5f));
  const double bytes = 8.0 * rows * cols;
  const std::string size = std::to_string(rows) + "x1024/";
  auto rmsnorm_ref = once([=] {
    Tolerances e;
    for (size_t r = 0; r < rows; ++r) {
      const float *row = x->data() + r * cols;
      double sq = 0;
      for (size_t k = 0; k < cols; ++k) sq += double{row[k]} * row[k];
      const double inv = 1 / std::sqrt(sq / cols + 1e-5);
      for (size_t k = 0; k < cols; ++k) {
        e.want.push_back(row[k] * inv * (*g)[k]);
        e.tol.push_back(1e-5 * std::fabs(e.want.back()) + 1e-6);
      }
    }
    return e;
  });
  auto row = [&](const std::string &name, Reference ref, std::function<void()> f,
                 bool one = false) { add(name, f, outputs(y, f, ref), bytes, 0, one); };
  row(
      "rmsnorm_rows/" + size + "hologram_1t", rmsnorm_ref,
      [=] { check(rmsnorm_rows(x->data(), g->data(), y->data(), rows, cols, nullptr)); }, true);
  row("rmsnorm_rows/" + size + "hologram_mt", rmsnorm_ref,
      [=] { check(rmsnorm_rows(x->data(), g->data(), y->data(), rows, cols, nullptr)); });
  row("rmsnorm_rows/" + size + "clang_O3_1t", rmsnorm_ref,
      [=] { peer_rmsnorm_rows(x->data(), g->data(), y->data(), rows, cols); });
  row("rmsnorm_rows/" + size + "clang_O3_fastmath_1t", rmsnorm_ref,
      [=] { peer_rmsnorm_rows_fast(x->data(), g->data(), y->data(), rows, cols); });
  row("rmsnorm_rows/" + size + "clang_O3_fastmath_mt", rmsnorm_ref, [=] {
    split(rows, [&](size_t lo, size_t hi) {
      peer_rmsnorm_rows_fast(x->data() + lo * cols, g->data(), y->data() + lo * cols, hi - lo,
                             cols);
    });
  });
  add_halide(
      "rmsnorm_rows/" + size, "halide",
      [=, hx = halide_view(x, cols, rows), hg = halide_view(g),
       hy = halide_view(y, cols, rows)](bool par) mutable {
        halide_check(par ? hl_rmsnorm_rows(hx, hg, hy) : hl_rmsnorm_rows_serial(hx, hg, hy));
      },
      [=](const std::function<void()> &f) { return outputs(y, f, rmsnorm_ref); }, bytes, 0);
  auto beta = shared(data(cols, -0.5f, 0.5f, 3));
  auto layernorm_ref = once([=] {
    Tolerances e;
    for (size_t r = 0; r < rows; ++r) {
      const float *row = x->data() + r * cols;
      double mean = 0, var = 0;
      for (size_t k = 0; k < cols; ++k) mean += row[k];
      mean /= cols;
      for (size_t k = 0; k < cols; ++k) var += (row[k] - mean) * (row[k] - mean);
      const double inv = 1 / std::sqrt(var / cols + 1e-5);
      for (size_t k = 0; k < cols; ++k) {
        e.want.push_back((row[k] - mean) * inv * (*g)[k] + (*beta)[k]);
        e.tol.push_back(1e-5 * std::fabs(e.want.back()) + 1e-5);
      }
    }
    return e;
  });
  row(
      "layernorm_rows/" + size + "hologram_1t", layernorm_ref,
      [=] {
        check(layernorm_rows(x->data(), g->data(), beta->data(), y->data(), rows, cols, nullptr));
      },
      true);
  row("layernorm_rows/" + size + "hologram_mt", layernorm_ref, [=] {
    check(layernorm_rows(x->data(), g->data(), beta->data(), y->data(), rows, cols, nullptr));
  });
  row("layernorm_rows/" + size + "clang_O3_fastmath_1t", layernorm_ref,
      [=] { peer_layernorm_rows_fast(x->data(), g->data(), beta->data(), y->data(), rows, cols); });
  row("layernorm_rows/" + size + "clang_O3_fastmath_mt", layernorm_ref, [=] {
    split(rows, [&](size_t lo, size_t hi) {
      peer_layernorm_rows_fast(x->data() + lo * cols, g->data(), beta->data(),
                               y->data() + lo * cols, hi - lo, cols);
    });
  });
}

/// One head of causal self-attention, 128 positions of 64 values (issue 15).
void register_attention() {
  const size_t seq = 128, d = 64;
  const float scale = 0.125f; // 1/sqrt(d)
  auto q = shared(data(seq * d, -1, 1, 4)), k = shared(data(seq * d, -1, 1, 5)),
       v = shared(data(seq * d, -1, 1, 6)), out = shared(std::vector<float>(seq * d));
  auto scratch = shared(std::vector<float>(seq));
  auto ref = once([=] {
    Tolerances e;
    for (size_t i = 0; i < seq; ++i) {
      std::vector<double> p(i + 1);
      double mx = -INFINITY, sum = 0;
      for (size_t j = 0; j <= i; ++j) {
        double s = 0;
        for (size_t c = 0; c < d; ++c) s += double{(*q)[i * d + c]} * (*k)[j * d + c];
        p[j] = s * scale;
        mx = std::max(mx, p[j]);
      }
      for (size_t j = 0; j <= i; ++j) sum += p[j] = std::exp(p[j] - mx);
      for (size_t c = 0; c < d; ++c) {
        double o = 0;
        for (size_t j = 0; j <= i; ++j) o += p[j] / sum * (*v)[j * d + c];
        e.want.push_back(o);
        e.tol.push_back(1e-5);
      }
    }
    return e;
  });
  // Q, K and V read, the output written; 2 seq² d / 2 multiply-adds each for scores and PV.
  const double bytes = 16.0 * seq * d, flops = 2.0 * seq * seq * d;
  auto head = [&](const std::string &impl, std::function<void()> f, bool one = false) {
    add("attention/128x64_causal/" + impl, f, outputs(out, f, ref), bytes, flops, one);
  };
  const auto s = static_cast<uint32_t>(seq), dd = static_cast<uint32_t>(d);
  head(
      "hologram_1t",
      [=] {
        check(attention_head(q->data(), k->data(), v->data(), out->data(), s, dd, scale, nullptr));
      },
      true);
  head("hologram_mt", [=] {
    check(attention_head(q->data(), k->data(), v->data(), out->data(), s, dd, scale, nullptr));
  });
  head("clang_O3_fastmath_1t", [=] {
    peer_attention_causal_fast(q->data(), k->data(), v->data(), out->data(), 0, seq, d, scale,
                               scratch->data());
  });
  // Row i reads i + 1 keys: core c of t takes rows from seq·sqrt(c/t), so each has as many
  // scores to compute; each its own row of scores.
  head("clang_O3_fastmath_mt", [=] {
    split_parts([&](unsigned c, unsigned t) {
      auto row = [&](unsigned part) {
        return static_cast<size_t>(std::lround(seq * std::sqrt(double(part) / t)));
      };
      std::vector<float> p(seq);
      peer_attention_causal_fast(q->data(), k->data(), v->data(), out->data(), row(c), row(c + 1),
                                 d, scale, p.data());
    });
  });
}

void register_gemm() {
  for (size_t n : {size_t{512}, size_t{1024}}) {
    auto a = shared(data(n * n)), b = shared(data(n * n, -1, 1, 1)),
         c = shared(std::vector<float>(n * n));
    std::string sz = std::to_string(n);
    const double flops = 2.0 * n * n * n;
    auto u = static_cast<uint32_t>(n);
    // C = A B (row-major), each element within n * eps of the sum of its |products|.
    auto ref = once([=] {
      Tolerances e;
      e.want.assign(n * n, 0);
      e.tol.assign(n * n, 0);
      for (size_t i = 0; i < n; ++i)
        for (size_t k = 0; k < n; ++k) {
          const double aik = (*a)[i * n + k];
          for (size_t j = 0; j < n; ++j) {
            const double t = aik * (*b)[k * n + j];
            e.want[i * n + j] += t;
            e.tol[i * n + j] += std::fabs(t);
          }
        }
      for (auto &t : e.tol) t *= static_cast<double>(n) * kEps;
      return e;
    });
    auto blas = [=](int threads) {
      openblas_set_num_threads(threads);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n),
                  static_cast<int>(n), static_cast<int>(n), 1.0f, a->data(), static_cast<int>(n),
                  b->data(), static_cast<int>(n), 0.0f, c->data(), static_cast<int>(n));
    };
    const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    auto gemm_row = [&](const std::string &impl, std::function<void()> f, bool one = false) {
      // Inputs must come back unchanged too: a gemm that writes A or B is wrong whatever C says.
      RowCheck out = outputs(c, f, ref);
      RowCheck inputs_kept = [=] {
        auto a0 = *a, b0 = *b;
        std::string why = out();
        if (why.empty() && (*a != a0 || *b != b0)) why = "the read-only inputs A or B changed";
        return why;
      };
      add("gemm/" + sz + "/" + impl, f, inputs_kept, 0, flops, one);
    };
    gemm_row(
        "hologram_1t", [=] { check(gemm(a->data(), b->data(), c->data(), u, nullptr)); }, true);
    gemm_row("hologram_mt", [=] { check(gemm(a->data(), b->data(), c->data(), u, nullptr)); });
    gemm_row("clang_O3_1t", [=] { peer_gemm(a->data(), b->data(), c->data(), n); });
    gemm_row("openblas_1t", [=] { blas(1); });
    gemm_row("openblas_mt", [=] { blas(all); });
  }
}

void register_gemv() {
  const size_t n = 4096;
  auto a = shared(data(n * n)), x = shared(data(n, -1, 1, 1)), y = shared(std::vector<float>(n));
  auto u = static_cast<uint32_t>(n);
  // y = A x, each element within n * eps of the sum of its |products|.
  auto ref = once([=] {
    Tolerances e;
    for (size_t i = 0; i < n; ++i) {
      double acc = 0, mag = 0;
      for (size_t k = 0; k < n; ++k) {
        const double t = double{(*a)[i * n + k]} * (*x)[k];
        acc += t;
        mag += std::fabs(t);
      }
      e.want.push_back(acc);
      e.tol.push_back(static_cast<double>(n) * kEps * mag);
    }
    return e;
  });
  auto blas = [=](int threads) {
    openblas_set_num_threads(threads);
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(n), static_cast<int>(n), 1.0f,
                a->data(), static_cast<int>(n), x->data(), 1, 0.0f, y->data(), 1);
  };
  const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto gemv_row = [&](const std::string &impl, std::function<void()> f, bool one = false) {
    add("gemv/4096x4096/" + impl, f, outputs(y, f, ref), 4.0 * n * n, 2.0 * n * n, one);
  };
  gemv_row("hologram_1t", [=] { check(gemv(a->data(), x->data(), y->data(), u, nullptr)); }, true);
  gemv_row("hologram_mt", [=] { check(gemv(a->data(), x->data(), y->data(), u, nullptr)); });
  gemv_row("openblas_1t", [=] { blas(1); });
  gemv_row("openblas_mt", [=] { blas(all); });
}

/// What a launch costs with nothing to do: the empty kernel, one lane, through the generated
/// header (argument checks, the dispatcher's variant choice, one block on the calling thread)
/// and through Backend::launch.
void register_launch_overhead() {
  static const hg_launch one_lane = {{1, 1, 1}, {1, 1, 1}, 0};
  add_checked_row(
      "launch_overhead/empty/hologram_header", [] { check(empty(&one_lane)); },
      [] {
        check(empty(&one_lane));
        return std::string();
      },
      0, 0);
  // The same kernel as a user of the Backend API launches it: by name, from a module the
  // CPU backend loaded (the launch config is checked and the kernel looked up per call).
  static const std::shared_ptr<hologram::Backend> backend =
      hologram::create_backend(hologram::Preference::parse("cpu"));
  static const hologram::ModuleHandle module = backend->load_module(HOLOGRAM_BENCH_MODULE);
  auto launch = [] { backend->launch(module, "empty", hologram::LaunchConfig::linear(1, 1), {}); };
  add_checked_row(
      "launch_overhead/empty/hologram_backend_launch", launch,
      [=] {
        launch();
        return std::string();
      },
      0, 0);
}

/// examples/transformer: one token of a 256-token generation (the positions cycle, so a row's
/// time is the mean over the whole context) through the runtime API on the CPU backend, against
/// the example's plain C forward pass built with clang-19 -O3 -march=native -ffast-math -fopenmp
/// (llama2.c's way). Tokens/s = 10^6 / the row's time in µs. Each side's check runs the first
/// four positions from a fresh cache and compares all 32000 logits with the other side's within
/// 10^-4 of the largest one (no double-precision model exists; the example itself checks the
/// same against the C reference on every backend).
void register_transformer() {
  struct Model {
    tf_config c = tf_stories15m();
    tf_layout layout{};
    std::shared_ptr<hologram::Backend> backend =
        hologram::create_backend(hologram::Preference::parse("cpu"));
    std::unique_ptr<float, decltype(&std::free)> weights{nullptr, &std::free};
    size_t floats = 0;
    Model() {
      layout = tf_layout_of(&c, HologramTransformer::align_floats(*backend));
      const size_t bytes = tf_round_up(layout.total * sizeof(float), 4096);
      floats = bytes / sizeof(float);
      weights.reset(static_cast<float *>(std::aligned_alloc(4096, bytes)));
      std::fill(weights.get(), weights.get() + floats, 0.0f);
      tf_random_weights(&c, &layout, weights.get(), 42);
    }
    int token(int pos) const { return static_cast<int>((uint64_t(pos) * 7919 + 1) % 32000); }
    std::unique_ptr<HologramTransformer> hologram() const {
      return std::make_unique<HologramTransformer>(*backend, HOLOGRAM_TRANSFORMER_BUNDLE, c,
                                                   std::span(weights.get(), floats), layout);
    }
    std::shared_ptr<tf_reference> reference() const {
      return {tf_reference_create(&c, &layout, weights.get()), &tf_reference_destroy};
    }
  };
  // Never destroyed: the rows' transformers use its backend until the process ends, and the
  // benchmark registry that holds the rows is torn down after statics (or never).
  static Model *const model = new Model;
  const auto &c = model->c;
  // Both sides over the first positions from fresh caches, each against the other.
  auto compare = [](bool hologram_side) {
    return [hologram_side]() -> std::string {
      auto h = model->hologram();
      auto r = model->reference();
      std::string why;
      for (int pos = 0; pos < 4 && why.empty(); ++pos) {
        const std::vector<float> &got = h->forward(model->token(pos), pos);
        const float *want = tf_reference_forward(r.get(), model->token(pos), pos);
        double scale = 0;
        for (int i = 0; i < model->c.vocab_size; ++i)
          scale = std::max(scale, std::fabs(double{want[i]}));
        Tolerances e;
        std::vector<float> mine(got.begin(), got.end()), theirs(want, want + model->c.vocab_size);
        for (int i = 0; i < model->c.vocab_size; ++i) {
          e.want.push_back(hologram_side ? theirs[i] : mine[i]);
          e.tol.push_back(1e-4 * scale);
        }
        why = mismatches("logits at position " + std::to_string(pos), hologram_side ? mine : theirs,
                         e);
      }
      return why;
    };
  };
  const double weight_bytes = static_cast<double>(model->layout.total) * sizeof(float);
  const double flops = 2.0 * static_cast<double>(model->layout.total);
  for (bool one : {true, false}) {
    HologramTransformer *h = model->hologram().release(); // lives as long as `model`
    auto pos = std::make_shared<int>(0);
    auto body = [h, pos, seq = c.seq_len] {
      h->forward(model->token(*pos), *pos);
      *pos = (*pos + 1) % seq;
    };
    add(std::string("transformer/stories15M_token/hologram_") + (one ? "1t" : "mt"), body,
        compare(true), weight_bytes, flops, one);
  }
  for (bool one : {true, false}) {
    tf_reference *r = tf_reference_create(&model->c, &model->layout, model->weights.get());
    if (!r) std::abort(); // out of memory
    auto pos = std::make_shared<int>(0);
    auto body = [r, pos, one, seq = c.seq_len] {
      tf_reference_set_threads(one ? 1 : 0);
      tf_reference_forward(r, model->token(*pos), *pos);
      *pos = (*pos + 1) % seq;
    };
    add_checked_row(std::string("transformer/stories15M_token/clang_O3_fastmath_omp_") +
                        (one ? "1t" : "mt"),
                    body, compare(false), weight_bytes, flops);
  }
}

/// stream() (issue 19): 1 GiB made on the host, copied in, scaled by a kernel (y = 2x + 1),
/// copied back and summed, through an 8 MiB pool with stream(), against the same work on one
/// pool that holds all of it (1 GiB of host memory and 1 GiB of pool). The CPU backend.
constexpr uint64_t kStreamTotal = uint64_t{1} << 30, kStreamPool = uint64_t{8} << 20;

void register_stream() {
  struct Setup {
    std::shared_ptr<hologram::Backend> backend =
        hologram::create_backend(hologram::Preference::parse("cpu"));
    hologram::ModuleHandle module = backend->load_module(HOLOGRAM_STREAM_BUNDLE);
    hologram::PoolHandle small = backend->allocate_pool(kStreamPool);
    hologram::PoolHandle whole{};
    std::vector<float> host; // the whole input, for the one-pool row only
    double sum = 0;

    void fill(float *f, uint64_t first, uint64_t n) const {
      for (uint64_t i = 0; i < n; ++i) f[i] = static_cast<float>((first + i) % 1024);
    }
    void scale(hologram::PoolHandle p, uint64_t offset, uint64_t n) const {
      hologram::KernelArg args[] = {hologram::KernelArg::pool(p), hologram::KernelArg::u64(offset),
                                    hologram::KernelArg::u64(n)};
      backend->launch(module, "scale_chunk", hologram::LaunchConfig::linear(n, 256), args);
    }
    static double add(const float *f, uint64_t n) {
      double s = 0;
      for (uint64_t i = 0; i < n; ++i) s += f[i];
      return s;
    }
    void streamed() {
      uint64_t produced = 0;
      std::vector<float> back(kStreamPool / 8);
      sum = 0;
      auto source = [&](std::span<std::byte> out) -> size_t {
        const uint64_t n = std::min<uint64_t>(out.size() / 4, (kStreamTotal - produced) / 4);
        fill(reinterpret_cast<float *>(out.data()), produced / 4, n);
        produced += n * 4;
        return n * 4;
      };
      auto step = [&](hologram::PoolHandle p, uint64_t offset, uint64_t size, uint64_t) {
        scale(p, offset, size / 4);
        backend->copy_from_pool(p, offset, std::as_writable_bytes(std::span(back)).first(size));
        sum += add(back.data(), size / 4);
      };
      hologram::stream(*backend, small, source, step);
    }
    void one_pool() {
      if (!whole.id) {
        whole = backend->allocate_pool(kStreamTotal);
        host.resize(kStreamTotal / 4);
      }
      fill(host.data(), 0, host.size());
      backend->copy_to_pool(whole, 0, std::as_bytes(std::span(host)));
      scale(whole, 0, host.size());
      backend->copy_from_pool(whole, 0, std::as_writable_bytes(std::span(host)));
      sum = add(host.data(), host.size());
    }
  };
  static Setup *const s = new Setup; // lives as long as the rows
  // Every value is 2·(i mod 1024) + 1: the sum is 2^28 / 1024 · 1024² = 2^38, exactly.
  auto checked = [](std::function<void()> run) {
    return [run] {
      run();
      return mismatch("sum", s->sum, 274877906944.0, 0.0);
    };
  };
  const double bytes = static_cast<double>(kStreamTotal);
  add_checked_row(
      "stream/1GiB/hologram_stream_8MiB_pool", [] { s->streamed(); },
      checked([] { s->streamed(); }), bytes, 0);
  add_checked_row(
      "stream/1GiB/hologram_one_1GiB_pool", [] { s->one_pool(); }, checked([] { s->one_pool(); }),
      bytes, 0);
}

void register_all() {
  register_streams();
  register_page_end();
  register_maps_and_sums();
  register_f64_maps();
  register_rows();
  register_norms(4096);
  register_norms(256);
  register_gemm();
  register_gemv();
  register_attention();
  register_launch_overhead();
  register_transformer();
  register_stream();
}

} // namespace

int main(int argc, char **argv) {
  register_all();
  if (int status = verify_only(argc, argv); status >= 0) return status;
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
