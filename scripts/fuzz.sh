#!/usr/bin/env bash
# Fuzzes the ISA text parser, the JSON front end and the circuit parser for SECONDS each
# (default 60), starting from test/fuzz/corpus; crashes are written to fuzz-findings/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
"$root/scripts/sanitize.sh" > /dev/null
mkdir -p "$root/fuzz-findings"
for target in isa_text json circuit; do
  work=$(mktemp -d)
  "$root/build-sanitize/test/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len=8192 \
    -artifact_prefix="$root/fuzz-findings/$target-" "$work" "$root/test/fuzz/corpus/$target"
  rm -rf "$work"
done
