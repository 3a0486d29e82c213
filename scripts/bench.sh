#!/usr/bin/env bash
# Builds the benchmarks (Release, build-bench/), runs them side by side with their peers and
# writes docs/performance.md. Not part of the test command: benchmarks are measurements.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
# The benchmarks' own peer: Halide 14 (not needed to build or test the project).
if ! dpkg -s libhalide14-0-dev >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q libhalide14-0-dev >/dev/null
fi
build="$root/build-bench"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHOLOGRAM_ENABLE_BENCH=ON \
  -DHOLOGRAM_ENABLE_TESTS=OFF >/dev/null
cmake --build "$build" --target hologram-bench hologram-gpu-bench hologram-compile-bench
"$build/bench/hologram-bench" --benchmark_min_time="${HOLOGRAM_BENCH_MIN_TIME:-0.5s}" \
  --benchmark_format=json --benchmark_out="$build/bench.json" --benchmark_out_format=json \
  --benchmark_format=console
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
"$build/bench/hologram-gpu-bench" --benchmark_min_time="${HOLOGRAM_BENCH_MIN_TIME:-0.5s}" \
  --benchmark_out="$build/gpu-bench.json" --benchmark_out_format=json --benchmark_format=console
"$build/bench/hologram-compile-bench" --benchmark_min_time="${HOLOGRAM_BENCH_MIN_TIME:-0.5s}" \
  --benchmark_out="$build/compile-bench.json" --benchmark_out_format=json \
  --benchmark_format=console
python3 "$root/bench/report.py" "$build/bench.json" "$build/gpu-bench.json" \
  "$build/compile-bench.json" "$root/docs/performance.md"
echo "bench: wrote docs/performance.md"
