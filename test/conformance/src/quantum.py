# The prototype's "quantum" standard library, written with its evident intent.

def constraint_solve(variables: DeviceArray[f32], constraints: DeviceArray[f32],
                     violation_count: DeviceArray[u32], is_satisfied: DeviceArray[u32],
                     n: u32, m: u32, max_iterations: u32):
    v = get_global_id()
    if v < n:
        for it in range(max_iterations):
            x = variables[v]
            count = u32(0)
            for j in range(m):
                w = constraints[v * m + j]
                if w != 0.0:
                    violated = (w > 0.0 and x < w) or (w < 0.0 and x > -w)
                    if violated:
                        count += 1
                        is_satisfied[j] = 0
                    else:
                        is_satisfied[j] = 1
            violation_count[v] = count
            if count > 0:
                variables[v] = x * (1.0 - f32(count) / f32(m))

def minimize_energy(state: DeviceArray[f32], energy: DeviceArray[f32], best_state: DeviceArray[f32],
                    temperature: f32, n: u32, max_iterations: u32):
    d = get_global_id()
    if d < n:
        s = state[d]
        for it in range(max_iterations):
            t = temperature * (1.0 - f32(it) / f32(max_iterations))
            e = s * s
            energy[d] = e
            if expf(0.0 - e / t) > 0.5:
                s += 0.1 * (1.0 - e)
            state[d] = s
        atomic_min(energy, n, energy[d])
        best_state[d] = s

def optimal_path(adjacency: DeviceArray[f32], path_weights: DeviceArray[f32], visited: DeviceArray[u32],
                 start: u32, target: u32, n: u32, max_depth: u32, total_paths: DeviceArray[u32]):
    v = get_local_id()
    for depth in range(max_depth):
        if v < n:
            for u in range(n):
                w = adjacency[v * n + u]
                if w <= 0.0:
                    continue
                atomic_min(path_weights, u, path_weights[v] + w)
        barrier()
    if v < n:
        visited[v] = 1
        atomic_add_u32(total_paths, 0, 1)

def quantum_search(data: DeviceArray[f32], target: f32, results: DeviceArray[f32],
                   total_results: DeviceArray[u32], n: u32, max_iterations: u32):
    t = get_global_id()
    if t < n:
        amp = 1.0 / sqrtf(f32(n))
        for it in range(max_iterations):
            if data[t] == target:
                amp = -amp
            avg = (amp + 1.0) / 2.0
            amp = 2.0 * avg - amp
        if amp > 0.5:
            idx = atomic_add(total_results, 0, 1)
            results[idx] = f32(t)
