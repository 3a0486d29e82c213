#!/usr/bin/env python3
"""Turns hologram-bench JSON output into the ratio table of docs/performance.md.

Each row compares a peer with the hologram run of the same thread mode (1t: one thread,
mt: every core): ratio = peer time / hologram time, so > 1 means hologram-cc output is faster.
"""
import json
import platform
import subprocess
import sys
from collections import OrderedDict


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def each_run(data):
    """A benchmark's runs, its aggregates left out, in the order it registered them. Every
    benchmark ran each row several times, interleaved at random with the other rows (this
    shared machine moves a row by tens of percent between runs): keep_fastest keeps the
    fastest (noise only ever adds time)."""
    return sorted((b for b in data["benchmarks"] if b.get("run_type") != "aggregate"),
                  key=lambda b: (b.get("family_index", 0), b.get("per_family_instance_index", 0)))


def keep_fastest(row, key, t):
    row[key] = min(t, row.get(key, t))


def us(t):
    """A time in µs with enough digits for sub-microsecond rows."""
    return f"{t:.3f}" if t < 1 else f"{t:.2f}" if t < 10 else f"{t:.1f}"


def best_peer(impls, mode):
    """The fastest peer of a mode (1t or mt) among a row's implementations, as (time, name),
    or None: peers whose name says `relaxed` (no stated error bound) are left out."""
    peers = [(t, impl) for impl, t in impls.items()
             if not impl.startswith("hologram") and impl.endswith("_" + mode)
             and "relaxed" not in impl]
    return min(peers) if peers else None


def best_rows(times):
    """One row per workload, size and mode: hologram against the fastest peer of the same
    accuracy class (peers whose name says `relaxed`, such as Halide's fast_exp, have no stated
    error bound and are left out of the choice but listed in the table of every peer)."""
    rows = []
    for (workload, size), impls in times.items():
        for mode in ("1t", "mt"):
            base = impls.get("hologram_" + mode)
            peer = best_peer(impls, mode)
            if base is None or not peer:
                continue
            t, impl = peer
            verdict = "" if t / base >= 1 else " (behind)"
            rows.append(f"| {workload} | {size} | {mode} | {us(base)} | {impl} | {us(t)} | "
                        f"{t / base:.2f}{verdict} |")
    return rows


