// The conformance corpus: every kernel of the prototype's standard library, the ML and
// structural kernels, and circuits for every generator. Each case's expected result comes
// from C++ reference code written here, independently of the interpreter.
#include "harness.h"
#include "hologram/isa/library_accuracy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace hologram::conformance {

namespace {

using F = float;

// f32 math as SPEC §3.4 defines it (double evaluation, one rounding).
F expf_(F x) {
  return static_cast<F>(std::exp(static_cast<double>(x)));
}
F sigmoid_(F x) {
  double e = std::exp(-static_cast<double>(x));
  return e > std::numeric_limits<F>::max() ? 0.0f : static_cast<F>(1.0 / (1.0 + e));
}

/// A case running `kernel` of kernels/FILE.json.
Case kernel_case(const std::string &file, const std::string &kernel) {
  Case c;
  c.name = kernel;
  c.file = "kernels/" + file + ".json";
  c.kernel = kernel;
  return c;
}

/// y[i] = sum_j M[i * cols + j] * x[j], summed in order in f32 (gemv_f32 and matvec).
void row_dots(std::span<const F> M, std::span<const F> x, std::span<F> y, uint32_t rows,
              uint32_t cols) {
  for (uint32_t i = 0; i < rows; ++i) {
    F acc = 0;
    for (uint32_t j = 0; j < cols; ++j) acc = acc + M[i * cols + j] * x[j];
    y[i] = acc;
  }
}

/// n * eps * sum|x|: the bound SPEC §3.4 gives float reductions that may reassociate.
double sum_bound(std::span<const F> terms) {
  double s = 0;
  for (F t : terms) s += std::fabs(t);
  return static_cast<double>(terms.size()) * std::numeric_limits<F>::epsilon() * s + 1e-30;
}

std::vector<F> products(std::span<F> a, std::span<F> b) {
  std::vector<F> p(a.size());
  for (size_t i = 0; i < a.size(); ++i) p[i] = a[i] * b[i];
  return p;
}

Case elementwise(const std::string &kernel, F lo, F hi, uint32_t ulps, F (*f)(F)) {
  Case c = kernel_case("vector", kernel);
  c.launch = LaunchConfig::linear(1000, 128);
  c.inputs = [=](CaseData &d) {
    Random r(std::hash<std::string>{}(kernel) & 0xffff);
    d.arrays["a"] = Array::of(Type::F32, r.floats(1000, lo, hi));
    d.arrays["b"] = Array::of(Type::F32, std::vector<F>(1000, -7.0f));
    d.scalars["n"] = 1000;
  };
  c.reference = [=](CaseData &d, std::vector<Check> &) {
    auto a = d.array<F>("a");
    auto b = d.array<F>("b");
    for (size_t i = 0; i < a.size(); ++i) b[i] = f(a[i]);
  };
  c.checks = {{"b", {ulps, 0}}};
  return c;
}

Case binary(const std::string &kernel, F (*f)(F, F)) {
  Case c = kernel_case("vector", kernel);
  c.launch = LaunchConfig::linear(1000, 256); // 1024 lanes: the kernel guards i < n
  c.inputs = [=](CaseData &d) {
    Random r(7);
    d.arrays["a"] = Array::of(Type::F32, r.floats(1000, -100, 100));
    d.arrays["b"] = Array::of(Type::F32, r.floats(1000, -100, 100));
    d.arrays["c"] = Array::of(Type::F32, std::vector<F>(1000, 0));
    d.scalars["n"] = 1000;
  };
  c.reference = [=](CaseData &d, std::vector<Check> &) {
    auto a = d.array<F>("a"), b = d.array<F>("b"), out = d.array<F>("c");
    for (size_t i = 0; i < a.size(); ++i) out[i] = f(a[i], b[i]);
  };
  c.checks = {{"c", {}}};
  return c;
}

void vector_cases(std::vector<Case> &out) {
  out.push_back(binary("vector_add", [](F a, F b) { return a + b; }));
  out.push_back(binary("vector_sub", [](F a, F b) { return a - b; }));
  out.push_back(binary("vector_mul", [](F a, F b) { return a * b; }));
  for (const char *k : {"vector_dot", "vector_sum"}) {
    Case c = kernel_case("vector", k);
    c.launch = LaunchConfig::linear(3000, 128);
    bool dot = std::string(k) == "vector_dot";
    c.inputs = [=](CaseData &d) {
      Random r(11);
      d.arrays["a"] = Array::of(Type::F32, r.floats(3000, -1, 1));
      if (dot) d.arrays["b"] = Array::of(Type::F32, r.floats(3000, -1, 1));
      d.arrays["result"] = Array::of(Type::F32, std::vector<F>{0});
      d.scalars["n"] = 3000;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &checks) {
      auto a = d.array<F>("a");
      std::vector<F> terms =
          dot ? products(a, d.array<F>("b")) : std::vector<F>(a.begin(), a.end());
      double exact = 0;
      for (F t : terms) exact += t;
      d.array<F>("result")[0] = static_cast<F>(exact);
      checks[0].tol.abs = sum_bound(terms);
    };
    c.checks = {{"result", {}}};
    out.push_back(c);
  }
  out.push_back(elementwise("relu", -5, 5, 0, [](F x) { return x > 0.0f ? x : 0.0f; }));
  out.push_back(
      elementwise("sigmoid", -20, 20, 4, [](F x) { return 1.0f / (1.0f + expf_(0.0f - x)); }));
  out.push_back(elementwise("tanh", -5, 5, 4,
                            [](F x) { return static_cast<F>(std::tanh(static_cast<double>(x))); }));
  out.push_back(elementwise("exp", -30, 30, 2, expf_));
  out.push_back(elementwise("log", 1e-3f, 1e4f, 2,
                            [](F x) { return static_cast<F>(std::log(static_cast<double>(x))); }));
  out.push_back(elementwise("sin", -10, 10, 4,
                            [](F x) { return static_cast<F>(std::sin(static_cast<double>(x))); }));
  out.push_back(elementwise("cos", -10, 10, 4,
                            [](F x) { return static_cast<F>(std::cos(static_cast<double>(x))); }));
}

void matrix_cases(std::vector<Case> &out) {
  {
    const uint32_t m = 37, n = 29, k = 23;
    Case c = kernel_case("matrix", "gemm_f32");
    c.launch = LaunchConfig::linear(m * n, 64);
    c.inputs = [=](CaseData &d) {
      Random r(21);
      d.arrays["A"] = Array::of(Type::F32, r.floats(m * k, -1, 1));
      d.arrays["B"] = Array::of(Type::F32, r.floats(k * n, -1, 1));
      d.arrays["C"] = Array::of(Type::F32, std::vector<F>(m * n, 0));
      for (auto [name, v] :
           {std::pair{"m", m}, {"n", n}, {"k", k}, {"lda", k}, {"ldb", n}, {"ldc", n}})
        d.scalars[name] = v;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto A = d.array<F>("A"), B = d.array<F>("B"), C = d.array<F>("C");
      for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = 0; j < n; ++j) {
          F acc = 0;
          for (uint32_t kk = 0; kk < k; ++kk) acc = acc + A[i * k + kk] * B[kk * n + j];
          C[i * n + j] = acc;
        }
    };
    c.checks = {{"C", {4, 0}}};
    out.push_back(c);
  }
  {
    const uint32_t m = 50, n = 70;
    Case c = kernel_case("matrix", "gemv_f32");
    c.launch = LaunchConfig::linear(m, 32);
    c.inputs = [=](CaseData &d) {
      Random r(22);
      d.arrays["A"] = Array::of(Type::F32, r.floats(m * n, -1, 1));
      d.arrays["x"] = Array::of(Type::F32, r.floats(n, -1, 1));
      d.arrays["y"] = Array::of(Type::F32, std::vector<F>(m, 0));
      d.scalars["m"] = m;
      d.scalars["n"] = n;
      d.scalars["lda"] = n;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      row_dots(d.array<F>("A"), d.array<F>("x"), d.array<F>("y"), m, n);
    };
    c.checks = {{"y", {4, 0}}};
    out.push_back(c);
  }
}

