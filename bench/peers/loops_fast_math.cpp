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
