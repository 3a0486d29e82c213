// The CUDA peers of hologram's CUDA rows (bench/cuda_bench.cpp): the same workloads written in
// CUDA C as a user would write them, built with nvcc on the GPU machine (which has the toolkit;
// hologram's machine has no GPU), and cuBLAS (gemm) and CUB (sum), the libraries a user would
// pick. Built as a shared library the benchmark opens with dlopen:
//
//   nvcc -O3 -arch=native -shared -Xcompiler -fPIC peers.cu -lcublas -o libcuda_peers.so
//
// Every function takes host arrays: it copies the inputs to the device, runs the workload once
// and copies the output back (the benchmark checks it), then times `reps` runs, each a launch
// followed by a stream synchronize (as hologram's launch returns when the kernel has finished),
// and returns the median in seconds; a negative value on an error (peer_error() says which).
#include <cub/device/device_reduce.cuh>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

std::string g_error;

bool ok(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return true;
  g_error = std::string(what) + ": " + cudaGetErrorString(e);
  return false;
}

/// A device array freed at scope exit.
struct Dev {
  float *p = nullptr;
  size_t n = 0;
  explicit Dev(size_t count) : n(count) { ok(cudaMalloc(&p, std::max<size_t>(1, n) * 4), "cudaMalloc"); }
  Dev(const float *host, size_t count) : Dev(count) { put(host); }
  ~Dev() { cudaFree(p); }
  void put(const float *host) { ok(cudaMemcpy(p, host, n * 4, cudaMemcpyHostToDevice), "copy in"); }
  void get(float *host) const { ok(cudaMemcpy(host, p, n * 4, cudaMemcpyDeviceToHost), "copy out"); }
};

/// Runs `body` once, then `reps` times with a synchronize after each; the median seconds.
template <typename F> double timed(int reps, F &&body) {
  body();
  if (!ok(cudaStreamSynchronize(nullptr), "first run")) return -1;
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    body();
    cudaStreamSynchronize(nullptr);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!ok(cudaGetLastError(), "a timed run")) return -1;
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

__global__ void vector_add_kernel(const float *a, const float *b, float *c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void saxpy_kernel(const float *x, float *y, float alpha, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaf(alpha, x[i], y[i]);
}

__global__ void empty_kernel() {}

constexpr unsigned kRowThreads = 256;

/// The block's reduction of `v` (every thread gets the result): warp shuffles, then shared memory.
template <bool Max> __device__ float block_reduce(float v) {
  __shared__ float partial[32];
  for (int o = 16; o > 0; o /= 2) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = Max ? fmaxf(v, w) : v + w;
  }
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < blockDim.x / 32 ? partial[lane] : (Max ? -INFINITY : 0.0f);
  for (int o = 16; o > 0; o /= 2) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = Max ? fmaxf(v, w) : v + w;
  }
  return v;
}

/// One block per row: the max, the sum of exp(x - max), then y = exp(x - max) / sum.
__global__ void softmax_rows_kernel(const float *x, float *y, unsigned cols) {
  const float *xr = x + size_t(blockIdx.x) * cols;
  float *yr = y + size_t(blockIdx.x) * cols;
  float m = -INFINITY;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
  m = block_reduce<true>(m);
  float s = 0;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - m);
  s = block_reduce<false>(s);
  const float inv = 1.0f / s;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - m) * inv;
}

/// One block per row: y = x / sqrt(mean(x^2) + eps) * g.
__global__ void rmsnorm_rows_kernel(const float *x, const float *g, float *y, unsigned cols,
                                    float eps) {
  const float *xr = x + size_t(blockIdx.x) * cols;
  float *yr = y + size_t(blockIdx.x) * cols;
  float s = 0;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) s = fmaf(xr[c], xr[c], s);
  s = block_reduce<false>(s);
  const float scale = rsqrtf(s / cols + eps);
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = xr[c] * scale * g[c];
}

unsigned blocks(unsigned n) { return (n + 255) / 256; }

} // namespace

