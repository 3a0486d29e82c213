// The CUDA rows of the benchmarks (issue 16): hologram's kernels (bench/kernels/bench.hasm,
// compiled here for cuda-sm_80 and cuda-sm_90 into a bundle by scripts/gpu-pack.sh) on the CUDA
// backend, against the same workloads in CUDA C built with nvcc on the GPU machine, cuBLAS for
// gemm and CUB for sum (bench/peers/cuda/peers.cu, opened with dlopen), in one process.
//
// It links the runtime only (the GPU machine has no LLVM). Each row checks hologram's output and
// the peer's against a double-precision reference, then times both the same way: one launch
// followed by waiting for it (hologram's launch returns when the kernel has finished; the peer
// synchronizes its stream), the median of `--reps` runs after a first one. Output: a Markdown
// table (ratio = peer time / hologram time: above 1, hologram is faster).
//
//   hologram-cuda-bench BUNDLE libcuda_peers.so [--reps N] [--rows a,b,...]
#include "data.h"
#include "hologram/runtime/backend.h"
#include "tolerances.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace hologram;

namespace {

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "hologram-cuda-bench: %s\n", msg.c_str());
  std::exit(1);
}

/// The peer library's functions (bench/peers/cuda/peers.cu).
struct Peers {
  void *lib = nullptr;
  const char *(*error)() = nullptr;
  const char *(*describe)() = nullptr;
  double (*vector_add)(const float *, const float *, float *, unsigned, int) = nullptr;
  double (*saxpy)(const float *, float *, float, unsigned, int) = nullptr;
  double (*sum)(const float *, unsigned, float *, int) = nullptr;
  double (*softmax_rows)(const float *, float *, unsigned, unsigned, int) = nullptr;
  double (*rmsnorm_rows)(const float *, const float *, float *, unsigned, unsigned, float,
                         int) = nullptr;
  double (*gemm)(const float *, const float *, float *, unsigned, int) = nullptr;
  double (*empty)(int) = nullptr;
  double (*copy)(unsigned, int) = nullptr;

  explicit Peers(const std::string &path) {
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) die(std::string("cannot open the peers: ") + dlerror());
    load(error, "peer_error");
    load(describe, "peer_describe");
    load(vector_add, "peer_vector_add");
    load(saxpy, "peer_saxpy");
    load(sum, "peer_sum");
    load(softmax_rows, "peer_softmax_rows");
    load(rmsnorm_rows, "peer_rmsnorm_rows");
    load(gemm, "peer_gemm");
    load(empty, "peer_empty");
    load(copy, "peer_copy");
  }
  template <typename F> void load(F &f, const char *name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (!f) die(std::string("the peers have no ") + name);
  }
  /// A peer's time, or the end of the run with its error.
  double checked(double seconds, const std::string &row) const {
    if (seconds < 0) die("peer of " + row + ": " + error());
    return seconds;
  }
};

struct Row {
  std::string name, size, peer;
  double hologram = 0, other = 0; ///< seconds
  double bytes = 0, flops = 0;    ///< per run, for the rates
  double copy_rate = 0;           ///< bytes/s of a device-to-device copy of the same size
};

class Bench {
public:
  Bench(Backend &b, ModuleHandle m, int reps) : b_(b), m_(m), reps_(reps) {}

  BufferHandle buffer(const std::vector<float> &v) {
    BufferHandle h = b_.allocate_buffer(v.size() * 4);
    b_.write<float>(h, v);
    keep_.push_back(h);
    return h;
  }
  BufferHandle zeros(size_t n) {
    keep_.push_back(b_.allocate_buffer(n * 4));
    return keep_.back();
  }
  void release() {
    for (auto h : keep_) b_.free_buffer(h);
    keep_.clear();
  }

