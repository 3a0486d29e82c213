// The GPU benchmarks' OpenCL C peers: the same kernels as bench/kernels/bench.hasm (and the
// GLSL peers), compiled from source by the OpenCL driver (PoCL in CI).
__kernel void vector_add(__global const float *a, __global const float *b, __global float *c,
                         uint n) {
  size_t i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}

__kernel void saxpy(__global const float *x, __global float *y, float alpha, uint n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = alpha * x[i] + y[i];
}

// One stage of a sum: each work-group of 256 folds a grid-stride share into out[group].
__kernel void sum_partial(__global const float *x, __global float *out, uint n) {
  __local float s[256];
  size_t lane = get_local_id(0), stride = get_global_size(0);
  float acc = 0.0f;
  for (size_t i = get_global_id(0); i < n; i += stride) acc += x[i];
  s[lane] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t h = 128; h > 0; h >>= 1) {
    if (lane < h) s[lane] += s[lane + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane == 0) out[get_group_id(0)] = s[0];
}

// C = A B for n x n row-major matrices, 16x16 tiles staged in local memory.
__kernel void gemm(__global const float *a, __global const float *b, __global float *c, uint n) {
  __local float ta[16][16], tb[16][16];
  size_t tx = get_local_id(0), ty = get_local_id(1);
  size_t row = get_group_id(1) * 16 + ty, col = get_group_id(0) * 16 + tx;
  float acc = 0.0f;
  for (uint k0 = 0; k0 < n; k0 += 16) {
    ta[ty][tx] = (row < n && k0 + tx < n) ? a[row * n + k0 + tx] : 0.0f;
    tb[ty][tx] = (k0 + ty < n && col < n) ? b[(k0 + ty) * n + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < 16; ++k) acc += ta[ty][k] * tb[k][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < n && col < n) c[row * n + col] = acc;
}

__kernel void empty(void) {}
