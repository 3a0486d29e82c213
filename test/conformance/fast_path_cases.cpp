// Cases that reach every schedule of every backend's whole-launch operations
// (semantics/fast_paths.hasm), in f32 and f64: gemm and batched_gemm with each transA/transB
// pair, alpha and beta other than 1 and 0, leading dimensions wider than the rows (the columns
// past them must stay as they were); gemv both ways; the row ops; the element-wise ops and the
// float sums; attention; conv2d. The references are plain loops in long double, written from
// the SPEC, not from any backend. Each case names the schedules it must take (cpu_paths,
// device_paths), so a fast path that silently falls back to the reference fails.
#include "harness.h"
#include "hologram/isa/library_accuracy.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace hologram::conformance {

namespace {

using LD = long double;
namespace accuracy = isa::accuracy;

constexpr const char *kFile = "semantics/fast_paths.hasm";

template <typename T> constexpr Type type_of() {
  return std::is_same_v<T, float> ? Type::F32 : Type::F64;
}
template <typename T> std::string suffix() {
  return std::is_same_v<T, float> ? "f32" : "f64";
}
template <typename T> constexpr double eps() {
  return std::numeric_limits<T>::epsilon();
}
template <typename T> uint64_t bits_of(T v) {
  if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<uint32_t>(v);
  else
    return std::bit_cast<uint64_t>(v);
}
template <typename T> Array values(Random &r, size_t n, float lo, float hi) {
  auto f = r.floats(n, lo, hi);
  return Array::of(type_of<T>(), std::vector<T>(f.begin(), f.end()));
}

Case fast_case(const std::string &name, const std::string &kernel) {
  Case c;
  c.name = name;
  c.file = kFile;
  c.kernel = kernel;
  return c;
}

/// A device backend writes the result of a reduction that goes straight to a store from the
/// device (runtime/core/library_plan.h, results_stored_on_device): the pointwise and chain
/// kernels' reduce_all results, and f64's dot (f32's dot sums in f64 and rounds on the host).
/// Their stores at byte 0 take the library's launch through a view, the others a copy on the
/// device from its scratch.
template <typename T> void add_results_on_device(Case &c) {
  c.device_paths.insert("reduce_all:result-on-device");
  if (std::is_same_v<T, double>) c.device_paths.insert("dot:result-on-device");
}

/// C := alpha * op(A) * op(B) + beta * C over `batch` matrices, columns past N untouched.
/// Returns the largest sum of |terms| of an element (for the tolerance).
template <typename T>
LD gemm_ref(std::span<T> C, std::span<const T> A, std::span<const T> B, uint32_t batch, uint32_t M,
            uint32_t N, uint32_t K, T alpha, T beta, uint32_t lda, uint32_t ldb, uint32_t ldc,
            uint32_t sa, uint32_t sb, uint32_t sc, bool ta, bool tb) {
  LD worst = 0;
  for (uint32_t b = 0; b < batch; ++b)
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) {
        LD acc = 0, mag = 0;
        for (uint32_t k = 0; k < K; ++k) {
          LD a = ta ? A[b * sa + k * lda + i] : A[b * sa + i * lda + k];
          LD v = tb ? B[b * sb + j * ldb + k] : B[b * sb + k * ldb + j];
          acc += a * v;
          mag += std::fabs(a * v);
        }
        T &c = C[b * sc + i * ldc + j];
        const LD cv = c;
        c = static_cast<T>(LD{alpha} * acc + LD{beta} * cv);
        worst = std::max(worst, std::fabs(LD{alpha}) * mag + std::fabs(LD{beta} * cv));
      }
  return worst;
}

struct GemmShape {
  uint32_t batch, m, n, k, lda, ldb, ldc, sa, sb, sc;
  float alpha, beta;
};

const char *const kGemmOuts[] = {"c_nn", "c_nt", "c_tn", "c_tt"};

