#!/usr/bin/env python3
"""Runs one failing launch on several backends and checks that each fails it the same way.

usage: same_failure.py HOLOGRAM_RUN [--backends=interp,cpu,vulkan,opencl] ARGS...

hologram-run runs ARGS with --backend=B for each backend B; each run must exit 3 (a launch
failure) with exactly one 'launch failed' line on stderr (the sanitizer builds' leak checker may
append its own report), and the lines must be equal. Prints that line and exits 0; otherwise
prints each backend's status and line and exits 1.
"""
import os
import subprocess
import sys


def main():
    run, args = sys.argv[1], sys.argv[2:]
    backends = ["interp", "cpu", "vulkan", "opencl"]
    if args and args[0].startswith("--backends="):
        backends = args[0].split("=", 1)[1].split(",")
        args = args[1:]
    env = dict(os.environ, XDG_RUNTIME_DIR=os.environ.get("XDG_RUNTIME_DIR", "/tmp"))
    seen = {}
    for backend in backends:
        p = subprocess.run([run, *args, "--backend=" + backend], env=env, capture_output=True,
                           text=True)
        lines = [l for l in p.stderr.splitlines() if "launch failed" in l]
        seen[backend] = (p.returncode, lines)
    first = seen[backends[0]]
    if first[0] == 3 and len(first[1]) == 1 and all(s == first for s in seen.values()):
        print(first[1][0])
        return 0
    for backend, (code, lines) in seen.items():
        print(f"{backend}: exit {code}: {lines}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