void quantum_cases(std::vector<Case> &out) {
  {
    const uint32_t n = 64, m = 16, iters = 5;
    Case c = kernel_case("quantum", "constraint_solve");
    c.launch = LaunchConfig::linear(n, 32);
    c.inputs = [=](CaseData &d) {
      Random r(31);
      auto cons = r.floats(n * m, -2, 2);
      for (size_t i = 0; i < cons.size(); i += 3) cons[i] = 0; // some constraints do not apply
      d.arrays["variables"] = Array::of(Type::F32, r.floats(n, -3, 3));
      d.arrays["constraints"] = Array::of(Type::F32, cons);
      d.arrays["violation_count"] = Array::of(Type::U32, std::vector<uint32_t>(n, 0));
      d.arrays["is_satisfied"] = Array::of(Type::U32, std::vector<uint32_t>(m, 0));
      d.scalars["n"] = n;
      d.scalars["m"] = m;
      d.scalars["max_iterations"] = iters;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto vars = d.array<F>("variables"), cons = d.array<F>("constraints");
      auto count_out = d.array<uint32_t>("violation_count");
      for (uint32_t v = 0; v < n; ++v)
        for (uint32_t it = 0; it < iters; ++it) {
          F x = vars[v];
          uint32_t count = 0;
          for (uint32_t j = 0; j < m; ++j) {
            F w = cons[v * m + j];
            if (w != 0.0f && ((w > 0.0f && x < w) || (w < 0.0f && x > -w))) ++count;
          }
          count_out[v] = count;
          if (count > 0) vars[v] = x * (1.0f - static_cast<F>(count) / static_cast<F>(m));
        }
    };
    // is_satisfied is written by every variable's lane without order: not compared.
    c.checks = {{"variables", {}}, {"violation_count", {}}};
    out.push_back(c);
  }
  {
    const uint32_t n = 128, iters = 20;
    Case c = kernel_case("quantum", "minimize_energy");
    c.launch = LaunchConfig::linear(n, 64);
    c.inputs = [=](CaseData &d) {
      Random r(41);
      d.arrays["state"] = Array::of(Type::F32, r.floats(n, -1.5f, 1.5f));
      std::vector<F> energy(n + 1, 0);
      energy[n] = 1e30f;
      d.arrays["energy"] = Array::of(Type::F32, energy);
      d.arrays["best_state"] = Array::of(Type::F32, std::vector<F>(n, 0));
      d.scalars["temperature"] = std::bit_cast<uint32_t>(2.0f);
      d.scalars["n"] = n;
      d.scalars["max_iterations"] = iters;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto state = d.array<F>("state"), energy = d.array<F>("energy"),
           best = d.array<F>("best_state");
      for (uint32_t k = 0; k < n; ++k) {
        F s = state[k];
        for (uint32_t it = 0; it < iters; ++it) {
          F t = 2.0f * (1.0f - static_cast<F>(it) / static_cast<F>(iters));
          F e = s * s;
          energy[k] = e;
          if (expf_(0.0f - e / t) > 0.5f) s = s + 0.1f * (1.0f - e);
          state[k] = s;
        }
        energy[n] = std::min(energy[n], energy[k]);
        best[k] = s;
      }
    };
    c.checks = {{"state", {4, 0}}, {"energy", {4, 0}}, {"best_state", {4, 0}}};
    out.push_back(c);
  }
  {
    const uint32_t n = 16;
    Case c = kernel_case("quantum", "optimal_path");
    c.launch.block = {32, 1, 1}; // one block: rounds are separated by barriers
    c.inputs = [=](CaseData &d) {
      Random r(51);
      std::vector<F> adj(n * n, 0);
      for (uint32_t v = 0; v < n; ++v)
        for (uint32_t u = 0; u < n; ++u)
          if (u != v && r.next() % 10 < 3) adj[v * n + u] = static_cast<F>(1 + r.next() % 9);
      std::vector<F> w(n, std::numeric_limits<F>::infinity());
      w[0] = 0;
      d.arrays["adjacency"] = Array::of(Type::F32, adj);
      d.arrays["path_weights"] = Array::of(Type::F32, w);
      d.arrays["visited"] = Array::of(Type::U32, std::vector<uint32_t>(n, 0));
      d.arrays["total_paths"] = Array::of(Type::U32, std::vector<uint32_t>{0});
      d.scalars["start"] = 0;
      d.scalars["target"] = n - 1;
      d.scalars["n"] = n;
      d.scalars["max_depth"] = n;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto adj = d.array<F>("adjacency"), w = d.array<F>("path_weights");
      for (uint32_t round = 0; round + 1 < n; ++round) // Bellman-Ford
        for (uint32_t v = 0; v < n; ++v)
          for (uint32_t u = 0; u < n; ++u)
            if (adj[v * n + u] > 0) w[u] = std::min(w[u], w[v] + adj[v * n + u]);
      for (auto &x : d.array<uint32_t>("visited")) x = 1;
      d.array<uint32_t>("total_paths")[0] = n;
    };
    c.checks = {{"path_weights", {}}, {"visited", {}}, {"total_paths", {}}};
    out.push_back(c);
  }
  {
    const uint32_t n = 64;
    Case c = kernel_case("quantum", "quantum_search");
    c.launch = LaunchConfig::linear(n, 16);
    c.inputs = [=](CaseData &d) {
      Random r(61);
      std::vector<F> data(n);
      for (auto &x : data) x = static_cast<F>(r.next() % 10);
      d.arrays["data"] = Array::of(Type::F32, data);
      d.arrays["results"] = Array::of(Type::F32, std::vector<F>(n, -1));
      d.arrays["total_results"] = Array::of(Type::U32, std::vector<uint32_t>{0});
      d.scalars["target"] = std::bit_cast<uint32_t>(3.0f);
      d.scalars["n"] = n;
      d.scalars["max_iterations"] = 3;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto data = d.array<F>("data"), results = d.array<F>("results");
      uint32_t total = 0;
      for (uint32_t t = 0; t < n; ++t) {
        F amp = 1.0f / static_cast<F>(std::sqrt(static_cast<double>(n)));
        for (int it = 0; it < 3; ++it) {
          if (data[t] == 3.0f) amp = -amp;
          F avg = (amp + 1.0f) / 2.0f;
          amp = 2.0f * avg - amp;
        }
        if (amp > 0.5f) results[total++] = static_cast<F>(t);
      }
      d.array<uint32_t>("total_results")[0] = total;
    };
    // Slots are taken with atomic_add: the order of the indices is not defined.
    c.checks = {{"total_results", {}}, {"results", {}, SIZE_MAX, true}};
    out.push_back(c);
  }
}

