#!/usr/bin/env bash
# Builds the benchmarks (Release, build-bench/), runs them side by side with their peers and
# writes docs/performance.md, or docs/performance-avx2.md on a CPU without AVX-512 (so that a run
# on such a machine does not replace the AVX-512 one). Not part of the test command:
# benchmarks are measurements.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
# The benchmarks' own peers: Halide 14, and LLVM's OpenMP runtime for the transformer's C
# reference built with clang-19 -fopenmp (not needed to build or test the project).
for pkg in libhalide14-0-dev libomp-19-dev; do
  if ! dpkg -s "$pkg" >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null
  fi
done
build="$root/build-bench"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHOLOGRAM_ENABLE_BENCH=ON \
  -DHOLOGRAM_ENABLE_TESTS=OFF >/dev/null
cmake --build "$build" --target hologram-bench hologram-gpu-bench hologram-compile-bench
# Every CPU row the fastest of 3 repetitions, interleaved at random with the other rows: this
# shared machine moves a row by tens of percent between runs (bench/report.py).
# The per-level table's peers (built for x86-64-v2 and -v3) run only in the runs below.
"$build/bench/hologram-bench" --benchmark_min_time="${HOLOGRAM_BENCH_MIN_TIME:-0.5}" \
  --benchmark_filter='-/(clang_O3_fastmath|halide)_v[23]_' \
  --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true \
  --benchmark_out="$build/bench.json" --benchmark_out_format=json --benchmark_format=console
# The rows that must not hide a slow level (issue 15): gemm, gemv and softmax again with the
# dispatcher capped at each lower x86 level this CPU runs (the level is chosen once per
# process, so each is its own run), beside the peers a CPU of that level gets: OpenBLAS held
# to a core of the level (its choice of kernels is made once, when it loads; the run's
# context names the core for report.py), and the loop and Halide's pipeline built for it.
# report.py puts them in a table per level.
declare -A openblas_core=([v2]=Nehalem [v3]=Haswell)
flags=$(grep -m1 '^flags' /proc/cpuinfo)
levels=(v2)
if [[ $flags == *" avx2 "* && $flags == *" fma "* ]]; then levels+=(v3); fi
if [[ $flags == *" avx512f "* && $flags == *" avx512bw "* && $flags == *" avx512dq "* &&
  $flags == *" avx512vl "* ]]; then levels+=(v4); fi
rm -f "$build"/bench-v*.json
for level in "${levels[@]::${#levels[@]}-1}"; do
  OPENBLAS_CORETYPE=${openblas_core[$level]} HOLOGRAM_CPU_ISA=$level "$build/bench/hologram-bench" \
    --benchmark_filter="^(gemm|gemv|softmax_rows)/.*/(hologram|openblas|clang_O3_fastmath_$level|halide_$level)_(1t|mt)/" \
    --benchmark_context="openblas_core=${openblas_core[$level]}" \
    --benchmark_min_time="${HOLOGRAM_BENCH_MIN_TIME:-0.5}" \
    --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true \
    --benchmark_out="$build/bench-$level.json" --benchmark_out_format=json \
    --benchmark_format=console
done
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
# Lavapipe's and PoCL's timings move by tens of percent between runs: each row the fastest of 3
# repetitions, interleaved at random with the others (bench/report.py).
"$build/bench/hologram-gpu-bench" --benchmark_min_time="${HOLOGRAM_BENCH_MIN_TIME:-0.5}" \
  --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true \
  --benchmark_out="$build/gpu-bench.json" --benchmark_out_format=json --benchmark_format=console
# Compile times: each row the fastest of 8 repetitions, interleaved at random so that a slow
# minute of a shared machine does not fall on one size only (bench/report.py).
"$build/bench/hologram-compile-bench" --benchmark_min_time="${HOLOGRAM_BENCH_MIN_TIME:-0.5}" \
  --benchmark_repetitions=8 --benchmark_enable_random_interleaving=true \
  --benchmark_out="$build/compile-bench.json" --benchmark_out_format=json \
  --benchmark_format=console
out=docs/performance.md
if [[ ! " ${levels[*]} " == *" v4 "* ]]; then out=docs/performance-avx2.md; fi
python3 "$root/bench/report.py" "$build/bench.json" "$build/gpu-bench.json" \
  "$build/compile-bench.json" "$root/$out"
echo "bench: wrote $out"
