# The prototype's matrix standard library: one lane per output element (gemm) or row (gemv).

def gemm_f32(A: DeviceArray[f32], B: DeviceArray[f32], C: DeviceArray[f32], m: u32, n: u32, k: u32,
             lda: u32, ldb: u32, ldc: u32):
    t = get_global_id()
    if t < m * n:
        i = t // n
        j = t % n
        acc = 0.0
        for kk in range(k):
            acc += A[i * lda + kk] * B[kk * ldb + j]
        C[i * ldc + j] = acc

def gemv_f32(A: DeviceArray[f32], x: DeviceArray[f32], y: DeviceArray[f32], m: u32, n: u32, lda: u32):
    t = get_global_id()
    if t < m:
        acc = 0.0
        for j in range(n):
            acc += A[t * lda + j] * x[j]
        y[t] = acc
