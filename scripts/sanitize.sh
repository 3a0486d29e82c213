#!/usr/bin/env bash
# Builds the project with clang-19, AddressSanitizer and UndefinedBehaviorSanitizer (and the
# libFuzzer targets) into build-sanitize/, then runs every ctest suite there, including each
# fuzz target over its seed corpus. Then the unit tests with ThreadSanitizer (build-tsan/):
# among them the threads that allocate, copy, launch and free at once on the CPU, Vulkan and
# OpenCL backends, and the asynchronous queues on each; any report fails the stage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOLOGRAM_SANITIZE_DIR:-$root/build-sanitize}

if [[ ! -f $build/build.ninja ]]; then
  CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOLOGRAM_WERROR=ON -DHOLOGRAM_ENABLE_FUZZ=ON \
    -DCMAKE_C_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
fi
# Test discovery runs the test programs during the build, so the suppressions apply there too.
export LSAN_OPTIONS=suppressions=$root/test/lsan.supp
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
cmake --build "$build" --parallel "$(nproc)"
cd "$build"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure --parallel "$(nproc)"

tsan=${HOLOGRAM_TSAN_DIR:-$root/build-tsan}
if [[ ! -f $tsan/build.ninja ]]; then
  CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$tsan" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOLOGRAM_WERROR=ON \
    -DCMAKE_C_FLAGS="-fsanitize=thread" -DCMAKE_CXX_FLAGS="-fsanitize=thread" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread"
fi
cmake --build "$tsan" --parallel "$(nproc)" --target hologram-unit-tests
TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$tsan/test/hologram-unit-tests" --gtest_brief=1
