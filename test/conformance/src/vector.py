# The prototype's vector standard library (schemas/stdlib/vector), with its evident intent:
# a real sigmoid and tanh, and the atomic accumulations of dot and sum kept.

def vector_add(a: DeviceArray[f32], b: DeviceArray[f32], c: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        c[i] = a[i] + b[i]

def vector_sub(a: DeviceArray[f32], b: DeviceArray[f32], c: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        c[i] = a[i] - b[i]

def vector_mul(a: DeviceArray[f32], b: DeviceArray[f32], c: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        c[i] = a[i] * b[i]

def vector_dot(a: DeviceArray[f32], b: DeviceArray[f32], result: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        product = a[i] * b[i]
        atomic_add_f32(result, 0, product)

def vector_sum(a: DeviceArray[f32], result: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        atomic_add_f32(result, 0, a[i])

def relu(a: DeviceArray[f32], b: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        if a[i] > 0.0:
            b[i] = a[i]
        else:
            b[i] = 0.0

def sigmoid(a: DeviceArray[f32], b: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        b[i] = 1.0 / (1.0 + expf(0.0 - a[i]))

def tanh(a: DeviceArray[f32], b: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        b[i] = tanhf(a[i])

def exp(a: DeviceArray[f32], b: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        b[i] = expf(a[i])

def log(a: DeviceArray[f32], b: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        b[i] = logf(a[i])

def sin(a: DeviceArray[f32], b: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        b[i] = sinf(a[i])

def cos(a: DeviceArray[f32], b: DeviceArray[f32], n: u32):
    i = get_global_id()
    if i < n:
        b[i] = cosf(a[i])