  /// Median seconds of `reps` launches of `kernel` (after one).
  double time(const std::string &kernel, const LaunchConfig &l, const std::vector<KernelArg> &a,
              int reps = 0) {
    b_.launch(m_, kernel, l, a);
    std::vector<double> t;
    for (int i = 0; i < (reps ? reps : reps_); ++i) {
      auto t0 = std::chrono::steady_clock::now();
      b_.launch(m_, kernel, l, a);
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    return t[t.size() / 2];
  }
  void launch(const std::string &kernel, const LaunchConfig &l, const std::vector<KernelArg> &a) {
    b_.launch(m_, kernel, l, a);
  }
  std::vector<float> read(BufferHandle h) { return b_.read<float>(h); }
  int reps() const { return reps_; }

private:
  Backend &b_;
  ModuleHandle m_;
  int reps_;
  std::vector<BufferHandle> keep_;
};

void check(const std::string &row, const std::string &who, const std::string &why) {
  if (!why.empty()) die("row " + row + " (" + who + ") gives wrong results: " + why);
}

const LaunchConfig kWhole{{1, 1, 1}, {1, 1, 1}, 0}; ///< whole-launch kernels

/// `count` entries of C = A B (m x m) against their reference, at fixed pseudo-random places.
std::string gemm_sample(const std::vector<float> &a, const std::vector<float> &b,
                        const std::vector<float> &c, size_t m, size_t count) {
  std::string out;
  uint64_t s = 12345;
  for (size_t k = 0; k < count && out.empty(); ++k) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const size_t i = (s >> 33) % m, j = (s >> 13) % m;
    double want = 0, mag = 0;
    for (size_t t = 0; t < m; ++t) {
      const double p = double{a[i * m + t]} * b[t * m + j];
      want += p;
      mag += std::fabs(p);
    }
    out = mismatch("C[" + std::to_string(i) + "][" + std::to_string(j) + "]", c[i * m + j], want,
                   double(m) * kEps * mag);
  }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) die("usage: hologram-cuda-bench BUNDLE libcuda_peers.so [--reps N] [--rows a,b]");
  const std::string bundle = argv[1];
  int reps = 50;
  std::string only;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--reps") == 0)
      reps = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--rows") == 0)
      only = "," + std::string(argv[i + 1]) + ",";
    else
      die(std::string("unknown option ") + argv[i]);
  }
  auto wanted = [&](const std::string &row) {
    return only.empty() || only.find("," + row + ",") != std::string::npos;
  };
  std::unique_ptr<Backend> backend;
  ModuleHandle module;
  try {
    backend = create_backend(Preference::parse("cuda"));
    module = backend->load_module(bundle);
  } catch (const Error &e) {
    die(e.what());
  }
  Peers peers(argv[2]);
  const DeviceInfo d = backend->device_info();
  std::printf("hologram: %s (%s), payload %s\npeers: %s\n\n", d.name.c_str(), d.details.c_str(),
              backend->module_info(module).variant.c_str(), peers.describe());
  Bench bench(*backend, module, reps);
  std::vector<Row> rows;
  std::map<uint32_t, double> copy_rate; ///< bytes per second of a device-to-device copy

  try {
    for (uint32_t n : {1u << 20, 1u << 24}) {
      const std::string size = "2^" + std::to_string(std::countr_zero(n));
      // The device's own copy: what the streaming rows' bandwidth is compared with.
      copy_rate[n] = 8.0 * n / peers.checked(peers.copy(n, reps), "copy");
      const auto x = bench_data(n, -0.5f, 0.5f), y = bench_data(n, -0.5f, 0.5f, 1);
      const auto add = elementwise(n, [&](size_t i) { return double{x[i]} + y[i]; }, 1);
      const auto axpy = elementwise(n, [&](size_t i) { return std::fma(2.5, x[i], y[i]); }, 1);
      if (wanted("vector_add")) {
        Row r{"vector_add", size, "CUDA C"};
        auto bx = bench.buffer(x), by = bench.buffer(y), bc = bench.zeros(n);
        std::vector<KernelArg> a = {KernelArg::buffer(bx), KernelArg::buffer(by),
                                    KernelArg::buffer(bc), KernelArg::u32(n)};
        const LaunchConfig l = LaunchConfig::linear(n);
        bench.launch("vector_add", l, a);
        check(r.name, "hologram", mismatches("c", bench.read(bc), add));
        r.hologram = bench.time("vector_add", l, a);
        std::vector<float> c(n);
        r.other = peers.checked(peers.vector_add(x.data(), y.data(), c.data(), n, reps), r.name);
        check(r.name, "peer", mismatches("c", c, add));
        r.bytes = 12.0 * n;
        r.copy_rate = copy_rate[n];
        rows.push_back(r);
        bench.release();
      }
      if (wanted("saxpy")) {
        Row r{"saxpy", size, "CUDA C"};
        auto bx = bench.buffer(x), by = bench.buffer(y);
        std::vector<KernelArg> a = {KernelArg::buffer(bx), KernelArg::buffer(by),
                                    KernelArg::f32(2.5f), KernelArg::u32(n)};
        const LaunchConfig l = LaunchConfig::linear(n);
        bench.launch("saxpy", l, a);
        check(r.name, "hologram", mismatches("y", bench.read(by), axpy));
        r.hologram = bench.time("saxpy", l, a);
        std::vector<float> yy = y;
        r.other = peers.checked(peers.saxpy(x.data(), yy.data(), 2.5f, n, reps), r.name);
        check(r.name, "peer", mismatches("y", yy, axpy));
        r.bytes = 12.0 * n;
        r.copy_rate = copy_rate[n];
        rows.push_back(r);
        bench.release();
      }
      if (wanted("sum")) {
        Row r{"sum", size, "CUB DeviceReduce"};
        auto [want, tol] = sum_reference(x);
        auto bx = bench.buffer(x), bo = bench.zeros(1);
        std::vector<KernelArg> a = {KernelArg::buffer(bx), KernelArg::buffer(bo),
                                    KernelArg::u32(n)};
        bench.launch("sum", kWhole, a);
        check(r.name, "hologram", mismatch("sum", bench.read(bo)[0], want, tol));
        r.hologram = bench.time("sum", kWhole, a);
        float got = 0;
        r.other = peers.checked(peers.sum(x.data(), n, &got, reps), r.name);
        check(r.name, "peer", mismatch("sum", got, want, tol));
        r.bytes = 4.0 * n;
        r.copy_rate = copy_rate[n];
        rows.push_back(r);
        bench.release();
      }
    }

    const uint32_t rows_n = 4096, cols = 1024;
    const auto x = bench_data(size_t(rows_n) * cols, -4.0f, 4.0f, 2);
    if (wanted("softmax_rows")) {
      Row r{"softmax_rows", "4096x1024", "CUDA C"};
      Tolerances want;
      for (uint32_t i = 0; i < rows_n; ++i) {
        double m = -INFINITY, s = 0;
        for (uint32_t j = 0; j < cols; ++j) m = std::max(m, double{x[i * cols + j]});
        for (uint32_t j = 0; j < cols; ++j) s += std::exp(x[i * cols + j] - m);
        for (uint32_t j = 0; j < cols; ++j) {
          want.want.push_back(std::exp(x[i * cols + j] - m) / s);
          want.tol.push_back(64 * kEps * want.want.back());
        }
      }
      auto bx = bench.buffer(x), by = bench.zeros(x.size());
      std::vector<KernelArg> a = {KernelArg::buffer(bx), KernelArg::buffer(by),
                                  KernelArg::u32(rows_n), KernelArg::u32(cols)};
      bench.launch("softmax_rows", kWhole, a);
      check(r.name, "hologram", mismatches("y", bench.read(by), want));
      r.hologram = bench.time("softmax_rows", kWhole, a);
      std::vector<float> y(x.size());
      r.other = peers.checked(peers.softmax_rows(x.data(), y.data(), rows_n, cols, reps), r.name);
      check(r.name, "peer", mismatches("y", y, want));
      r.bytes = 8.0 * x.size();
      rows.push_back(r);
      bench.release();
    }
    if (wanted("rmsnorm_rows")) {
      Row r{"rmsnorm_rows", "4096x1024", "CUDA C"};
      const auto g = bench_data(cols, 0.5f, 1.5f, 3);
      Tolerances want;
      for (uint32_t i = 0; i < rows_n; ++i) {
        double s = 0;
        for (uint32_t j = 0; j < cols; ++j) s += double{x[i * cols + j]} * x[i * cols + j];
        const double scale = 1 / std::sqrt(s / cols + 1e-5);
        for (uint32_t j = 0; j < cols; ++j) {
          want.want.push_back(x[i * cols + j] * scale * g[j]);
          want.tol.push_back(32 * kEps * std::fabs(want.want.back()) + 1e-30);
        }
      }
      auto bx = bench.buffer(x), bg = bench.buffer(g), by = bench.zeros(x.size());
      std::vector<KernelArg> a = {KernelArg::buffer(bx), KernelArg::buffer(bg),
                                  KernelArg::buffer(by), KernelArg::u32(rows_n),
                                  KernelArg::u32(cols)};
      bench.launch("rmsnorm_rows", kWhole, a);
      check(r.name, "hologram", mismatches("y", bench.read(by), want));
      r.hologram = bench.time("rmsnorm_rows", kWhole, a);
      std::vector<float> y(x.size());
      r.other = peers.checked(
          peers.rmsnorm_rows(x.data(), g.data(), y.data(), rows_n, cols, 1e-5f, reps), r.name);
      check(r.name, "peer", mismatches("y", y, want));
      r.bytes = 8.0 * x.size();
      rows.push_back(r);
      bench.release();
    }
    for (uint32_t m : {1024u, 4096u}) {
      if (!wanted("gemm")) break;
      Row r{"gemm", std::to_string(m), "cuBLAS SGEMM"};
      const auto a = bench_data(size_t(m) * m, -0.5f, 0.5f, 4),
                 b = bench_data(size_t(m) * m, -0.5f, 0.5f, 5);
      auto ba = bench.buffer(a), bb = bench.buffer(b), bc = bench.zeros(size_t(m) * m);
      std::vector<KernelArg> args = {KernelArg::buffer(ba), KernelArg::buffer(bb),
                                     KernelArg::buffer(bc), KernelArg::u32(m)};
      const int gemm_reps = m >= 4096 ? 5 : 20;
      bench.launch("gemm", kWhole, args);
      check(r.name, "hologram", gemm_sample(a, b, bench.read(bc), m, 512));
      r.hologram = bench.time("gemm", kWhole, args, gemm_reps);
      std::vector<float> c(size_t(m) * m);
      r.other = peers.checked(peers.gemm(a.data(), b.data(), c.data(), m, gemm_reps), r.name);
      check(r.name, "peer", gemm_sample(a, b, c, m, 512));
      r.flops = 2.0 * m * m * m;
      rows.push_back(r);
      bench.release();
    }
    if (wanted("dispatch")) {
      Row r{"dispatch", "empty", "CUDA C"};
      r.hologram = bench.time("empty", LaunchConfig{{1, 1, 1}, {1, 1, 1}, 0}, {}, 1000);
      r.other = peers.checked(peers.empty(1000), r.name);
      rows.push_back(r);
    }
  } catch (const Error &e) {
    die(e.what());
  }

  std::printf("| workload | size | hologram (µs) | peer | peer (µs) | ratio | hologram rate |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const auto &r : rows) {
    char rate[64] = "";
    if (r.bytes > 0 && r.copy_rate > 0)
      std::snprintf(rate, sizeof rate, "%.0f GB/s (%.0f%% of copy)", r.bytes / r.hologram / 1e9,
                    100 * r.bytes / r.hologram / r.copy_rate);
    else if (r.bytes > 0)
      std::snprintf(rate, sizeof rate, "%.0f GB/s", r.bytes / r.hologram / 1e9);
    if (r.flops > 0) std::snprintf(rate, sizeof rate, "%.2f TFLOP/s", r.flops / r.hologram / 1e12);
    std::printf("| %s | %s | %.1f | %s | %.1f | %.2f | %s |\n", r.name.c_str(), r.size.c_str(),
                r.hologram * 1e6, r.peer.c_str(), r.other * 1e6, r.other / r.hologram, rate);
  }
  for (const auto &[n, rate] : copy_rate)
    std::printf("\ndevice-to-device copy of 2^%d floats (cudaMemcpyAsync): %.0f GB/s",
                std::countr_zero(n), rate / 1e9);
  std::printf("\n");
  return 0;
}
