#!/usr/bin/env python3
"""hologram-conformance-run on damaged exports: each mistake is a failure with a message and
the documented exit status, never a crash or a pass.

usage: runner_failures.py RUNNER EXPORT_DIR (an export written by hologram-conformance --export)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

RUNNER, EXPORT = sys.argv[1], sys.argv[2]
CASE = "vector_add"  # a small case of the corpus
failures = []


def run(directory, *extra):
    p = subprocess.run([RUNNER, directory, "--backend=cpu", *extra], capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def expect(what, directory, status, text, *extra):
    code, out = run(directory, *extra)
    if code != status or text not in out:
        failures.append(f"{what}: exit {code} (want {status}), output lacks {text!r}:\n{out}")


def export_of(cases, index=None):
    """A copy of EXPORT holding only `cases` (and their bundles)."""
    d = tempfile.mkdtemp(prefix="hologram-runner-test-", dir=os.environ.get("TMPDIR"))
    shutil.copytree(os.path.join(EXPORT, "bundles"), os.path.join(d, "bundles"))
    os.mkdir(os.path.join(d, "cases"))
    for c in cases:
        shutil.copy(os.path.join(EXPORT, "cases", c + ".cbor"), os.path.join(d, "cases"))
    with open(os.path.join(EXPORT, "index.json")) as f:
        base = json.load(f)
    base["cases"] = list(cases)
    base.update(index or {})
    with open(os.path.join(d, "index.json"), "w") as f:
        json.dump(base, f)
    return d


dirs = []
try:
    good = export_of([CASE])
    dirs.append(good)
    expect("one good case", good, 0, f"PASS {CASE}_O2")
    expect("a filter that matches nothing", good, 1, "no case matching 'nothing'",
           "--filter=nothing")

    other = export_of([CASE], {"format": "hologram-conformance-export 0"})
    dirs.append(other)
    expect("another export format", other, 2, "not 'hologram-conformance-export 1'")

    expect("a missing directory", os.path.join(good, "missing"), 2, "index.json")

    truncated = export_of([CASE])
    dirs.append(truncated)
    path = os.path.join(truncated, "cases", CASE + ".cbor")
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])
    expect("a truncated case file", truncated, 1, "is not a conformance case file")

    swapped = export_of([CASE])
    dirs.append(swapped)
    # Every bundle of the case replaced by that of another kernel: the kernel is not found.
    for name in os.listdir(os.path.join(swapped, "bundles")):
        if f".{CASE}." in name:
            shutil.copy(os.path.join(swapped, "bundles", name.replace(CASE, "vector_sub")),
                        os.path.join(swapped, "bundles", name))
    expect("a bundle without the kernel", swapped, 1, f"FAIL {CASE}_O0")
finally:
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)

for f in failures:
    print(f)
print(f"{len(failures)} of 6 checks failed" if failures else "all 6 checks passed")
sys.exit(1 if failures else 0)
