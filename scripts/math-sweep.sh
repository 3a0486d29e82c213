#!/usr/bin/env bash
# Checks the CPU's f32 vector functions, the library's and the ones compiled code inlines, on
# every f32 input (2^32 per function and x86 level), and samples the inline f64 functions:
# builds hologram-math-sweep in build/ and runs it. Arguments go to the tool (function names,
# --compiled, --library, --f64, --level=N for one x86 level). About half an hour on 2 cores;
# the unit tests check a dense sample instead.
# The result is recorded in docs/isa.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
cmake --build build --target hologram-math-sweep
exec build/test/hologram-math-sweep "$@"
