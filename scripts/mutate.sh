#!/usr/bin/env bash
# Mutation testing, run by hand (not in CI): applies each mutation of test/mutation/mutations.txt
# to the source, one at a time, rebuilds incrementally in build-mutate/ and runs the whole ctest
# suite (unit, lit, conformance on every backend). A mutation the suite fails on is killed; one
# it passes is a survivor, printed with what it breaks. The source is restored after each one,
# and on exit.
#
#   scripts/mutate.sh            every mutation
#   scripts/mutate.sh ID...      only these
#   scripts/mutate.sh --check    only check the list (each text occurs exactly once)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
list=$root/test/mutation/mutations.txt
build=${HOLOGRAM_MUTATE_BUILD_DIR:-$root/build-mutate}
timeout_s=${HOLOGRAM_MUTATE_TEST_TIMEOUT:-300}

# The list's one parser: `ids` prints the ids, `show ID FIELD` a field, `apply ID` mutates the
# file in place (refusing a text that does not occur exactly once) and prints its path.
mutation() {
  python3 - "$list" "$root" "$@" <<'PY'
import sys
path, root, cmd, *args = sys.argv[1:]
blocks, cur = [], None
for n, line in enumerate(open(path, encoding="utf-8"), 1):
    line = line.rstrip("\n")
    if line.startswith("== "):
        cur = {"id": line[3:].strip(), "line": n}
        blocks.append(cur)
    elif cur is not None and ": " in line and not line.startswith("#"):
        key, value = line.split(": ", 1)
        cur[key] = value
by_id = {b["id"]: b for b in blocks}
def fail(msg):
    print(f"mutate: {msg}", file=sys.stderr)
    sys.exit(2)
for b in blocks:
    for key in ("file", "find", "replace", "why"):
        if key not in b:
            fail(f"{path}:{b['line']}: mutation {b['id']} has no '{key}:'")
if len(by_id) != len(blocks):
    fail("two mutations share an id")
if cmd == "ids":
    print("\n".join(b["id"] for b in blocks))
elif cmd == "show":
    print(by_id[args[0]][args[1]])
elif cmd in ("apply", "check"):
    for b in (blocks if cmd == "check" else [by_id[args[0]]]):
        f = f"{root}/{b['file']}"
        text = open(f, encoding="utf-8").read()
        count = text.count(b["find"])
        if count != 1:
            fail(f"{b['id']}: the text occurs {count} times in {b['file']}, not once")
        if cmd == "apply":
            open(f, "w", encoding="utf-8").write(text.replace(b["find"], b["replace"]))
            print(b["file"])
    if cmd == "check":
        print(f"mutate: {len(blocks)} mutations, each text found once")
else:
    fail(f"unknown command {cmd}")
PY
}

if [[ ${1:-} == --check ]]; then
  mutation check
  exit 0
fi
mutation check
if (($# > 0)); then ids=("$@"); else mapfile -t ids < <(mutation ids); fi

"$root/scripts/setup.sh" >/dev/null
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
export HOLOGRAM_REQUIRE_BACKENDS=${HOLOGRAM_REQUIRE_BACKENDS:-cpu,vulkan,opencl}
if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi

backup=$(mktemp -d)
current=""
restore() {
  if [[ -n $current ]]; then
    cp "$backup/file" "$root/$current"
    current=""
  fi
}
trap 'restore; rm -rf "$backup"' EXIT
trap 'exit 130' INT TERM

run_suite() { # $1: log file; fails when a test fails
  ctest --test-dir "$build" --parallel "$(nproc)" --timeout "$timeout_s" --stop-on-failure \
    >"$1" 2>&1
}

echo "mutate: baseline (no mutation)"
cmake --build "$build" --parallel "$(nproc)" >"$build/mutate-build.log" 2>&1 ||
  { echo "mutate: the unmutated tree does not build (see $build/mutate-build.log)"; exit 1; }
run_suite "$build/mutate-baseline.log" ||
  { echo "mutate: the unmutated suite fails (see $build/mutate-baseline.log)"; exit 1; }

killed=0
total=0
survivors=()
report=$build/mutate-report.txt
: >"$report"
for id in "${ids[@]}"; do
  file=$(mutation show "$id" file)
  cp "$root/$file" "$backup/file"
  current=$file
  mutation apply "$id" >/dev/null
  total=$((total + 1))
  log=$build/mutate-$id.log
  if ! cmake --build "$build" --parallel "$(nproc)" >"$log" 2>&1; then
    restore
    echo "mutate: $id does not compile; fix the list (see $log)"
    exit 1
  fi
  if run_suite "$log"; then
    line="SURVIVED  $id ($file): $(mutation show "$id" why)"
    survivors+=("$id")
  else
    killed=$((killed + 1))
    first=$(grep -m1 -E '\*\*\*(Failed|Timeout)|\(Failed\)|\(Timeout\)' "$log" |
      sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: //; s/ \.+.*//' || true)
    line="killed    $id by ${first:-the suite}"
  fi
  restore
  echo "$line" | tee -a "$report"
done
# Leave build-mutate matching the source again.
cmake --build "$build" --parallel "$(nproc)" >/dev/null 2>&1 || true
echo "mutate: killed $killed/$total (report: $report)" | tee -a "$report"
((${#survivors[@]} == 0))