template <typename T> Case gemm_case(const std::string &name, GemmShape s, bool batched) {
  Case c = fast_case(name + "_" + suffix<T>(), (batched ? "batched_gemm_" : "gemm_") + suffix<T>());
  const uint32_t rows = std::max(s.m, s.k), brows = std::max(s.k, s.n);
  const uint32_t a_size = batched ? s.batch * s.sa : rows * s.lda;
  const uint32_t b_size = batched ? s.batch * s.sb : brows * s.ldb;
  const uint32_t c_size = batched ? s.batch * s.sc : s.m * s.ldc;
  c.inputs = [=](CaseData &d) {
    Random r(1234 + s.m);
    d.arrays["a"] = values<T>(r, a_size, -1, 1);
    d.arrays["b"] = values<T>(r, b_size, -1, 1);
    for (const char *o : kGemmOuts) d.arrays[o] = values<T>(r, c_size, -2, 2);
    const std::pair<const char *, uint32_t> sizes[] = {
        {"batch", s.batch}, {"m", s.m},     {"n", s.n},   {"k", s.k},   {"lda", s.lda},
        {"ldb", s.ldb},     {"ldc", s.ldc}, {"sa", s.sa}, {"sb", s.sb}, {"sc", s.sc}};
    for (auto [key, v] : sizes) d.scalars[key] = v;
    if (!batched)
      for (const char *key : {"batch", "sa", "sb", "sc"}) d.scalars.erase(key);
    d.scalars["alpha"] = bits_of<T>(static_cast<T>(s.alpha));
    d.scalars["beta"] = bits_of<T>(static_cast<T>(s.beta));
  };
  c.reference = [=](CaseData &d, std::vector<Check> &checks) {
    auto A = d.array<T>("a"), B = d.array<T>("b");
    for (int t = 0; t < 4; ++t) {
      LD worst = gemm_ref<T>(d.array<T>(kGemmOuts[t]), A, B, batched ? s.batch : 1, s.m, s.n, s.k,
                             static_cast<T>(s.alpha), static_cast<T>(s.beta), s.lda, s.ldb, s.ldc,
                             s.sa, s.sb, s.sc, t & 2, t & 1);
      checks[t].tol.abs = static_cast<double>(accuracy::gemm_units(s.k) * (eps<T>() / 2) * worst);
    }
  };
  for (const char *o : kGemmOuts) c.checks.push_back({o, {}});
  const std::string op = batched ? "batched_gemm" : "gemm";
  c.cpu_paths = {op + ":packed"};
  c.device_paths = {op + ":tiled"};
  return c;
}

template <typename T> Case gemv_case() {
  // m leaves one row past the CPU kernel's blocks of four rows; n leaves a tail after its
  // two-vector steps at every level (of two vectors, one partial, at v3 and v4).
  const uint32_t m = 301, n = 90, lda = 100;
  const T alpha = 2, beta = -0.75;
  Case c = fast_case("fast_gemv_" + suffix<T>(), "gemv_" + suffix<T>());
  c.inputs = [=](CaseData &d) {
    Random r(5);
    d.arrays["a"] = values<T>(r, m * lda, -1, 1);
    d.arrays["x"] = values<T>(r, n, -1, 1);
    d.arrays["xt"] = values<T>(r, m, -1, 1);
    d.arrays["y"] = values<T>(r, m, -1, 1);
    d.arrays["yt"] = values<T>(r, n, -1, 1);
    d.arrays["yd"] = values<T>(r, m, -1, 1);
    d.scalars["m"] = m;
    d.scalars["n"] = n;
    d.scalars["lda"] = lda;
    d.scalars["alpha"] = bits_of(alpha);
    d.scalars["beta"] = bits_of(beta);
  };
  c.reference = [=](CaseData &d, std::vector<Check> &checks) {
    auto A = d.array<T>("a");
    // y = alpha A x + beta y (m rows); yt = alpha Aᵀ xt + beta yt (n rows); yd as y with A's
    // rows back to back (leading dimension n).
    auto run = [&](std::span<T> y, std::span<T> x, bool trans, uint32_t ld) {
      LD worst = 0;
      for (uint32_t i = 0; i < (trans ? n : m); ++i) {
        LD acc = 0, mag = 0;
        for (uint32_t j = 0; j < (trans ? m : n); ++j) {
          LD t = LD{trans ? A[j * ld + i] : A[i * ld + j]} * x[j];
          acc += t;
          mag += std::fabs(t);
        }
        worst = std::max(worst, std::fabs(LD{alpha}) * mag + std::fabs(LD{beta} * y[i]));
        y[i] = static_cast<T>(LD{alpha} * acc + LD{beta} * y[i]);
      }
      return static_cast<double>((m + 2) * eps<T>() * worst);
    };
    checks[0].tol.abs = run(d.array<T>("y"), d.array<T>("x"), false, lda);
    checks[1].tol.abs = run(d.array<T>("yt"), d.array<T>("xt"), true, lda);
    checks[2].tol.abs = run(d.array<T>("yd"), d.array<T>("x"), false, n);
  };
  c.checks = {{"y", {}}, {"yt", {}}, {"yd", {}}};
  c.cpu_paths = {"gemv:dot", "gemv:gemm"};
  c.device_paths = {"gemv:per-item"};
  return c;
}

