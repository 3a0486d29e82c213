#!/usr/bin/env bash
# Builds and runs test/integration the way a user would, against hologram's package:
#   run.sh install    BUILD_DIR WORK_DIR   install BUILD_DIR into WORK_DIR/prefix and use that
#   run.sh build-tree BUILD_DIR WORK_DIR   use BUILD_DIR itself (Hologram_DIR=BUILD_DIR)
# then checks that the application carries no compiler code (it links Hologram::runtime only)
# and the depfiles: touching one kernel file rebuilds that kernel's object and header only,
# and a second build has nothing to do. The compilers and flags of the hologram build
# are passed on (the sanitizer build links sanitizer-instrumented libraries).
set -euo pipefail
mode=$1 build=$2 work=$3
src=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }

if [[ $mode == install ]]; then
  cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
  package=(-DCMAKE_PREFIX_PATH="$work/prefix")
  test -x "$work/prefix/bin/hologram-cc"
  # The Python front end is installed as a program too, and its output compiles.
  "$work/prefix/bin/hologram-py2json" "$src/../../examples/json/saxpy.py" -o "$work/saxpy.json"
  "$work/prefix/bin/hologram-cc" "$work/saxpy.json" --emit=isa -o - | grep -q '^.kernel saxpy'
  test -f "$work/prefix/lib/cmake/Hologram/HologramConfig.cmake"
else
  package=(-DHologram_DIR="$build")
fi
# The project's sources are copied so that touching a kernel file changes nothing in the tree.
cp -r "$src" "$work/src"
launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$work/src" -B "$work/build" -G Ninja "${package[@]}" "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$(cache CMAKE_C_COMPILER)" -DCMAKE_CXX_COMPILER="$(cache CMAKE_CXX_COMPILER)" \
  -DCMAKE_C_FLAGS="$(cache CMAKE_C_FLAGS)" -DCMAKE_CXX_FLAGS="$(cache CMAKE_CXX_FLAGS)" \
  -DCMAKE_EXE_LINKER_FLAGS="$(cache CMAKE_EXE_LINKER_FLAGS)" > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log"
"$work/build/app"

# The application links Hologram::runtime only: no code generator comes with it. No symbol
# of LLVM or SPIRV-Tools, and its code and data (debug information aside) are a few MB.
if nm -C "$work/build/app" | grep -E -m3 ' (llvm|spvtools|spv)::'; then
  echo "the application carries compiler code (above)"; exit 1
fi
read -r text data _ < <(size "$work/build/app" | tail -1)
limit=$((4 << 20))
if [[ "$(cache CMAKE_CXX_FLAGS)" == *-fsanitize* ]]; then limit=$((16 << 20)); fi
if (( text + data > limit )); then
  echo "the application's code and data are $((text + data)) bytes, over $limit"; exit 1
fi

# The bundle holds the CUDA target's PTX (objects do not carry it).
info="$build/tools/hologram-info/hologram-info"
[[ $mode == install ]] && info="$work/prefix/bin/hologram-info"
"$info" "$work/build/app_kernels.hgb" | grep -q 'cuda-sm_80: ptx-cuda' ||
  { echo "the bundle has no PTX for cuda-sm_80"; exit 1; }
if nm "$work/build/app_kernels.hologram/saxpy.o" | grep -q -i ptx; then
  echo "an object carries PTX"; exit 1
fi

# The installed compiler is the one used (not the build tree's) when installed.
if [[ $mode == install ]]; then
  grep -q "$work/prefix/bin/hologram-cc" "$work/build/build.ninja"
fi

# Depfiles: one edited kernel rebuilds its own outputs and nothing of the other kernel.
objs="$work/build/app_kernels.hologram"
stamp() { stat -c %Y.%y "$1"; }
saxpy_o=$(stamp "$objs/saxpy.o") clamp_o=$(stamp "$objs/clamp.o") clamp_h=$(stamp "$work/build/kernels/clamp.h")
sleep 1.1
touch "$work/src/kernels/saxpy.json"
cmake --build "$work/build" > "$work/rebuild.log"
[[ $(stamp "$objs/saxpy.o") != "$saxpy_o" ]] || { echo "saxpy.o was not rebuilt"; exit 1; }
[[ $(stamp "$objs/clamp.o") == "$clamp_o" ]] || { echo "clamp.o was rebuilt needlessly"; exit 1; }
[[ $(stamp "$work/build/kernels/clamp.h") == "$clamp_h" ]] || { echo "clamp.h was rebuilt"; exit 1; }
cmake --build "$work/build" -- -n -d explain 2> "$work/explain.log" > "$work/noop.log"
grep -q "no work to do" "$work/noop.log" || { echo "a second build still had work:"; cat "$work/explain.log"; exit 1; }
"$work/build/app" > /dev/null
echo "integration ($mode): built, ran, and rebuilt only the edited kernel"
