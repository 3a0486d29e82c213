# The Python source of saxpy.json (scripts/py2json.py examples/json/saxpy.py -o examples/json/saxpy.json).
def saxpy(x: DeviceArray[f32], y: DeviceArray[f32], alpha: f32, n: u32):
    i = get_global_id()
    if i < n:
        acc = alpha * x[i]
        acc += y[i]
        y[i] = acc
    else:
        return