template <typename T> Case rows_case() {
  const uint32_t rows = 64, cols = 1001; // a partial last vector at every x86 level
  const T epsilon = static_cast<T>(1e-5);
  Case c = fast_case("fast_rows_" + suffix<T>(), "rows_" + suffix<T>());
  c.inputs = [=](CaseData &d) {
    Random r(6);
    d.arrays["x"] = values<T>(r, rows * cols, -4, 4);
    d.arrays["gamma"] = values<T>(r, cols, 0.5f, 1.5f);
    d.arrays["beta"] = values<T>(r, cols, -0.5f, 0.5f);
    for (const char *o : {"sm", "lsm", "rms", "rms0", "ln", "ln0", "lng", "lnb"})
      d.arrays[o] = Array::of(type_of<T>(), std::vector<T>(rows * cols));
    for (const char *o : {"ism", "ilsm", "irms", "iln"}) d.arrays[o] = d.arrays["x"];
    d.scalars["rows"] = rows;
    d.scalars["cols"] = cols;
    d.scalars["eps"] = bits_of(epsilon);
  };
  c.reference = [=](CaseData &d, std::vector<Check> &checks) {
    auto x = d.array<T>("x"), g = d.array<T>("gamma"), b = d.array<T>("beta");
    // The largest layernorm term sums (library_accuracy.h): with gamma and beta, with neither,
    // with gamma only and with beta only.
    LD ln_terms = 0, ln0_terms = 0, lng_terms = 0, lnb_terms = 0;
    for (uint32_t r = 0; r < rows; ++r) {
      auto row = x.subspan(r * cols, cols);
      LD mx = -INFINITY, sum = 0, mean = 0, sq = 0, var = 0;
      for (T v : row) mx = std::max<LD>(mx, v);
      for (T v : row) sum += std::exp(LD{v} - mx);
      LD mean_abs = 0;
      for (T v : row) mean += v, sq += LD{v} * v, mean_abs += std::fabs(LD{v});
      mean /= cols;
      mean_abs /= cols;
      for (T v : row) var += (v - mean) * (v - mean);
      const LD rms = 1 / std::sqrt(sq / cols + LD{epsilon});
      const LD inv = 1 / std::sqrt(var / cols + LD{epsilon});
      for (uint32_t k = 0; k < cols; ++k) {
        const LD v = row[k];
        const uint32_t i = r * cols + k;
        d.array<T>("sm")[i] = static_cast<T>(std::exp(v - mx) / sum);
        d.array<T>("lsm")[i] = static_cast<T>(v - mx - std::log(sum));
        d.array<T>("rms")[i] = static_cast<T>(v * rms * g[k]);
        d.array<T>("rms0")[i] = static_cast<T>(v * rms);
        d.array<T>("ln")[i] = static_cast<T>((v - mean) * inv * g[k] + b[k]);
        d.array<T>("ln0")[i] = static_cast<T>((v - mean) * inv);
        d.array<T>("lng")[i] = static_cast<T>((v - mean) * inv * g[k]);
        d.array<T>("lnb")[i] = static_cast<T>((v - mean) * inv + b[k]);
        const LD spread = inv * (std::fabs(v - mean) + mean_abs);
        ln_terms = std::max(ln_terms, std::fabs(LD{g[k]}) * spread + std::fabs(LD{b[k]}));
        ln0_terms = std::max(ln0_terms, spread);
        lng_terms = std::max(lng_terms, std::fabs(LD{g[k]}) * spread);
        lnb_terms = std::max(lnb_terms, spread + std::fabs(LD{b[k]}));
      }
    }
    // In place: the same values.
    for (auto [in_place, out] :
         {std::pair{"ism", "sm"}, {"ilsm", "lsm"}, {"irms", "rms"}, {"iln", "ln"}})
      std::ranges::copy(d.array<T>(out), d.array<T>(in_place).begin());
    const LD unit = accuracy::kLayerNormUnits * accuracy::kF32Unit;
    if constexpr (std::is_same_v<T, float>)
      for (auto &check : checks) {
        if (check.name == "ln" || check.name == "iln")
          check.tol.abs = static_cast<double>(unit * ln_terms);
        if (check.name == "ln0") check.tol.abs = static_cast<double>(unit * ln0_terms);
        if (check.name == "lng") check.tol.abs = static_cast<double>(unit * lng_terms);
        if (check.name == "lnb") check.tol.abs = static_cast<double>(unit * lnb_terms);
      }
  };
  // f32 rows: the bounds of docs/isa.md (library_accuracy.h). f64 rows sum in plain f64 (the
  // reference over ranges of rows): a few ulp of the row's scale.
  const double row_tol = 64 * eps<T>();
  if constexpr (std::is_same_v<T, float>)
    c.checks = {{"sm", {accuracy::kSoftmaxUlps, 0}},
                {"lsm", {accuracy::kLogSoftmaxUlps, accuracy::kLogSoftmaxAbs}},
                {"rms", {accuracy::kRmsNormUlps, 0}},
                {"rms0", {accuracy::kRmsNormUlps, 0}},
                {"ln", {0, 0}},
                {"ln0", {0, 0}},
                {"lng", {0, 0}},
                {"lnb", {0, 0}},
                {"ism", {accuracy::kSoftmaxUlps, 0}},
                {"ilsm", {accuracy::kLogSoftmaxUlps, accuracy::kLogSoftmaxAbs}},
                {"irms", {accuracy::kRmsNormUlps, 0}},
                {"iln", {0, 0}}};
  else
    c.checks = {
        {"sm", {16, row_tol / 64}},   {"lsm", {16, 16 * row_tol}}, {"rms", {16, 4 * row_tol}},
        {"rms0", {16, 4 * row_tol}},  {"ln", {16, 4 * row_tol}},   {"ln0", {16, 4 * row_tol}},
        {"lng", {16, 4 * row_tol}},   {"lnb", {16, 4 * row_tol}},  {"ism", {16, row_tol / 64}},
        {"ilsm", {16, 16 * row_tol}}, {"irms", {16, 4 * row_tol}}, {"iln", {16, 4 * row_tol}}};
  // f32 rows have vectorised kernels; f64 rows run the reference over ranges of rows.
  const std::string how = std::is_same_v<T, float> ? ":rows" : ":split";
  for (const char *op : {"softmax", "log_softmax", "rmsnorm", "layernorm"})
    c.cpu_paths.insert(op + how);
  c.device_paths = {"softmax:row-block", "log_softmax:row-block", "rmsnorm:row-block",
                    "layernorm:row-block"};
  return c;
}

