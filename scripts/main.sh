#!/usr/bin/env bash
# The main job: install what is missing, build, compile an example kernel for every x86 target
# (objects, a static library with its header, a bundle), every Vulkan and OpenCL target
# (SPIR-V) and every CUDA target (PTX, assembled by ptxas where the CUDA toolkit is), run the
# example kernels on every backend this build has (the reference interpreter, compiled x86 code
# on the CPU backend, SPIR-V on the Vulkan and OpenCL backends, PTX on the CUDA backend where
# this machine has an NVIDIA driver and GPU, else the reason it has not), and run the example
# programs of examples/ (built with add_hologram_kernel).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOLOGRAM_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
"$root/scripts/build.sh"

cc="$build/tools/hologram-cc/hologram-cc"
run="$build/tools/hologram-run/hologram-run"
out="$build/examples-out"
mkdir -p "$out"

echo
echo "== examples/json/saxpy.json compiled for every x86 target"
for t in x86-64-v2 x86-64-v3 x86-64-v4; do
  "$cc" "$root/examples/json/saxpy.json" --target=$t --emit=obj -o "$out/saxpy.$t.o"
  echo "$t: $(stat -c %s "$out/saxpy.$t.o") bytes, $(grep -c . <("$cc" "$root/examples/json/saxpy.json" --target=$t --emit=asm -o -)) lines of assembly"
done
"$cc" "$root/examples/json/saxpy.json" --emit=static -o "$out/libsaxpy.a"
"$cc" "$root/examples/json/saxpy.json" --emit=header -o "$out/saxpy.h"
echo "multi-variant library: $out/libsaxpy.a with header $out/saxpy.h"
"$cc" "$root/examples/json/saxpy.json" --emit=bundle -o "$out/saxpy.hgb"
echo
echo "== examples/json/saxpy.json compiled for every Vulkan target (validated by spirv-val)"
for t in vulkan1.1 vulkan1.2 vulkan1.3; do
  "$cc" "$root/examples/json/saxpy.json" --target=$t --emit=spirv -o "$out/saxpy.$t.spv"
  spirv-val --target-env $t "$out/saxpy.$t.spv"
  echo "$t: $(stat -c %s "$out/saxpy.$t.spv") bytes of SPIR-V"
done
echo
echo "== examples/json/saxpy.json compiled for every OpenCL target (validated by spirv-val)"
for t in opencl1.2 opencl2.0 opencl3.0; do
  "$cc" "$root/examples/json/saxpy.json" --target=$t --emit=spirv -o "$out/saxpy.$t.spv"
  env=$t; [[ $t == opencl3.0 ]] && env=opencl2.2 # spirv-val's newest OpenCL environment
  spirv-val --target-env $env "$out/saxpy.$t.spv"
  echo "$t: $(stat -c %s "$out/saxpy.$t.spv") bytes of SPIR-V"
done
echo
echo "== examples/json/saxpy.json compiled for every CUDA target (PTX; docs/cuda.md)"
ptxas=$(command -v ptxas || true)
[[ -z $ptxas && -x /usr/local/cuda/bin/ptxas ]] && ptxas=/usr/local/cuda/bin/ptxas
for sm in 70 75 80 86 89 90; do
  "$cc" "$root/examples/json/saxpy.json" --target=cuda-sm_$sm -o "$out/saxpy.sm_$sm.ptx"
  checked="not assembled (no ptxas here)"
  if [[ -n $ptxas ]]; then
    # CUDA 13's ptxas no longer targets sm_70; PTX for it assembles for sm_75.
    gpu=sm_$sm; [[ $sm == 70 ]] && gpu=sm_75
    "$ptxas" --gpu-name $gpu "$out/saxpy.sm_$sm.ptx" -o "$out/saxpy.sm_$sm.cubin"
    checked="assembled by ptxas for $gpu"
  fi
  echo "cuda-sm_$sm: $(stat -c %s "$out/saxpy.sm_$sm.ptx") bytes of PTX, $checked"
done
"$cc" "$root/examples/json/saxpy.json" --target=x86-64-v2,x86-64-v3,vulkan1.1,opencl1.2,cuda-sm_80 \
  -o "$out/saxpy.all.hgb"
echo
"$build/tools/hologram-info/hologram-info" "$out/saxpy.all.hgb"
echo
"$build/tools/hologram-info/hologram-info" --devices

export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
backends="interp cpu vulkan opencl"
# CUDA where discovery finds a usable device; otherwise what it says instead.
cuda=$("$build/tools/hologram-info/hologram-info" --devices | awk '
  /^cuda:/ { cuda = 1; next } /^[a-z]+:/ { cuda = 0 } cuda && /usable/ { print "usable"; exit }
  cuda && /rejected:/ { sub(/^ *rejected: */, ""); print; exit }')
if [[ $cuda == usable ]]; then
  backends="$backends cuda"
else
  echo
  echo "== the CUDA backend does not run here: $cuda"
fi
for backend in $backends; do
  echo
  echo "== examples/isa/vector_add.hasm on --backend=$backend"
  "$run" "$root/examples/isa/vector_add.hasm" --backend=$backend --global 8 \
    --arg a='[1,2,3,4,5,6,7,8]' --arg b='[10,20,30,40,50,60,70,80]' --arg c=zeros:8 --arg n=8 \
    --print c
  echo
  echo "== examples/isa/block_sum.hasm (shared memory and barriers) on --backend=$backend"
  "$run" "$root/examples/isa/block_sum.hasm" --backend=$backend --global 256 --local 64 \
    --shared 256 --arg x=iota:256 --arg sums=zeros:4 --print sums
  echo
  echo "== examples/json/saxpy.json (a JSON kernel) on --backend=$backend"
  "$run" "$root/examples/json/saxpy.json" --backend=$backend --global 5 \
    --arg x='[1,2,3,4,5]' --arg y='[10,10,10,10,10]' --arg alpha=2 --arg n=5 --print y
  echo
  echo "== examples/circuits/merge_split.circuit over the boundary pool on --backend=$backend"
  "$run" "$root/examples/circuits/merge_split.circuit" --backend=$backend --arg c0='[1,2,3]' \
    --arg c1='[10,20,30]' --print c3 | cut -c1-40
done
echo
echo "== examples/circuits/merge_split.circuit: canonical form"
"$cc" "$root/examples/circuits/merge_split.circuit" --emit=canonical -o -

echo
echo "== the bundle on the CPU backend"
"$run" "$out/saxpy.hgb" --backend=cpu --global 5 \
  --arg x='[1,2,3,4,5]' --arg y='[10,10,10,10,10]' --arg alpha=2 --arg n=5 --print y

ex="$build/examples"
echo
echo "== examples/vector_add: the generated header, statically linked"
"$ex/example-vector-add"
for backend in auto cpu vulkan opencl; do
  echo
  echo "== examples/pipeline: rmsnorm then softmax through the runtime, --backend=$backend"
  "$ex/example-pipeline" --backend=$backend
done
echo
echo "== examples/circuit: a circuit over the boundary pool"
"$ex/example-circuit"
echo
echo "== examples/stream: 1 GiB through an 8 MiB pool with stream()"
"$ex/example-stream"
for backend in cpu vulkan opencl; do
  echo
  echo "== examples/transformer: stories15M's shape, checked against plain C, --backend=$backend"
  "$ex/example-transformer" --backend=$backend --steps=16
done
echo
echo "== examples/c_api: C99 and hologram.h"
"$ex/example-c-api"
