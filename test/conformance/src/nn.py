# Neural-network building blocks written as plain kernels (one lane per row or element),
# and the same operations through library statements.

def softmax_rows(x: DeviceArray[f32], y: DeviceArray[f32], rows: u32, cols: u32):
    r = get_global_id()
    if r < rows:
        mx = x[r * cols]
        for c in range(1, cols):
            mx = max(mx, x[r * cols + c])
        total = 0.0
        for c in range(cols):
            e = expf(x[r * cols + c] - mx)
            y[r * cols + c] = e
            total += e
        for c in range(cols):
            y[r * cols + c] = y[r * cols + c] / total

def rmsnorm_rows(x: DeviceArray[f32], gamma: DeviceArray[f32], y: DeviceArray[f32], rows: u32, cols: u32,
                 eps: f32):
    r = get_global_id()
    if r < rows:
        ss = 0.0
        for c in range(cols):
            v = x[r * cols + c]
            ss += v * v
        inv = 1.0 / sqrtf(ss / f32(cols) + eps)
        for c in range(cols):
            y[r * cols + c] = x[r * cols + c] * inv * gamma[c]

def layernorm_lib(x: DeviceArray[f32], gamma: DeviceArray[f32], beta: DeviceArray[f32], y: DeviceArray[f32],
                  rows: u64, cols: u64, eps: f32):
    library("layernorm", y=y, x=x, gamma=gamma, beta=beta, rows=rows, cols=cols, eps=eps)

def softmax_lib(x: DeviceArray[f32], y: DeviceArray[f32], rows: u64, cols: u64):
    library("softmax", y=y, x=x, rows=rows, cols=cols)

def gemm_lib(A: DeviceArray[f32], B: DeviceArray[f32], C: DeviceArray[f32], m: u64, n: u64, k: u64):
    library("gemm", C=C, A=A, B=B, M=m, N=n, K=k, alpha=1.0, beta=0.0, lda=k, ldb=n, ldc=n,
            transA=False, transB=False)

def silu(x: DeviceArray[f32], y: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        v = x[i]
        y[i] = v * sigmoid(v)

def gelu(x: DeviceArray[f32], y: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        v = x[i]
        y[i] = 0.5 * v * (1.0 + erff(v * 0.7071067811865476))

def rope(x: DeviceArray[f32], cos_t: DeviceArray[f32], sin_t: DeviceArray[f32], y: DeviceArray[f32],
         rows: u32, dim: u32):
    t = get_global_id()
    half = dim // 2
    if t < rows * half:
        r = t // half
        i = t % half
        x0 = x[r * dim + 2 * i]
        x1 = x[r * dim + 2 * i + 1]
        c = cos_t[r * half + i]
        s = sin_t[r * half + i]
        y[r * dim + 2 * i] = x0 * c - x1 * s
        y[r * dim + 2 * i + 1] = x0 * s + x1 * c

def matvec(W: DeviceArray[f32], x: DeviceArray[f32], y: DeviceArray[f32], rows: u32, cols: u32):
    r = get_global_id()
    if r < rows:
        acc = 0.0
        for c in range(cols):
            acc += W[r * cols + c] * x[c]
        y[r] = acc

def attention_scores(q: DeviceArray[f32], keys: DeviceArray[f32], scores: DeviceArray[f32], seq: u32,
                     dim: u32, scale: f32):
    j = get_global_id()
    if j < seq:
        acc = 0.0
        for d in range(dim):
            acc += q[d] * keys[j * dim + d]
        scores[j] = acc * scale

def weighted_sum_rows(M: DeviceArray[f32], w: DeviceArray[f32], out: DeviceArray[f32], rows: u32, cols: u32):
    c = get_global_id()
    if c < cols:
        acc = 0.0
        for r in range(rows):
            acc += w[r] * M[r * cols + c]
        out[c] = acc
