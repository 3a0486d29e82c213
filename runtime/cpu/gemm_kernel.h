// The CPU GEMM: C = alpha * op(A) * op(B) + beta * C, row-major with leading dimensions, for
// f32 and f64. Panels of A and B are packed so the micro-kernel streams them from cache; the
// micro-kernel keeps an MR x NR tile of C in vector registers (register blocking). The file
// gemm_kernel.cpp is compiled once per x86 level; cpu_gemm picks the best this CPU runs and
// spreads blocks of C over the thread pool.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hologram::runtime {

/// Element-wise operations the level kernels vectorise: the map ops of the ISA (in
/// isa::MapUnaryOp order) followed by silu, gelu and gelu_tanh.
enum class MapKind : uint8_t {
  Abs,
  Neg,
  Sqrt,
  Rsqrt,
  Rcp,
  Exp,
  Exp2,
  Log,
  Log2,
  Log10,
  Sin,
  Cos,
  Tan,
  Tanh,
  Sigmoid,
  Erf,
  Relu,
  Floor,
  Ceil,
  Round,
  Trunc,
  Silu,
  Gelu,
  GeluTanh
};
/// isa::MapBinaryOp order.
enum class MapKind2 : uint8_t { Add, Sub, Mul, Div, Min, Max, Pow, Atan2 };

template <typename T> struct GemmArgs {
  bool trans_a = false, trans_b = false;
  uint64_t m = 0, n = 0, k = 0;
  T alpha = 1, beta = 0;
  const T *a = nullptr;
  uint64_t lda = 0;
  const T *b = nullptr;
  uint64_t ldb = 0;
  T *c = nullptr;
  uint64_t ldc = 0;
};

void cpu_gemm(const GemmArgs<float> &g);
void cpu_gemm(const GemmArgs<double> &g);
/// Sum of x[i] * y[i], or of x[i] when y is null, vectorised and reassociated.
float cpu_sum(const float *x, const float *y, uint64_t n);
double cpu_sum(const double *x, const double *y, uint64_t n);

namespace gemm_v2 {
void gemm(const GemmArgs<float> &g);
void gemm(const GemmArgs<double> &g);
float sum(const float *x, const float *y, uint64_t n);
double sum(const double *x, const double *y, uint64_t n);
void softmax_rows(const float *x, float *y, uint64_t rows, uint64_t cols, bool log_softmax);
void norm_rows(const float *x, float *y, const float *gamma, const float *beta, uint64_t rows,
               uint64_t cols, double eps, bool layer);
void map(MapKind op, const float *x, float *y, uint64_t n);
void map(MapKind op, const double *x, double *y, uint64_t n);
void map2(MapKind2 op, const float *a, const float *b, float *y, uint64_t n);
void map2(MapKind2 op, const double *a, const double *b, double *y, uint64_t n);
void axpy(float *y, const float *x, uint64_t n, float alpha);
void axpy(double *y, const double *x, uint64_t n, double alpha);
void rope_rows(float *y, const float *x, const float *cs, const float *sn, uint64_t rows,
               uint64_t dim);
void rope_rows(double *y, const double *x, const double *cs, const double *sn, uint64_t rows,
               uint64_t dim);
} // namespace gemm_v2
namespace gemm_v3 {
void gemm(const GemmArgs<float> &g);
void gemm(const GemmArgs<double> &g);
float sum(const float *x, const float *y, uint64_t n);
double sum(const double *x, const double *y, uint64_t n);
void softmax_rows(const float *x, float *y, uint64_t rows, uint64_t cols, bool log_softmax);
void norm_rows(const float *x, float *y, const float *gamma, const float *beta, uint64_t rows,
               uint64_t cols, double eps, bool layer);
void map(MapKind op, const float *x, float *y, uint64_t n);
void map(MapKind op, const double *x, double *y, uint64_t n);
void map2(MapKind2 op, const float *a, const float *b, float *y, uint64_t n);
void map2(MapKind2 op, const double *a, const double *b, double *y, uint64_t n);
void axpy(float *y, const float *x, uint64_t n, float alpha);
void axpy(double *y, const double *x, uint64_t n, double alpha);
void rope_rows(float *y, const float *x, const float *cs, const float *sn, uint64_t rows,
               uint64_t dim);
void rope_rows(double *y, const double *x, const double *cs, const double *sn, uint64_t rows,
               uint64_t dim);
} // namespace gemm_v3
namespace gemm_v4 {
void gemm(const GemmArgs<float> &g);
void gemm(const GemmArgs<double> &g);
float sum(const float *x, const float *y, uint64_t n);
double sum(const double *x, const double *y, uint64_t n);
void softmax_rows(const float *x, float *y, uint64_t rows, uint64_t cols, bool log_softmax);
void norm_rows(const float *x, float *y, const float *gamma, const float *beta, uint64_t rows,
               uint64_t cols, double eps, bool layer);
void map(MapKind op, const float *x, float *y, uint64_t n);
void map(MapKind op, const double *x, double *y, uint64_t n);
void map2(MapKind2 op, const float *a, const float *b, float *y, uint64_t n);
void map2(MapKind2 op, const double *a, const double *b, double *y, uint64_t n);
void axpy(float *y, const float *x, uint64_t n, float alpha);
void axpy(double *y, const double *x, uint64_t n, double alpha);
void rope_rows(float *y, const float *x, const float *cs, const float *sn, uint64_t rows,
               uint64_t dim);
void rope_rows(double *y, const double *x, const double *cs, const double *sn, uint64_t rows,
               uint64_t dim);
} // namespace gemm_v4

} // namespace hologram::runtime
