#!/usr/bin/env bash
# Fuzzes the ISA text parser, the JSON front end, the circuit parser, the bundle loader and the
# compiler behind the ISA parser (-O2 and every back end) for SECONDS each (default 60),
# starting from test/fuzz/corpus; crashes are written to fuzz-findings/. The compiler's target
# reports inputs that take over 10 s (the device library of a library op, under ASan) as slow
# units: a timeout is a finding only past -timeout, 60 s here.
# The fuzz targets are built into build-fuzz/ with ASan, UBSan and libFuzzer's coverage
# instrumentation in every library they call, so the fuzzer sees the parsers' branches.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOLOGRAM_FUZZ_DIR:-$root/build-fuzz}
seconds=${1:-60}
"$root/scripts/setup.sh"
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link"
CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOLOGRAM_ENABLE_FUZZ=ON \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" > /dev/null
cmake --build "$build" --parallel "$(nproc)" \
  --target fuzz_isa_text fuzz_json fuzz_circuit fuzz_bundle fuzz_compile
mkdir -p "$root/fuzz-findings"
for target in isa_text json circuit bundle compile; do
  work=$(mktemp -d)
  "$build/test/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len=8192 -timeout=60 \
    -artifact_prefix="$root/fuzz-findings/$target-" "$work" "$root/test/fuzz/corpus/$target"
  rm -rf "$work"
done
