#!/usr/bin/env bash
# Builds the project with clang-19, AddressSanitizer and UndefinedBehaviorSanitizer (and the
# libFuzzer targets) into build-sanitize/, then runs every ctest suite there, including each
# fuzz target over its seed corpus. Then the unit tests with ThreadSanitizer (build-tsan/):
# among them the threads that allocate, copy, launch and free at once on the CPU, Vulkan and
# OpenCL backends, and the asynchronous queues on each; any report fails the stage.
#
# Both builds use -O1 and line tables only: what the sanitizers need for their reports, at
# about two thirds of the compile time of -O2 -g. The libraries carry no libFuzzer coverage
# instrumentation here (the corpora only replay); scripts/fuzz.sh builds its own with it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOLOGRAM_SANITIZE_DIR:-$root/build-sanitize}
opt="-O1 -gline-tables-only -DNDEBUG"

# Configured on every run (cheap once configured), so a change of flags here reaches old trees.
asan="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOLOGRAM_WERROR=ON -DHOLOGRAM_ENABLE_FUZZ=ON \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt" \
  -DCMAKE_C_FLAGS="$asan" -DCMAKE_CXX_FLAGS="$asan" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" > /dev/null
# Test discovery runs the test programs during the build, so the suppressions apply there too.
export LSAN_OPTIONS=suppressions=$root/test/lsan.supp
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
cmake --build "$build" --parallel "$(nproc)"
# Every suite but two that run no code of ours under the sanitizers: the PTX assembler over the
# exported corpus (NVIDIA's ptxas on the same PTX the GCC build's run checks) and the
# downstream CMake projects (their compile and link).
(cd "$build" &&
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure --parallel "$(nproc)" -E '^(conformance_ptxas|integration_.*)$')

tsan=${HOLOGRAM_TSAN_DIR:-$root/build-tsan}
CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$tsan" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOLOGRAM_WERROR=ON \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt" \
  -DCMAKE_C_FLAGS="-fsanitize=thread" -DCMAKE_CXX_FLAGS="-fsanitize=thread" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" > /dev/null
cmake --build "$tsan" --parallel "$(nproc)" --target hologram-unit-tests
# One process per core, each running its share of the tests (GoogleTest's sharding): every test
# runs once. A failed shard's whole output is shown.
#
# Four suites stay out: the randomised programs of the -O passes (Passes), circuits (Circuit),
# the interpreter's semantics (Semantics) and the JSON front end (JsonFrontend). They run the
# front ends, the passes and the interpreter, which start no thread, so ThreadSanitizer, which
# reports races between threads, has nothing to find in them; they were 190 of the stage's
# 260 seconds of test time. They run in both ctest stages above, the second under ASan+UBSan.
no_threads='Passes.*:Circuit.*:Semantics.*:JsonFrontend.*'
shards=$(nproc)
pids=()
for ((i = 0; i < shards; ++i)); do
  HOLOGRAM_CACHE_DIR=$tsan/test/compile-cache GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
    TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
    "$tsan/test/hologram-unit-tests" --gtest_brief=1 --gtest_filter="-$no_threads" \
    > "$tsan/shard-$i.log" 2>&1 &
  pids+=($!)
done
failed=0
for ((i = 0; i < shards; ++i)); do
  if wait "${pids[$i]}"; then
    tail -n 1 "$tsan/shard-$i.log"
  else
    echo "ThreadSanitizer shard $i of $shards failed:"
    cat "$tsan/shard-$i.log"
    failed=1
  fi
done
exit $failed
