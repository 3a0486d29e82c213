#!/usr/bin/env bash
# Packs what the GPU test machine needs to run the conformance corpus without the compiler
# (docs/gpu.md): it has the NVIDIA driver but no LLVM 19 and no package registry, and at most
# 64 MiB travels to it. Into build-gpu/ (or $1): the corpus exported by `hologram-conformance
# --export` (xz, about 36 MB), hologram-conformance-run stripped (about 2 MB), the shared
# libraries it needs that such a machine may lack (SLEEF, xxHash), Debian's Vulkan loader for a
# machine without one, the CUDA benchmark (hologram-cuda-bench, the bundle of its kernels and
# the CUDA C peers' source, which nvcc builds there), and run.sh, which unpacks the corpus
# there and runs it on each backend named, or the benchmark.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOLOGRAM_BUILD_DIR:-$root/build}
out=${1:-$root/build-gpu}

cmake --build "$build" --target hologram-conformance hologram-conformance-run hologram-cuda-bench \
  hologram-cc
rm -rf "$out"
mkdir -p "$out/lib" "$out/vulkan-loader"
"$build/test/hologram-conformance" --export "$out/export"
tar -C "$out" -cJf "$out/export.tar.xz" export
rm -rf "$out/export"
strip -o "$out/hologram-conformance-run" "$build/test/hologram-conformance-run"
ldd "$out/hologram-conformance-run" | awk '/=> \// {print $3}' | grep -E 'libsleef|libxxhash' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
# The benchmark's kernels: those of bench/kernels/bench.hasm the CUDA rows run.
mkdir -p "$out/bench"
awk -v want=" vector_add saxpy sum softmax_rows rmsnorm_rows gemm empty " '
  /^\.kernel / { keep = index(want, " " $2 " ") > 0 }
  keep' "$root/bench/kernels/bench.hasm" > "$out/bench/cuda_bench.hasm"
"$build/tools/hologram-cc/hologram-cc" "$out/bench/cuda_bench.hasm" -O3 \
  --target=cuda-sm_80,cuda-sm_90 -o "$out/bench/cuda_bench.hgb"
rm "$out/bench/cuda_bench.hasm"
strip -o "$out/bench/hologram-cuda-bench" "$build/bench/cuda/hologram-cuda-bench"
cp "$root/bench/peers/cuda/peers.cu" "$out/bench/"
# awk reads all of ldconfig's output: leaving early would end ldconfig with SIGPIPE, which
# pipefail turns into this script's failure.
loader=$(ldconfig -p | awk '/libvulkan\.so\.1 .*x86-64/ && !found {print $NF; found = 1}')
[[ -n $loader ]] && cp -L "$loader" "$out/vulkan-loader/libvulkan.so.1"

cat > "$out/run.sh" <<'EOF'
#!/usr/bin/env bash
# On the GPU machine: bash run.sh BACKEND... (cuda, vulkan, cpu, opencl). Unpacks the corpus
# once, then runs it on each backend; the results go to $OUT (or here) as conformance-BACKEND.txt.
# The exit status is that of the last failing backend, 0 when every one passed.
# bash run.sh bench: builds the CUDA C peers with nvcc and runs the CUDA benchmark
# (cuda-bench.txt).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${OUT:-$here}
if [[ ${1:-} == bench ]]; then
  nvcc -O3 -arch=native -shared -Xcompiler -fPIC "$here/bench/peers.cu" -lcublas \
    -o "$here/bench/libcuda_peers.so" || exit 1
  LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$here/bench/hologram-cuda-bench" \
    "$here/bench/cuda_bench.hgb" "$here/bench/libcuda_peers.so" "${@:2}" | tee "$results/cuda-bench.txt"
  exit "${PIPESTATUS[0]}"
fi
[[ -d $here/export ]] || tar -C "$here" -xJf "$here/export.tar.xz"
libs=$here/lib
# Debian's Vulkan loader only where the machine has none (the NVIDIA driver brings the ICD).
ldconfig -p | grep -q 'libvulkan\.so\.1 ' || libs=$libs:$here/vulkan-loader
status=0
for backend in "$@"; do
  LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    "$here/hologram-conformance-run" "$here/export" --backend="$backend" \
    > "$results/conformance-$backend.txt" 2>&1
  rc=$?
  echo "$backend: exit $rc: $(tail -n 1 "$results/conformance-$backend.txt")"
  [[ $rc -eq 0 ]] || status=$rc
done
exit $status
EOF
chmod +x "$out/run.sh"
du -sh "$out"
