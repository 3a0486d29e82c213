// SLEEF's 1-ulp f64 vector functions (what hologram's x86 lowering called before its f64 math
// was inline), at this machine's widest vector: the peer of the f64 map rows of the same
// accuracy class. Built by clang++-19 -O3 -march=native.
#include "peers.h"

#include <immintrin.h>
#include <sleef.h>

namespace {

#if defined(__AVX512F__)
using V = __m512d;
constexpr size_t kWidth = 8;
V load(const double *p) {
  return _mm512_loadu_pd(p);
}
void store(double *p, V v) {
  _mm512_storeu_pd(p, v);
}
#define HG_SLEEF(name) Sleef_##name##d8_u10avx512f
#elif defined(__AVX2__)
using V = __m256d;
constexpr size_t kWidth = 4;
V load(const double *p) {
  return _mm256_loadu_pd(p);
}
void store(double *p, V v) {
  _mm256_storeu_pd(p, v);
}
#define HG_SLEEF(name) Sleef_##name##d4_u10avx2
#else
using V = __m128d;
constexpr size_t kWidth = 2;
V load(const double *p) {
  return _mm_loadu_pd(p);
}
void store(double *p, V v) {
  _mm_storeu_pd(p, v);
}
#define HG_SLEEF(name) Sleef_##name##d2_u10sse4
#endif

/// Whole vectors, then the last n mod kWidth elements through one padded vector.
template <typename F> void unary(const double *x, double *y, size_t n, F f) {
  size_t i = 0;
  for (; i + kWidth <= n; i += kWidth) store(y + i, f(load(x + i)));
  if (i == n) return;
  double in[kWidth] = {}, out[kWidth];
  for (size_t j = i; j < n; ++j) in[j - i] = x[j];
  store(out, f(load(in)));
  for (size_t j = i; j < n; ++j) y[j] = out[j - i];
}
template <typename F> void binary(const double *x, const double *e, double *y, size_t n, F f) {
  size_t i = 0;
  for (; i + kWidth <= n; i += kWidth) store(y + i, f(load(x + i), load(e + i)));
  if (i == n) return;
  double a[kWidth] = {}, b[kWidth] = {}, out[kWidth];
  for (size_t j = i; j < n; ++j) {
    a[j - i] = x[j];
    b[j - i] = e[j];
  }
  store(out, f(load(a), load(b)));
  for (size_t j = i; j < n; ++j) y[j] = out[j - i];
}

} // namespace

extern "C" {

void sleef_sin_f64(const double *x, double *y, size_t n) {
  unary(x, y, n, HG_SLEEF(sin));
}
void sleef_tanh_f64(const double *x, double *y, size_t n) {
  unary(x, y, n, HG_SLEEF(tanh));
}
void sleef_erf_f64(const double *x, double *y, size_t n) {
  unary(x, y, n, HG_SLEEF(erf));
}
void sleef_pow_f64(const double *x, const double *e, double *y, size_t n) {
  binary(x, e, y, n, HG_SLEEF(pow));
}
void sleef_atan2_f64(const double *x, const double *e, double *y, size_t n) {
  binary(x, e, y, n, HG_SLEEF(atan2));
}

} // extern "C"