template <typename T> Case pointwise_case() {
  const uint32_t n = 40000, rows = 300, dim = 64;
  const T alpha = static_cast<T>(-1.5);
  Case c = fast_case("fast_pointwise_" + suffix<T>(), "pointwise_" + suffix<T>());
  c.inputs = [=](CaseData &d) {
    Random r(7);
    d.arrays["x"] = values<T>(r, n, -6, 6);
    d.arrays["p"] = values<T>(r, n, 0.1f, 4);
    d.arrays["ax"] = values<T>(r, n, -6, 6);
    d.arrays["rx"] = values<T>(r, rows * dim, -2, 2);
    d.arrays["cs"] = values<T>(r, rows * dim / 2, -1, 1);
    d.arrays["sn"] = values<T>(r, rows * dim / 2, -1, 1);
    for (const char *o : {"ex", "sg", "pw", "at", "si", "ge", "gt"})
      d.arrays[o] = Array::of(type_of<T>(), std::vector<T>(n));
    d.arrays["ry"] = Array::of(type_of<T>(), std::vector<T>(rows * dim));
    for (const char *o : {"iex", "isi", "ige", "igt", "iax"}) d.arrays[o] = d.arrays["x"];
    d.arrays["ipw"] = d.arrays["p"];
    d.arrays["iry"] = d.arrays["rx"];
    d.arrays["sums"] = Array::of(type_of<T>(), std::vector<T>(3));
    d.scalars["n"] = n;
    d.scalars["n_again"] = n;
    d.scalars["rows"] = rows;
    d.scalars["dim"] = dim;
    d.scalars["alpha"] = bits_of(alpha);
  };
  c.reference = [=](CaseData &d, std::vector<Check> &checks) {
    auto x = d.array<T>("x"), p = d.array<T>("p"), ax = d.array<T>("ax");
    LD sum = 0, mag = 0, mx = -INFINITY, dot = 0, dmag = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const LD v = x[i], q = p[i];
      const LD sig = 1 / (1 + std::exp(-v));
      d.array<T>("ex")[i] = static_cast<T>(std::exp(v));
      d.array<T>("sg")[i] = static_cast<T>(sig);
      d.array<T>("pw")[i] = static_cast<T>(std::pow(q, v));
      d.array<T>("at")[i] = static_cast<T>(std::atan2(v, q));
      d.array<T>("si")[i] = static_cast<T>(v * sig);
      d.array<T>("ge")[i] = static_cast<T>(v / 2 * std::erfc(-v / std::sqrt(LD{2})));
      const LD u = std::sqrt(2 / std::acos(LD{-1})) * (v + LD{0.044715} * v * v * v);
      d.array<T>("gt")[i] = static_cast<T>(v / 2 * (1 + std::tanh(u)));
      ax[i] = static_cast<T>(LD{alpha} * v + ax[i]);
      sum += v;
      mag += std::fabs(v);
      mx = std::max(mx, v);
      dot += v * q;
      dmag += std::fabs(v * q);
    }
    auto rx = d.array<T>("rx"), cs = d.array<T>("cs"), sn = d.array<T>("sn");
    auto ry = d.array<T>("ry");
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t i = 0; i < dim / 2; ++i) {
        const LD x0 = rx[r * dim + 2 * i], x1 = rx[r * dim + 2 * i + 1];
        const LD cv = cs[r * dim / 2 + i], sv = sn[r * dim / 2 + i];
        ry[r * dim + 2 * i] = static_cast<T>(x0 * cv - x1 * sv);
        ry[r * dim + 2 * i + 1] = static_cast<T>(x0 * sv + x1 * cv);
      }
    // In place: the same values (axpy with y = x: (1 + alpha)·x).
    for (auto [in_place, out] : {std::pair{"iex", "ex"},
                                 {"ipw", "pw"},
                                 {"isi", "si"},
                                 {"ige", "ge"},
                                 {"igt", "gt"},
                                 {"iry", "ry"}})
      std::ranges::copy(d.array<T>(out), d.array<T>(in_place).begin());
    for (uint32_t i = 0; i < n; ++i)
      d.array<T>("iax")[i] = static_cast<T>(LD{alpha} * x[i] + LD{x[i]});
    auto sums = d.array<T>("sums");
    sums[0] = static_cast<T>(sum);
    sums[1] = static_cast<T>(mx);
    sums[2] = static_cast<T>(dot);
    for (auto &check : checks)
      if (check.name == "sums")
        check.tol.abs = static_cast<double>(n * eps<T>() * std::max(mag, dmag));
  };
  // Transcendentals within the SPEC's bounds (4 ulp); the activations and rope within a few
  // ulp of their inputs' scale, where 1 + erf and the rotations cancel.
  const double e = eps<T>();
  c.checks = {{"ex", {4, 0}},      {"sg", {4, 0}},      {"pw", {4, 0}},      {"at", {4, 0}},
              {"si", {8, 8 * e}},  {"ge", {8, 8 * e}},  {"gt", {8, 8 * e}},  {"ax", {1, 16 * e}},
              {"ry", {2, 8 * e}},  {"sums", {}},        {"iex", {4, 0}},     {"ipw", {4, 0}},
              {"isi", {8, 8 * e}}, {"ige", {8, 8 * e}}, {"igt", {8, 8 * e}}, {"iax", {1, 16 * e}},
              {"iry", {2, 8 * e}}};
  c.cpu_paths = {"map:vector",       "map2:vector", "silu:vector", "gelu:vector",
                 "gelu_tanh:vector", "axpy:vector", "rope:vector", "reduce_all:vector",
                 "reduce_all:split", "dot:vector"};
  c.device_paths = {"map:per-item",  "map2:per-item",        "silu:per-item",
                    "gelu:per-item", "gelu_tanh:per-item",   "axpy:per-item",
                    "rope:per-item", "reduce_all:two-stage", "dot:two-stage"};
  add_results_on_device<T>(c);
  return c;
}

