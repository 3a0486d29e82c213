# Kernels that exercise the launch structure: a 2-D grid, atomics, shared memory and barriers.

def stencil2d(src: DeviceArray[f32], dst: DeviceArray[f32], width: u32, height: u32):
    x = get_global_id(0)
    y = get_global_id(1)
    if x < width and y < height:
        i = y * width + x
        if x == 0 or y == 0 or x == width - 1 or y == height - 1:
            dst[i] = src[i]
        else:
            dst[i] = 0.2 * (src[i] + src[i - 1] + src[i + 1] + src[i - width] + src[i + width])

def row_bias(src: DeviceArray[f32], bias: DeviceArray[f32], dst: DeviceArray[f32], width: u32, height: u32):
    x = get_global_id(0)
    y = get_global_id(1)
    if x < width and y < height:
        dst[y * width + x] = src[x] + bias[y]

def histogram(data: DeviceArray[u8], bins: DeviceArray[u32], n: u32):
    i = get_global_id()
    if i < n:
        b = u32(data[i]) >> 4
        atomic_add_u32(bins, b, 1)

def block_reduce(x: DeviceArray[f32], partial: DeviceArray[f32], n: u32):
    tile = shared(f32, 256)
    lid = get_local_id()
    gid = get_global_id()
    v = 0.0
    if gid < n:
        v = x[gid]
    tile[lid] = v
    barrier()
    stride = get_local_size() // 2
    while stride > 0:
        if lid < stride:
            tile[lid] = tile[lid] + tile[lid + stride]
        barrier()
        stride = stride // 2
    if lid == 0:
        partial[get_group_id()] = tile[0]

def countdown(out: DeviceArray[i32], n: u32):
    i = get_global_id()
    if i < n:
        total = 0
        for k in range(10, 0, 0 - 2):
            total += k
        j = 0
        while True:
            j += 1
            if j % 3 == 0:
                continue
            if j > 7:
                break
            total += j
        out[i] = total - i32(i)

def floor_division(a: DeviceArray[i32], b: DeviceArray[i32], q: DeviceArray[i32], r: DeviceArray[i32], n: u32):
    i = get_global_id()
    if i < n:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