void nn_cases(std::vector<Case> &out) {
  const uint32_t rows = 33, cols = 100;
  auto rows_case = [&](const std::string &kernel, bool lib) {
    Case c = kernel_case("nn", kernel);
    c.launch = LaunchConfig::linear(rows, 32);
    c.inputs = [=](CaseData &d) {
      Random r(71);
      d.arrays["x"] = Array::of(Type::F32, r.floats(rows * cols, -4, 4));
      d.arrays["y"] = Array::of(Type::F32, std::vector<F>(rows * cols, 0));
      d.arrays["gamma"] = Array::of(Type::F32, r.floats(cols, 0.5f, 1.5f));
      d.arrays["beta"] = Array::of(Type::F32, r.floats(cols, -0.5f, 0.5f));
      d.scalars["rows"] = rows;
      d.scalars["cols"] = cols;
      d.scalars["eps"] = std::bit_cast<uint32_t>(1e-5f);
    };
    (void)lib;
    return c;
  };
  {
    Case c = rows_case("softmax_rows", false);
    c.inputs = [inner = c.inputs](CaseData &d) {
      inner(d);
      d.arrays.erase("gamma");
      d.arrays.erase("beta");
      d.scalars.erase("eps");
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto x = d.array<F>("x"), y = d.array<F>("y");
      for (uint32_t r = 0; r < rows; ++r) {
        F mx = x[r * cols];
        for (uint32_t k = 1; k < cols; ++k) mx = std::max(mx, x[r * cols + k]);
        F total = 0;
        for (uint32_t k = 0; k < cols; ++k) {
          y[r * cols + k] = expf_(x[r * cols + k] - mx);
          total = total + y[r * cols + k];
        }
        for (uint32_t k = 0; k < cols; ++k) y[r * cols + k] = y[r * cols + k] / total;
      }
    };
    c.checks = {{"y", {8, 0}}};
    out.push_back(c);
  }
  {
    Case c = rows_case("softmax_lib", true);
    c.inputs = [inner = c.inputs](CaseData &d) {
      inner(d);
      d.arrays.erase("gamma");
      d.arrays.erase("beta");
      d.scalars.erase("eps");
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto x = d.array<F>("x"), y = d.array<F>("y");
      for (uint32_t r = 0; r < rows; ++r) {
        double mx = -INFINITY, sum = 0;
        for (uint32_t k = 0; k < cols; ++k) mx = std::max(mx, static_cast<double>(x[r * cols + k]));
        for (uint32_t k = 0; k < cols; ++k) sum += std::exp(x[r * cols + k] - mx);
        for (uint32_t k = 0; k < cols; ++k)
          y[r * cols + k] = static_cast<F>(std::exp(x[r * cols + k] - mx) / sum);
      }
    };
    c.checks = {{"y", {isa::accuracy::kSoftmaxUlps, 0}}};
    out.push_back(c);
  }
  {
    Case c = rows_case("rmsnorm_rows", false);
    c.inputs = [inner = c.inputs](CaseData &d) {
      inner(d);
      d.arrays.erase("beta");
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto x = d.array<F>("x"), y = d.array<F>("y"), g = d.array<F>("gamma");
      for (uint32_t r = 0; r < rows; ++r) {
        F ss = 0;
        for (uint32_t k = 0; k < cols; ++k) ss = ss + x[r * cols + k] * x[r * cols + k];
        F inv = 1.0f /
                static_cast<F>(std::sqrt(static_cast<double>(ss / static_cast<F>(cols) + 1e-5f)));
        for (uint32_t k = 0; k < cols; ++k) y[r * cols + k] = x[r * cols + k] * inv * g[k];
      }
    };
    c.checks = {{"y", {8, 0}}};
    out.push_back(c);
  }
  {
    Case c = rows_case("layernorm_lib", true);
    c.reference = [=](CaseData &d, std::vector<Check> &checks) {
      auto x = d.array<F>("x"), y = d.array<F>("y"), g = d.array<F>("gamma"),
           b = d.array<F>("beta");
      double terms = 0; // the bound of library_accuracy.h
      for (uint32_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0, mean_abs = 0;
        for (uint32_t k = 0; k < cols; ++k) {
          mean += x[r * cols + k];
          mean_abs += std::fabs(x[r * cols + k]);
        }
        mean /= cols;
        mean_abs /= cols;
        for (uint32_t k = 0; k < cols; ++k)
          var += (x[r * cols + k] - mean) * (x[r * cols + k] - mean);
        double inv = 1.0 / std::sqrt(var / cols + 1e-5);
        for (uint32_t k = 0; k < cols; ++k) {
          y[r * cols + k] = static_cast<F>((x[r * cols + k] - mean) * inv * g[k] + b[k]);
          terms = std::max(terms,
                           std::fabs(g[k]) * inv * (std::fabs(x[r * cols + k] - mean) + mean_abs) +
                               std::fabs(b[k]));
        }
      }
      checks[0].tol.abs = isa::accuracy::kLayerNormUnits * isa::accuracy::kF32Unit * terms;
    };
    c.checks = {{"y", {}}};
    out.push_back(c);
  }
  {
    const uint32_t m = 20, n = 24, k = 31;
    Case c = kernel_case("nn", "gemm_lib");
    c.inputs = [=](CaseData &d) {
      Random r(81);
      d.arrays["A"] = Array::of(Type::F32, r.floats(m * k, -1, 1));
      d.arrays["B"] = Array::of(Type::F32, r.floats(k * n, -1, 1));
      d.arrays["C"] = Array::of(Type::F32, std::vector<F>(m * n, 5));
      d.scalars["m"] = m;
      d.scalars["n"] = n;
      d.scalars["k"] = k;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &checks) {
      auto A = d.array<F>("A"), B = d.array<F>("B"), C = d.array<F>("C");
      double worst = 0;
      for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = 0; j < n; ++j) {
          double acc = 0, mag = 0;
          for (uint32_t kk = 0; kk < k; ++kk) {
            acc += static_cast<double>(A[i * k + kk]) * B[kk * n + j];
            mag += std::fabs(static_cast<double>(A[i * k + kk]) * B[kk * n + j]);
          }
          C[i * n + j] = static_cast<F>(acc);
          worst = std::max(worst, mag);
        }
      checks[0].tol.abs = k * std::numeric_limits<F>::epsilon() * worst;
    };
    c.checks = {{"C", {}}};
    out.push_back(c);
  }
  auto pointwise = [&](const std::string &kernel, F (*f)(F), Tolerance tol) {
    Case c = kernel_case("nn", kernel);
    c.launch = LaunchConfig::linear(777, 64);
    c.inputs = [=](CaseData &d) {
      Random r(91);
      d.arrays["x"] = Array::of(Type::F32, r.floats(777, -6, 6));
      d.arrays["y"] = Array::of(Type::F32, std::vector<F>(777, 0));
      d.scalars["n"] = 777;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto x = d.array<F>("x"), y = d.array<F>("y");
      for (size_t i = 0; i < x.size(); ++i) y[i] = f(x[i]);
    };
    c.checks = {{"y", tol}};
    out.push_back(c);
  };
  pointwise("silu", [](F v) { return v * sigmoid_(v); }, {6, 0});
  // 1 + erf(x/√2) cancels for negative x: SPEC §3.4 lets f32 erf be 4 ulp off, 4·2^-24 below
  // 1, which 0.5|x| <= 3 scales to 7.2e-7 of gelu's value (the reference is exact but for the
  // kernel's own f32 product x/√2).
  pointwise("gelu",
            [](F v) {
              double e = std::erf(static_cast<double>(v * 0.7071067811865476f));
              return static_cast<F>(0.5 * v * (1.0 + e));
            },
            {6, 7.2e-7});
  {
    const uint32_t rrows = 8, dim = 16, half = dim / 2;
    Case c = kernel_case("nn", "rope");
    c.launch = LaunchConfig::linear(rrows * half, 32);
    c.inputs = [=](CaseData &d) {
      Random r(101);
      d.arrays["x"] = Array::of(Type::F32, r.floats(rrows * dim, -2, 2));
      std::vector<F> cs(rrows * half), sn(rrows * half);
      for (uint32_t p = 0; p < rrows; ++p)
        for (uint32_t i = 0; i < half; ++i) {
          double th = p * std::pow(10000.0, -2.0 * i / dim);
          cs[p * half + i] = static_cast<F>(std::cos(th));
          sn[p * half + i] = static_cast<F>(std::sin(th));
        }
      d.arrays["cos_t"] = Array::of(Type::F32, cs);
      d.arrays["sin_t"] = Array::of(Type::F32, sn);
      d.arrays["y"] = Array::of(Type::F32, std::vector<F>(rrows * dim, 0));
      d.scalars["rows"] = rrows;
      d.scalars["dim"] = dim;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto x = d.array<F>("x"), cs = d.array<F>("cos_t"), sn = d.array<F>("sin_t"),
           y = d.array<F>("y");
      for (uint32_t r = 0; r < rrows; ++r)
        for (uint32_t i = 0; i < half; ++i) {
          F x0 = x[r * dim + 2 * i], x1 = x[r * dim + 2 * i + 1], co = cs[r * half + i],
            si = sn[r * half + i];
          y[r * dim + 2 * i] = x0 * co - x1 * si;
          y[r * dim + 2 * i + 1] = x0 * si + x1 * co;
        }
    };
    c.checks = {{"y", {2, 0}}};
    out.push_back(c);
  }
  {
    const uint32_t r_ = 45, c_ = 60;
    Case c = kernel_case("nn", "matvec");
    c.launch = LaunchConfig::linear(r_, 16);
    c.inputs = [=](CaseData &d) {
      Random r(111);
      d.arrays["W"] = Array::of(Type::F32, r.floats(r_ * c_, -1, 1));
      d.arrays["x"] = Array::of(Type::F32, r.floats(c_, -1, 1));
      d.arrays["y"] = Array::of(Type::F32, std::vector<F>(r_, 0));
      d.scalars["rows"] = r_;
      d.scalars["cols"] = c_;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      row_dots(d.array<F>("W"), d.array<F>("x"), d.array<F>("y"), r_, c_);
    };
    c.checks = {{"y", {4, 0}}};
    out.push_back(c);
  }
  {
    const uint32_t seq = 40, dim = 24;
    Case c = kernel_case("nn", "attention_scores");
    c.launch = LaunchConfig::linear(seq, 16);
    c.inputs = [=](CaseData &d) {
      Random r(121);
      d.arrays["q"] = Array::of(Type::F32, r.floats(dim, -1, 1));
      d.arrays["keys"] = Array::of(Type::F32, r.floats(seq * dim, -1, 1));
      d.arrays["scores"] = Array::of(Type::F32, std::vector<F>(seq, 0));
      d.scalars["seq"] = seq;
      d.scalars["dim"] = dim;
      d.scalars["scale"] = std::bit_cast<uint32_t>(0.25f);
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto q = d.array<F>("q"), k = d.array<F>("keys"), s = d.array<F>("scores");
      for (uint32_t j = 0; j < seq; ++j) {
        F acc = 0;
        for (uint32_t t = 0; t < dim; ++t) acc = acc + q[t] * k[j * dim + t];
        s[j] = acc * 0.25f;
      }
    };
    c.checks = {{"scores", {4, 0}}};
    out.push_back(c);
  }
  {
    const uint32_t r_ = 30, c_ = 50;
    Case c = kernel_case("nn", "weighted_sum_rows");
    c.launch = LaunchConfig::linear(c_, 16);
    c.inputs = [=](CaseData &d) {
      Random r(131);
      d.arrays["M"] = Array::of(Type::F32, r.floats(r_ * c_, -1, 1));
      d.arrays["w"] = Array::of(Type::F32, r.floats(r_, 0, 1));
      d.arrays["out"] = Array::of(Type::F32, std::vector<F>(c_, 0));
      d.scalars["rows"] = r_;
      d.scalars["cols"] = c_;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto M = d.array<F>("M"), w = d.array<F>("w"), o = d.array<F>("out");
      for (uint32_t j = 0; j < c_; ++j) {
        F acc = 0;
        for (uint32_t i = 0; i < r_; ++i) acc = acc + w[i] * M[i * c_ + j];
        o[j] = acc;
      }
    };
    c.checks = {{"out", {4, 0}}};
    out.push_back(c);
  }
}