template <typename T> Case chain_case() {
  const uint32_t n = 40000;
  const T alpha = static_cast<T>(2.5);
  Case c = fast_case("fast_chain_" + suffix<T>(), "chain_" + suffix<T>());
  c.inputs = [=](CaseData &d) {
    Random r(9);
    d.arrays["h"] = values<T>(r, n, -6, 6);
    d.arrays["g"] = values<T>(r, n, -2, 2);
    d.arrays["x"] = values<T>(r, n, -3, 3);
    d.arrays["u"] = values<T>(r, n, -2, 2);
    for (const char *o : {"t", "v", "w"}) d.arrays[o] = Array::of(type_of<T>(), std::vector<T>(n));
    d.arrays["sums"] = Array::of(type_of<T>(), std::vector<T>(3));
    d.scalars["n"] = n;
    d.scalars["alpha"] = bits_of(alpha);
  };
  c.reference = [=](CaseData &d, std::vector<Check> &checks) {
    auto h = d.array<T>("h"), g = d.array<T>("g"), x = d.array<T>("x"), u = d.array<T>("u");
    LD sum = 0, mag = 0, dot = 0, dmag = 0, mx = -INFINITY;
    for (uint32_t i = 0; i < n; ++i) {
      const LD hv = h[i], e = std::exp(LD{x[i]});
      h[i] = static_cast<T>(hv / (1 + std::exp(-hv)) * LD{g[i]});
      d.array<T>("t")[i] = static_cast<T>(e);
      const LD uv = LD{u[i]} - e + LD{alpha} * e;
      u[i] = static_cast<T>(uv);
      d.array<T>("v")[i] = -x[i];
      d.array<T>("w")[i] = std::fabs(x[i]);
      sum += uv;
      mag += std::fabs(uv);
      dot += -LD{x[i]} * LD{g[i]};
      dmag += std::fabs(LD{x[i]} * LD{g[i]});
      mx = std::max(mx, std::fabs(LD{x[i]}));
    }
    auto sums = d.array<T>("sums");
    sums[0] = static_cast<T>(sum);
    sums[1] = static_cast<T>(dot);
    sums[2] = static_cast<T>(mx);
    for (auto &check : checks)
      if (check.name == "sums")
        check.tol.abs = static_cast<double>(n * eps<T>() * std::max(mag, dmag));
  };
  // silu and exp within the SPEC's bounds; u = (u - e^x) + alpha·e^x, |e^x| < 21, within the
  // bound of e^x scaled by 1 + |alpha| and a rounding of each operation.
  const double e = eps<T>();
  c.checks = {{"h", {8, 8 * e}}, {"t", {4, 0}}, {"u", {4, 256 * e}},
              {"v", {0, 0}},     {"w", {0, 0}}, {"sums", {}}};
  // In f32, silu and its map2.mul, and exp and its map2.sub, run in one pass each.
  if (std::is_same_v<T, float>)
    c.cpu_paths = {"silu:fused-pair", "map2:fused-pair",  "map:fused-pair", "map:fused",
                   "axpy:fused",      "reduce_all:fused", "dot:fused"};
  else
    c.cpu_paths = {"silu:fused", "map2:fused",       "map:fused",
                   "axpy:fused", "reduce_all:fused", "dot:fused"};
  c.device_paths = {"silu:per-item", "map2:per-item",        "map:per-item",
                    "axpy:per-item", "reduce_all:two-stage", "dot:two-stage"};
  add_results_on_device<T>(c);
  return c;
}

