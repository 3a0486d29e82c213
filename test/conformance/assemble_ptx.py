#!/usr/bin/env python3
"""Assembles every PTX module of an exported corpus (DIR/ptx, cuda-sm_80) with NVIDIA's ptxas,
and lists the kernels the CUDA back end does not lower yet with the count of each reason.

usage: assemble_ptx.py PTXAS EXPORT_DIR
"""
import os
import subprocess
import sys
import tempfile

PTXAS, EXPORT = sys.argv[1], sys.argv[2]
directory = os.path.join(EXPORT, "ptx")
modules = sorted(f for f in os.listdir(directory) if f.endswith(".ptx"))
failed = []
with tempfile.TemporaryDirectory() as tmp:
    for name in modules:
        p = subprocess.run([PTXAS, "--gpu-name", "sm_80", os.path.join(directory, name), "-o",
                            os.path.join(tmp, "out.cubin")], capture_output=True, text=True)
        if p.returncode != 0:
            failed.append(f"{name}:\n{p.stdout}{p.stderr}")
bundles = len([f for f in os.listdir(os.path.join(EXPORT, "bundles")) if f.endswith(".hgb")])
for f in failed:
    print("FAIL", f)
print(f"{len(modules) - len(failed)} of {len(modules)} PTX modules assembled "
      f"({bundles} kernels exported; the others are not lowered for CUDA yet)")
sys.exit(1 if failed or not modules else 0)