void structure_cases(std::vector<Case> &out) {
  {
    // Python's floor division and C's remainder (JSON "floor_div" and "mod"), with divisors
    // that divide exactly (6 // -3 = -2) next to those that do not, zero, and INT_MIN / -1.
    const std::vector<int32_t> a = {6, -6, -6, 6, 7,         -7,        -7,        7,
                                    0, -1, 1,  5, INT32_MIN, INT32_MIN, INT32_MAX, -7};
    const std::vector<int32_t> b = {-3, -3, 3, 3, -3, 3, -3, 3, -3, 5, -5, 0, -1, 1, -1, 2};
    const auto n = static_cast<uint32_t>(a.size());
    Case c = kernel_case("structure", "floor_division");
    c.launch = LaunchConfig::linear(n, 8);
    c.inputs = [=](CaseData &d) {
      d.arrays["a"] = Array::of(Type::I32, a);
      d.arrays["b"] = Array::of(Type::I32, b);
      d.arrays["q"] = Array::of(Type::I32, std::vector<int32_t>(n));
      d.arrays["r"] = Array::of(Type::I32, std::vector<int32_t>(n));
      d.scalars["n"] = n;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto q = d.array<int32_t>("q"), r = d.array<int32_t>("r");
      for (uint32_t i = 0; i < n; ++i) {
        const int64_t x = a[i], y = b[i];
        if (y == 0) { // division by zero gives 0 (SPEC 3.4)
          q[i] = r[i] = 0;
          continue;
        }
        int64_t fq = x / y;
        if (fq * y != x && ((x < 0) != (y < 0))) --fq;          // floor, in 64 bits
        q[i] = static_cast<int32_t>(static_cast<uint32_t>(fq)); // INT_MIN / -1 wraps
        r[i] = static_cast<int32_t>(x - (x / y) * y);           // the sign of the dividend
      }
    };
    c.checks = {{"q", {}}, {"r", {}}};
    out.push_back(c);
  }
  {
    const uint32_t w = 37, h = 23;
    Case c = kernel_case("structure", "stencil2d");
    c.launch = LaunchConfig::grid_2d(w, h, 8, 4);
    c.inputs = [=](CaseData &d) {
      Random r(141);
      d.arrays["src"] = Array::of(Type::F32, r.floats(w * h, 0, 10));
      d.arrays["dst"] = Array::of(Type::F32, std::vector<F>(w * h, -1));
      d.scalars["width"] = w;
      d.scalars["height"] = h;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto s = d.array<F>("src"), o = d.array<F>("dst");
      for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
          uint32_t i = y * w + x;
          if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
            o[i] = s[i];
          else
            o[i] = 0.2f * ((((s[i] + s[i - 1]) + s[i + 1]) + s[i - w]) + s[i + w]);
        }
    };
    c.checks = {{"dst", {}}};
    out.push_back(c);
  }
  for (const auto &[name, bx, by] :
       {std::tuple{"row_bias", 16u, 2u}, {"row_bias_ragged", 5u, 3u}}) {
    // src is read by %gid.x: consecutive in a SIMD run only while the run stays in one row of
    // the block, which 16x2 blocks keep at every CPU level and 5x3 blocks do not.
    const uint32_t w = 45, h = 7;
    Case c = kernel_case("structure", "row_bias");
    c.name = name;
    c.launch = LaunchConfig::grid_2d(w, h, bx, by);
    c.inputs = [=](CaseData &d) {
      Random r(143);
      d.arrays["src"] = Array::of(Type::F32, r.floats(w, -4, 4));
      d.arrays["bias"] = Array::of(Type::F32, r.floats(h, -4, 4));
      d.arrays["dst"] = Array::of(Type::F32, std::vector<F>(w * h, -1));
      d.scalars["width"] = w;
      d.scalars["height"] = h;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto s = d.array<F>("src"), b = d.array<F>("bias"), o = d.array<F>("dst");
      for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) o[y * w + x] = s[x] + b[y];
    };
    c.checks = {{"dst", {}}};
    out.push_back(c);
  }
  {
    const uint32_t n = 5000;
    Case c = kernel_case("structure", "histogram");
    c.launch = LaunchConfig::linear(n, 128);
    c.inputs = [=](CaseData &d) {
      Random r(151);
      std::vector<uint8_t> data(n);
      for (auto &x : data) x = static_cast<uint8_t>(r.next());
      d.arrays["data"] = Array::of(Type::U8, data);
      d.arrays["bins"] = Array::of(Type::U32, std::vector<uint32_t>(16, 0));
      d.scalars["n"] = n;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto bins = d.array<uint32_t>("bins");
      for (uint8_t x : d.array<uint8_t>("data")) ++bins[x >> 4];
    };
    c.checks = {{"bins", {}}};
    out.push_back(c);
  }
  {
    const uint32_t n = 1000, block = 256, groups = (n + block - 1) / block;
    Case c = kernel_case("structure", "block_reduce");
    c.launch = LaunchConfig::linear(n, block);
    c.inputs = [=](CaseData &d) {
      Random r(161);
      d.arrays["x"] = Array::of(Type::F32, r.floats(n, -1, 1));
      d.arrays["partial"] = Array::of(Type::F32, std::vector<F>(groups, 0));
      d.scalars["n"] = n;
    };
    c.reference = [=](CaseData &d, std::vector<Check> &) {
      auto x = d.array<F>("x"), p = d.array<F>("partial");
      for (uint32_t g = 0; g < groups; ++g) { // the same tree as the kernel
        std::vector<F> tile(block, 0);
        for (uint32_t l = 0; l < block; ++l)
          if (g * block + l < n) tile[l] = x[g * block + l];
        for (uint32_t stride = block / 2; stride > 0; stride /= 2)
          for (uint32_t l = 0; l < stride; ++l) tile[l] = tile[l] + tile[l + stride];
        p[g] = tile[0];
      }
    };
    c.checks = {{"partial", {}}};
    out.push_back(c);
  }
  {
    Case c = kernel_case("structure", "countdown");
    c.launch = LaunchConfig::linear(50, 32);
    c.inputs = [](CaseData &d) {
      d.arrays["out"] = Array::of(Type::I32, std::vector<int32_t>(50, 0));
      d.scalars["n"] = 50;
    };
    c.reference = [](CaseData &d, std::vector<Check> &) {
      auto o = d.array<int32_t>("out");
      for (int32_t i = 0; i < 50; ++i) o[i] = 30 + (1 + 2 + 4 + 5 + 7) - i;
    };
    c.checks = {{"out", {}}};
    out.push_back(c);
  }
}