template <typename T> Case attention_case() {
  // `out`: [heads, seq, d] with a mask. `outc`: the same buffers read as rows of all heads side
  // by side ([seq, heads·d]), K and V by kv_heads = heads / 2 heads (grouped-query attention,
  // rows wider than those heads, as in a KV cache), causal. dd leaves a partial vector at every
  // x86 level; sk is two parts of the positions of `outd` (decoding) on two threads.
  const uint32_t heads = 4, kv_heads = 2, sq = 20, sk = 70, dd = 18;
  const T scale = static_cast<T>(0.25);
  Case c = fast_case("fast_attention_" + suffix<T>(), "attention_" + suffix<T>());
  c.inputs = [=](CaseData &d) {
    Random r(8);
    d.arrays["q"] = values<T>(r, heads * sq * dd, -1, 1);
    d.arrays["k"] = values<T>(r, heads * sk * dd, -1, 1);
    d.arrays["v"] = values<T>(r, heads * sk * dd, -1, 1);
    d.arrays["mask"] = values<T>(r, sq * sk, -2, 0);
    d.arrays["out"] = Array::of(type_of<T>(), std::vector<T>(heads * sq * dd));
    d.arrays["outc"] = Array::of(type_of<T>(), std::vector<T>(heads * sq * dd));
    d.arrays["outd"] = Array::of(type_of<T>(), std::vector<T>(heads * dd));
    const std::pair<const char *, uint32_t> sizes[] = {
        {"heads", heads}, {"sq", sq}, {"sk", sk}, {"d", dd}, {"kvh", kv_heads}};
    for (auto [key, v] : sizes) d.scalars[key] = v;
    d.scalars["scale"] = bits_of(scale);
  };
  c.reference = [=](CaseData &d, std::vector<Check> &checks) {
    auto q = d.array<T>("q"), k = d.array<T>("k"), v = d.array<T>("v");
    auto mask = d.array<T>("mask");
    for (int causal = 0; causal < 2; ++causal) {
      auto o = d.array<T>(causal ? "outc" : "out");
      // Element (h, i, t) of Q and out, and (g, j, t) of K and V.
      auto qi = [&](uint32_t h, uint32_t i, uint32_t t) {
        return causal ? i * heads * dd + h * dd + t : (h * sq + i) * dd + t;
      };
      auto ki = [&](uint32_t g, uint32_t j, uint32_t t) {
        return causal ? j * heads * dd + g * dd + t : (g * sk + j) * dd + t;
      };
      const uint32_t group = causal ? heads / kv_heads : 1;
      for (uint32_t h = 0; h < heads; ++h)
        for (uint32_t i = 0; i < sq; ++i) {
          const uint32_t g = h / group;
          std::vector<LD> s(sk);
          LD mx = -INFINITY;
          for (uint32_t j = 0; j < sk; ++j) {
            LD acc = 0;
            for (uint32_t t = 0; t < dd; ++t) acc += LD{q[qi(h, i, t)]} * k[ki(g, j, t)];
            s[j] = acc * LD{scale} + (causal ? LD{0} : LD{mask[i * sk + j]});
            if (causal && j > i + (sk - sq)) s[j] = -INFINITY;
            mx = std::max(mx, s[j]);
          }
          LD sum = 0;
          for (auto &e : s) sum += (e = std::exp(e - mx));
          for (uint32_t t = 0; t < dd; ++t) {
            LD acc = 0;
            for (uint32_t j = 0; j < sk; ++j) acc += s[j] * v[ki(g, j, t)];
            o[qi(h, i, t)] = static_cast<T>(acc / sum);
          }
        }
    }
    // `outd`: query row 0 of the token-major layout alone (seq_q = 1), every key visible.
    auto od = d.array<T>("outd");
    for (uint32_t h = 0; h < heads; ++h) {
      const uint32_t g = h / (heads / kv_heads);
      std::vector<LD> s(sk);
      LD mx = -INFINITY, sum = 0;
      for (uint32_t j = 0; j < sk; ++j) {
        LD acc = 0;
        for (uint32_t t = 0; t < dd; ++t) acc += LD{q[h * dd + t]} * k[j * heads * dd + g * dd + t];
        mx = std::max(mx, s[j] = acc * LD{scale});
      }
      for (auto &e : s) sum += (e = std::exp(e - mx));
      for (uint32_t t = 0; t < dd; ++t) {
        LD acc = 0;
        for (uint32_t j = 0; j < sk; ++j) acc += s[j] * v[j * heads * dd + g * dd + t];
        od[h * dd + t] = static_cast<T>(acc / sum);
      }
    }
    // Scores and the weighted sums are T GEMMs (or dots and axpys) on the compiled backends.
    for (auto &check : checks) check.tol.abs = 64 * sk * eps<T>();
  };
  c.checks = {{"out", {}}, {"outc", {}}, {"outd", {}}};
  // f32 decoding (one query row, no mask) has its own schedule on the CPU.
  c.cpu_paths = std::is_same_v<T, float>
                    ? std::set<std::string>{"attention:gemm", "attention:decode"}
                    : std::set<std::string>{"attention:gemm"};
  c.device_paths = {"attention:per-item"};
  return c;
}

