// Peers of the benchmark workloads: the same loops in plain C++, built by clang++-19 with
// -O3 -march=native (see bench/CMakeLists.txt). Exact float semantics: no -ffast-math here.
#include "peers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <immintrin.h>

extern "C" {

void peer_vector_add(const float *a, const float *b, float *c, size_t n) {
  for (size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

void peer_saxpy(const float *x, float *y, float alpha, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::fma(alpha, x[i], y[i]);
}

void peer_triad(float *a, const float *b, const float *c, float s, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] = std::fma(s, c[i], b[i]);
}

// STREAM's triad as its tuned builds run it: a scalar head up to the vector alignment, then
// aligned non-temporal vector stores (the memory limit for an output that is only written),
// then an sfence.
void peer_triad_nt(float *a, const float *b, const float *c, float s, size_t n) {
#if defined(__AVX512F__)
  using V = __m512;
  constexpr size_t L = 16;
  auto step = [&](size_t i) {
    _mm512_stream_ps(
        a + i, _mm512_fmadd_ps(_mm512_set1_ps(s), _mm512_loadu_ps(c + i), _mm512_loadu_ps(b + i)));
  };
#elif defined(__AVX2__) && defined(__FMA__)
  using V = __m256;
  constexpr size_t L = 8;
  auto step = [&](size_t i) {
    _mm256_stream_ps(
        a + i, _mm256_fmadd_ps(_mm256_set1_ps(s), _mm256_loadu_ps(c + i), _mm256_loadu_ps(b + i)));
  };
#else
  using V = __m128;
  constexpr size_t L = 4;
  auto step = [&](size_t i) {
    _mm_stream_ps(a + i,
                  _mm_add_ps(_mm_mul_ps(_mm_set1_ps(s), _mm_loadu_ps(c + i)), _mm_loadu_ps(b + i)));
  };
#endif
  size_t i = 0;
  for (; i < n && reinterpret_cast<uintptr_t>(a + i) % sizeof(V) != 0; ++i)
    a[i] = std::fma(s, c[i], b[i]);
  for (; i + L <= n; i += L) step(i);
  for (; i < n; ++i) a[i] = std::fma(s, c[i], b[i]);
  _mm_sfence();
}

void peer_softmax_rows(const float *x, float *y, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float mx = -INFINITY;
    for (size_t c = 0; c < cols; ++c) mx = std::fmax(mx, xr[c]);
    double sum = 0;
    for (size_t c = 0; c < cols; ++c) sum += std::exp(static_cast<double>(xr[c]) - mx);
    for (size_t c = 0; c < cols; ++c)
      yr[c] = static_cast<float>(std::exp(static_cast<double>(xr[c]) - mx) / sum);
  }
}

void peer_rmsnorm_rows(const float *x, const float *g, float *y, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    double sq = 0;
    for (size_t c = 0; c < cols; ++c) sq += static_cast<double>(xr[c]) * xr[c];
    double inv = 1.0 / std::sqrt(sq / static_cast<double>(cols) + 1e-5);
    for (size_t c = 0; c < cols; ++c) y[r * cols + c] = static_cast<float>(xr[c] * inv * g[c]);
  }
}

void peer_gemm(const float *a, const float *b, float *c, size_t n) {
  // The loop order clang vectorises best (i, k, j), with C zeroed first.
  std::fill(c, c + n * n, 0.0f);
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < n; ++k) {
      const float aik = a[i * n + k];
      for (size_t j = 0; j < n; ++j) c[i * n + j] += aik * b[k * n + j];
    }
}

} // extern "C"