def best_level():
    """The x86 level the dispatcher picks on this CPU (the main run's level)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l for l in f if l.startswith("flags")), "").split()
    except OSError:
        return "v2"
    if all(f in flags for f in ("avx512f", "avx512bw", "avx512dq", "avx512vl")):
        return "v4"
    if "avx2" in flags and "fma" in flags:
        return "v3"
    return "v2"


def level_rows(times, bench_path):
    """The workloads of bench.sh's runs capped at a level (gemm, gemv and softmax) at every x86
    level the CPU runs: the main run is the best level, and bench.sh wrote bench-v2.json (and
    bench-v3.json) beside it for the lower ones, each with that level's peers (OpenBLAS held to
    a core of the level, whose name the run's context keeps as openblas_core, and the fast-math
    loop and Halide's pipeline built for the level). Each row: hologram against the best peer
    at its level, and against the best peer of this CPU (the main run's)."""
    import glob
    import os
    per_level = OrderedDict()
    cores = {}
    for path in sorted(glob.glob(os.path.join(os.path.dirname(bench_path), "bench-v*.json"))):
        level = os.path.basename(path)[len("bench-"):-len(".json")]
        with open(path) as f:
            data = json.load(f)
        cores[level] = data["context"].get("openblas_core")
        for b in each_run(data):
            workload, size, impl = b["name"].split("/")[:3]
            keep_fastest(per_level.setdefault((workload, size), OrderedDict()), (level, impl),
                         b["real_time"])
    top = best_level()
    rows = []
    for (workload, size), impls in times.items():
        if (workload, size) not in per_level:  # the workloads bench.sh ran at each level
            continue
        runs = dict(per_level[(workload, size)])
        for impl, t in impls.items():
            runs[(top, impl)] = t
        for mode in ("1t", "mt"):
            native = best_peer(impls, mode)
            if not native:
                continue
            t_native, _ = native
            for level in sorted({level for level, _ in runs}):
                t = runs.get((level, "hologram_" + mode))
                here = best_peer({impl: t for (l, impl), t in runs.items() if l == level}, mode)
                if t is None or not here:
                    continue
                t_peer, peer = here
                if peer.startswith("openblas") and cores.get(level):
                    peer += f" ({cores[level]})"
                verdict = "" if t_peer / t >= 1 else " (behind)"
                rows.append(f"| {workload} | {size} | {mode} | x86-64-{level} | {us(t)} | {peer} | "
                            f"{us(t_peer)} | {t_peer / t:.2f}{verdict} | {us(t_native)} | "
                            f"{t_native / t:.2f} |")
    return rows


def ratio_rows(times):
    """One row per peer: it and the hologram run of its mode (the name's last part: 1t, mt,
    vulkan, opencl), ratio = peer time / hologram time."""
    rows = []
    for (workload, size), impls in times.items():
        for impl, t in impls.items():
            if impl.startswith("hologram"):
                continue
            mode = impl.rsplit("_", 1)[1]
            base = impls.get("hologram_" + mode)
            if base is None:
                continue
            rows.append(
                f"| {workload} | {size} | {us(base)} ({mode}) | {impl} | {us(t)} | {t / base:.2f} |")
    return rows


def gpu_section(data):
    """The Vulkan and OpenCL rows: hologram_<backend> against the peers of that backend."""
    times = OrderedDict()
    rates = OrderedDict()
    for b in each_run(data):
        parts = b["name"].split("/")
        workload, size, impl = parts[0], parts[1], parts[2]
        if workload == "transfer":
            gbs = b.get("bytes_per_second", 0) / 1e9
            rates[(size, impl)] = max(gbs, rates.get((size, impl), gbs))
            continue
        keep_fastest(times.setdefault((workload, size), OrderedDict()), impl, b["real_time"])
    ctx = data["context"]
    lines = [
        "",
        "## Vulkan and OpenCL",
        "",
        f"- devices: Vulkan {ctx.get('vulkan_device', 'not run')}; "
        f"OpenCL {ctx.get('opencl_device', 'not run')}",
        f"- date: {ctx.get('date')}",
        "- hologram: `hologram-cc bench/kernels/bench.hasm --emit=bundle -O3 "
        "--target=vulkan1.1,opencl1.2`, loaded with `load_module` and run with `launch` "
        "(bench/gpu_bench.cpp); `sum` and `gemm` are whole-launch kernels (reduce_all, gemm) "
        "run by the device library (two-stage reduction; gemm per block of 16x16 lanes in "
        "128x128 tiles of 8x8 outputs a lane on Vulkan and 64x64 tiles of 4x4 on PoCL, whose "
        "work-group loops keep a lane's registers in memory across barriers; accumulated in f32 "
        "over panels in shared memory, docs/spirv.md)",
        "- glsl_vulkan: the same kernels in GLSL (bench/peers/glsl; glslangValidator -V, "
        "spirv-opt -O), launched through the same Vulkan backend; gemm tiles 16x16 in shared "
        "memory with f32 accumulation, sum in the same two stages",
        "- openclc_opencl: the same kernels in OpenCL C (bench/peers/opencl/kernels.cl) built "
        "from source by the driver and run through the OpenCL API directly",
        "- dispatch/empty: one launch of a kernel that does nothing, start to finish",
        "- method: each row the fastest of 3 repetitions, interleaved at random with the other "
        "rows",
        "",
        "| workload | size | hologram (µs) | peer | peer (µs) | ratio |",
        "|---|---|---:|---|---:|---:|",
    ]
    lines += ratio_rows(times)
    for (workload, size), impls in times.items():
        for impl, t in impls.items():
            if impl.startswith("hologram") and not any(
                    not i.startswith("hologram") and i.endswith(impl.rsplit("_", 1)[1])
                    for i in impls):
                lines.append(f"| {workload} | {size} | {t:.1f} ({impl.rsplit('_', 1)[1]}) | "
                             "— | — | — |")
    if rates:
        lines += ["", "| transfer | backend | GB/s |", "|---|---|---:|"]
        for (size, impl), gbs in rates.items():
            lines.append(f"| {size} | {impl.rsplit('_', 1)[1]} | {gbs:.2f} |")
    lines += [
        "",
        "These devices are CPU drivers (Mesa's lavapipe and PoCL) on the same two cores as the",
        "CPU rows: the ratios compare code generators on them, not GPUs (the CUDA section has",
        "the GPU rows; Vulkan does not start on that machine, docs/gpu.md).",
        "These drivers' timings move by up to 40 % between runs of the same binary (the Vulkan",
        "sum peer took 28 to 48 ms on 2026-11-27), so a ratio within 0.8 to 1.2 is not a",
        "measured difference, even as the fastest of 3 (on 2026-11-27 saxpy on OpenCL was 1.34x",
        "and 0.85x, vector_add on OpenCL 1.10x and 0.76x, in runs with the same kernel code).",
        "Where hologram is behind:",
        "",
        "- saxpy on Vulkan (0.81x to 1.02x in the day's runs): `fma.f32` rounds once (SPEC §3.4),",
        "  and GLSL.std.450's `Fma` need not fuse, so the Vulkan module computes it in f64 and",
        "  rounds to odd (docs/spirv.md); the peer's `alpha * x + y` may round twice.",
        "  OpenCL.std's `fma` is correctly rounded, so the OpenCL module calls it.",
        "",
        "sum on Vulkan went from 0.58x-0.63x to 0.93x-1.03x and gemm on Vulkan from 1.4x to about",
        "5x on 2026-11-28. Neither the first stage's shape nor the way back of the result had",
        "moved sum: the cause was the tree across a block's lanes (and gemm's panels), which",
        "addressed shared memory by byte offsets in registers, so each access tested its",
        "alignment at run time with a status write behind the test; lavapipe ran a block's",
        "tree 4.5 times slower for it (3.9 ms against 0.87 for 256 blocks). The device library",
        "now indexes shared memory by element (docs/spirv.md): in alternating runs of the two",
        "bundles, sum 12.3 against 6.6 ms and gemm 256 39 against 11 ms on lavapipe (PoCL did",
        "not move). In the run of 2026-11-28 14:33 sum on Vulkan was 0.70x; run alone right",
        "after it, 4761-5109 µs against the peer's 5084-5148 (1.01-1.07x).",
        "",
        "vector_add on Vulkan went from 0.90x to about 1x on 2026-11-28 (saxpy from 0.83x to",
        "0.89x): lavapipe computed %gid's linear block index ((z * grid y + y) * grid x + x,",
        "each a built-in plus a push constant) per lane, a tenth of the kernel's time. A grid",
        "of one row of blocks now specialises it to block x (specialisation constant 5,",
        "docs/spirv.md): in alternating runs of the two bundles, 14.1-15.8 against 13.0-14.8",
        "ms, the peer 13.5-14.8.",
        "",
        "sum on OpenCL went from 0.81x to 3x with the first stage's contiguous shares",
        "(5.2-5.5 ms with the grid-stride one, 1.5 ms with them, in alternating runs): each of",
        "PoCL's work-groups, a loop on one core, now reads one stretch of memory.",
        "",
        "gemm on Vulkan got faster again on 2026-12-05: the device library's gemm is held to",
        "its error bound (docs/isa.md), not to `fma`'s single rounding, so its inner loop now",
        "uses the device's `Fma` instead of calling the exact emulation (f32 through f64) at",
        "every step (docs/spirv.md). In alternating runs of the two bundles on lavapipe (Zen 5,",
        "2 threads): gemm 512 53.3-55.0 against 33.3-36.9 ms, gemm 256 6.7-6.9 against 4.7-6.1.",
        "",
    ]
    return lines


def compile_section(data):
    """Compile time at 1k, 4k and 16k instructions per target, and the 16k/4k growth."""
    times = OrderedDict()
    small = OrderedDict()
    runtime = OrderedDict()
    for b in each_run(data):
        group, what, size = b["name"].split("/")
        t = b["real_time"]
        if group == "compile_small":
            keep_fastest(small, (what, size), t)
        elif group == "runtime_compile":
            best = runtime.get((what, size), (t, None))[0]
            runtime[(what, size)] = (min(t, best), b.get("time_unit", "ns"))
        else:
            keep_fastest(times.setdefault(what, OrderedDict()), int(size), t)
    lines = [
        "## Compile time",
        "",
        f"- date: {data['context'].get('date')}",
        "- a straight-line f32 kernel of N instructions with a lane-varying branch every 50 "
        "around an instruction whose result is stored (so -O2 keeps every branch), "
        "compiled in-process as `hologram-cc -O2` does: parse, verify, the -O2 ISA pipeline, "
        "then an x86-64-v3 object or Vulkan 1.1 SPIR-V (bench/compile_bench.cpp); each time "
        "the fastest of 8 repetitions run in random order among the other rows",
        "- growth = time at 16k / time at 4k; linear is 4x, the goal at most 5x",
        "",
        "| target | 1k (ms) | 4k (ms) | 16k (ms) | growth 16k/4k |",
        "|---|---:|---:|---:|---:|",
    ]
    for target, t in times.items():
        growth = t[16000] / t[4000]
        lines.append(f"| {target} | {t[1000]:.0f} | {t[4000]:.0f} | {t[16000]:.0f} | "
                     f"{growth:.1f}x{'' if growth <= 5 else ' (over the goal)'} |")
    lines += [
        "",
        "Where the growth came from and what changed (perf, spirv-opt --time-report, LLVM's "
        "pass timers and callgrind, issue 18). SPIR-V: every register was a Private variable "
        "loaded and stored around each instruction and the exact f32 fma was expanded inline "
        "(80% of the module); spirv-opt's memory-to-SSA pass checks every use of a variable "
        "for each of its loads and stores (quadratic), nine runs of aggressive dead-code "
        "elimination went over the whole module, and its working set outgrew the 32 MiB L3 "
        "between 4k and 16k (16k took 7.3x the time of 4k). The lowering now writes registers "
        "as SSA values with phis, calls one fma function, and -O2 runs a short pass list "
        "(docs/spirv.md). With the kernel's branches kept (until the morning of 2026-11-26 "
        "-O2 removed them as dead), x86 took 8x as long at 16k as at 4k: every block sat in "
        "the loop of the divergence scheduler; a branch over a short straight run now runs "
        "under a mask (if-conversion, docs/design.md) and the SLP vectoriser is off. On the "
        "evening of 2026-11-26: LLVM's Reassociate pass rewrote the chain of conditional adds "
        "to the counter as one sum at the end of the kernel, so 320 masks stayed live across "
        "it (1,765 spills at 16k, none at 4k) and the register allocator (17x) and machine "
        "scheduler (10x) grew with them; the CPU pipeline skips Reassociate now (x86 at 16k: "
        "1.49 s to 0.90-1.0 s). Copy propagation looked at all 252 registers for every write, "
        "CSE allocated and compared map keys per instruction, DCE allocated two lists per "
        "instruction and natural_loops() walked the dominator tree for every forward edge "
        "(quadratic in a chain of branches): the -O2 ISA pipeline at 16k went from 182 to 64 "
        "ms. SPIRV-Tools named every id before each validation (7%), now only for the "
        "message of a failure. Instructions executed (callgrind) now grow 3.65x (x86) and "
        "3.7x (Vulkan) from 4k to 16k, less than linear; the time grows faster because the "
        "16k compile's data (LLVM's and SPIRV-Tools' def-use maps and instruction lists) "
        "misses the 512 KiB L2 and the L3 shared with other tenants more often. Runs of the "
        "same binary on this machine differ by up to 2x, so each size is the fastest of 8 "
        "runs interleaved with the others: on 2026-11-26 evening three such runs gave x86 "
        "4.5x-4.6x and Vulkan 4.9x-5.2x, so Vulkan's growth is at the goal, not reliably "
        "under it.",
        "",
    ]
    if small:
        lines += [
            "### A small kernel",
            "",
            "saxpy with a bound check (bench/compile_bench.cpp): in-process as above, and as a build "
            "runs it, one process per file: `hologram-cc -O2 --emit=obj` against clang-19 -O2 "
            "compiling the same loop written in C.",
            "",
            "| how | target | time (ms) |",
            "|---|---|---:|",
        ]
        for (how, target), t in sorted(small.items()):
            lines.append(f"| {how.replace('_', ' ')} | {target} | {t:.1f} |")
        lines += [
            "",
            "Since 2026-11-26 the x86 driver runs blocks of whole chunks in a loop of their own "
            "(docs/design.md), and LLVM now unswitches and unrolls it at x86-64-v3 as it did at "
            "v4, so this kernel's v3 compile costs what v4's did: in alternating in-process runs "
            "24-31 ms before and 38-47 ms after, and the first `execute_program` below 27-29 ms "
            "before and 41-51 ms after, at the edge of its goal. That is the price of full "
            "blocks with no test per chunk (the vector_add and saxpy rows at 2^10 to 2^16). "
            "Kernels of more than 256 instructions keep one loop. Since the evening of "
            "2026-11-26 the times here are the fastest of 8 interleaved runs (the numbers "
            "above were single runs), and -O2's own passes are cheaper (see above).",
            "",
        ]
    if runtime:
        lines += [
            "### Compiling at run time",
            "",
            "saxpy over 4096 elements on the CPU backend (bench/compile_bench.cpp): the first "
            "`execute_program` of a fresh backend with the compile cache off (the -O2 pipeline, "
            "an x86 object, ORC linking, the launch; goal <= 50 ms) and with a warm cache; a "
            "later `execute_program` against `launch` of the same kernel loaded from a shared "
            "object compiled ahead of time (goal: the same speed); `hologram-run --backend=cpu` "
            "with a warm cache against `hologram-run --help`, the process alone (goal: <= 5 ms "
            "between them). On a Zen 5 machine on 2026-11-27 (afternoon, not this table) the two "
            "differed by 15 ms: the Atlas boundary pool (1.18 MB) was zeroed three times per run "
            "(hologram-run's, the backend's, and once per launching thread), about 860 page "
            "faults at some 17 us each on that VM. It is now made only for a kernel that uses the "
            "Atlas state: 3.1 ms between them (perf stat, 20 runs each).",
            "",
            "Since 2026-12-06 (night) the rare way of a masked access at a page's end goes by a loop over the chunk's registers, not one copy a register (docs/design.md, \"Masked accesses at a page's end\"): hologram-cc's compile of this saxpy at x86-64-v4 went from 335 to 281 million instructions (callgrind, `-O2 --emit=obj`; 211 at v3, which had no such way then). In six alternating rounds of the two compile-bench builds that night (median of 5 each, a quiet hour): the first `execute_program` with the cache off 39.7-43.3 ms against 46.9-50.5, the in-process compile at v4 41.2-43.6 against 46.9-53.1 (in a noisy hour before: 42-63 against 52-63 for the first). Since 2026-12-07 (morning) a partial chunk's masks are made from counts and the loops of chunks of four registers are not unrolled (docs/design.md): this compile of saxpy at x86-64-v4 went from 222 to 201 (the masks), 186 (the loops) and 182 (the called chunk) million instructions (callgrind, as above), and in the tables of 05:54 and 08:11, the in-process compile at v4 from 34.0 to 29.7 ms, at v3 from 24.9 to 22.8, the first `execute_program` with the cache off from 34.2 to 29.5. Since 2026-12-07 (evening) x86-64-v3 has a rare way of its own, a loop over the mask's lanes (an AVX2 masked load reaching into a page not present took 115 ns on the AVX2 EPYC: the note on vector_add_page_end): this compile of saxpy at v3 went from 153 to 174 million instructions (callgrind, as above), and on the AVX2 EPYC, in three alternating rounds of the two compile-bench builds (median of 3 each), the in-process compile at v3 from 40-47 ms to 60-62 and the first `execute_program` with the cache off (at v3 there) from 42-52 to 52-63, past its goal of 50 ms on that VM; on a CPU with AVX-512 the first `execute_program` compiles at v4, which had its rare way already (32 ms on the Zen 4 VM at 18:29 that day).",
            "",
            "Since 2026-12-08 (night) a prefix of a chunk's lanes below AVX-512 (the span's lanes, a `%gid` bound check) is made from its count, and the last pass of the optimiser, PrefixMasksPass, works with those counts (docs/design.md): this compile of saxpy at x86-64-v3 went from 174 to 146 million instructions (callgrind, as above), and the compile bench's process for one first `execute_program` with the cache off from 175 to 147 million. Not yet in the table (its rows are from the run of 2026-12-07 21:32, before it): in one run of each compile-bench build at scripts/bench.sh's settings that night, in a slower hour of the AVX2 EPYC (clang's own compile of saxpy 73-86 ms against 64.7 in the table), the first `execute_program` with the cache off took 47.9 ms (the fastest of 8; median 60.7) before it and 50.0 (57.8) after, the in-process compile at v3 51.4 (67.5) and 42.8 (56.7): the noise of that hour was larger than the change.",
            "",
            "| row | case | time |",
            "|---|---|---:|",
        ]
        for (what, case), (t, unit) in sorted(runtime.items()):
            shown = f"{t / 1000:.2f} ms" if unit == "us" and t >= 1000 else f"{t:.2f} {unit}"
            lines.append(f"| {what.replace('_', ' ')} | {case.replace('_', ' ')} | {shown} |")
        lines.append("")
    return lines


# Sections measured on a machine this script does not run on (the GPU machine lent to some
# tasks, docs/gpu.md): they are written by hand from that run and kept as they are.
KEPT_SECTIONS = ("## CUDA",)


def kept_sections(path):
    """The lines of each KEPT_SECTIONS section of the existing file, up to the next section."""
    try:
        with open(path) as f:
            old = f.read().split("\n")
    except OSError:
        return []
    kept = []
    for title in KEPT_SECTIONS:
        if title not in old:
            continue
        start = old.index(title)
        end = next((i for i in range(start + 1, len(old)) if old[i].startswith("## ")), len(old))
        section = old[start:end]
        while section and not section[-1].strip():
            section.pop()
        kept += section + [""]
    return kept[:-1]  # the next section starts with its own blank line


def main():
    if len(sys.argv) not in (3, 4, 5):
        sys.exit("usage: report.py BENCH.json [GPU.json [COMPILE.json]] OUT.md")
    with open(sys.argv[1]) as f:
        data = json.load(f)
    gpu = None
    if len(sys.argv) >= 4:
        with open(sys.argv[2]) as f:
            gpu = json.load(f)
    compile_data = None
    if len(sys.argv) == 5:
        with open(sys.argv[3]) as f:
            compile_data = json.load(f)
    times = OrderedDict()
    overhead = OrderedDict()
    for b in each_run(data):
        workload, size, impl = b["name"].split("/")[:3]
        if workload == "launch_overhead":
            keep_fastest(overhead, (size, impl), b["real_time"])
            continue
        keep_fastest(times.setdefault((workload, size), OrderedDict()), impl, b["real_time"])
    ctx = data["context"]
    lines = [
        "# Performance",
        "",
        "Generated by `scripts/bench.sh` (bench/hologram_bench.cpp, bench/report.py); do not edit",
        "by hand. Every row was measured in one run of one binary, hologram-cc output and its peer",
        "side by side. **ratio = peer time / hologram time**: above 1, hologram-cc output is faster.",
        "Every row, hologram's and the peers', checked its result against a double-precision",
        "reference before it was timed (bench/verify.h; the gemm rows also that A and B are unchanged).",
        "`scripts/bench.sh` writes docs/performance.md on a machine with AVX-512 and",
        "docs/performance-avx2.md on one without (x86-64-v3 is then the best level), so that the",
        "results of both stay on record.",
        "",
        f"- machine: {cpu_model()}, {ctx.get('num_cpus')} hardware threads, "
        f"{ctx.get('mhz_per_cpu')} MHz",
        f"- date: {ctx.get('date')}",
        "- hologram: `hologram-cc bench/kernels/bench.hasm --emit=static -O3 "
        "--target=x86-64-v2,x86-64-v3,x86-64-v4` (the dispatcher picks the best level), called "
        "through the generated header",
        "- peers: plain C++ loops by `clang++-19 -O3 -march=native` (`-ffast-math "
        "-fveclib=libmvec` where marked), OpenBLAS 0.3.21 (`cblas_sgemm`, `cblas_sdot`), Halide 14; "
        "for the triad also STREAM's form with aligned non-temporal vector stores (`stream_nt`), "
        "the memory limit of an output that is only written; for the f64 maps SLEEF 3's 1-ulp "
        "vector functions at the widest vector this CPU has (`sleef_u10`, the same accuracy class: "
        "SPEC §3.4's 1 ulp), and libmvec's f64 functions under -ffast-math, which state no bound "
        "(listed as relaxed)",
        "- 1t: one thread (hologram `set_cpu_threads(1)`, OpenBLAS 1 thread); mt: every core",
        "- method: each row, hologram's and the peers', the fastest of 3 repetitions, interleaved "
        "at random with the other rows (this shared machine moves a row by tens of percent "
        "between runs)",
        "",
        "- Halide 14 (Debian's libhalide14-0-dev): each workload as a Halide pipeline compiled",
        "  ahead of time for this machine (bench/peers/halide/halide_peers.cpp): vectorised at",
        "  twice the native width, parallel over 16K-element blocks or over rows, `rfactor` for",
        "  the sum. 1t runs the same schedule built without its parallel loop; mt runs on",
        "  Halide's own thread pool, on every core.",
        "  `halide_fast_exp_relaxed` uses `fast_exp`, which has no stated error bound.",
        "",
        "## Against the best peer",
        "",
        "For each workload and mode, the fastest peer of the same accuracy class. A relaxed peer",
        "is never chosen, but it is listed with every other peer in the next table.",
        "",
        "| workload | size | mode | hologram (µs) | best peer | peer (µs) | ratio |",
        "|---|---|---|---:|---|---:|---:|",
    ]
    lines += best_rows(times)
    lines += [
        "",
        "## Every peer",
        "",
        "| workload | size | hologram (µs) | peer | peer (µs) | ratio |",
        "|---|---|---:|---|---:|---:|",
    ]
    lines += ratio_rows(times)
    levels = level_rows(times, sys.argv[1])
    if levels:
        lines += [
            "",
            "## Per x86 level",
            "",
            "gemm, gemv and softmax with the dispatcher capped at each level this CPU runs",
            "(`HOLOGRAM_CPU_ISA`, which caps the library ops too), so that a slow level cannot",
            "hide behind the best one. Each level is compared with what a user of a CPU of that",
            "level would pick, run in the same process as its hologram rows: OpenBLAS held to a",
            "core of the level (`OPENBLAS_CORETYPE`, named beside it: Nehalem for x86-64-v2,",
            "Haswell for x86-64-v3; Debian's OpenBLAS picks its kernels when it loads), and the",
            "fast-math loop and Halide's pipeline built for the level (clang `-march=x86-64-v2`",
            "or `-march=x86-64-v3`; Halide's targets `x86-64-linux-sse41` and the same with",
            "`avx-avx2-fma-f16c`). The last two columns compare it with the best peer of this",
            "CPU (the tables above: `-march=native`, OpenBLAS's own choice), which may use wider",
            "vectors than the level has. v2 has 4-lane vectors and no FMA: gemm at v2 runs near",
            "the peak of 16-byte multiplies and adds, at 0.4 of the speed of the levels above",
            "(on the Zen 4 VM on 2026-12-07 at 18:29, 1024 at 1t: v2 48.4 ms, v3 20.2, v4 20.3;",
            "two multiplies and two adds of 4 lanes a cycle, 16 flops, against two FMAs of 8",
            "lanes, 32). Since that evening its packed A holds each element as a vector of four",
            "copies: SSE has no broadcast load, and the shuffles of the micro-kernel's six",
            "broadcasts a step went to two of the four FP pipes its twelve multiplies and twelve",
            "adds need (before: 58.5 ms at 1024 1t, and 0.90-0.96 of OpenBLAS's Nehalem kernels",
            "in the table of 16:01; in a harness of the two builds' kernels run in turn with",
            "OpenBLAS, the fastest of 10, 512 1t went from 0.92-1.01x to 1.06-1.11x of it and",
            "1024 from 0.92x to 1.05x). The split of 256-bit loads that issue 15 measured at v3 is gone: gemv",
            "now runs at about 10 GFLOP/s at v3,",
            "where it ran at 1.2. At v2 gemv's four rows prefetch 2 KiB ahead since 2026-11-28:",
            "with 16-byte loads the load queue filled before enough cache lines were in flight",
            "(0.56x OpenBLAS at 1t in the table before; in three alternating runs of the two",
            "builds capped at v2, 1t 2.57-2.78 ms before and 1.85-2.11 after, mt 1.34-1.44 and",
            "1.02-1.37). softmax's exponential pass prefetches the next row for its maximum's",
            "pass (1t capped at v2 5.75-5.94 ms before, 5.25-5.45 after; v3 and v4 within noise),",
            "as the norms' squares pass does for theirs, below AVX-512 only since 2026-12-07: once",
            "the row loops were always inlined, GCC removed the calls of the function that",
            "prefetched (its only effect), and no level prefetched until that was found; put back,",
            "it took rmsnorm 4096x1024 at v2 1t from 1024 to 879 µs and softmax from 5962 to 5725,",
            "at v3 it was level on this CPU (it helped the norms on an AVX2-only EPYC on",
            "2026-11-28), and at v4 it made them slower (674 to 733, 1625 to 1758; alternating",
            "builds, fastest of 9).",
            "gemv mt at v4 in the AVX-512 table of 2026-11-28 (0.64) was that VM's noise: run",
            "right after it, v4 mt took 1017-1097 µs against OpenBLAS's 994, and v3 1025-1083",
            "against 1051-1054.",
            "",
            "| workload | size | mode | level | hologram (µs) | best peer at the level | peer (µs) | "
            "ratio | this CPU's best peer (µs) | ratio to it |",
            "|---|---|---|---|---:|---|---:|---:|---:|---:|",
        ]
        lines += levels
    if overhead:
        lines += [
            "",
            "## Launch overhead",
            "",
            "A kernel with nothing to do, start to finish on the calling thread: through the",
            "generated header, and by name through `Backend::launch` on a module the CPU backend",
            "loaded. Issue 15's goals are at most 50 ns and at most 1 µs. Both move by half",
            "between runs on these VMs: on the AVX2 EPYC on 2026-11-28 (night), the table's",
            "run gave 161 ns through `Backend::launch`, and three alternating runs of that",
            "build and the previous stop's right after it gave 85-93 and 87-98 ns (header",
            "53-67 and 50-77). On 2026-11-29 the header's path keeps each thread's last launch",
            "(docs/design.md); the table's run gave 55-57 ns, three runs of the row alone right",
            "after it 35-52 ns, and a harness of its own alternating with the previous build",
            "42-46 against 55-60 (`Backend::launch`: 99-116 against 105-116). Since",
            "2026-11-29 (morning) no launch zeroes its failure record with rep stos or reloads",
            "its two argument pointers as one vector that no store forwards to (the note on",
            "vector_add and saxpy at 2^10 to 2^16 below): in three alternating runs of that",
            "build and the previous stop's, header 21-42 against 34-60 ns, `Backend::launch`",
            "76-145 against 88-159.",
            "",
            "| kernel | path | time (ns) |",
            "|---|---|---:|",
        ]
        for (size, impl), t in overhead.items():
            lines.append(f"| {size} | {impl.replace('hologram_', '')} | {t * 1000:.0f} |")
    st = times.get(("stream", "1GiB"))
    if st and "hologram_stream_8MiB_pool" in st and "hologram_one_1GiB_pool" in st:
        t_stream, t_one = st["hologram_stream_8MiB_pool"], st["hologram_one_1GiB_pool"]
        lines += [
            "",
            "## stream()",
            "",
            "1 GiB made on the host, copied in, scaled by a kernel, copied back and summed, on the",
            "CPU backend: through an 8 MiB pool with `stream()` (two queues: each chunk's copy",
            "overlaps the previous chunk's kernel, and the host fills the next chunk meanwhile),",
            "and as one piece through a pool that holds it all. Issue 19's goal: stream() at",
            "0.9x of the one pool's throughput or better.",
            "",
            "| path | time (ms) | GB/s | ratio to one pool |",
            "|---|---:|---:|---:|",
            f"| stream() through 8 MiB | {t_stream / 1000:.1f} | {2**30 / t_stream / 1000:.2f} | "
            f"{t_one / t_stream:.2f} |",
            f"| one 1 GiB pool | {t_one / 1000:.1f} | {2**30 / t_one / 1000:.2f} | 1.00 |",
        ]
    tf = times.get(("transformer", "stories15M_token"))
    if tf:
        lines += [
            "",
            "## Transformer tokens/s",
            "",
            "examples/transformer: one token of a 256-token generation in stories15M's shape",
            "(dim 288, 6 layers, 6 heads, vocab 32000, random weights), averaged over the positions,",
            "through the runtime API on the CPU backend (`Backend::launch` of a bundle, 87 launches",
            "per token, the weights one buffer over the application's memory). The peer is the",
            "example's plain C forward pass (llama2.c's loops) built with `clang-19 -O3",
            "-march=native -ffast-math -fopenmp`. Issue 19's goal: at least 1.5x it.",
            "",
            "| mode | hologram (tokens/s) | clang -O3 -ffast-math -fopenmp (tokens/s) | ratio |",
            "|---|---:|---:|---:|",
        ]
        for mode in ("1t", "mt"):
            h = tf.get("hologram_" + mode)
            p = tf.get("clang_O3_fastmath_omp_" + mode)
            if h and p:
                lines.append(f"| {mode} | {1e6 / h:.1f} | {1e6 / p:.1f} | {p / h:.2f} |")
    lines += [
        "",
        "Notes: the peers' mt rows (`clang_O3_mt`, `clang_O3_fastmath_mt`, `sleef_u10_mt`, the",
        "relaxed libmvec f64 loops) run the 1t loop on one contiguous share of the elements or",
        "rows per core, on OpenMP's thread team (LLVM's libomp, bench/peers/parallel.cpp), which",
        "stays alive between calls as `#pragma omp parallel for`'s does (before 2026-12-06 they",
        "started threads on every call); attention's shares of query rows are of equal work.",
        "libomp's workers spin for 200 ms after a region (KMP_BLOCKTIME's default, left as a",
        "user has it), so a row run right after an OpenMP row shares this VM's two cores with",
        "a spinning thread for part of its time; each row is the fastest of 3 repetitions at",
        "random places in the run. OpenBLAS's mt rows run its own threads. hologram's f32 exp,",
        "exp2, log, log2, log10,",
        "tanh, sigmoid, erf, and sin and cos below 4096 (and softmax on exp) are its own inline",
        "code, within SPEC §3.4's bounds on every f32 input (docs/isa.md, \"Transcendentals in",
        "compiled x86 code\": at most 3.214 ulp for sigmoid, 1.577 for the others at v4). Halide's",
        "`exp` measured 4.7 ulp at worst over a dense sample of f32 inputs, and its `fast_exp` 18",
        "ulp. libmvec's functions under -ffast-math have no",
        "stated bound; its tanhf is not vectorised (the loop calls it per element).",
        "The Halide 1t rows run a build of each pipeline without its parallel loop:",
        "`halide_set_num_threads(1)` does not stop worker threads the pool has already started.",
        "`clang_O3_1t` is the strict-math loop with f64 exp, for reference.",
        "",
        "This machine is a shared virtual machine. Repeating a row moves it by up to 30 %",
        "(rmsnorm_rows hologram_1t measured 995 to 1357 µs in back-to-back runs), so a ratio",
        "within 0.8 to 1.2 is not a measured difference. Some hours are worse: on the evening",
        "of 2026-11-24, three alternating runs of two builds gave the same binary's",
        "rmsnorm_rows 1t 1273 to 1871 µs and Halide's 1193 to 2168, and log_map 1t 308 to",
        "431 µs. A row far outside its earlier ratios in one table is checked that way before",
        "it is read as a change. On 2026-11-25 two full runs 15 minutes apart put sum at 0.79-0.87",
        "and silu_map at 0.83-0.84 (1t) behind Halide; run alone right after, the same binary",
        "gave sum 1t 2815-2936 µs against Halide's 2864-2998 and silu_map 1t 290-334 against",
        "348-364, and sigmoid_map 264 to 383 µs in three back-to-back runs. On 2026-11-29",
        "two full runs of the same code an hour apart on the AVX2 EPYC: at 05:21 UTC swiglu",
        "was 0.87/0.78, sum 0.92/0.95, dot 0.95, log_map 0.95/0.93, saxpy 2^12 1t 0.80,",
        "sin_f64_map 1t 0.83 and the transformer 1.41/1.25, and two reruns right after it (the",
        "fastest of 3, interleaved) gave swiglu 0.88/0.83 and 1.07/0.95, sum 0.96/1.05 and",
        "1.06/1.04, dot 0.90 and 0.98, log_map 1.01/0.97 and 0.97/0.97, saxpy 2^12 1t 0.77",
        "and 1.01, vector_add 2^10 1t 0.66 and 0.93, sin_f64_map 1t 1.18 and 0.95, the",
        "transformer 1.70/1.45 and 1.59/1.57. The run of 06:25 (docs/performance-avx2.md)",
        "found every row slower (the transformer's reference 5782 µs against 4365, hologram's",
        "4367 against 3099) and more of them behind: vector_add 2^12 1t 0.79 (1.03 at",
        "05:21), exp_map 1t 0.90 (1.14), swiglu mt 0.68, sum mt 0.89, gemv mt 0.91 (1.19).",
        "Its two reruns: vector_add 2^12 1t 0.92 and 0.96, 2^10 0.56 and 0.52, saxpy 2^12 1t",
        "0.92 and 0.75, exp_map 1t 0.82 and 1.08, log_map 1.00/1.08 and 0.93/1.10, swiglu",
        "1.09/0.91 and 0.71/0.83, sum 0.99/0.98 and 0.93/0.86, gemv 1.02/1.06 and 0.93/0.95,",
        "sin_f64_map 1t 1.17 and 1.00, the transformer 1.36/1.24 and 1.46/1.44. Until",
        "gemv read its rows by quarters (2026-11-29, the transformer's note below) its mt row",
        "stayed behind in every run (0.83-0.87); prefetching its rows 2 KiB ahead at v3 as at",
        "v2 took 1t from 4.4 to 6.4-6.8 ms and was not kept. The run of 08:36 UTC",
        "(docs/performance-avx2.md), after the maps' changes of that morning (the note on the",
        "maps at v3 below), and its two reruns (the fastest of 3, interleaved): exp_map",
        "1.79/1.34 of Halide's accurate exp, 1.34/1.22 and 1.50/1.24, and of its `fast_exp`",
        "1.14/1.07, 1.00/1.02 and 1.14/0.91; sigmoid_map 1.48/1.43, 1.50/1.26 and 1.27/1.23",
        "(`fast_exp`: 0.82/0.84, 0.86/0.81, 0.82/0.75); silu_map 1.17/1.15, 1.34/1.12,",
        "1.17/1.13; gelu_map 1.26/0.94, 1.01/1.12, 1.00/1.08; log_map 1.10/1.08, 1.09/1.12,",
        "1.00/0.90; the rows this change did not touch moved as before: gemm 1024 1t 0.84,",
        "0.89 and 1.12, gemm 512 1t 0.93, 1.07 and 0.92, vector_add 2^10 1t 0.61, 0.49 and",
        "0.53, swiglu 1.03/0.75, 0.76/0.78 and 0.97/0.79, the transformer 1.57/1.39,",
        "1.39/1.22 and 1.43/1.40. The run of 11:29 UTC (docs/performance-avx2.md), after the",
        "library's exp went by quarters at v3 (the swiglu note below), and one rerun of the",
        "CPU rows right after it: softmax 1.21/1.77 and 1.99/1.65, silu_map 1.17/1.11 and",
        "1.25/1.21, swiglu 0.86/0.91 and 0.87/0.81, the transformer 1.42/1.25 and 1.29/1.55,",
        "exp_map against `fast_exp` 0.90/0.93 and 1.20/0.98, sigmoid_map against it 0.89/1.03",
        "and 0.79/0.99; rows the change did not touch moved as much: gelu_map 0.72/1.02 and",
        "0.99/1.07, sin_map 1t 1.48 and 1.02, gemv 0.95/0.82 and 1.23/0.94, saxpy 2^24 mt",
        "0.79 and 0.99, vector_add 2^12 1t 0.98 and 0.97, 2^10 0.67 and 0.47. The run of",
        "13:43 UTC (docs/performance-avx2.md), after exp by quarters lost its mask and sigmoid",
        "its negation (the note on the maps at v3 below), and one rerun of the CPU rows right",
        "after it: sigmoid_map against Halide's `fast_exp` 0.94/0.90 and 1.21/0.87, against",
        "its accurate sigmoid 1.35/1.54 and 1.78/1.29, exp_map against `fast_exp` 0.91/0.92",
        "and 1.00/1.06, silu_map 1.48/1.30 and 1.28/1.13; rows the change did not touch",
        "moved as much: saxpy 2^12 1t 0.67 and 1.15, sin_map 1t 0.89 and 1.48, sum 1t 0.85",
        "and 1.09, gemv mt 0.84 and 1.05, swiglu 1.10/0.81 and 0.90/0.96, the transformer",
        "1.37/1.14 and 1.54/1.43.",
        "",
        "Rows behind their peer, and why:",
        "",
        "- **The run of 2026-12-07 21:32 UTC (docs/performance-avx2.md, the AVX2 EPYC, Zen 3).**",
        "  The first run published from this VM since 2026-11-29 (a run of the code before this",
        "  change at 20:15 that evening is not), so every change since is in it; new in it:",
        "  at x86-64-v3 a masked access that reaches past its page copies the mask's lanes one",
        "  by one (vector_add_page_end's note): vector_add_page_end 1t 0.146 µs (0.825 in a run",
        "  of the code before it at 20:15 that evening), at the price of compile time at v3 (the",
        "  compile tables' note: in process 51.7 ms, 40.1 at 20:15; the first `execute_program`",
        "  with the cache off 56.5, 39.2 at 20:15, past issue 19's goal of 50 ms on this VM).",
        "  softmax_rows 1.45 / 1.66 against the fast-math loop; gemm at v3 1.08 / 1.21 (512) and",
        "  1.04 / 0.96 (1024), at v2 against OpenBLAS's Nehalem kernels 1.33 / 1.22 and 1.34 /",
        "  1.16. Rows behind in it, and two rounds of the same binary right after it (the median",
        "  of 3 each, hologram against the run's best peer): vector_add 2^10 1t 0.72, then 0.79",
        "  and 0.68; saxpy 2^10 1t 0.66, then 0.96 and 0.98; saxpy 2^12 1t 0.78, then 0.97 and",
        "  0.89 (the call's fixed cost); vector_add 2^16 1t 0.96, then 0.96 and 0.99, mt 0.84,",
        "  then 1.12 and 1.06; vector_add 2^18 1t 0.98, then 0.96 and 1.00; saxpy 2^18 1t 0.88,",
        "  then 0.94 and 1.01; vector_add 2^24 1t 0.99, then 1.23 and 1.09; saxpy 2^24 1t 0.80,",
        "  then 1.06 and 1.00; stream_triad 1t 0.90, then 0.89 and 0.99, mt 0.89, then 0.87 and",
        "  1.00; vector_add_page_end 1t 0.49, then 0.43 and 0.47 (its note); log_map 1t 1.00,",
        "  then 1.09 and 1.02, mt 0.92, then 1.17 and 1.05; swiglu mt 0.80, then 0.86 and 0.92;",
        "  sum mt 0.90, then 1.13 and 1.22; dot 1t 0.98, then 0.94 and 1.00, mt 0.88, then 1.04",
        "  and 1.05; atan2_f64_map mt 0.97, then 1.00 and 1.41; rmsnorm_rows 256x1024 mt 0.72,",
        "  then 0.90 and 0.79; layernorm_rows 256x1024 mt 0.86, then 1.11 and 0.97 (layernorm_rows'",
        "  note); gemm 1024 mt 0.96, then 1.10 and 1.01; gemv 1t 0.98, then 1.17 and 1.13, mt",
        "  0.88, then 1.09 and 0.93. Per level: softmax_rows at v2 mt 0.90 against Halide's v2",
        "  pipeline (not run again).",
        "- **The run of 2026-12-07 18:29 UTC (docs/performance.md, Zen 4 VM).** New in it: gemm at",
        "  x86-64-v2 packs A as vectors of copies (the per-level table's text): against",
        "  OpenBLAS's Nehalem kernels, 512 1t 0.99, mt 1.27, 1024 1t 1.44, mt 1.04 (0.90, 0.96,",
        "  0.93 and 1.06 at 16:01). A run of the same binary at 18:05, in busy minutes, is not",
        "  published: softmax_rows 1t took 2913 µs in it (1554 in this one) and read 0.97",
        "  against Halide; its gemm at v2 read 1.46, 1.17, 1.25 and 1.14. Rows behind in this",
        "  run, and two rounds of the same binary right after it (the median of 3 each,",
        "  hologram against the round's best peer): vector_add 2^10 1t 0.82, then 0.76 and",
        "  0.81; saxpy 2^10 1t 0.83, then 1.01 and 1.01; vector_add 2^12 1t 0.96, then 0.96 and",
        "  0.96; saxpy 2^12 1t 0.91, then 1.31 and 0.91 (the call's fixed cost); vector_add 2^16",
        "  1t 0.97, then 0.92 and 1.15, mt 0.75, then 0.76 and 0.94; saxpy 2^16 mt 0.87, then",
        "  0.68 and 0.57 (no faster than its 1t row in them: not explained yet); saxpy 2^18 mt 0.96, then",
        "  1.09 and 1.00; vector_add 2^24 mt 0.82, then 1.26 and 1.31; saxpy 2^24 mt 0.88, then",
        "  1.10 and 1.03; stream_triad mt 0.81, then 1.29 and 0.96; vector_add_page_end 1t",
        "  0.50, then 0.51 and 0.55 (its note); log_map mt 0.99, then 1.13 and 1.20; sum 1t",
        "  0.99, then 0.97 and 1.36; dot 1t 0.83, then 0.94 and 0.96, mt 0.58, then 1.00 and",
        "  1.09; sin_f64_map 1t 0.96, then 0.89 and 0.93 (its note), mt 0.83, then 1.21 and",
        "  1.07; rmsnorm_rows 4096x1024 mt 0.55, then 0.57 and 0.88, layernorm_rows 0.68, then",
        "  0.85 and 1.29 (the note on the loop's L3 residency); rmsnorm_rows 256x1024 1t 0.85,",
        "  then 0.82 and 0.64, mt 0.84, then 0.89 and 1.16; layernorm_rows 256x1024 1t 0.98,",
        "  then 0.97 and 1.15, mt 0.83, then 0.94 and 1.18 (layernorm_rows' note); gemm 512 mt",
        "  0.97, then 1.01 and 1.29; gemv mt 0.91, then 1.07 and 1.16; the transformer mt 0.85,",
        "  then 1.19 and 1.09 (1t 1.16, then 1.18 and 1.36). Per level: softmax_rows at v2 1t",
        "  0.84 (against Halide's v2 pipeline, 5868 µs), then 0.86 and 0.95, mt 0.68, then 0.73",
        "  and 0.86 (its note); at v3 1t 1.21, then 1.08 and 0.96, mt 1.41, then 0.98 and 2.03;",
        "  gemm at v2 512 1t 0.99, then 2.46 and 1.13, mt 1.27, then 1.19 and 0.93; gemm at v3",
        "  512 1t 1.09, then 0.96 and 0.93, mt 1.09, then 1.22 and 0.57, 1024 1t 1.13, then",
        "  0.89 and 1.13, mt 0.83, then 0.90 and 0.94 (0.85 at 18:05, 1.10 at 16:01; the v3",
        "  object's gemm is the code of 16:01, instruction for instruction, and OpenBLAS's",
        "  Haswell kernels took 10150 µs here against 12430 then); gemv at v3 mt 0.96 (not run again).",
        "  softmax_rows at v4 1.50 / 1.32.",
        "- **The run of 2026-12-07 16:01 UTC (Zen 4 VM, in busy minutes).** New in",
        "  it: layernorm takes the next row's mean, and softmax the next row's maximum, before",
        "  the row before is normalized or scaled (layernorm_rows' note; the same bits; in",
        "  alternating bench builds, 1t, fastest of 6-9: layernorm 256x1024 at v4 51.5 to 43.5",
        "  µs, mt 26.9 to 22.8, at v3 53.2 to 47.9, at v2 level; softmax 4096x1024 at v4 1642",
        "  to 1596); and softmax's loops without a test at each vector, with its sums of eight",
        "  vectors at every level (the note on it below; in alternating bench builds right",
        "  before this run, fastest of 6-9: softmax_rows at v3 1t 2312 to 2196 µs, mt 1210 to",
        "  1128, at v2 1t 5761 to 5455, mt 3893 to 3373, at v4 1t 1667 to 1625, mt 833 to 810;",
        "  the norms and attention level). This VM was busy in this run's minutes, and the",
        "  peers with it: the fast-math softmax loop 1t took 2945 µs against 2485 at 13:11,",
        "  Halide's 3531 against 2365; hologram's softmax 2013 against 1651 (1.46 / 1.30",
        "  against the best peer, 1.43 / 1.29 at 13:11). Rows behind in it, and two rounds of",
        "  the same binary right after it (the median of 3 each, hologram against the round's",
        "  best peer; the VM as busy): vector_add 2^10 1t 0.62, then 0.74 and 0.92; saxpy 2^10",
        "  1t 0.91, then 0.96 and 0.86; vector_add 2^12 1t 0.84, then 0.93 and 0.96; saxpy 2^12",
        "  1t 0.63, then 0.91 and 0.89 (the call's fixed cost); vector_add 2^16 1t 0.99, then",
        "  0.96 and 0.99; saxpy 2^16 mt 0.98, then 1.01 and 1.03; vector_add 2^18 1t 0.99;",
        "  saxpy 2^24 1t 0.79, then 1.07 and 1.07, mt 0.78, then 1.06 and 0.91;",
        "  vector_add_page_end 1t 0.56, then 0.54 and 0.54 (its note); swiglu 1t 0.93, then",
        "  1.09 and 0.98, mt 0.71, then 0.92 and 0.73; sum 1t 0.81, then 1.26 and 1.10, mt 0.79,",
        "  then 1.01 and 0.60; dot 1t 0.93, then 1.04 and 0.99, mt 0.88, then 0.95 and 1.18;",
        "  sin_f64_map 1t 0.89, then 0.96 and 0.88 (its note; mt 1.02, then 1.00 and 0.90);",
        "  rmsnorm_rows 4096x1024 1t 0.84, then 1.22 and 1.27; layernorm_rows 4096x1024 1t",
        "  0.93, then 0.94 and 1.00; rmsnorm_rows 256x1024 1t 0.79, then 0.80 and 0.87, mt",
        "  0.89, then 1.00 and 0.87; layernorm_rows 256x1024 1t 0.94, then 0.95 and 0.93 (mt",
        "  1.09, then 0.89 and 0.81; layernorm_rows' note); gemm 512 1t 0.97, then 1.07 and",
        "  1.05, mt 0.96, then 1.42 and 1.09; the transformer mt 0.86, then 0.95 and 1.15 (1t",
        "  1.04, then 1.36 and 1.19). Per level: softmax_rows at v2 1t 0.74 (against Halide's",
        "  v2 pipeline, 5727 µs, where the fast-math loop took 4876-5042 in the rounds), then",
        "  0.88 and 0.91, mt 1.03, then 1.11 and 0.62 (its note); at v3 1t 0.93, then 1.05 and",
        "  1.10, mt 1.72, then 1.57 and 0.98; gemm at v2 512 1t 0.90, then 1.46 and 1.06, mt",
        "  0.96, then 1.10 and 1.05, 1024 1t 0.93, then 1.12 and 1.09; gemm at v3 512 1t 0.97,",
        "  then 0.96 and 0.97, mt 1.05, then 0.94 and 1.20, 1024 1t 0.99, then 0.98 and 0.98;",
        "  gemv at v2 1t 0.99, then 1.10 and 0.92, mt 0.88, then 1.35 and 1.22.",
        "- **The run of 2026-12-07 13:11 UTC (Zen 4 VM).** New in it: the next",
        "  row's prefetch in softmax and the norms again, below AVX-512 only (the per-level",
        "  table's notes), and a row sum's two compensated sums combined by one TwoSum",
        "  (layernorm_rows' note). Behind in it, and two rounds of the same binary right after",
        "  it (the median of 3 each, hologram against the round's best peer): vector_add 2^10",
        "  1t 0.82, then 0.82 and 0.88; saxpy 2^10 1t 0.86, then 1.08 and 0.91; vector_add 2^12",
        "  1t 0.96, then 0.97 and 0.95; saxpy 2^12 1t 0.88, then 0.83 and 0.82 (the call's fixed",
        "  cost); vector_add_page_end 1t 0.54, then 0.49 and 0.47 (its note); sin_f64_map 1t",
        "  0.88, then 0.88 and 0.91, mt 0.90, then 0.91 and 0.87 (its note); rmsnorm_rows",
        "  256x1024 1t 0.83, then 0.85 and 0.80, layernorm_rows 256x1024 1t 0.81, then 0.75 and",
        "  0.86, mt 0.78, then 0.83 and 0.73 (layernorm_rows' note); rmsnorm_rows 256x1024 mt",
        "  0.90, then 1.05 and 0.96; the norms of 4096x1024 mt (rmsnorm 0.52, then 1.09 and",
        "  1.71; layernorm 0.79, then 0.97 and 1.25: the note on the loop's L3 residency);",
        "  vector_add 2^16 1t 0.99, then 1.00 and 1.06, mt 0.93, then 1.22 and 0.97; saxpy 2^16",
        "  mt 0.96, then 0.97 and 0.63; saxpy 2^24 mt 0.87, then 0.94 and 0.85; stream_triad mt",
        "  0.95, then 0.99 and 1.05; sum mt 0.62, then 0.69 and 0.91; dot 1t 0.92, then 1.04 and",
        "  0.93; gemm 512 mt 1.00, then 1.22 and 1.34. Per level: softmax_rows at v2 1t 0.86,",
        "  then 0.85 and 0.86, mt 0.68, then 0.89 and 0.70 (its note); at v3 1t 0.94, then 0.91",
        "  and 1.04 (1.00 in the run of 11:23, and level with the code before it in alternating",
        "  runs: the prefetch's note); gemm at v3 512 1t 0.99, then 0.93 and 0.97, mt 0.99, then",
        "  0.99 and 0.99, 1024 mt 0.98, then 1.07 and 1.08; gemm 512 mt at v2 1.00, then 1.03",
        "  and 1.02. The transformer 1.06 / 1.14 (then 1.21 / 1.22 and 1.13 / 0.94; 1.27 / 1.18",
        "  at 11:23): its reference moved from 2265 to 2865 µs a token between these runs of one",
        "  binary, hologram from 2124 to 2374 (this VM's memory). softmax_rows at v4 1.43 / 1.29.",
        "- **The run of 2026-12-07 11:23 UTC (Zen 4 VM).** New in it: the norms'",
        "  loops specialised by operands, rows of 256x1024 for them (in the cache), and the",
        "  library's vector math always inlined (layernorm_rows' note; a run at 10:53 between",
        "  the two had softmax_rows at 2315 µs and swiglu at 2458, the inlining lost, and is",
        "  not published). Not rerun after it (the end of a working session). Behind in it:",
        "  vector_add and saxpy at 2^10 and 2^12 1t (the call's fixed cost), vector_add_page_end",
        "  and sin_f64_map (their notes), the norms' mt rows and their rows of 256x1024 (their",
        "  note), sum, dot and stream_triad mt (0.68-0.78: this VM's mt rows of memory, which",
        "  moved to either side in the runs before), softmax at v2 and gemm 1024 at v3",
        "  against the Haswell kernels (0.96 / 0.88; 0.95-1.01 in the run of 09:50 and its",
        "  reruns); and within this VM's noise stream_triad 1t 0.96, vector_add 2^16 mt 0.97,",
        "  saxpy 2^18 mt 1.00, sum 1t 0.96 and dot 1t 0.98. softmax_rows at v4 is 1.43 / 1.37,",
        "  past the issue's 1.2 (1.31 / 1.30 at 09:50, before the inlining).",
        "- **The run of 2026-12-07 09:50 UTC (Zen 4 VM).** New in it: the",
        "  per-level table's peers of the same level (OpenBLAS held to its Nehalem and Haswell",
        "  kernels, the fast-math loop and Halide's pipeline built for x86-64-v2 and -v3);",
        "  hologram's code is that of the run of 08:11. Rows behind in it, and two rounds of the",
        "  same binary right after it (the median of 3 each, hologram against the round's best",
        "  peer): vector_add 2^10 1t 0.82, then 0.90 and 0.80; saxpy 2^10 1t 0.86, then 0.84 and",
        "  0.85; vector_add 2^12 1t 0.96, then 0.95 and 0.96; saxpy 2^12 1t 0.89, then 0.90 and",
        "  0.88; vector_add 2^16 1t 0.99, then 0.97 and 0.99, and mt 0.98, then 0.65 and 0.95;",
        "  saxpy 2^16 mt 0.96, then 0.86 and 0.85; saxpy 2^24 mt 0.99, then 0.88 and 0.98;",
        "  vector_add_page_end 1t 0.54, then 0.55 and 0.55; sum mt 0.67, then 0.86 and 0.98; dot",
        "  mt 0.97, then 0.69 and 1.05; sin_f64_map 1t 0.87, then 0.88 and 0.88, and mt 0.89,",
        "  then 0.86 and 0.87; rmsnorm_rows mt 0.85, then 0.75 and 0.79; layernorm_rows 1t",
        "  0.93, then 0.96 and 0.94, and mt 0.67, then 0.73 and 0.77. In the per-level table,",
        "  against the peers of the level: gemm at v3 against OpenBLAS's Haswell kernels, 512 1t",
        "  0.98, then 0.95 and 1.01, mt 0.95, then 1.32 and 0.96, 1024 1t 0.99, then 0.98 and",
        "  1.00, mt 0.97, then 0.98 and 0.99 (both at the FMA units' rate: the v3 micro-kernel's",
        "  loop is 6 broadcasts, 2 loads and 12 FMAs a step); softmax_rows at v2 1t 0.85, then",
        "  0.84 and 0.85, mt 0.69, then 0.71 and 0.69 (its note). Behind in every run:",
        "  vector_add and saxpy at 2^10 and 2^12 1t (the call's fixed cost), vector_add_page_end",
        "  and sin_f64_map (their notes), the norms' mt rows against the fast-math OpenMP loop",
        "  (layernorm_rows' note) and softmax at v2. The others moved to either side of their",
        "  peers between the three runs.",
        "- **softmax_rows at x86-64-v2 (the per-level table).** The loop built for v2 calls",
        "  libmvec's SSE4 expf, 43 instructions for 4 lanes on its usual path (a degree-5",
        "  polynomial after a two-part reduction, no correction of its argument), and adds",
        "  plainly. hologram's exponential pass at v2, with no FMA, takes exp of the exact",
        "  difference (TwoSum: 6 adds, the rounding error carried into the reduced argument)",
        "  and sums with compensation (1.5 adds a vector): the accuracy docs/isa.md states, for",
        "  about a sixth more arithmetic a vector, which is the gap at 1t (5.7-5.8 ms against",
        "  4.8-4.9). Tried on 2026-12-07 and not kept: exp's range tested once a row (from the",
        "  row's minimum, found beside its maximum) instead of once a vector: v2 5740 to 5655",
        "  µs, but v3 2242 to 2321 and v4 1767 to 1878 (alternating rounds, the fastest of 6).",
        "  At mt the library's 8 parts of 512 rows each took 24 % longer on both threads than",
        "  at 1t (890 µs against 5.73 ms / 8, timed in a scratch build), both threads busy",
        "  throughout; with 6, 10 or 16 parts each ran at its 1t speed in one run (2947-2975 µs",
        "  in all against 3424-3624), but 8 parts did too in another (2927); two processes of",
        "  the 1t row on the two CPUs kept their speed, and at v3 and v4 the same parts scale",
        "  by 2.0. Not explained: this VM has no performance counters to look further with.",
        "- **The run of 2026-12-07 08:11 UTC (Zen 4 VM).** New in it: a partial",
        "  chunk's masks made from counts, loops of chunks that are not unrolled and a called",
        "  chunk that does not work out the probe's answers again (the note on the rows at 2^10",
        "  and 2^12). Rows behind in it, and two rounds of the same binary right after it (the",
        "  median of 3 each, hologram against the round's best peer): vector_add 2^10 1t 0.82,",
        "  then 0.90 and 0.87; saxpy 2^10 1t 0.86, then 0.85 and 0.84; vector_add 2^12 1t 0.95,",
        "  then 0.95 and 0.98; saxpy 2^12 1t 0.90, then 0.90 and 0.88; vector_add 2^16 1t 0.99,",
        "  then 0.98 and 0.99, and mt 0.97, then 0.69 and 0.95; saxpy 2^16 mt 0.93, then 0.99",
        "  and 0.96; saxpy 2^24 1t 0.99, then 1.03 and 0.96, and mt 0.97, then 0.93 and 1.06;",
        "  stream_triad mt 0.94 against stream_nt, then 1.03 and 1.03; vector_add_page_end 1t",
        "  0.44, then 0.54 and 0.48; swiglu 1t 0.96, then 0.99 and 1.03; sum 1t 0.89, then 0.95",
        "  and 0.94, and mt 0.90, then 0.71 and 0.97; dot 1t 0.94, then 0.94 and 0.97;",
        "  sin_f64_map 1t 0.88, then 0.88 and 0.88, and mt 0.88, then 0.87 and 0.87; rmsnorm_rows mt",
        "  0.51 against the fast-math loop, then 0.86 and 0.68 (2.39 in the table of 05:54,",
        "  where that loop took 1166 µs and hologram 487; 305 and 600 in the run of 08:11);",
        "  layernorm_rows 1t 0.99, then 1.03 and 1.04, and mt 0.67, then 1.03 and 0.81; the",
        "  transformer mt 0.96, then 1.04 and 1.05; gemm 512 mt at v3 1.00 and gemv mt at v3",
        "  0.95 in the per-level table (not run again). Behind in every run: vector_add and",
        "  saxpy at 2^10 and 2^12 1t (the call's fixed cost: its note below says where it",
        "  goes), vector_add_page_end (its note) and sin_f64_map (the note on the run of",
        "  03:50). The others moved to either side of their peers between the three runs, as",
        "  this VM's rows do, the OpenMP loops' mt rows most.",
        "- **The run of 2026-12-07 05:54 UTC (Zen 4 VM).** New in it: the probe of",
        "  a span's first chunk and the called chunk for the rest (the note on the rows at",
        "  2^10 and 2^12), and a long sum's two halves side by side (the note on sum): sum 1t",
        "  1.03 against Halide's rfactor, 0.91 in the table of 03:50. Rows behind in it, and two",
        "  rounds of the same binary right after it (the median of 3 each, hologram against the",
        "  row's peer): vector_add 2^10 1t 0.80, then 0.73 and 0.78; saxpy 2^10 1t 0.82, then",
        "  0.84 and 0.70; vector_add 2^12 1t 0.95, then 0.96 and 0.94; saxpy 2^12 1t 0.88, then",
        "  1.27 and 0.89; vector_add 2^16 1t 0.97, then 0.97 and 0.98, and mt 0.99 against",
        "  Halide, then 0.87 and 1.11; saxpy 2^16 mt 0.84 against clang's loop, then 1.43 and",
        "  0.90; vector_add 2^18 1t 0.98, then 1.05 and 1.00, mt 0.99, then 1.06 and 0.97;",
        "  stream_triad mt 0.71 against stream_nt, then 1.00 and 0.68; vector_add_page_end 1t",
        "  0.50, then 0.45 and 0.51; sum mt 0.90 against Halide, then 0.94 and 0.92; dot 1t",
        "  0.89 against the fast-math loop, then 1.04 and 0.89; sin_f64_map 1t 0.88 against",
        "  SLEEF, then 1.00 and 0.87; layernorm_rows mt 0.72, then 0.98 and 0.94; gemm 512 mt",
        "  0.97, then 0.99 and 1.02; gemv mt 0.97, then 1.11 and 1.06; softmax_rows capped at",
        "  v3 mt 0.79 in the per-level table, then 0.98 and 1.16 (1t 1.02 and 1.02). Behind in",
        "  every run: vector_add and saxpy at 2^10 and vector_add at 2^12 (the call's fixed",
        "  cost, their note below) and vector_add_page_end (its note). The others moved to",
        "  either side of their peers between the three runs, as this VM's rows do.",
        "- **The run of 2026-12-07 03:50 UTC (Zen 4 VM).** New in it: f32 log",
        "  at v4 by a table, the row sums' groups of eight (both in notes below) and gemm in",
        "  the per-level table. Rows behind in it, and two rounds of the same binary right",
        "  after it (the median of 3 each, hologram against the row's peer): sum mt 0.77,",
        "  then 1391 and 1428 µs against OpenMP's loop's 1408 and 794; dot mt 0.83, then 1.06",
        "  and 1.12; rmsnorm_rows mt 0.91, then 0.98 and 0.96; gemm 1024 mt 0.99, then 1.03",
        "  and 1.05; the transformer 1t 1.01 and mt 0.81, then 1.30 and 1.24 at 1t, 1.16 and",
        "  1.20 at mt; layernorm_rows mt 0.67, then 614 and 675 µs against 1064 and 484. The",
        "  OpenMP loops' mt rows move by up to twice between runs on this VM (sum: 794 to",
        "  1408 µs, 84 to 48 GB/s), hologram's less (1134-1428); in the alternating runs of the",
        "  morning the fast-math layernorm loop took 403-597 µs at mt and hologram 506-670,",
        "  so that row is behind on this machine: not looked into further. sin_f64_map 0.87",
        "  / 0.90 against SLEEF in the table and the reruns (1492-1505 against 1315-1326 at",
        "  1t): hologram's f64 sin spends about 50 vector operations on 8 lanes (reduction",
        "  by π/2 as a double-double, then one polynomial a lane with its coefficients chosen",
        "  by the quadrant, 8 blends), near the two 512-bit operations a cycle of this CPU;",
        "  SLEEF's path below 15 takes about 45 (it reduces by π: one polynomial, nothing to",
        "  choose). softmax_rows capped at v3, 0.95 in the per-level table: its sums went by",
        "  groups of eight in this run, slower at v3, and by four again since (the note on row",
        "  sums). The rows at 2^10 and 2^12 1t and vector_add_page_end: the call's fixed cost",
        "  (their notes below).",
        "- **The run of 2026-12-07 01:31 UTC: another machine.** An AMD EPYC of family 25,",
        "  model 17 (Zen 4, AVX-512 on 256-bit units, 32 MiB L3), 2 threads, where the tables",
        "  since 2026-12-05 came from a Zen 5 VM: rows are not comparable with theirs, only",
        "  ratios within one table. New in it: f32 exp at v4 by sixteenths and the library's",
        "  partial vectors by masked loads (the notes below). Behind in it, and in two rounds",
        "  of the same binary right after it (median of 3 each): sum mt 0.59, then 1.10 and",
        "  1.08 against OpenMP's loop (1636 and 1275 µs against 1801 and 1378); stream_triad",
        "  mt 0.84 against clang's loop, then 1.37 and 1.36 (and 1.05 and 1.00 against",
        "  `stream_nt`); the transformer mt 0.92, then 0.94 and 1.09; vector_add 2^16 mt",
        "  0.84, then 0.99 and 0.98, saxpy 2^16 mt 0.81, then 1.25 and 0.84. Behind in it and",
        "  in reruns: log_map 0.94 / 0.93 against Halide (log by a table since: 1.16 / 1.12",
        "  in the table of 03:50), sin_f64_map 0.88 against SLEEF, layernorm_rows 0.93-0.99",
        "  against the fast-math loop (1.29 on Zen 5).",
        "- **f32 log at v4 by a table (2026-12-07, Zen 4 VM, in the table of 03:50).** 1/c",
        "  and log c of one of 16 buckets of the mantissa by `vpermps`, and a polynomial of",
        "  degree 5 for log(1 + r) where it had one of degree 11 (docs/isa.md). The bench",
        "  builds before and after, alternated in four rounds of three repetitions (the",
        "  fastest of 12): log_map 2^20 1t 296 to 235 µs, mt 154 to 121 (Halide's 274 and 141-144",
        "  in the same rounds: 0.93 to 1.17 at 1t). Its worst error went from 0.853 to 1.191",
        "  ulp (SPEC: 2). log2 and log10 at v4 go by the same table since (no rows of their",
        "  own): maps of 2^16 floats on one thread through the generated header, 22.6 to 14.3",
        "  and 14.7 µs in three alternating rounds.",
        "- **Row sums in groups of eight (2026-12-07, Zen 4 VM).** softmax's, rmsnorm's and",
        "  layernorm's sums add eight vectors pairwise before each compensated add, where",
        "  they added four (docs/isa.md: 3u a group instead of 2u, inside the bounds). In a",
        "  harness calling the v4 row functions on 32 rows of 1024 floats (in the L2 cache,",
        "  the fastest of six alternating rounds): layernorm 228 to 202 ns a row, rmsnorm 155",
        "  to 139, softmax 373 to 361. The fast-math loops take 168 and 121 there: with the",
        "  rows in cache the compensated sums still cost hologram's norms a sixth; at the",
        "  table's 4096 rows, which stream from memory, the 1t rows are ahead. Below AVX-512",
        "  softmax's sums stayed in groups of four then: eight vectors beside exp's constants",
        "  outgrew AVX2's 16 registers, and softmax_rows 1t capped at v3 went from 2282 to",
        "  2428 µs (back at four: 2319; the fastest of 12 in alternating runs of the bench",
        "  builds), where rmsnorm and layernorm at v3 went faster (850 to 806 and 1174 to",
        "  1089) and softmax at v4 too (1906 to 1824). They are of eight at every level since",
        "  softmax's loop lost its tests at each vector (the next note).",
        "- **softmax without a test at each vector (2026-12-07, Zen 4 VM).** The exponentials'",
        "  pass tested at every vector whether it was log_softmax and whether the vector was",
        "  the row's last partial one (to store it), and below AVX-512 GCC kept values across",
        "  those tests on the stack. Each case has its own loops since, the row's end known at",
        "  compile time, and with the registers that freed softmax's sums are of eight vectors",
        "  at v2 and v3 too. Rows of 4096x1024 in chunks of 16 (the library's), a harness",
        "  calling each level's loops alternately, the fastest of 8-12 in three runs: the",
        "  tests gone, v2 1t 6021-6190 to 5767-5934 µs, v3 2367-2500 to 2246-2293, v4",
        "  1547-1620 to 1507-1559 (the same bits); then groups of eight, v3 1t 2283-2592 to",
        "  2190-2361, 2t 1558-1666 to 1492-1512, v2 1t 8027-8332 to 7512-7820 (this VM was",
        "  slower in those minutes; ratios of alternating runs only). Tried and not kept:",
        "  streaming y from a scratch row (non-temporal stores of the scaled outputs, the",
        "  exponentials kept in L1): 2-11 % slower at 1t, softmax being bound by its",
        "  arithmetic, not by memory; a row's minimum taken with its maximum so that rows",
        "  whose every x - max is above exp's normal range skip the test at each vector:",
        "  the maximum's pass cost more than the tests (v3 in L1, 485 to 525 ns a row).",
        "- **The library's partial vectors at v4 (2026-12-07, Zen 4 VM).** A row's head and",
        "  tail that are not whole vectors (softmax, the norms, the maps, the fused pairs,",
        "  attention) are read by one masked load at AVX-512, where they were built lane by",
        "  lane. The bench builds before and after, alternated in three rounds of three",
        "  repetitions (the fastest of 9; the bench's rows have y 16 bytes past a line, so",
        "  each row has a head of 12 lanes and a tail of 4): layernorm_rows 1t 1213 to 1052",
        "  µs (the fast-math loop 1010-1026), mt 630 to 581; rmsnorm_rows 1t 798 to 736, mt",
        "  607 to 462; softmax_rows 1t 1907 to 1826; swiglu 1t 1813 to 1640. Masked stores",
        "  for those lanes too were slower: rmsnorm_rows 1t 854-936 to 1206-1654 µs, its time",
        "  waiting after the non-temporal stores beside them (perf); they stay lane by lane.",
        "- **f32 exp at v4 by sixteenths (2026-12-07, Zen 4 VM).** Compiled kernels' and the",
        "  library's f32 exp at v4 take 2^(j/16) from a table of 16 by one vpermps and need a",
        "  polynomial of degree 3 where they had one of degree 6 (docs/isa.md): two",
        "  multiply-adds fewer and a chain three operations shorter. The bench builds before",
        "  and after, alternated in three rounds of three repetitions (the fastest of 9),",
        "  Halide's `fast_exp` rows of the same runs in brackets:",
        "  exp_map 2^20 1t 183 to 161 µs (201), mt 93.4 to 82.9 (105); sigmoid_map 1t 246 to",
        "  214 (238), mt 130 to 109 (122); silu_map 1t 267 to 237, mt 149 to 124; tanh_map 1t",
        "  424 to 391, mt 221 to 206; softmax_rows 1t 2069 to 1855, mt 1050 to 953 µs; swiglu,",
        "  which streams 48 MiB, within its noise. sigmoid's worst error at v4 went from 2.481",
        "  to 3.214 ulp (SPEC: 4), exp's from 1.077 to 1.019.",
        "- **After the run of 2026-12-06 16:17 (2026-12-06 evening, Zen 5 VM).** Two changes to",
        "  the x86 code, in a table's run since 2026-12-07: sigmoid at v4 folds the negation of x into exp's",
        "  multiply-adds (one vxorps a vector fewer; docs/isa.md), and a chunk run as one that",
        "  passes the bound check gives no answer for the span, which LLVM had worked out again",
        "  after each loop of such chunks (vector_add of 1024 floats at v4: 486 to 476",
        "  instructions in the kernel's function, 192 of them the work; ptrace single-step count",
        "  of one call through the header). The bench builds before and after, alternated in five",
        "  rounds of three repetitions (the fastest and the median of 15, 1t): sigmoid_map 2^20",
        "  170/176 to 161/166 µs; vector_add 2^10 57/60 to 58/59 ns (clang's loop 42-43/44),",
        "  2^12 215/227 to 213/223 (169-173/176-181), saxpy 2^10 62/65 to 61/62 (48-50/50-51),",
        "  2^12 194/202 to 188/197 (178-184/184-186): the small rows within noise. The sigmoid",
        "  rows alone, five alternating runs of each build (this VM moved both rows by 15 % from",
        "  run to run): hologram's time over Halide's `fast_exp` sigmoid's 1.10-1.13 before and",
        "  1.07-1.09 after (Halide's own times alike in the two builds, 153-177 µs).",
        "  Tried and reverted the same evening: running a span's first chunk before the loop of",
        "  chunks that test their ends, so that a launch whose chunks all pass never runs that",
        "  loop's set-up (LLVM puts the address of every access there). It took vector_add's",
        "  call from 486 to 433 instructions, and in the same kind of alternated rounds vector_add",
        "  2^10 from 56/62 to 52/54 ns and 2^12 from 213/222 to 205/212; but it is one more",
        "  inlined copy of the chunk, and the compile bench's first `execute_program` of saxpy",
        "  (cache off) went from 44.8-49.6 to 50.7-53.8 ms, past issue 19's goal of 50 ms",
        "  (compile_small in process at v3 33.3-33.8 to 37.0-37.8 ms).",
        "  In the bench build with that change Halide's `fast_exp` sigmoid 1t took 207-225 µs",
        "  against 147-157 in the build before, in rows run alternately minutes apart, though its",
        "  code is the same object, linked at another address (its function at 0x...b10 against",
        "  0x...ff0; that where its loop lands is the cause is likely, not measured). So a peer's",
        "  row can move by 40 % between two builds of the bench, and a ratio against it in one",
        "  build says little about a change of ours unless its own times agree across the",
        "  builds: the changes above are judged by our own rows.",
        "- **The run of 2026-12-06 16:17 UTC (Zen 5 VM), the table before 2026-12-07.** After the launch timing",
        "  changes of that afternoon (the note on the mt rows below): the rows at 2^18 are new;",
        "  saxpy 2^18 mt 1.06 and vector_add 2^18 mt 0.94, saxpy 2^16 mt 1.19 (0.65 at 13:30).",
        "  Two rounds of the hologram and clang rows at 2^16 and 2^18 right after the run (the",
        "  same binary, median of 3 each): vector_add 2^16 mt 4.26 and 4.67 µs against OpenMP's",
        "  loop's 4.34 and 5.16 (the table's 0.59 is its peer's one fast run, 3.11), saxpy 2^16",
        "  mt 3.65 and 3.68 against 4.15 and 4.50; vector_add 2^18 mt 20.2 and 22.2 against",
        "  20.9 and 22.1, saxpy 2^18 mt 15.6 and 14.6 against 14.2 and 12.1 (0.91 and 0.83: on",
        "  two threads a launch pays the worker's start, about 0.9 µs on this VM by the TSC in",
        "  a harness of its own, and its share ran 18-37 % slower than the caller's there, why",
        "  not found). The 1t rows at 2^16 and 2^18 (0.86-0.95) were 0.99-1.06 against the",
        "  clang loop in those rounds (Halide's rows did not run in them).",
        "  Rows behind as in the runs before: 2^10 and 2^12 1t (0.62-0.88, the call's fixed",
        "  cost), vector_add_page_end 1t (0.42), rmsnorm_rows 1t 0.95, saxpy 2^24 mt 0.93;",
        "  sigmoid_map against Halide's `fast_exp` 0.92 at 1t and 1.19 at mt, exp_map 0.93 and",
        "  1.28. The Vulkan sum row read 0.81 (0.93-8.07 for every Vulkan and OpenCL row at",
        "  13:30, with the same device code).",
        "- **The runs of 2026-12-06 (Zen 5 VM): 13:02 and 13:30 UTC.** The first",
        "  with the peers' mt rows on OpenMP's thread team (the note above) and with an OpenMP",
        "  fast-math loop at mt for every row that has one at 1t (and OpenBLAS's dot at mt):",
        "  the loop beats Halide's mt pipeline on sum, softmax_rows and rmsnorm_rows, and",
        "  dot, layernorm_rows, attention and vector_add_page_end have an mt row at last (the",
        "  table left out a mode without a peer; the page's-end row at mt since 13:30).",
        "  attention's mt row was 56-65 us, slower than its 1t row, until its tasks became one",
        "  per block of query rows the same day (docs/design.md): 27-40 us in alternating",
        "  runs of the two bench builds. saxpy 2^16 mt read 0.76 at 13:02 and 0.65 at 13:30",
        "  against that peer: a launch under 5 us of work at the kernel's measured cost runs",
        "  on the calling thread (its mt row, 3.78 us, is its 1t row, 3.91), and the peer",
        "  splits it at 2.48 in this table. In two rounds right after the run of 13:02 the",
        "  same binary gave 4.07-4.98 us against the peer's 4.19-4.74, and vector_add 2^16 mt",
        "  4.67-6.00 against 4.48-5.71; a build with the threshold halved (2.5 us) gave saxpy",
        "  4.30-5.30 against 4.20-4.46, within that noise, and was not kept: a fork and join",
        "  of two trivial tasks took 1.63-1.75 us on hologram's pool and 1.62-2.11 on",
        "  libomp's team, alternating in one process, so a 4 us launch gains little from a",
        "  second thread on this VM either way; libomp's team does better inside the loop",
        "  than that harness shows. Rows behind in one of the two runs and not the other,",
        "  with the same code (13:02 / 13:30): log_map 1t 0.94 / 1.13 and mt 1.10 / 0.98,",
        "  swiglu 1t 0.88 / 1.12, gemv mt 0.96 / 1.46, the transformer 1.16 / 1.00 (1t) and",
        "  0.90 / 1.13 (mt), dot 1t 1.21 / 0.93, rmsnorm_rows 1t 1.49 / 0.99, stream_triad 1t",
        "  1.17 / 0.88, vector_add 2^16 1t 1.02 / 0.97; in both, saxpy 2^16 1t 0.93 / 0.97",
        "  and 2^24 1t 0.96 / 0.95. The rows at 2^10 and 2^12 1t and vector_add_page_end: the",
        "  call's fixed cost and the page's end (their notes below).",
        "- **The runs of 2026-12-05 (Zen 5 VM): 10:05, 12:54, 15:27, 16:01 and 18:27.**",
        "  This VM was slow and uneven that day. In the run of 10:05, rows whose code had not",
        "  changed since the run of 06:58 moved by much more than their peers: transformer 1t",
        "  1.01 to 0.81, gelu_map 1t 1.16 to 0.99. vector_add 2^24 1t read 0.87 (1.35 at",
        "  06:58); in five alternating rounds right after that run, against the best of clang",
        "  and Halide in the same round, its build gave 1.36-1.70 and the build of 06:58",
        "  1.07-1.30. The run of 12:54, whose library ops and math had not changed since 10:05,",
        "  moved as much: gemv 1t 1.45 to 0.99 and mt 1.57 to 0.95, the transformer 0.81 / 1.16",
        "  to 1.46 / 0.84. Between 12:54 and 15:27 f64 pow and tanh changed (their note below);",
        "  between 15:27 and 16:01 f64 sin and cos. Rows whose code did not change moved again:",
        "  at 15:27 saxpy 2^24 1t read 0.76, stream_triad 1t 0.77, sin_f64_map 1t 0.83; at 16:01",
        "  dot 1t 0.79 (1.16 at 15:27), the transformer 1t 0.82 (1.07), stream_triad 1t 0.71,",
        "  saxpy 2^10 1t 0.55 (0.74). Two alternating rounds of the bench builds of 12:54 and",
        "  16:01 right after it, 1t, each against its peer in the same rounds: dot 3384-3420 µs",
        "  against OpenBLAS's 3441-3708, the transformer 1876-1935 against 1892-1896,",
        "  stream_triad 4192-4476 against `stream_nt`'s 3973-4111, saxpy 2^10 60-61 ns against",
        "  43-44, gelu_map 217-218 µs against Halide's 248-250; after 15:27, saxpy 2^24",
        "  4344-4857 µs against clang's 4351-5318 and Halide's 4752-4863. Between 16:01 and",
        "  18:27 only the moved streaming loop changed (stream_triad's note below). At 18:27",
        "  swiglu 1t read 0.67 (1.12 at 16:01; it is a library op, whose code did not change):",
        "  in four alternating rounds of the bench builds of 16:01 and 18:27 right after it,",
        "  1395 and 1418 µs against Halide's 1423 and 1455. saxpy 2^24 1t read 0.88 (1.01),",
        "  the transformer mt 0.80 (0.84), with their code unchanged.",
        "- **The machine of the runs of 2026-11-26 and 27, and of docs/performance-avx2.md.** An",
        "  AMD EPYC of family 25, model 1 (Zen 3)",
        "  with AVX2 and FMA but no AVX-512, so every hologram row runs its x86-64-v3 code.",
        "  The tables before it (this file's history, 2026-11-25) came from an AVX-512 machine",
        "  whose v4 code put the maps at 1.2-1.4x Halide. Its noise: exp_map hologram 1t took",
        "  592 to 968 µs in runs of the same binary that day, Halide's 374 to 505.",
        "- **The maps at v3 (exp, sigmoid, silu, gelu, sin, log).** llvm-mca (znver3) puts",
        "  exp_map's path for a full chunk at 49 instructions, 10 cycles per 8 lanes, against",
        "  Halide's 57 instructions, 14.3 cycles per 16. Of hologram's, 19 to 26 are the chunk",
        "  loop's own: whether the chunk is full, the block's decision on the bound check and",
        "  the alignment test of a streaming store, which LLVM moves out of the loop at v4 (it",
        "  unswitches it there) but not at v3. Raising LLVM's unswitch threshold to 300 took",
        "  them out (vector_add 2^16 1t 11.2 µs against Halide's 10.2-10.7, saxpy 8.0",
        "  against 8.4) but tripled the compile time of a small kernel (33 to 114 ms), so it",
        "  was not taken. Since 2026-11-27 the driver makes that decision itself: the block's",
        "  first chunk reports whether the whole block passes the bound check, and its other",
        "  chunks run in a loop that knows it, and knows whether the launch may stream (a loop",
        "  for each answer), with no test per chunk (docs/design.md). exp_map's full chunk at",
        "  v3 went from 47 instructions with 4 taken branches to 28 with one (llvm-mca: 7.3",
        "  cycles per 8 lanes), but its time did not move, in a harness of its own or here:",
        "  the chain of dependent operations from the load to the store (reduction, Horner's",
        "  polynomial, scaling: about 45 cycles of latency) bounds it, not the instruction",
        "  count. Halide's loop does the same work two vectors at a time. exp scales by 2^k as two multiplications, so that a",
        "  subnormal result is rounded once (Halide's is one, and flushes it); since",
        "  2026-11-26 (evening) a chunk whose every |x| is at most 86.5, where e^x and 2^k",
        "  are normal, skips the clamps and scales once (the same bits): exp's arithmetic",
        "  at v3 is 17 vector instructions and a 4-instruction test instead of 33 (sigmoid,",
        "  silu, gelu and tanh use the same exp). Since 2026-11-28 (evening) exp at v3",
        "  evaluates its polynomial by Estrin's scheme (three multiply-adds in a row instead of",
        "  five) and scales by one FMA, 2^k + (e^r - 1)·2^k, and log's polynomial of degree 8",
        "  is evaluated by Estrin's scheme where FMA is fused (four in a row instead of eight):",
        "  on an AVX2-only EPYC of family 25, 32768 floats in L2, one thread, fastest of",
        "  alternating runs: exp 15.5 to 11.4 µs, log 27 to 23. In full runs on that machine",
        "  (docs/performance-avx2.md) exp_map went from 0.80/0.76 (1t/mt) to 0.98/1.00 of",
        "  Halide's. The same scheme on erf's 8-lane table (degree 6) did not move gelu_map",
        "  (29.9-33.0 µs against 29.6-30.3 for 32768 floats) and was not kept: that table's",
        "  eight vpermps were the limit too. On Zen 3 an 8-lane vpermps takes two cycles of a",
        "  pipe the multiply-adds also use (four vpermps and six FMAs in a loop: 10.4 cycles;",
        "  four vpermilps and six FMAs: 5.0). Since 2026-11-29 erf at v3 reads a table of 4",
        "  intervals of width 1 by vpermilps (degree 8, e_k in the constant term, the",
        "  polynomial c_0 + u·E(u) with E by Estrin's scheme; exhaustive sweep 1.952 ulp,",
        "  docs/isa.md): a gelu loop of 32768 floats in L2, alternating builds, 27.6-29.1 to",
        "  24.1-26.7 µs, of 2^20 905 to 802-859. Halide's gelu still runs about 5 % faster",
        "  per element out of L2 in a harness of its own (2^20: 780-806 µs against 817-840);",
        "  its erf is a cruder approximation.",
        "  The chain of dependent operations named above was not the limit: on 2026-11-29 the",
        "  same exp in a loop of its own (clang, two vectors an iteration, its constants in",
        "  registers) ran 17 % faster than exp_map's kernel, whose loop reloaded 7 to 8 of its",
        "  constants by vbroadcastss in every chunk (a broadcast from memory takes a slot of",
        "  the vector pipes: four more a vector made that loop 16 % slower). The constants",
        "  LLVM hoists to the driver's entry were live across all its loops, and the rare path",
        "  (clamps and two-factor scaling) needed registers inside the hot loop. Three changes",
        "  (docs/design.md, docs/isa.md): the rare path is a function of its own (preserve_all,",
        "  so the loop keeps its registers across the call), f32 exp at v3 goes by quarters",
        "  (a table of 2^(j/4) by vpermilps and a polynomial of degree 4 instead of 6: two",
        "  multiply-adds fewer, 1.019 ulp instead of 1.078 over every f32 input), and the loop",
        "  of whole chunks of a math kernel is a function of its own. Kernels of the old and",
        "  new builds loaded side by side and alternated, 32768 floats in L2, one thread: exp",
        "  0.80-0.82 of the old time, sigmoid 0.85, silu 0.86-0.87, tanh 0.92-0.94, sin",
        "  0.97-0.98, log 1.00, gelu 1.01-1.03; at 2^20 exp 0.81, sigmoid 0.80, silu 0.85,",
        "  gelu 1.04. In the full run of 08:36 UTC (docs/performance-avx2.md) exp_map beat",
        "  Halide's `fast_exp` (which states no bound) at 1.14/1.07 (1t/mt; it was 0.69/0.82 at",
        "  06:25), and Halide's accurate exp at 1.79/1.34. sigmoid_map is at 1.48/1.43 of",
        "  Halide's accurate sigmoid and 0.82/0.84 of its `fast_exp` one. Per 8 lanes Halide's",
        "  loop (perf annotate, 2026-11-29) runs 9 operations on the multiply-add pipes (its",
        "  exp's, with the scale and the 1 + fused into one FMA, p·2^k + 1), a round, a",
        "  conversion, four integer operations and the division; hologram's 8 multiply-adds,",
        "  the range test's compare, the 1 + apart (exp is rounded first, as its bound needs),",
        "  two integer operations, a permute and the division. Where the rest of the",
        "  difference goes was not measured. Since 2026-11-29 (afternoon) two of those",
        "  operations are gone at v3 (docs/isa.md): sigmoid's negation of x is folded into exp's",
        "  first two multiply-adds (a vxorps a vector), and 2^floor(k/4) goes into the table",
        "  entry's exponent by one integer add with no mask (a vpand a vector and its constant:",
        "  the table's entries have k mod 4 at bits 21 and 22 taken off), which freed two",
        "  registers, so the loop reloads three constants a chunk instead of five (the same bits:",
        "  the exhaustive sweep's worst errors did not move). Kernels of the old and new",
        "  compilers loaded side by side and alternated, one thread: 32768 floats in L2, exp",
        "  0.94-0.96 of the old time, sigmoid 0.87-0.88, silu 0.90-0.91, tanh 0.96-0.97, gelu,",
        "  sin and log within 1 %; at 2^20 exp 0.96, sigmoid 0.85, silu 0.89. Against Halide's",
        "  `fast_exp` sigmoid in a harness of its own, 32768 floats, 0.85 to 0.92 and at 2^20",
        "  0.88-0.89 to 0.91. The library's exp by quarters makes its scale the same way: in",
        "  alternating runs of two builds of the runtime, softmax rows and swiglu were within",
        "  noise (0.94-1.07 and 0.82-1.02). gelu_map",
        "  lost 2-5 % to the loop's function of its own (its erf table needs more registers",
        "  than there are either way, and they spill differently).",
        "- **swiglu** (y = silu(x)·g, 2^22, out of cache). hologram's silu and map2.mul form an",
        "  element-wise chain and run fused, each range through both: in alternating runs (8 KiB",
        "  ranges then) with the chain broken by a fence between the two, 6.97 against 8.12 ms",
        "  1t and 4.12 against 4.68 mt. Since 2026-11-28 a range is 2 KiB of each array, not 8:",
        "  in 10 alternating runs of each build, 1t median 1.44 against 1.88 ms, mt 0.92 against",
        "  1.10 (Halide 1.23 and 0.85 in the same runs). What is left is the library's f32 silu:",
        "  on the AVX-512 machine of 2026-11-28 (1t 1.42-1.44 ms against Halide's 1.08 in three",
        "  runs) perf puts 32 % of the row's samples in silu's map and 6 % in map2.mul, and within",
        "  silu 40 % on the instruction after its one vdivps a vector (the divider's throughput)",
        "  and 17 % on the store. A reciprocal estimate refined by Newton steps instead of the",
        "  division would have to stay within silu's 4 ulp, of which 3.39 are used (docs/isa.md).",
        "  Since 2026-11-28 (evening, on the AVX2 EPYC) the library's silu, exp and sigmoid below",
        "  AVX-512 skip the clamps and the 2^64 scaling where every lane of a vector is normal",
        "  (the same bits for every f32 input: old and new compared over all 2^32 at v2 and v3;",
        "  a silu loop in L1 1.03 to 0.79 ns an element), and silu and the map2.mul that reads",
        "  it run as one loop (fused-pair, docs/design.md), which reads g while silu computes:",
        "  the 1t ratio to Halide in alternating runs of the two bench builds went from 0.71-0.77",
        "  to 0.80-0.96. In the cache it is the arithmetic: 2^14 elements in L2 (2026-11-28,",
        "  night, one thread, a harness of its own) take 15.0-15.3 µs against Halide's",
        "  11.2-11.5, about 18 cycles a vector of 8 for about 40 instructions, exp's chain of",
        "  dependent operations and the division. Two vectors a loop iteration (19 µs) and the",
        "  rare path out of line, so that the loop keeps its constants in registers (no",
        "  change), were tried and not kept; Halide's exp does less work for its 4.7 ulp.",
        "  perf (2026-11-29, the same harness) puts 46 % of the loop's samples on the",
        "  instruction after its vdivps, waiting for the quotient at the end of a chain of",
        "  about 65 cycles; Zen 3 keeps about two such vectors in flight. exp's polynomial by",
        "  Estrin's scheme in the library (one multiply-add fewer in the chain) was within",
        "  noise (21.4-21.6 against 21.6-21.9 µs for 32768) and was not kept. Non-temporal",
        "  stores for the fused pass's y (2026-11-29, where x, g and y outgrow the cache) made",
        "  it slower in a harness of its own: 1t 4.0-5.1 ms to 7.5-8.0 for 2^22. Since",
        "  2026-11-29 (midday) the library's exp at v3 goes by quarters, as compiled kernels",
        "  do (the same bits, docs/isa.md): compiled side by side with the old vector_math.h",
        "  in one process, 4096 floats in L1, time per 8 lanes new/old: exp 0.78-0.79,",
        "  softmax's exp_below 0.81-0.83, silu 0.85-0.86. GCC then stopped inlining silu's",
        "  vector function into the fused loop (a call per vector, its constants loaded on",
        "  every call) until it was made always_inline. Out of cache swiglu stays a race",
        "  between streams: in-process runs against Halide's pipeline (one binary, alternated)",
        "  put it at 0.78-0.96 (1t) and 0.74-0.99 (mt) before and after.",
        "- **softmax_rows at v3.** 2.65-2.70 ms against 1.45 at v4 (2026-11-28, alternating",
        "  runs; the peers run AVX-512 code). perf puts 23 % of the v3 time in the row maximum's",
        "  pass (each row's first read from memory) and the rest in the exponential pass, whose",
        "  8-lane vectors need about twice v4's instructions per element. Since 2026-11-28 a",
        "  vector of differences that are all above -86.5 (e^s and 2^k normal) skips the clamp",
        "  and the select and scales once (the same bits): in four alternating rounds of the",
        "  two builds, v3 2.57-3.60 ms against 2.87-4.25 before (v4 within noise).",
        "- **vector_add and saxpy at 2^10 to 2^16, 1t.** An empty launch through the generated",
        "  header costs about 25 ns (the launch overhead table), which the plain loop does not",
        "  pay, and the kernel's entry about as much again: at 2^10 that is most of the gap.",
        "  A block whose lanes are all in bounds now runs its chunks back to back with no test",
        "  (the bound check is decided once per block; the loop is unrolled four times, like",
        "  the plain loop's; docs/design.md). Until",
        "  2026-11-26 that held at v4 only: at v3 LLVM kept one chunk loop with about twenty",
        "  scalar instructions of tests per chunk. The driver now runs blocks of whole chunks",
        "  in a loop of their own; alternating runs of the old and new bench binaries on this",
        "  AVX2 machine: vector_add 2^10 1t 0.26-0.50 to 0.19-0.36 µs, saxpy 2^12 1t 0.70-1.10",
        "  to 0.49-0.80, saxpy 2^16 1t 11.6-16.5 to 9.6-10.5, sigmoid_map 1t 1245-1306 to",
        "  871-1132 (whose exp keeps a per-chunk test: LLVM's cost model does not unswitch a",
        "  body that large). Since 2026-11-27 a kernel that reads only %gid runs the blocks of",
        "  a worker as one span (docs/design.md, \"Spans of blocks\"): 2^10 lanes are one loop of",
        "  64 chunks at v4, where each block of 256 lanes paid its own entry, and about half of",
        "  vector_add 2^10's samples (perf, cpu-clock) had been in that per-block code. In",
        "  alternating runs on the AVX-512 machine: vector_add 2^10 1t 0.110 to 0.098 µs,",
        "  2^12 0.44-0.52 to 0.29-0.33, saxpy 2^12 0.33-0.42 to 0.21-0.22. What remains at",
        "  2^12 is the order of loads and stores: hologram's chunk loads, adds and stores one",
        "  vector before the next chunk loads (the arrays may alias, and LLVM's scheduler kept",
        "  that order even when told they do not), while clang's loop checks at run time that",
        "  they do not overlap and loads four vectors before it stores four. The bench's",
        "  arrays, from malloc, lie 16400 bytes apart, so a store and the next load meet",
        "  4 KiB apart: in a harness of its own with that layout (2026-11-27, vector_add",
        "  2^12 in AVX-512 intrinsics, the arrays 16 bytes past a 64-byte boundary as",
        "  malloc's are) the interleaved order took 0.30 µs and the grouped one 0.21; with",
        "  the arrays apart by other amounts the two orders are within 10 %. At",
        "  2^16, where the data is in L2, the calls are within 5 % of the loop.",
        "  Measured again on 2026-11-28 in a harness of its own (vector_add through the",
        "  generated header, one thread, the fastest of 5 x 200000 calls): at 2^8 a call takes",
        "  50 ns, of which the kernel's own function, called directly, is 19.5 (the plain loop:",
        "  8); hologram_cpu_call and launch_cpu_kernel take the other 30 (callgrind: about 500",
        "  instructions; taking the divisions out of that path did not move it). At 2^12 the direct",
        "  call takes 292 ns and the loop about 250, and the launch adds its 30. Chunks of two",
        "  and of four vectors (loads grouped before the stores, as clang's) moved 2^12 by",
        "  5-10 % in alternating runs on the AVX-512 VM and were not kept there (v4 keeps 16",
        "  lanes). On the AVX2 EPYC they are kept since 2026-11-28 (night): a stream (no",
        "  math, no loop, at most six varying values) has chunks of four registers below v4",
        "  (chunk_widths, docs/design.md); in a harness of its own, vector_add of 4096 floats",
        "  through the header 0.77-0.91 to 0.66-0.77 µs (clang -O3 0.61-0.69), of 2^24 13.7",
        "  to 12.0 ms (its non-temporal stores now go four vectors, a whole cache line and",
        "  more, at a time). The same night the runtime's one-task launch lost about 90",
        "  instructions (callgrind: run_cpu_launch 250 to 157 a call). Until 2026-11-28 a launch whose n is",
        "  not a multiple of its block ran every chunk in the loop that tests each chunk's",
        "  ends (with one thread, the whole launch was one span that straddled the bound);",
        "  now only the chunk that straddles it does (docs/design.md).",
        "  Since 2026-11-28 (afternoon) the header's call hands the kernel the argument array",
        "  its entry point packed, with no copy into the runtime's own form, a kernel that never",
        "  touches the Atlas state or a workspace gets none, and the driver runs no chunk whose",
        "  lanes all leave at the bound check (docs/design.md). In a harness of its own (one",
        "  thread, the fastest of 5 x 200000 calls, AVX-512 VM): vector_add of 16 elements",
        "  94 to 30 ns a call, of 1024 elements 127 to 85 ns (the plain loop: 50 to 59); callgrind",
        "  counted about 800 instructions outside the kernel's code before, about 500 after.",
        "  Called directly, the kernel of 1024 elements takes 71 ns against the loop's 53: the",
        "  loops are the same four-vector loop, and the rest is the kernel's entry (loading",
        "  the launch's fields, the span, the streaming decision).",
        "  Since 2026-11-29 each thread keeps the last launch it made through the header,",
        "  checked and worked out, and a call that repeats it goes straight to the run",
        "  (docs/design.md): callgrind, an empty kernel of one lane, 368 to 276 instructions a",
        "  call; a harness alternating the builds, 55-60 to 42-46 ns. vector_add of 1024",
        "  floats at v3 is now about 660 instructions in the kernel, of which about 250 are its",
        "  entry and first chunk and 400 the four-vector loop (callgrind), and about 230 in the",
        "  runtime: 124 ns against the loop's 70 in a harness of its own.",
        "  Since 2026-11-29 (morning) two stalls are gone from every launch (perf on a loop of",
        "  empty launches): the failure record, written only when a launch fails, was zeroed",
        "  with rep stos on the path for more than one thread, and GCC reloaded the two",
        "  argument pointers as one 16-byte vector that no store forwards to; the default",
        "  thread count is read from a global once known. Old and new bench binaries",
        "  alternated on the AVX2 EPYC: the empty launch through the header 34-35 to 24-25 ns",
        "  (Backend::launch 89-91 to 79-82), vector_add 2^10 1t 114-171 to 110-160 ns.",
        "  Chunks of four registers for streams at v4 too were tried again on 2026-12-05 (Zen 5",
        "  VM, alternating bench builds, each the fastest of 5-20): vector_add 2^10 1t 63-66 to",
        "  51-56 ns and 2^12 222-246 to 189-228, but stream_triad 2^24 1t 3.7-4.0 to 4.6-5.4",
        "  ms and vector_add 2^24 1t 3.6-4.4 to 4.3-5.3, whose non-temporal stores then leave",
        "  four registers at a time (a harness of its own calling the same two kernels through",
        "  their headers found no such loss, vector_add 2^24 4.6-4.8 ms before and 3.8-4.7",
        "  after, so the cause is not known). Against the peers of the same runs: stream_triad",
        "  2^24 1t 0.89-0.97 with one register, 0.62-0.85 with four; vector_add 1.39-1.61 and",
        "  1.27-1.46. So at v4 only a stream none of whose stores may bypass the caches has",
        "  four registers (saxpy, which writes the array it reads: 2^10 1t 67-85 to 56-58 ns,",
        "  2^12 209-225 to 164-190, 2^24 level with its peers; docs/design.md).",
        "  Since 2026-12-05 (morning) a stream whose output is only written has both: 64 lanes",
        "  where its stores stay in the caches, 16 in the loop that runs when they stream",
        "  (chunk_widths, docs/design.md). Five alternating rounds of the two bench builds on",
        "  the Zen 5 VM (1t, the fastest of 10 runs each; this VM was slow that morning):",
        "  vector_add 2^10 73-115 to 65-118 ns and 2^12 282-457 to 256-305 (clang's loop",
        "  45-58 and 164-358 in the same rounds). What is left at 2^10 is the fixed cost of",
        "  the call: the empty launch through the header, and the kernel's entry.",
        "  Measured again on 2026-12-05 (evening) in a harness of its own (vector_add through",
        "  the generated header, its v4 function called directly, and clang's loop, the",
        "  fastest of 100 interleaved rounds, arrays 64 bytes apart): 64 floats 22.9, 14.8 and",
        "  1.9 ns; 1024 floats 46.9, 37.7 and 21.9; 4096 floats 132.7, 108.1 and 87.9. So",
        "  the kernel's entry costs about 13 ns and the runtime's part of the call about 8.",
        "  perf (cpu-clock) spreads the direct call's samples evenly over some 190",
        "  instructions of the entry, with no stall standing out: the cost is their count",
        "  (callgrind at v3, 64 floats: 271 instructions in the kernel's function, of which",
        "  about 30 are the two chunks' work, and about 236 in the runtime). At 4096 floats",
        "  the three arrays fill the 48 KiB L1 exactly, and the call's own memory (its stack",
        "  frame, the launch record) costs the arrays lines: the gap there is about 45 ns",
        "  where at 2048 and 3072 floats it is the fixed 25.",
        "  On 2026-12-07 (Zen 4 VM, 32 KiB L1) the kernel's function lost over a quarter of",
        "  its instructions: a probe answers for a span's first chunk at the bound check, so",
        "  every chunk that goes on runs in the tight loop, and the chunks that do not (the",
        "  one that straddles the bound) call the chunk function instead of inlining it",
        "  (docs/design.md). vector_add at v4, gdb stepping the call (one thread): 64 floats",
        "  246 instructions in the kernel's function to 176, 1024 floats 476 to 366; of the",
        "  whole call through the header (64 floats, 294 after) the runtime's part is 118.",
        "  Bench builds alternated against the one before (fastest of 5): vector_add 2^10",
        "  1t 76 to 73 ns, 2^12 465 to 447, 2^16 7.53 to 7.36 µs; saxpy 84 to 82, 309 to",
        "  299, 5.71 to 5.52 µs; vector_add_page_end 99 to 90 ns. What is left against the",
        "  loop at 2^10 and 2^12 is still the call's fixed cost: about 280 instructions of",
        "  launch geometry, the probe, the loop's set-up and the runtime's checks, where the",
        "  loop has none.",
        "  Later on 2026-12-07: at AVX-512 a partial chunk's masks are prefixes made from a",
        "  count (bzhi: the chunk's lanes in its span, and the lanes below a bound that %gid",
        "  is compared with) instead of 64 lane ids and their compares; the loops of chunks of",
        "  four registers a value are not unrolled (their remainder and set-up were paid by",
        "  every small launch); the called chunk does not work out again the answers the probe",
        "  gave; a call that succeeds tests a flag, not the last error's string. vector_add at",
        "  v4 through the header, gdb stepping (one thread): 64 floats 294 to 273",
        "  instructions, 16 floats 417 to 372, 1000 floats 858 to 811 (1024 floats 484 to",
        "  498: the loop's count and branch, once a chunk, where the unrolled loop had them",
        "  once in several). saxpy's kernel function called directly (one thread, the",
        "  fastest of 15 rounds), the loops unrolled and not: 1024 floats 51.9-52.3 ns to",
        "  49.2-49.3, 4096 182-183 to 179; bench builds the same two ways, alternated (the",
        "  fastest of 4 x 3): saxpy 2^10 1t 82 to 80 ns, vector_add 2^10 72 to 71, the other",
        "  rows within noise. In the same harness a function written",
        "  by hand to the same ABI (clang -O2: it reads the same launch record and arguments,",
        "  then one loop of four registers and a masked tail) took 5.0 ns at 64 floats,",
        "  46.1-47.9 at 1024 and 170 at 4096, where clang's loop took 4.5, 41.3 and",
        "  165-175, and the call through the header 57.5-58.3 at 1024 (with the",
        "  loop still unrolled). So the compiled kernel is within 1-3 ns of it at 1024 floats;",
        "  what is left against the loop is reading a launch (its record, each argument",
        "  through a pointer) and the runtime's part of the call, about 6 ns: the cost of",
        "  a launch, not of the loop's code.",
        "- **vector_add_page_end, 1t.** vector_add of 1000 floats whose three arrays end where",
        "  a page the process may not touch begins, as an array at the top of the heap or at",
        "  the end of an mmap ends before pages that are not present. The chunk that straddles",
        "  the bound loads and stores under a mask, and an AVX-512 masked access whose bytes",
        "  reach into such a page costs a fault-suppression assist at every launch. Since",
        "  2026-12-05 (noon) such an access goes register by register (docs/design.md, \"Masked",
        "  accesses at a page's end\"): in two alternating rounds of bench builds with the old",
        "  and the new code generator (Zen 5 VM, 1t, fastest of 5), 1.04-1.10 µs to",
        "  0.097-0.137 µs (clang's loop 0.040-0.045). What remains against the loop is the",
        "  call's fixed cost (the rows above) and the partial chunk's three calls of the",
        "  functions that go register by register, with a gather or scatter each.",
        "  Since 2026-12-06 such a register is two masked accesses, one within each page",
        "  (docs/design.md): 92-114 to 86-107 ns in alternating rounds of the bench builds.",
        "  In a harness of its own that day (1t, fastest of 5 x 2-3 million calls), 1000",
        "  floats at a page's end took 84-109 ns against the loop's 37-45; the same arrays 288",
        "  bytes into a page (no page's end, the same offset in a cache line) 76-79; arrays",
        "  at a page's start 49-58 against 22-24, and 1024 floats there 47. So of the gap",
        "  the page's path is 15-30 ns, the partial chunk up to 10, the cache lines the",
        "  arrays straddle 20-30 (the loop pays 18) and the call's fixed cost about 24. The",
        "  page's function inlined into the kernel (always_inline) took 90-99 ns against",
        "  83-87 and was not kept.",
        "  On 2026-12-07 (morning) the partial chunk's masks came from counts and its call",
        "  stopped working out the probe's answers again (the note on the rows at 2^10 and",
        "  2^12): 1000 floats 858 to 811 instructions through the header (one thread). Bench",
        "  builds alternated, the fastest of 6 x 3: 88 to 86 ns with the masks; of 4 x 3, 85",
        "  to 84 with the loops not unrolled. What remains is as above: the partial chunk's",
        "  three calls of the page's function and the call's fixed cost.",
        "  At x86-64-v3 (the AVX2 EPYC, Zen 3) the row took 0.75-0.88 µs until 2026-12-07",
        "  (evening), ten times the loop: AVX2's vmaskmovps load pays the assist there too,",
        "  about 115 ns whenever its 32 bytes reach into the page, even with no lane in its",
        "  mask, and v3's partial chunk of 32 floats made six such loads. Since then v3 takes",
        "  the page's function as well, which copies the mask's lanes one by one",
        "  (docs/design.md): in three alternating rounds of the bench builds (1t, the median",
        "  of 3), 0.75-0.83 µs to 0.139-0.150 (clang's loop 0.064-0.103), mt 0.82-0.84 to",
        "  0.137-0.207. Its price is compile time at v3 (the compile tables' note).",
        "  The same day the header's call tests for a repeat of the thread's last launch",
        "  first, in a few loads and compares (docs/design.md): saxpy of 16 floats 20.8-24.4",
        "  to 18.5-21.3 ns a call in a harness calling both versions alternately; the empty",
        "  launch through the header (with an hg_launch) 14 to 12 ns, the fastest of five",
        "  alternating rounds of the bench builds of the previous stop and this one, whose",
        "  vector_add and saxpy rows at 2^10 and 2^12 moved within 7 % either way.",
        "- **The same rows, mt.** A launch with under 5 µs of work at the kernel's measured",
        "  cost runs on the calling thread. Until 2026-11-27 that cost came from timing whole",
        "  launches, parallel ones included: a parallel launch's time holds the workers'",
        "  wake-up, and a launch preempted once by this VM measured 13 ns a lane instead of",
        "  0.1, so a launch of 2^12 lanes looked like 54 µs of work and stayed parallel",
        "  for good (debug output of the choice: 2^16 mt rows at 8.8-9.9 µs, twice their 1t",
        "  rows). The cost is now measured on the calling thread only, a small launch due for",
        "  timing runs there, and one timing can at most quadruple the cost (docs/runtime.md):",
        "  vector_add 2^16 mt 8.9 to 5.1 µs, saxpy 9.5 to 4.4, the same as their 1t rows.",
        "  Since 2026-11-28 (night) a parallel launch under 100 µs of work is one contiguous",
        "  share of its blocks per thread, the same share on the same thread each time, where",
        "  eight tasks a thread moved the data between the cores' caches from one launch to",
        "  the next (docs/runtime.md): vector_add 2^16 on 2 threads 7.6-8.2 to 6.8-7.8 µs in",
        "  five alternating rounds of a harness of its own. Until 2026-12-06 a launch of more",
        "  than 2^16 lanes due for timing ran in tasks untimed, so a kernel whose launches",
        "  all had more lanes never had a cost and ran each launch in eight tasks a thread",
        "  (saxpy of 2^17 floats on 2 threads 12.8-14.0 µs, 7.5-8.7 on one); such a launch",
        "  now times its tasks (6.2-7.0 µs). A timing launch on the calling thread right",
        "  after a parallel one found half its data in the other core's cache and kept a loop",
        "  of 2^16-lane launches parallel; it now only warms up and the next launch is timed",
        "  (saxpy 2^16 on 2 threads 2.5-4.4 to 2.5-2.7 µs); and a launch due for timing runs",
        "  on the calling thread only under 10 µs of work, no longer 40 (saxpy 2^18 on 2",
        "  threads 14.6-15.7 to 11.2-13.3 µs, OpenMP's loop 12.9-13.1). Those numbers are",
        "  from a harness of its own, alternating builds; the rows at 2^18 are new with it.",
        "- **log_map.** Per 16 lanes hologram runs 24 vector instructions of arithmetic and a",
        "  range test (v4 assembly): the degree-8 polynomial that keeps every input within",
        "  0.9 ulp, subnormal inputs included, and the range test per chunk. Halide's log",
        "  runs about 26 per vector but two vectors per loop iteration. Its ratio has ranged",
        "  from 0.65 to 1.07 between runs of the same code. Since 2026-11-28 (evening) a",
        "  kernel of f32 math functions runs chunks of twice the vector width below v4, two",
        "  registers a value, as Halide does (docs/design.md): at v3 on the AVX2 EPYC, 32768",
        "  floats in L2, log 30.3 to 24.8 µs, sin 23.1 to 18.3, tanh 31.0 to 23.7, silu 19.0",
        "  to 15.5, sigmoid 17.0 to 15.0, exp 11.0 to 9.8, gelu 30.0 to 27.8 (fastest of",
        "  alternating runs of the same kernels compiled by the two builds).",
        "- **silu_map.** x/(1 + e^(-x)) on the inline exp, as sigmoid_map. It ran at 0.8-0.9",
        "  of Halide while every chunk tested its own bound; 1.1-1.2 since that test is made",
        "  once per block.",
        "- **gemm at v3.** Until 2026-11-26 the micro-kernel's vector type had the element's",
        "  alignment, and GCC copied every B load through the stack in 16-byte halves and kept",
        "  the accumulators in memory: 9.5 GFLOP/s at v3, gemm 512 1t 28 ms against OpenBLAS's",
        "  3.4 (0.12-0.14x in the first run of that day). With natural alignment, the",
        "  accumulators in registers, the k loop unrolled four times and the C tile prefetched:",
        "  0.84-0.94x at 1t. There is no assembly kernel. On 2026-11-28 (night) perf put 18 % of",
        "  gemm 512 1t in packing: B was read a sliver at a time down all its rows and A one",
        "  element at a time with two tests each. B is now packed 8 rows at a time across the",
        "  slivers, which lie a cache line more than 32 KiB apart (at depth 512 a sliver is the",
        "  L1 cache's size, and its stores fell in one cache set), and A by 8x8 transposes:",
        "  packing 9 % of the samples, gemm 512 1t 3.9-4.2 ms to 3.4-3.9 (OpenBLAS 3.3).",
        "- **gemm.** Panels of depth 512 since 2026-11-24 evening (C is read and written half",
        "  as often as at 256): 1024 1t 23.4-24.3 ms before, 21.4-22.8 after, in alternating",
        "  runs. The packed micro-kernel (6x32 at AVX-512) is written in C++ vector",
        "  extensions; GCC keeps four register copies per k step in its inner loop (v4 object:",
        "  the last rows' sums land in the B and broadcast registers and are moved back). No",
        "  assembly micro-kernel yet. Tasks are row blocks times column ranges, so two threads",
        "  scale better (1024: 1.7x to 1.9x the one-thread time in the runs of the day, 1.6x",
        "  before).",
        "- **layernorm_rows.** y now streams (non-temporal stores: x and y together outgrow",
        "  the 32 MiB cache), which took rmsnorm from 1081-1592 µs to 873-941 and layernorm",
        "  from 1399-1547 to 1332-1379 in alternating runs on 2026-11-25. What is left is the",
        "  row's two cached passes: with the rows in cache (4 rows, a harness of its own),",
        "  hologram's layernorm takes 264 ns a row against 191 for the fast-math loop and 194",
        "  for hologram's own rmsnorm, whose one statistics pass is layernorm's first. The",
        "  mean and the variance are two compensated sums (so a row of any length stays within",
        "  docs/isa.md's bound) where the peer adds plainly; a one-pass variance would need a",
        "  new error bound. Earlier: the lane sums went through the stack under GCC (1582 µs).",
        "  Since 2026-11-28 (night) the squares' pass, which runs from L1, fetches the next",
        "  row (perf: a fifth of layernorm's samples were its mean pass waiting on memory):",
        "  4096x1024 1t on the AVX2 EPYC, layernorm 4.40-4.81 to 3.18-3.37 ms (clang -O3",
        "  -ffast-math 3.66-3.99), rmsnorm 3.51-3.62 to 2.68-2.93, alternating runs.",
        "  The VM of the 2026-11-25 06:00 run moves memory faster: there the fast-math loop",
        "  took 886-894 µs and hologram 1265-1267 (0.70) in runs of that row alone.",
        "  The mt rows (rmsnorm too) on the Zen 4 VM: the streamed y goes to memory at this",
        "  VM's write bandwidth (16 MB in 345-604 µs for rmsnorm), where the fast-math loop,",
        "  storing through the cache, keeps much of x and y (32 MB, read and written again at",
        "  every repetition) in the 32 MiB L3 (300-480 µs). Without streaming",
        "  (`HOLOGRAM_CPU_STREAM_BYTES=0`) hologram is slower still, at both thread counts:",
        "  three alternating rounds on 2026-12-07, rmsnorm 1t 1029-1124 µs against 646-850",
        "  streamed, mt 418-550 against 345-604; layernorm 1t 1562-2223 against 934-1171, mt",
        "  598-813 against 481-621.",
        "  Rows in the cache (the rows of 256x1024, in the table since 2026-12-07 late morning,",
        "  what a model's norms usually have): until then the loops of the norms tested gamma",
        "  and beta for null in every iteration and subtracted rmsnorm's zero mean from every",
        "  element, and ran 1.35-1.5x slower than the fast-math loop (a harness of the generated",
        "  header, 1t, 64 to 2048 rows of 1024). Each case (layernorm with gamma and beta, either",
        "  or neither; rmsnorm with gamma or without) now has its own loops, the same bits: rmsnorm",
        "  64 rows 11.6 to 8.6-8.7 µs (the loop 7.9-8.1), 1024 rows 183-191 to 144 (135);",
        "  layernorm 64 rows 15.0-15.2 to 12.8-13.0 (10.5-10.9). What is left is the compensated",
        "  sums that hold docs/isa.md's bound for rows of any length (the next row's prefetch,",
        "  named here beside them before, was not running: see the per-level table's notes).",
        "  Measured on 2026-12-07 (early afternoon) in a harness that calls the library's v4",
        "  norm_rows on rows in L1 (the cost of a row from 1, 2 and 3 rows of 1024, 1t): rmsnorm",
        "  113 ns a row, layernorm 190, against the fast-math loop's 96 and 145; the same code",
        "  without compensation (a scratch build, the bound lost) 104 and 157. llvm-mca",
        "  (-mcpu=znver4) on the squares' loop: 20 cycles for 16 vectors, the adders (FP2, FP3)",
        "  full with the groups' trees and TwoSums, against 16 for the loop's (its loads and",
        "  FMAs), 82 cycles a row against 66. Adding the two compensated sums at a row's end by",
        "  one TwoSum instead of two took the harness's rows to 110 and 182 ns and the bench's",
        "  rows 2-3 % in alternating runs. What held layernorm up most was the end of the",
        "  mean's sum, a chain of dependent operations that the squares' pass (which needs the",
        "  mean) waited on at every row: taken for row r + 1 between row r's squares and its",
        "  normalization it runs beside them, 179-187 to 151-160 ns a row in the harness (the loop",
        "  145), where y does not stream (rows from memory kept the old order: 4096x1024 took",
        "  1094 µs against 960 with the new one). Tried and not kept the same day: computing",
        "  rmsnorm's row r + 1 sums before row r is normalized, so that the end of a row's sums",
        "  and its square root run beside the next row's passes; the groups' pairwise additions as",
        "  a·1 + b on the multiply-add pipes, to unload the adders (the same bits); groups of",
        "  sixteen vectors (layernorm 4 % faster, rmsnorm level, 1u more per group). None made",
        "  them faster but the last; the square root and division in f32 instead of f64 took",
        "  3 % (not kept: docs/isa.md's bound counts one rounding there).",
        "- **saxpy 2^24.** y is read and written in place, so its stores cannot bypass the",
        "  cache (streaming a line just read made it 30 % slower); it runs at the memory limit",
        "  of a read-modify-write, as its peers do. vector_add, whose output is only written,",
        "  stores non-temporally at this size (docs/design.md, \"Non-temporal stores\").",
        "- **stream_triad 1t against `stream_nt`.** Until 2026-11-27 hologram's triad did",
        "  not stream at all: its output, a std::vector from malloc, starts 16 bytes past a",
        "  page, and a store streamed only where it was aligned to its whole vector (32 bytes",
        "  at v3), so every chunk stored through the cache (0.72-0.79x in the table of",
        "  2026-11-26). A chunk aligned to 16 bytes now streams in 16-byte pieces, which",
        "  took the row to 0.93x (1t) and 1.11x (mt) and vector_add 2^24, whose output is",
        "  also only written, from 0.90-0.97x to 1.06-1.12x. In alternating runs of the triad",
        "  alone (2^24 floats, 1t): 11.6-15.7 ms against 15.0-17.3 before.",
        "  What was left at 1t was alignment. `stream_nt` stores scalars until its output is",
        "  aligned to 64 bytes, and since the bench's three arrays lie 16 bytes past a line",
        "  alike, its loads are then aligned too. hologram's chunks started at multiples of",
        "  16 lanes: each load straddled two lines, and each store went out in four 16-byte",
        "  pieces. In a harness of its own (2026-12-05, Zen 5 VM, 2^24 floats, 30",
        "  alternating rounds, the fastest of 3 runs each): the peer's loop 5.46 ms median,",
        "  16-byte pieces 6.74. Joining each chunk's tail with the next chunk's head into one",
        "  aligned 64-byte store (valignd, the tail carried in a register) gave 6.37 there,",
        "  but in the bench it did not show against `stream_nt` (0.70-0.97 before, 0.72-0.87",
        "  after, six rounds), its loads still misaligned, and it was not kept. Since",
        "  2026-12-05 (morning) the streaming loop at v4 moves its chunks instead: the first",
        "  says where its store begins, and the others start that many lanes further, at the",
        "  next line (docs/design.md, \"Non-temporal stores\"). Against `stream_nt` in eight",
        "  alternating rounds of the two bench builds (1t, sorted): 0.71 0.77 0.78 0.80 0.90",
        "  0.94 0.97 1.04 before, 0.88 0.89 0.91 0.92 0.93 0.94 1.08 1.43 after; vector_add",
        "  2^24 against Halide in five rounds: 1.09-1.30 before, 1.07-1.68 after.",
        "  Until 2026-12-05 (evening) each chunk of that loop tested again whether the launch",
        "  streams and whether its store was aligned to 16 bytes, and kept the way of four",
        "  16-byte stores: about 17 instructions a line, where `stream_nt`'s loop runs 5. Now",
        "  the driver tells the chunk that its store is on a line of a launch that streams,",
        "  and only the address's alignment is tested (about 10 instructions a line;",
        "  docs/design.md). Alternating rounds of the bench builds of 16:01 and 18:27 gave",
        "  no difference this VM can resolve: stream_triad 1t 4130 to 3977 µs in eight rounds",
        "  (`stream_nt` 4504 and 4399 in the same rounds), then 4312 to 4739 in four (4632 and",
        "  4564); vector_add 2^24 1t 5012 to 3762 in the same four.",
        "- **f64 pow and tanh (behind SLEEF until 2026-12-05).** A loop of either was bound",
        "  by its chain of dependent operations, not by their count: pow ran about 400 vector",
        "  operations per 16 lanes, more than the out-of-order window holds, in one chain with",
        "  two divisions and double-double products in a row (log's quotient of pairs, then s²,",
        "  s³ and W as pairs) and exp's Horner polynomial of degree 10. Since 2026-12-05 log|x|",
        "  takes one division and builds its terms from TwoProd of the quotient's head, and",
        "  exp's polynomial goes by Estrin's scheme for its terms of high degree (docs/isa.md);",
        "  tanh's quotient and polynomial likewise. Alternating rounds of the two bench builds,",
        "  1t: pow 4224 to 2799 µs and 4647 to 3153 (SLEEF u10 4063-4400), tanh 1554 to 1174",
        "  and 1553 to 1160 (SLEEF 2238-2270). The same division in atan2's u gave nothing",
        "  (1867 to 1926 µs) and was not kept.",
        "- **sin_f64_map over [-8, 8].** hologram reduces by π/2 for every argument below 2^19",
        "  (four-part Cody-Waite in double-double). Until 2026-12-05 it evaluated both the sine",
        "  and the cosine polynomial of the quadrant for each lane and picked one after (about",
        "  70 vector instructions per 8 lanes at v4, the multiply-adds the limit); since then the",
        "  quadrant picks each lane's coefficients first and one polynomial runs, the same",
        "  operations, so the same bits. Three alternating rounds of the two bench builds: 1t",
        "  964 to 901 µs (SLEEF 845-901), mt 506 to 487, the wide row 1t 975 to 873. SLEEF",
        "  reduces arguments below 15 by π in two steps and evaluates one polynomial with fewer",
        "  terms. Beyond 15 SLEEF reduces in more steps and hologram's code is the same",
        "  (`sin_f64_map_wide`, arguments in [-1000, 1000]).",
        "- **dot, sum and gemv (memory-bound reductions).** Until 2026-11-27 evening they read",
        "  64-byte vectors at v4, with a software prefetch 2 KiB ahead in sum and dot: dot 1t",
        "  ran at 0.60x OpenBLAS in the table of that evening. malloc's arrays start 16 bytes",
        "  past a 64-byte boundary, so every 64-byte load spans two cache lines; OpenBLAS's",
        "  kernel on this CPU reads 32-byte vectors. In a harness of its own (2^24 floats, one",
        "  thread) 32-byte vectors with no prefetch took dot from 4.0-4.3 ms to 2.9-3.4",
        "  (OpenBLAS 2.8-3.3) and sum from 2.16 to 1.39-1.46 ms; the prefetch slowed every",
        "  variant, and aligned 64-byte loads were still slower (3.3-3.6 ms). These reductions",
        "  now read at most 32-byte vectors at every level. Side by side after the change, that",
        "  evening: dot 1t 2966 µs against OpenBLAS's 3029 (4658 before), gemv 4096 1t 1877",
        "  against 1712 (2380 before), mt 962 against 847.",
        "- **stream_triad mt (0.77 in the AVX-512 table of 2026-11-27).** Run alone right",
        "  after it: 2641-2690 µs against stream_nt's 2588-2650 (0.98).",
        "- **sum, rmsnorm, gemm, log_map and the small-size mt rows near 1.** These are within",
        "  this machine's noise of their peers (the same rows were ahead in other runs of the day).",
        "  Since 2026-12-07 a sum of 16384 floats or more reads its two halves side by side,",
        "  two streams from memory where one left a thread's bandwidth unused (Zen 4 VM: in a",
        "  harness alternating both ways 40 times over 2^24 floats in a one-thread launch's",
        "  four parts, fastest 2058 to 1800 µs and 2330 to 2053 in two runs; bench builds",
        "  alternated, sum 2^24 1t 1943 to 1771 µs with Halide's rfactor at 1831-2041 in the",
        "  same rounds). A dot's two arrays are two streams already: as four it was no faster.",
        "- **transformer.** Both sides read all 60.8 MB of f32 weights once per token (99 % of",
        "  it in matrix-vector products), so the row is a race between streams from memory.",
        "  Until 2026-11-29 it stood near 1 (0.84 to 1.04 side by side since 2026-11-24, after",
        "  the lane sums of gemv's short rows were halved on Zen 5 and a library op's parts made",
        "  a multiple of the threads): gemv read short rows (288 floats) one after the other, a",
        "  single stream (the 32000 x 288 classifier at 12.6 GB/s on one thread and 17.3 on two,",
        "  in a harness of its own), no faster than the C reference's loops. Since 2026-11-29:",
        "  - gemv reads four rows a quarter of a 256-row block apart, four long streams (the",
        "    classifier at 16-19 GB/s on one thread and 28-39 on two; 4096 x 4096 at 16-17 and",
        "    21-33, where four neighbouring rows gave 14-15 and 22-27);",
        "  - a matrix of at most 512 KiB a thread is one part per thread, so that its quarters",
        "    are as long as they can be (768 x 288 on two threads: 20-22 GB/s in 8 parts, 25-31",
        "    in 2);",
        "  - decoding attention reads the KV cache once, in order, for all heads, its positions",
        "    split between the threads (a forward pass through the generated header: 390 to",
        "    about 200 µs a token in attention on one thread; on two, 164-345 with the heads",
        "    split, 156-223 by positions).",
        "  In alternating runs of the bench binaries before and after these, the row went from",
        "  0.96-0.98 / 0.90-0.97 to 1.43-1.57 / 1.32-1.40. Issue 19's 1.5x holds at one thread",
        "  in some runs and at two in fewer (2026-11-29's two full runs and their reruns: one",
        "  thread 1.32-1.70, two 1.24-1.57): there the classifier alone streams at",
        "  28-34 GB/s and the layers' small matrices (331 to 884 KB) at 22-27, while the",
        "  reference's loops reach about 16 GB/s, so 1.5x needs about 25 GB/s over the whole",
        "  token, which this VM's two threads give in some runs and not in others. Tried and not",
        "  kept: software prefetches of each quarter's first KiB and eight streams instead of four",
        "  (no change beyond noise), and one part per thread at every size (4096 x 4096 mt",
        "  slower). Tried on 2026-11-29 (morning) in a forward pass through the generated",
        "  header, alternating builds, and not kept: the key rows' dots four positions at a time",
        "  (attention 8.5 to 6.6 µs a call with the KV cache in cache, but 138-148 to 166-185 µs",
        "  a token in the forward pass, where it comes from memory), prefetching the value rows",
        "  during the score pass (attention 5-10 % faster, under 0.5 % of a token), and gemv's",
        "  rows prefetched 1, 2 or 4 KiB ahead at v3 (every matrix slower). Keeping the layers'",
        "  24 MB in the 32 MB L3 by streaming the classifier past it (prefetchnta, or clflushopt",
        "  behind the reads) left them at DRAM speed in a harness of its own on this VM.",
        "  On 2026-12-05 (a Zen 5 VM) the row was 1.23 / 0.98 in the run of 03:20 UTC and",
        "  1.05-1.10 / 0.98-1.04 in two reruns of it alone, short of the goal at both (the run of",
        "  06:58 1.01 / 0.95, with every memory-bound row of it slower; of 10:05 0.81 / 1.16",
        "  and of 12:54 1.46 / 0.84 on a slower VM). Each launch timed in",
        "  the example (16 tokens, 2 threads): the classifier 507 µs a token (73 GB/s), the",
        "  five 288-row matrices of a layer 347 µs (38 GB/s), the two 768-row ones 198 µs",
        "  (54 GB/s), the small ops together about 80 µs; one thread: 899, 369 and 271 µs",
        "  (41, 36, 39 GB/s). `sum` reads 88 GB/s on two threads and 48 on one here, so the",
        "  layers' matrices of 331-884 KB, split between the threads, are where the token's",
        "  time is lost; 1.5x would need about 88 GB/s over the whole token at two threads.",
        "  That is above what this VM's memory gives: the 60.8 MB at 48 GB/s (one thread) take",
        "  1267 µs and at 88 GB/s (two) 690 µs, so against the reference's 1734 and 912 µs of",
        "  the run of 03:20 a forward pass in f32 can reach at most 1.37x and 1.32x here, however",
        "  little else it does. Tried later that day and not kept: a gemv of 288 x 288 floats",
        "  from the L2 cache took 2.8 µs on one thread and 3.0 on two, since a parallel loop of",
        "  two tasks costs 1.1-1.4 µs beyond one task on this VM (about 190 ns one way between",
        "  the two cores; a harness of its own with tasks of 1-5 µs). A pool that publishes each",
        "  job in one cache line (no queue, no mutex, no allocation) cut that to 0.9-1.2 µs and",
        "  an empty job's 90th percentile from 2.2-3.0 to 1.1-1.3 µs, but moved no token beyond",
        "  noise (three alternating runs of the example on two threads: 876, 973 and 953",
        "  tokens/s before, 834, 1029 and 933 after). Quarters of a gemv's whole part instead",
        "  of each 256-row block (the classifier's streams 1.15 MB long instead of 73 KB) were",
        "  no faster either (32000 x 288 on two threads: 613-632 against 634-648 µs, median).",
        "",
    ]
    lines += kept_sections(sys.argv[-1])
    if gpu is not None:
        lines += gpu_section(gpu)
    if compile_data is not None:
        lines += compile_section(compile_data)
    with open(sys.argv[-1], "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
