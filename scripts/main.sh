#!/usr/bin/env bash
# The main job: install what is missing, build, and run the example programs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOLOGRAM_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
"$root/scripts/build.sh"

run="$build/tools/hologram-run/hologram-run"
echo
echo "== examples/isa/vector_add.hasm on the reference interpreter"
"$run" "$root/examples/isa/vector_add.hasm" --backend=interp --global 8 \
  --arg a='[1,2,3,4,5,6,7,8]' --arg b='[10,20,30,40,50,60,70,80]' --arg c=zeros:8 --arg n=8 \
  --print c
echo
echo "== examples/isa/block_sum.hasm (shared memory and barriers)"
"$run" "$root/examples/isa/block_sum.hasm" --backend=interp --global 256 --local 64 --shared 256 \
  --arg x=iota:256 --arg sums=zeros:4 --print sums
echo
echo "== examples/json/saxpy.json (a JSON kernel) on the reference interpreter"
"$run" "$root/examples/json/saxpy.json" --backend=interp --global 5 \
  --arg x='[1,2,3,4,5]' --arg y='[10,10,10,10,10]' --arg alpha=2 --arg n=5 --print y
echo
echo "== examples/circuits/merge_split.circuit: canonical form, then a run over the boundary pool"
"$build/tools/hologram-cc/hologram-cc" "$root/examples/circuits/merge_split.circuit" --emit=canonical -o -
"$run" "$root/examples/circuits/merge_split.circuit" --arg c0='[1,2,3]' --arg c1='[10,20,30]' --print c3 \
  | cut -c1-40