template <typename T> Case conv2d_case() {
  const uint32_t N = 2, C = 3, H = 9, W = 11, K = 4, KS = 3, stride = 2, pad = 1;
  const uint32_t OH = (H + 2 * pad - KS) / stride + 1, OW = (W + 2 * pad - KS) / stride + 1;
  Case c = fast_case("fast_conv2d_" + suffix<T>(), "conv2d_" + suffix<T>());
  c.inputs = [=](CaseData &d) {
    Random r(9);
    d.arrays["in"] = values<T>(r, N * C * H * W, -1, 1);
    d.arrays["w"] = values<T>(r, K * C * KS * KS, -1, 1);
    d.arrays["bias"] = values<T>(r, K, -1, 1);
    d.arrays["out"] = Array::of(type_of<T>(), std::vector<T>(N * K * OH * OW));
    d.arrays["out0"] = Array::of(type_of<T>(), std::vector<T>(N * K * OH * OW));
    const std::pair<const char *, uint32_t> sizes[] = {
        {"N", N},   {"C", C},   {"H", H},           {"W", W},    {"K", K},
        {"KH", KS}, {"KW", KS}, {"stride", stride}, {"pad", pad}};
    for (auto [key, v] : sizes) d.scalars[key] = v;
  };
  c.reference = [=](CaseData &d, std::vector<Check> &checks) {
    auto in = d.array<T>("in"), w = d.array<T>("w"), bias = d.array<T>("bias");
    LD worst = 0;
    for (int with_bias = 0; with_bias < 2; ++with_bias) {
      auto o = d.array<T>(with_bias ? "out" : "out0");
      for (uint32_t n = 0; n < N; ++n)
        for (uint32_t k = 0; k < K; ++k)
          for (uint32_t oy = 0; oy < OH; ++oy)
            for (uint32_t ox = 0; ox < OW; ++ox) {
              LD acc = with_bias ? LD{bias[k]} : 0, mag = std::fabs(acc);
              for (uint32_t ch = 0; ch < C; ++ch)
                for (uint32_t ky = 0; ky < KS; ++ky)
                  for (uint32_t kx = 0; kx < KS; ++kx) {
                    const int iy = static_cast<int>(oy * stride + ky) - static_cast<int>(pad);
                    const int ix = static_cast<int>(ox * stride + kx) - static_cast<int>(pad);
                    if (iy < 0 || ix < 0 || iy >= static_cast<int>(H) || ix >= static_cast<int>(W))
                      continue;
                    const LD t = LD{in[((n * C + ch) * H + iy) * W + ix]} *
                                 w[((k * C + ch) * KS + ky) * KS + kx];
                    acc += t;
                    mag += std::fabs(t);
                  }
              o[((n * K + k) * OH + oy) * OW + ox] = static_cast<T>(acc);
              worst = std::max(worst, mag);
            }
    }
    checks[0].tol.abs = checks[1].tol.abs = static_cast<double>(2 * C * KS * KS * eps<T>() * worst);
  };
  c.checks = {{"out", {}}, {"out0", {}}};
  c.cpu_paths = {"conv2d:im2col"};
  c.device_paths = {"conv2d:per-item"};
  return c;
}

