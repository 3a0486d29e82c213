// Peers that need -ffast-math to vectorise at all (transcendentals through libmvec, float
// reductions that must reassociate): built by clang++-19 -O3 -march=native -ffast-math
// -fveclib=libmvec. hologram's own reductions may reassociate by SPEC §3.4, so this is fair.
#include "peers.h"

#include <cmath>

extern "C" {

void peer_sigmoid(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
}

void peer_exp(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

void peer_log(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::log(x[i]);
}

void peer_tanh(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
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

} // extern "C"