extern "C" {

const char *peer_error() { return g_error.c_str(); }

/// "NVIDIA H100 80GB HBM3, CUDA runtime 13.0, driver 13.0, cuBLAS 130000"
const char *peer_describe() {
  static std::string s;
  cudaDeviceProp p{};
  int rt = 0, drv = 0, blas = 0;
  cudaGetDeviceProperties(&p, 0);
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  cublasGetVersion(nullptr, &blas);
  s = std::string(p.name) + ", CUDA runtime " + std::to_string(rt / 1000) + "." +
      std::to_string(rt % 1000 / 10) + ", driver " + std::to_string(drv / 1000) + "." +
      std::to_string(drv % 1000 / 10) + ", cuBLAS " + std::to_string(blas);
  return s.c_str();
}

double peer_vector_add(const float *a, const float *b, float *c, unsigned n, int reps) {
  Dev da(a, n), db(b, n), dc(n);
  double t = timed(reps, [&] { vector_add_kernel<<<blocks(n), 256>>>(da.p, db.p, dc.p, n); });
  dc.get(c);
  return t;
}

/// y is the input on entry and y after one launch on return.
double peer_saxpy(const float *x, float *y, float alpha, unsigned n, int reps) {
  Dev dx(x, n), dy(y, n);
  saxpy_kernel<<<blocks(n), 256>>>(dx.p, dy.p, alpha, n);
  dy.get(y);
  return timed(reps, [&] { saxpy_kernel<<<blocks(n), 256>>>(dx.p, dy.p, alpha, n); });
}

double peer_sum(const float *x, unsigned n, float *out, int reps) {
  Dev dx(x, n), dout(1);
  size_t temp_bytes = 0;
  cub::DeviceReduce::Sum(nullptr, temp_bytes, dx.p, dout.p, int(n));
  void *temp = nullptr;
  if (!ok(cudaMalloc(&temp, temp_bytes), "cudaMalloc (CUB)")) return -1;
  double t = timed(reps, [&] { cub::DeviceReduce::Sum(temp, temp_bytes, dx.p, dout.p, int(n)); });
  dout.get(out);
  cudaFree(temp);
  return t;
}

double peer_softmax_rows(const float *x, float *y, unsigned rows, unsigned cols, int reps) {
  Dev dx(x, size_t(rows) * cols), dy(size_t(rows) * cols);
  double t = timed(reps, [&] { softmax_rows_kernel<<<rows, kRowThreads>>>(dx.p, dy.p, cols); });
  dy.get(y);
  return t;
}

double peer_rmsnorm_rows(const float *x, const float *g, float *y, unsigned rows, unsigned cols,
                         float eps, int reps) {
  Dev dx(x, size_t(rows) * cols), dg(g, cols), dy(size_t(rows) * cols);
  double t = timed(reps, [&] {
    rmsnorm_rows_kernel<<<rows, kRowThreads>>>(dx.p, dg.p, dy.p, cols, eps);
  });
  dy.get(y);
  return t;
}

/// C = A B, n x n row-major, in f32 (cuBLAS's default math mode: no TF32), as column-major
/// C^T = B^T A^T.
double peer_gemm(const float *a, const float *b, float *c, unsigned n, int reps) {
  Dev da(a, size_t(n) * n), db(b, size_t(n) * n), dc(size_t(n) * n);
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    g_error = "cublasCreate failed";
    return -1;
  }
  const float one = 1, zero = 0;
  const int m = int(n);
  double t = timed(reps, [&] {
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, db.p, m, da.p, m, &zero, dc.p, m);
  });
  cublasDestroy(h);
  dc.get(c);
  return t;
}

/// A device-to-device copy of n floats (cudaMemcpyAsync): the bandwidth the streaming rows are
/// measured against.
double peer_copy(unsigned n, int reps) {
  Dev src(n), dst(n);
  return timed(reps, [&] {
    cudaMemcpyAsync(dst.p, src.p, size_t(n) * 4, cudaMemcpyDeviceToDevice, nullptr);
  });
}

double peer_empty(int reps) {
  return timed(reps, [&] { empty_kernel<<<1, 1>>>(); });
}

} // extern "C"