template <typename T> void typed_cases(std::vector<Case> &out) {
  // Non-square, every trans pair, alpha/beta other than 1/0, lda/ldb/ldc wider than the rows.
  out.push_back(
      gemm_case<T>("fast_gemm", {1, 37, 29, 45, 50, 48, 33, 0, 0, 0, 1.5f, -0.5f}, false));
  // Square, contiguous, alpha 1 and beta 0 (the repro of issue 17's shape, larger).
  out.push_back(
      gemm_case<T>("fast_gemm_square", {1, 64, 64, 64, 64, 64, 64, 0, 0, 0, 1, 0}, false));
  // The CPU kernel's blocking: two blocks of rows (96 per block) and three panels of depth
  // (512, 512 and 76; the second and third accumulate onto C with beta 1).
  out.push_back(gemm_case<T>("fast_gemm_panels",
                             {1, 100, 40, 1100, 1100, 1100, 41, 0, 0, 0, 0.5f, 1.25f}, false));
  // The device library's tiles (128 rows and columns for f32, 64 for f64): two and three of
  // them each way, the last ones partial; K ends inside a panel (8 deep for f32, 16 for f64).
  out.push_back(
      gemm_case<T>("fast_gemm_tiles", {1, 150, 140, 37, 151, 150, 141, 0, 0, 0, 1, 0.5f}, false));
  // Batches with gaps between the matrices.
  out.push_back(gemm_case<T>(
      "fast_batched_gemm",
      {3, 13, 11, 17, 20, 19, 15, 20 * 17 + 5, 19 * 17 + 3, 13 * 15 + 4, -0.75f, 2}, true));
  out.push_back(gemv_case<T>());
  out.push_back(rows_case<T>());
  out.push_back(pointwise_case<T>());
  out.push_back(chain_case<T>());
  out.push_back(attention_case<T>());
  out.push_back(conv2d_case<T>());
}

/// f32 softmax and log_softmax over rows whose exponentials underflow to subnormals and to
/// zero, hold -inf, or whose differences from the maximum overflow f32: the device library
/// forms each term from f32's exp of the rounded difference and its rounding error, which
/// these values must not upset (an infinite difference has a NaN error).
Case softmax_special_case() {
  const uint32_t rows = 5, cols = 40;
  Case c = fast_case("fast_softmax_special_f32", "softmax_special_f32");
  c.inputs = [=](CaseData &d) {
    std::vector<float> x(rows * cols);
    for (uint32_t k = 0; k < cols; ++k) {
      x[k] = -120.0f * static_cast<float>(k) / (cols - 1); // e^x from 1 down past 2^-149
      x[cols + k] = k % 7 == 3 ? -INFINITY : 0.25f * static_cast<float>(k);
      x[2 * cols + k] = k == 5 ? 3e38f : k == 6 ? -3e38f : static_cast<float>(k);
      x[3 * cols + k] = 1.0f;
      x[4 * cols + k] = 88.0f - 0.37f * static_cast<float>(k);
    }
    d.arrays["x"] = Array::of(Type::F32, x);
    for (const char *o : {"sm", "lsm"})
      d.arrays[o] = Array::of(Type::F32, std::vector<float>(rows * cols));
    d.scalars["rows"] = rows;
    d.scalars["cols"] = cols;
  };
  c.reference = [=](CaseData &d, std::vector<Check> &) {
    auto x = d.array<float>("x");
    for (uint32_t r = 0; r < rows; ++r) {
      auto row = x.subspan(r * cols, cols);
      LD mx = -INFINITY, sum = 0;
      for (float v : row) mx = std::max<LD>(mx, v);
      for (float v : row) sum += std::exp(LD{v} - mx);
      for (uint32_t k = 0; k < cols; ++k) {
        d.array<float>("sm")[r * cols + k] = static_cast<float>(std::exp(LD{row[k]} - mx) / sum);
        d.array<float>("lsm")[r * cols + k] = static_cast<float>(LD{row[k]} - mx - std::log(sum));
      }
    }
  };
  c.checks = {{"sm", {accuracy::kSoftmaxUlps, 0}},
              {"lsm", {accuracy::kLogSoftmaxUlps, accuracy::kLogSoftmaxAbs}}};
  c.cpu_paths = {"softmax:rows", "log_softmax:rows"};
  c.device_paths = {"softmax:row-block", "log_softmax:row-block"};
  return c;
}

} // namespace

void fast_path_cases(std::vector<Case> &out) {
  typed_cases<float>(out);
  typed_cases<double>(out);
  out.push_back(softmax_special_case());
}

} // namespace hologram::conformance
