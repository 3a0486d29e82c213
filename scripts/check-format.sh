#!/usr/bin/env bash
# Fails when a tracked C or C++ file differs from what clang-format-19 (.clang-format) makes of it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c' 2>/dev/null)
if ((${#files[@]} == 0)); then exit 0; fi
clang-format-19 --dry-run --Werror "${files[@]}"
echo "format: ${#files[@]} files clean"
