// Expected values with tolerances, and the message that names the values outside them: what
// every benchmark checks its rows with (verify.h), also in the runtime-only CUDA benchmark;
// the references of the GPU rows.
#pragma once

#include <cmath>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

/// Expected values with a tolerance each: |got - want| <= tol.
struct Tolerances {
  std::vector<double> want, tol;
};

/// "" when every element of `got` is within tolerance of `expected`, else the first mismatches.
template <typename T>
inline std::string mismatches_of(const std::string &what, std::span<const T> got,
                                 const Tolerances &expected) {
  if (got.size() != expected.want.size())
    return what + ": " + std::to_string(got.size()) + " values, expected " +
           std::to_string(expected.want.size());
  std::string out;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = expected.want[i];
    if (std::fabs(g - w) <= expected.tol[i]) continue; // NaN never passes
    if (++bad <= 3) {
      char line[160];
      std::snprintf(line, sizeof line, "%s%s[%zu] = %.17g, expected %.17g (tolerance %.3g)",
                    out.empty() ? "" : "; ", what.c_str(), i, g, w, expected.tol[i]);
      out += line;
    }
  }
  if (bad > 3) out += "; " + std::to_string(bad - 3) + " more";
  return out;
}
inline std::string mismatches(const std::string &what, std::span<const float> got,
                              const Tolerances &expected) {
  return mismatches_of(what, got, expected);
}
inline std::string mismatches(const std::string &what, std::span<const double> got,
                              const Tolerances &expected) {
  return mismatches_of(what, got, expected);
}

/// One value against its reference.
inline std::string mismatch(const std::string &what, double got, double want, double tol) {
  if (std::fabs(got - want) <= tol) return "";
  char line[160];
  std::snprintf(line, sizeof line, "%s = %.9g, expected %.9g (tolerance %.3g)", what.c_str(), got,
                want, tol);
  return line;
}

inline constexpr double kEps = 1.1920928955078125e-07; // f32

/// Element-wise reference within `ulps` f32 roundings of its magnitude.
inline Tolerances elementwise(size_t n, const std::function<double(size_t)> &f, double ulps) {
  Tolerances e;
  for (size_t i = 0; i < n; ++i) {
    e.want.push_back(f(i));
    e.tol.push_back(ulps * kEps * std::fabs(e.want.back()));
  }
  return e;
}

/// C = A B for m x m row-major matrices, each element within m * eps of its |products|.
inline Tolerances gemm_reference(const std::vector<float> &a, const std::vector<float> &b,
                                 size_t m) {
  Tolerances e;
  e.want.assign(m * m, 0);
  e.tol.assign(m * m, 0);
  for (size_t i = 0; i < m; ++i)
    for (size_t k = 0; k < m; ++k)
      for (size_t j = 0; j < m; ++j) {
        const double t = double{a[i * m + k]} * b[k * m + j];
        e.want[i * m + j] += t;
        e.tol[i * m + j] += std::fabs(t);
      }
  for (auto &t : e.tol) t *= static_cast<double>(m) * kEps;
  return e;
}

/// The sum of x in double and the tolerance a reassociated f32 sum gets here.
inline std::pair<double, double> sum_reference(const std::vector<float> &x) {
  double s = 0, mag = 0;
  for (float v : x) s += v, mag += std::fabs(v);
  return {s, 1e-5 * mag};
}
