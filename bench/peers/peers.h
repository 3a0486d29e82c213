// The peer implementations the benchmarks compare hologram-cc output with.
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
void peer_vector_add(const float *a, const float *b, float *c, size_t n);
void peer_saxpy(const float *x, float *y, float alpha, size_t n);
void peer_triad(float *a, const float *b, const float *c, float s, size_t n);
void peer_triad_nt(float *a, const float *b, const float *c, float s, size_t n);
void peer_softmax_rows(const float *x, float *y, size_t rows, size_t cols);
void peer_rmsnorm_rows(const float *x, const float *g, float *y, size_t rows, size_t cols);
void peer_softmax_rows_fast(const float *x, float *y, size_t rows, size_t cols);
void peer_rmsnorm_rows_fast(const float *x, const float *g, float *y, size_t rows, size_t cols);
void peer_layernorm_rows_fast(const float *x, const float *g, const float *b, float *y, size_t rows,
                              size_t cols);
void peer_attention_causal_fast(const float *q, const float *k, const float *v, float *out,
                                size_t first, size_t last, size_t d, float scale, float *p);
void peer_gemm(const float *a, const float *b, float *c, size_t n);
void peer_sigmoid(const float *x, float *y, size_t n);
void peer_exp(const float *x, float *y, size_t n);
void peer_log(const float *x, float *y, size_t n);
void peer_silu(const float *x, float *y, size_t n);
void peer_swiglu(const float *x, const float *g, float *y, size_t n);
void peer_gelu(const float *x, float *y, size_t n);
void peer_tanh(const float *x, float *y, size_t n);
void peer_sin(const float *x, float *y, size_t n);
void peer_sin_f64(const double *x, double *y, size_t n);
void peer_tanh_f64(const double *x, double *y, size_t n);
void peer_erf_f64(const double *x, double *y, size_t n);
void peer_pow_f64(const double *x, const double *e, double *y, size_t n);
void peer_atan2_f64(const double *x, const double *e, double *y, size_t n);
void sleef_sin_f64(const double *x, double *y, size_t n);
void sleef_tanh_f64(const double *x, double *y, size_t n);
void sleef_erf_f64(const double *x, double *y, size_t n);
void sleef_pow_f64(const double *x, const double *e, double *y, size_t n);
void sleef_atan2_f64(const double *x, const double *e, double *y, size_t n);
float peer_sum(const float *x, size_t n);
float peer_dot(const float *x, const float *y, size_t n);
/// Calls part(ctx, i, parts) for i in [0, parts) at once, one call on each core (OpenMP).
void peer_parallel(void (*part)(void *ctx, unsigned index, unsigned parts), void *ctx);
#ifdef __cplusplus
}

/// peer_softmax_rows_fast built for x86-64-v2 and for x86-64-v3 (loops_fast_math.cpp again):
/// the per-level table's loops, which a user of a CPU of that level gets.
namespace level_v2 {
void peer_softmax_rows_fast(const float *x, float *y, size_t rows, size_t cols);
}
namespace level_v3 {
void peer_softmax_rows_fast(const float *x, float *y, size_t rows, size_t cols);
}
#endif
