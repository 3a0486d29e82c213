#!/usr/bin/env bash
# Checks the CPU library's f32 vector functions on every f32 input (2^32 per function and
# x86 level): builds hologram-math-sweep in build/ and runs it. Takes minutes; the unit tests
# check a dense sample instead. The result is recorded in docs/isa.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
cmake --build build --target hologram-math-sweep
exec build/test/hologram-math-sweep
