// Peers that need -ffast-math to vectorise at all (transcendentals through libmvec, float
// reductions that must reassociate): built by clang++-19 -O3 -march=native -ffast-math
// -fveclib=libmvec. hologram's own reductions may reassociate by SPEC §3.4, so this is fair.
// Built once more for each x86 level below the best (bench/CMakeLists.txt, with
// HOLOGRAM_PEER_LEVEL naming the level's namespace): the per-level table's peers.
#include "peers.h"

#include <cmath>

#ifdef HOLOGRAM_PEER_LEVEL
namespace HOLOGRAM_PEER_LEVEL {
#else
extern "C" {
#endif

void peer_sigmoid(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
}

void peer_exp(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

void peer_log(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::log(x[i]);
}

void peer_silu(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void peer_swiglu(const float *x, const float *g, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i])) * g[i];
}

void peer_gelu(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678f));
}

void peer_tanh(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

void peer_sin(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::sin(x[i]);
}

// The rows in f32, as a user writes them with -ffast-math: max, then a sum of exponentials
// (libmvec's expf, vectorised), then a scale; and a sum of squares, then a scale.
void peer_softmax_rows_fast(const float *x, float *y, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float mx = xr[0]; // not -INFINITY: -ffast-math assumes no infinities
    for (size_t c = 1; c < cols; ++c) mx = std::fmax(mx, xr[c]);
    float sum = 0;
    for (size_t c = 0; c < cols; ++c) {
      yr[c] = std::exp(xr[c] - mx);
      sum += yr[c];
    }
    const float inv = 1.0f / sum;
    for (size_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
}

void peer_rmsnorm_rows_fast(const float *x, const float *g, float *y, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float sq = 0;
    for (size_t c = 0; c < cols; ++c) sq += xr[c] * xr[c];
    const float inv = 1.0f / std::sqrt(sq / static_cast<float>(cols) + 1e-5f);
    for (size_t c = 0; c < cols; ++c) y[r * cols + c] = xr[c] * inv * g[c];
  }
}

void peer_layernorm_rows_fast(const float *x, const float *g, const float *b, float *y, size_t rows,
                              size_t cols) {
  for (size_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols;
    float sum = 0;
    for (size_t c = 0; c < cols; ++c) sum += xr[c];
    const float mean = sum / static_cast<float>(cols);
    float var = 0;
    for (size_t c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    const float inv = 1.0f / std::sqrt(var / static_cast<float>(cols) + 1e-5f);
    for (size_t c = 0; c < cols; ++c) y[r * cols + c] = (xr[c] - mean) * inv * g[c] + b[c];
  }
}

// One head of causal attention, rows [first, last) (all of it: 0 to seq), row by row: scores
// q·k scaled (keys up to the row only), softmax with libmvec's expf, then the weighted sum of
// values. `p` holds one row of scores.
void peer_attention_causal_fast(const float *q, const float *k, const float *v, float *out,
                                size_t first, size_t last, size_t d, float scale, float *p) {
  for (size_t i = first; i < last; ++i) {
    float mx = -1e30f;
    for (size_t j = 0; j <= i; ++j) {
      float s = 0;
      for (size_t c = 0; c < d; ++c) s += q[i * d + c] * k[j * d + c];
      p[j] = s * scale;
      mx = std::fmax(mx, p[j]);
    }
    float sum = 0;
    for (size_t j = 0; j <= i; ++j) {
      p[j] = std::exp(p[j] - mx);
      sum += p[j];
    }
    const float inv = 1.0f / sum;
    for (size_t c = 0; c < d; ++c) out[i * d + c] = 0;
    for (size_t j = 0; j <= i; ++j)
      for (size_t c = 0; c < d; ++c) out[i * d + c] += p[j] * inv * v[j * d + c];
  }
}

// f64 maps through libmvec (its double functions have no stated bound under -ffast-math:
// listed as relaxed beside SLEEF's 1-ulp ones).
void peer_sin_f64(const double *x, double *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::sin(x[i]);
}
void peer_tanh_f64(const double *x, double *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}
void peer_erf_f64(const double *x, double *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::erf(x[i]);
}
void peer_pow_f64(const double *x, const double *e, double *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::pow(x[i], e[i]);
}
void peer_atan2_f64(const double *x, const double *e, double *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::atan2(x[i], e[i]);
}

float peer_sum(const float *x, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; ++i) s += x[i];
  return s;
}

float peer_dot(const float *x, const float *y, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}

} // extern "C", or the level's namespace