/// A circuit case: every class starts with distinct data; `apply` is the expected effect.
Case circuit(const std::string &name, std::vector<uint32_t> compared,
             std::function<void(CaseData &)> apply) {
  Case c;
  c.name = "circuit_" + name;
  c.file = "circuits/" + name + ".circuit";
  c.launch = LaunchConfig::linear(atlas::kClassBytes / 4, 256);
  c.inputs = [](CaseData &d) {
    Random r(171);
    for (uint32_t k = 0; k < atlas::kNumClasses; ++k)
      for (auto &x : d.klass(k)) x = r.uniform(-100, 100);
  };
  c.reference = [apply](CaseData &d, std::vector<Check> &) { apply(d); };
  for (uint32_t k : compared) c.checks.push_back({"c" + std::to_string(k), {}});
  return c;
}

void circuit_cases(std::vector<Case> &out) {
  auto each = [](CaseData &d, uint32_t dst, auto f) {
    auto o = d.klass(dst);
    for (size_t i = 0; i < o.size(); ++i) o[i] = f(i);
  };
  out.push_back(circuit("copy", {1, 2},
                        [&](CaseData &d) { each(d, 2, [&](size_t i) { return d.klass(1)[i]; }); }));
  out.push_back(circuit("swap", {3, 4}, [](CaseData &d) {
    auto a = d.klass(3), b = d.klass(4);
    for (size_t i = 0; i < a.size(); ++i) std::swap(a[i], b[i]);
  }));
  out.push_back(circuit("merge", {5, 6, 7}, [&](CaseData &d) {
    each(d, 7, [&](size_t i) { return d.klass(5)[i] + d.klass(6)[i]; });
  }));
  out.push_back(circuit("split", {8, 9, 10}, [&](CaseData &d) {
    each(d, 10, [&](size_t i) { return d.klass(8)[i] - d.klass(9)[i]; });
  }));
  out.push_back(circuit("merge_range", {10, 11, 12, 13, 14}, [&](CaseData &d) {
    for (uint32_t k = 11; k <= 13; ++k)
      each(d, k, [&](size_t i) { return d.klass(k)[i] + d.klass(k)[i]; });
  }));
  out.push_back(circuit("markers", {14, 15, 21}, [&](CaseData &d) {
    each(d, 15, [&](size_t i) { return d.klass(14)[i]; });
  }));
  out.push_back(circuit("transforms", {0, 1, 2, 24, 25, 26, 27, 28}, [&](CaseData &d) {
    each(d, 25, [&](size_t i) { return d.klass(24)[i]; });
    each(d, 28, [&](size_t i) { return d.klass(26)[i] + d.klass(27)[i]; });
  }));
  out.push_back(circuit("parallel", {30, 31, 32, 33, 34, 35, 36}, [&](CaseData &d) {
    each(d, 31, [&](size_t i) { return d.klass(30)[i]; });
    each(d, 34, [&](size_t i) { return d.klass(32)[i] - d.klass(33)[i]; });
    auto a = d.klass(35), b = d.klass(36);
    for (size_t i = 0; i < a.size(); ++i) std::swap(a[i], b[i]);
  }));
  out.push_back(circuit("paged", {40, 41}, [&](CaseData &d) {
    for (size_t i = 0; i < 64; ++i) d.klass(41)[5 * 64 + i] = d.klass(40)[2 * 64 + i];
  }));
  // merge reads c01 between the two copies into it: c03 = c02 + c00, then c01 = c04.
  out.push_back(circuit("merge_chain", {0, 1, 2, 3, 4}, [&](CaseData &d) {
    each(d, 3, [&](size_t i) { return d.klass(2)[i] + d.klass(0)[i]; });
    each(d, 1, [&](size_t i) { return d.klass(4)[i]; });
  }));
  out.push_back(circuit("h_squared", {5, 6, 21},
                        [&](CaseData &d) { each(d, 6, [&](size_t i) { return d.klass(5)[i]; }); }));
  out.push_back(circuit("sigil_post", {8, 16, 17, 18, 19}, [&](CaseData &d) {
    each(d, 18, [&](size_t i) { return d.klass(17)[i] + d.klass(16)[i]; });
    each(d, 19, [&](size_t i) { return d.klass(18)[i]; });
  }));
}

} // namespace

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  vector_cases(cases);
  matrix_cases(cases);
  quantum_cases(cases);
  nn_cases(cases);
  structure_cases(cases);
  circuit_cases(cases);
  semantics_cases(cases);
  library_cases(cases);
  fast_path_cases(cases);
  return cases;
}

const driver::CompiledInput &compiled(const std::string &file, unsigned opt_level) {
  static std::map<std::pair<std::string, unsigned>, driver::CompiledInput> cache;
  auto it = cache.find({file, opt_level});
  if (it != cache.end()) return it->second;
  std::string path = std::string(HOLOGRAM_CONFORMANCE_DIR) + "/" + file;
  auto kind = driver::kind_from_extension(path);
  DiagnosticEngine diags;
  diags.set_warnings_as_errors(true);
  driver::FrontendOptions fo;
  fo.opt_level = opt_level;
  auto in = kind ? driver::compile_input(path, *kind, fo, diags) : std::nullopt;
  if (!in) throw std::runtime_error("cannot compile " + path + ":\n" + diags.to_string());
  return cache.emplace(std::pair{file, opt_level}, std::move(*in)).first->second;
}

const isa::Kernel &case_kernel(const Case &c, unsigned opt_level) {
  const auto &in = compiled(c.file, opt_level);
  const isa::Kernel *kernel =
      c.kernel.empty() ? &in.module.kernels.at(0) : in.module.find_kernel(c.kernel);
  if (!kernel) throw std::runtime_error("no kernel " + c.kernel + " in " + c.file);
  return *kernel;
}

Status InterpRunner::run(const isa::Kernel &kernel, const LaunchConfig &launch, CaseData &data) {
  std::vector<interp::ArgValue> args;
  for (const auto &p : kernel.params) {
    if (p.kind == isa::ParamKind::Scalar) {
      auto it = data.scalars.find(p.name);
      if (it == data.scalars.end())
        return {ErrorCode::InvalidArgument, "the case gives no scalar " + p.name};
      args.push_back(interp::ArgValue::scalar(it->second));
    } else {
      auto it = data.arrays.find(p.name);
      if (it == data.arrays.end())
        return {ErrorCode::InvalidArgument, "the case gives no array " + p.name};
      args.push_back(p.kind == isa::ParamKind::Pool ? interp::ArgValue::pool(it->second.bytes)
                                                    : interp::ArgValue::buffer(it->second.bytes));
    }
  }
  interp::AtlasState atlas;
  atlas.boundary = data.boundary;
  auto st = interp::run_kernel(kernel, launch, args, atlas);
  data.boundary = std::move(atlas.boundary);
  return st;
}

} // namespace hologram::conformance
