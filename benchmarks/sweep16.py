# Exploration record: every lambda below is timed at once inside its loop, so the loop-variable
# and line-length rules do not fit this file.
# ruff: noqa: E501, B023, F821, SIM115, UP031
"""Issue 16 sweep: every candidate kernel of labs 10, 11, 12, 20 and 21, checked and timed.

Candidates live in ``benchmarks/kernels16/*.cu`` in the labs' style (``#define`` constants);
each variant is the same source with other constants. Times are medians of CUDA events with
a head start (a waiting kernel queued before the start event, as ``cudakit.benchmark`` does),
so they measure the GPU's work, not Python's launch time. Run on the device machine::

    python -m benchmarks.sweep16 --out $OUT
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

os.environ["CUPY_TF32"] = "0"

HERE = Path(__file__).resolve().parent / "kernels16"
RESULTS: dict = {}


def variant(source: str, **defs) -> str:
    for name, value in defs.items():
        source, count = re.subn(rf"(#define {name} |constexpr int (?:\w+ = \d+, )*{name} = )\S+?(?=[,;\s])",
                                rf"\g<1>{value}", source, count=1)
        if count != 1:
            raise KeyError(name)
    return source


def build(source: str, names, options=()):
    import cupy as cp

    with tempfile.TemporaryDirectory() as tmp:
        cu, cubin = Path(tmp) / "k.cu", Path(tmp) / "k.cubin"
        cu.write_text('extern "C" {\n' + source + "\n}\n")
        done = subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-O3", "-Xptxas", "-v", *options,
                               "-o", str(cubin), str(cu)], capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(done.stderr)
        regs = re.findall(r"Used (\d+) registers", done.stderr)
        spills = re.findall(r"(\d+) bytes spill stores", done.stderr)
        module = cp.RawModule(path=str(cubin))
        return {n: module.get_function(n) for n in names}, {"regs": regs, "spills": spills,
                                                            "loops": loop_mix(cubin),
                                                            "loop_ops": sass_loops(cubin)}


def sass_loops(cubin: Path) -> list:
    """The opcodes (with modifiers) of each SASS loop (a branch back), in order.

    By cuobjdump (branch targets as addresses) or nvdisasm (as labels); [] without either."""
    tool = shutil.which("cuobjdump") or shutil.which("nvdisasm")
    if not tool:
        return []
    args = [tool, "-sass", str(cubin)] if tool.endswith("cuobjdump") else [tool, str(cubin)]
    sass = subprocess.run(args, capture_output=True, text=True).stdout
    code, labels, pending = [], {}, []
    for line in sass.splitlines():
        if m := re.match(r"\s*(\.L_x_\d+):", line):
            pending.append(m.group(1))
        elif m := re.search(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][^;]*);", line):
            code.append((int(m.group(1), 16), m.group(2)))
            labels.update((name, code[-1][0]) for name in pending)
            pending = []
    out = []
    for addr, op in code:
        back = re.match(r"BRA\s+(?:`\((\.L_x_\d+)\)|(0x[0-9a-f]+))", op)
        start = back and (labels.get(back.group(1)) if back.group(1) else int(back.group(2), 16))
        if start is not None and start is not False and start < addr:
            out.append([o.split()[0] for a, o in code if start <= a <= addr])
    return out


def loop_mix(cubin: Path) -> list:
    """[instructions, FFMA] of each SASS loop (a branch back) that holds an FFMA."""
    return [[len(body), body.count("FFMA")] for body in sass_loops(cubin) if "FFMA" in body]


_WAIT = None


def head_start(us: float) -> None:
    import cupy as cp

    global _WAIT
    if _WAIT is None:
        _WAIT = cp.RawKernel(r'''extern "C" __global__ void wait_ns(unsigned long long ns) {
            unsigned long long s, t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(s));
            do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - s < ns); }''',
                             "wait_ns")
    _WAIT((1,), (1,), (np.uint64(us * 1e3),))


def time_ms(fn, warmup: int = 3, repeat: int = 20, plain: bool = False) -> float:
    """Median ms of fn() by CUDA events; with a head start unless ``plain``."""
    import cupy as cp

    issue = []
    for _ in range(warmup):
        t0 = time.perf_counter()
        fn()
        issue.append(time.perf_counter() - t0)
    cp.cuda.Device().synchronize()
    lead = min(2e6 * min(issue, default=1e-4) + 20, 20000)
    samples = []
    for _ in range(repeat):
        if not plain:
            head_start(lead)
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(samples))


def section(fn):
    def run(*a):
        t0 = time.time()
        try:
            fn(*a)
        except Exception:
            RESULTS.setdefault("errors", []).append(f"{fn.__name__}: {traceback.format_exc()}")
            print(traceback.format_exc(), flush=True)
        print(f"[{fn.__name__} {time.time() - t0:.0f} s]", flush=True)
    return run


@section
def reduction():
    import cupy as cp
    from cupy.cuda import cub

    src = (HERE / "reduce.cu").read_text()
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    rows = []
    kernels = {}
    for loads in (4, 8, 16):
        kernels[loads], info = build(variant(src, LOADS_IN_FLIGHT=loads), ["reduce8", "read_ceiling"])
        RESULTS.setdefault("reduce_build", {})[loads] = info
    for log2n in (26, 28):
        n = 1 << log2n
        rng = np.random.default_rng(log2n)
        host = rng.integers(-8, 9, size=n, dtype=np.int32)
        exact = int(host.sum(dtype=np.int64))
        d = cp.asarray(host)
        out = cp.zeros(1, cp.int32)
        for plain in (False, True):
            f = lambda: cub.cub_reduction(d, cub.CUPY_CUB_SUM, dtype=np.int32)
            ok = int(f()) == exact
            rows.append(dict(n=log2n, kernel="CUB", plain=plain, ok=ok, ms=time_ms(f, plain=plain)))
        for loads, k in kernels.items():
            for blocks_per_sm in (4, 8, 16):
                for block in (256, 512):
                    grid = sms * blocks_per_sm * 256 // block
                    if grid < sms:
                        continue

                    def red(k=k, grid=grid, block=block):
                        out.fill(0)
                        k["reduce8"]((grid,), (block,), (d, out, np.uint32(n)))

                    def read(k=k, grid=grid, block=block):
                        k["read_ceiling"]((grid,), (block,), (d, out, np.uint32(n)))

                    red()
                    ok = int(out.get()[0]) == exact
                    for name, f in (("reduce", red), ("read", read)):
                        rows.append(dict(n=log2n, kernel=name, loads=loads, grid=grid, block=block,
                                         ok=ok if name == "reduce" else None, ms=time_ms(f)))
        del d
    for r in rows:
        r["gbs"] = 4 * (1 << r["n"]) / r["ms"] / 1e6
    RESULTS["reduction"] = rows
    for log2n in (26, 28):
        sel = [r for r in rows if r["n"] == log2n]
        best_read = max((r for r in sel if r["kernel"] == "read"), key=lambda r: r["gbs"])
        best_red = max((r for r in sel if r["kernel"] == "reduce"), key=lambda r: r["gbs"])
        read4 = [r for r in sel if r["kernel"] == "read" and r["loads"] == 4 and r["grid"] == sms * 8
                 and r["block"] == 256][0]
        cubr = [r for r in sel if r["kernel"] == "CUB" and not r["plain"]][0]
        cubp = [r for r in sel if r["kernel"] == "CUB" and r["plain"]][0]
        print(f"2^{log2n}: best read {best_read}\n  best reduce {best_red}\n  read L4 (lab) "
              f"{read4['gbs']:.0f}\n  CUB {cubr['gbs']:.0f} (plain events {cubp['gbs']:.0f})\n"
              f"  reduce/read {best_red['gbs'] / best_read['gbs']:.3f} reduce/CUB "
              f"{best_red['gbs'] / cubr['gbs']:.3f}", flush=True)


@section
def transpose():
    import cupy as cp

    src = (HERE / "transpose.cu").read_text()
    ks = {}
    for tile, brows in ((32, 8), (64, 8), (64, 16)):
        ks[("padded", tile, brows)], _ = build(variant(src, TILE=tile, BLOCK_ROWS=brows),
                                               ["transpose_padded", "copy_tiled", "copy_flat4"])
    for r, c, t in ((32, 32, 256), (64, 64, 256), (64, 64, 512), (32, 128, 256), (32, 128, 512),
                    (128, 32, 512), (64, 128, 512), (128, 64, 512), (64, 128, 1024),
                    (128, 64, 1024), (96, 96, 512)):
        ks[("rect", r, c, t)], _ = build(variant(src, TILE_R=r, TILE_C=c, THREADS=t), ["transpose_rect"])
    for r, c, t in ((64, 64, 512), (64, 64, 256), (64, 128, 512), (128, 64, 512), (32, 64, 256), (64, 32, 256)):
        ks[("wa", r, c, t)], _ = build(variant(src, WA_ROWS=r, WA_COLS=c, WA_THREADS=t), ["transpose_wa"])
        ks[("ra", r, c, t)], _ = build(variant(src, RA_ROWS=r, RA_COLS=c, RA_THREADS=t), ["transpose_ra"])
    rng = np.random.default_rng(11)
    rows = []
    flat = ks[("padded", 32, 8)]["copy_flat4"]
    for r, c in ((8192, 8192), (8192, 2048), (2048, 8192), (4097, 3001), (3001, 4097),
                 (1, 1 << 24), (1 << 24, 1)):
        host = rng.standard_normal((r, c), dtype=np.float32)
        d = cp.asarray(host)
        o = cp.empty_like(d)
        nbytes = 2 * host.nbytes
        n4 = r * c // 4
        args = (d, o, np.int32(r), np.int32(c))
        line = {"memcpy": time_ms(lambda: o.data.copy_from_device(d.data, d.nbytes)),
                "copy_flat4": time_ms(lambda: flat(((n4 + 255) // 256 + 1,), (256,), args))}
        for key, k in ks.items():
            if key[0] == "padded":
                tile, brows = key[1:]
                grid, block = ((c + tile - 1) // tile, (r + tile - 1) // tile), (tile, brows)
                names = ["copy_tiled", "transpose_padded"]
            elif key[0] == "rect":
                tr, tc, threads = key[1:]
                grid, block = ((c + tc - 1) // tc, (r + tr - 1) // tr), (threads,)
                names = ["transpose_rect"]
            else:  # sector-aligned writes (wa) or reads (ra): one more tile where rows/cols % 8
                tr, tc, threads = key[1:]
                extra_r = 7 if key[0] == "wa" and r % 8 else 0
                extra_c = 7 if key[0] == "ra" and c % 8 else 0
                grid = ((c + extra_c + tc - 1) // tc, (r + extra_r + tr - 1) // tr)
                block, names = (threads,), [f"transpose_{key[0]}"]
            if grid[1] > 65535:
                continue
            for name in names:
                o2 = cp.full((r, c) if name == "copy_tiled" else (c, r), np.nan, cp.float32)
                k[name](grid, block, (d, o2, np.int32(r), np.int32(c)))
                ok = bool(np.array_equal(o2.get(), host if name == "copy_tiled" else host.T))
                del o2
                label = f"{name} {'x'.join(map(str, key[1:]))}" + ("" if ok else " WRONG")
                line[label] = time_ms(lambda k=k, name=name, grid=grid, block=block: k[name](grid, block, args))
        for name, ms in line.items():
            rows.append(dict(shape=f"{r}x{c}", kernel=name, ms=ms, gbs=nbytes / ms / 1e6,
                             of_memcpy=line["memcpy"] / ms, of_flat=line["copy_flat4"] / ms))
        top = sorted((k for k in line if k.startswith("transpose")), key=line.get)[:3]
        print(f"{r}x{c}: memcpy {nbytes / line['memcpy'] / 1e6:.0f} GB/s, flat4 "
              f"{line['memcpy'] / line['copy_flat4']:.3f} of memcpy; "
              + "; ".join(f"{t} {line['copy_flat4'] / line[t]:.3f} of flat4" for t in top), flush=True)
        del d, o
    RESULTS["transpose"] = rows


# sgemm_async (kernels16/sgemm_async.cu): (BM, BN, BK, TM, STAGES, A_PAD, MIN_BLOCKS, SYNC_MID,
# GROUP, FAST)
ASYNC_CONFIGS = [(256, 128, 8, 16, 4, 0, 1, 1, 0, 0), (128, 128, 8, 16, 4, 0, 2, 1, 0, 0),
                 (128, 128, 8, 16, 4, 0, 2, 1, 8, 0), (128, 128, 8, 16, 3, 0, 2, 1, 8, 0),
                 (128, 128, 8, 16, 5, 0, 2, 1, 8, 0), (128, 128, 16, 16, 3, 0, 2, 1, 8, 0),
                 (256, 128, 8, 16, 4, 0, 1, 1, 8, 0), (64, 128, 8, 16, 4, 0, 4, 1, 8, 0),
                 (128, 128, 8, 16, 4, 0, 2, 1, 0, 1), (128, 128, 8, 16, 3, 0, 2, 1, 0, 1),
                 (128, 128, 8, 16, 5, 0, 2, 1, 0, 1), (256, 128, 8, 16, 4, 0, 1, 1, 0, 1),
                 (256, 128, 8, 16, 3, 0, 1, 1, 0, 1), (128, 128, 8, 16, 4, 0, 2, 0, 0, 1)]
# --quick (issue 16, session 7): the best two of session 6 (sgemm for the small sizes,
# sgemm_async with checks in every copy) against the FAST candidates (indices into the lists)
QUICK_SGEMM = [(256, 128, 8, 1, 16, 4), (128, 128, 16, 2, 8, 4), (64, 128, 16, 2, 8, 4)]
QUICK_ASYNC = [1, 8, 9, 10, 11, 12, 13]  # GROUP 8 with FAST spills (28 bytes): left out


def async_name(cfg) -> str:
    bm, bn, bk, tm, stages, pad, mb, mid, group, fast = cfg
    return f"sgemm_async {bm}x{bn}x{bk} s{stages} tm{tm} mb{mb} pad{pad} mid{mid} g{group} fast{fast}"


def async_source(cfg) -> str:
    bm, bn, bk, tm, stages, pad, mb, mid, group, fast = cfg
    return variant((HERE / "sgemm_async.cu").read_text(), BM=bm, BN=bn, BK=bk, TM=tm, STAGES=stages,
                   A_PAD=pad, MIN_BLOCKS=mb, SYNC_MID=mid, GROUP=group, FAST=fast)


@section
def matmul(quick: bool = False):
    import cupy as cp

    from benchmarks.common import build_kernels

    src = (HERE / "sgemm.cu").read_text()
    configs = [(256, 128, 8, 1, 16, 4), (256, 128, 16, 1, 16, 0), (256, 128, 8, 1, 16, 0),
               (128, 128, 16, 1, 8, 4), (128, 128, 16, 2, 8, 4), (64, 64, 16, 4, 8, 4),
               (64, 64, 16, 3, 8, 4), (128, 64, 16, 2, 16, 4), (64, 128, 16, 2, 8, 4)]
    if quick:
        configs = QUICK_SGEMM
    ks = {}
    for cfg in configs:
        bm, bn, bk, mb, tm, pad = cfg
        try:
            ks[cfg], info = build(variant(src, BM=bm, BN=bn, BK=bk, MIN_BLOCKS=mb, TM=tm, A_PAD=pad),
                                  ["sgemm"])
            RESULTS.setdefault("sgemm_build", {})[str(cfg)] = info
            print("sgemm", cfg, info, flush=True)
        except Exception as exc:
            print("build failed", cfg, str(exc)[:500])
    for i, cfg in enumerate(ASYNC_CONFIGS):
        if quick and i not in QUICK_ASYNC:
            continue
        try:
            ks[cfg], info = build(async_source(cfg), ["sgemm_async"])
            RESULTS.setdefault("sgemm_build", {})[async_name(cfg)] = info
            print(async_name(cfg), info, flush=True)
        except Exception as exc:
            print("build failed", cfg, str(exc)[:500])
    lab = build_kernels("12_matmul.ipynb", ["matmul_dbuf"])
    rng = np.random.default_rng(12)
    rows = []
    sizes = [(4096, 4096, 4096), (2048, 2048, 2048), (1000, 1000, 1000), (1023, 777, 1029)]
    for m, n, kk in sizes + ([(4096, 4096, 4096)] if quick else []):  # 4096³ twice: the scatter
        size = f"{m}x{n}x{kk}" + (" run2" if any(r["size"] == f"{m}x{n}x{kk}" for r in rows) else "")
        a = rng.uniform(-1, 1, (m, kk)).astype(np.float32)
        b = rng.uniform(-1, 1, (kk, n)).astype(np.float32)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        da, db = cp.asarray(a), cp.asarray(b)
        dc = cp.empty((m, n), cp.float32)
        flop = 2.0 * m * n * kk
        runs = {"cuBLAS": lambda: cp.matmul(da, db, out=dc),
                "matmul_dbuf": lambda: lab["matmul_dbuf"](((n + 127) // 128, (m + 127) // 128), (256,),
                                                          (da, db, dc, np.int32(m), np.int32(n), np.int32(kk)))}
        for cfg, k in ks.items():
            if len(cfg) == len(ASYNC_CONFIGS[0]):
                bm, bn, bk, tm = cfg[:4]
                name, label = "sgemm_async", async_name(cfg)
            else:
                bm, bn, bk, mb, tm, pad = cfg
                name, label = "sgemm", f"sgemm {bm}x{bn}x{bk} tm{tm} mb{mb} pad{pad}"
            for split in ((1,) if m >= 2048 else (1, 2, 3, 4, 5, 6)):
                grid = ((n + bn - 1) // bn, (m + bm - 1) // bm, split)

                def run(k=k[name], grid=grid, split=split, threads=(bm // tm) * (bn // 8)):
                    if split > 1:
                        dc.fill(0)
                    k(grid, (threads,), (da, db, dc, np.int32(m), np.int32(n), np.int32(kk)))
                runs[f"{label} split{split}"] = run
        for name, fn in runs.items():
            dc.fill(np.nan)
            fn()
            err = float(np.linalg.norm(dc.get().astype(np.float64) - ref) / np.linalg.norm(ref))
            ms = time_ms(fn, warmup=2, repeat=10 if m >= 4096 else 20)
            rows.append(dict(size=size, kernel=name, err=err, ok=err < 1e-4, ms=ms,
                             gflops=flop / ms / 1e6))
        sel = [r for r in rows if r["size"] == size]
        cub = sel[0]["gflops"]
        top = sorted((r for r in sel[1:] if r["ok"]), key=lambda r: -r["gflops"])[:8 if quick else 4]
        print(f"{size}: cuBLAS {cub:.0f}; " + "; ".join(
            f"{r['kernel']} {r['gflops'] / cub:.3f}" for r in top), flush=True)
        bad = [r["kernel"] for r in sel if not r["ok"]]
        if bad:
            print("  WRONG:", bad)
    RESULTS["matmul"] = rows


# N-body candidates: the defines of kernels16/nbody2.cu that differ from NBODY_BASE, and what
# each one asks. "diag" rows compute wrong forces on purpose (timing only, never checked).
NBODY_BASE = dict(NB_T=256, NB_P=1, NB_MINB=8, NB_UNROLL=32, NB_MODE=0, NB_SCHAIN=0, NB_DIAG=0,
                  NB_SPLIT=0)
NBODY_CONFIGS = [
    ("base", {}, "the lab's nbody_unrolled, 32 registers forced (8 blocks/SM)"),
    ("m1", dict(NB_MINB=1), "registers free (ptxas takes ~52: 4 blocks/SM): occupancy vs ILP"),
    ("sc", dict(NB_SCHAIN=1), "s = (m*inv)*(inv*inv): 2 dependent FMULs after the MUFU, not 3"),
    ("sc_u8", dict(NB_SCHAIN=1, NB_UNROLL=8), "unroll 8"),
    ("sc_u64", dict(NB_SCHAIN=1, NB_UNROLL=64), "unroll 64"),
    ("pf", dict(NB_SCHAIN=1, NB_MODE=1), "next tile prefetched into registers: load latency off the barrier"),
    ("ldg", dict(NB_SCHAIN=1, NB_MODE=2), "no tile, no barrier: body j by __ldg (one address per warp)"),
    ("t128", dict(NB_SCHAIN=1, NB_T=128, NB_MINB=16), "128-thread blocks (16/SM)"),
    ("t512", dict(NB_SCHAIN=1, NB_T=512, NB_MINB=4), "512-thread blocks"),
    ("t1024", dict(NB_SCHAIN=1, NB_T=1024, NB_MINB=2), "1024-thread blocks"),
    ("split", dict(NB_SCHAIN=1, NB_SPLIT=1), "j range split over gridDim.y so the blocks fill whole waves; atomics"),
    ("p2_m4", dict(NB_SCHAIN=1, NB_P=2, NB_MINB=4), "2 bodies per thread (13.5 slots), <= 64 registers"),
    ("p2_m6", dict(NB_SCHAIN=1, NB_P=2, NB_MINB=5), "2 bodies per thread, <= 48 registers"),
    ("p2_t128", dict(NB_SCHAIN=1, NB_P=2, NB_T=128, NB_MINB=8), "2 bodies per thread, 128-thread blocks"),
    ("p2_pf", dict(NB_SCHAIN=1, NB_P=2, NB_MINB=4, NB_MODE=1), "2 bodies per thread + prefetch"),
    ("p2_ldg", dict(NB_SCHAIN=1, NB_P=2, NB_MINB=4, NB_MODE=2), "2 bodies per thread, __ldg, no barrier"),
    ("p2_split", dict(NB_SCHAIN=1, NB_P=2, NB_MINB=4, NB_SPLIT=1), "2 bodies per thread, whole waves"),
    ("p4_t128", dict(NB_SCHAIN=1, NB_P=4, NB_T=128, NB_MINB=4), "4 bodies per thread (13.25 slots)"),
    ("diag_nomufu", dict(NB_DIAG=1), "diag: rsqrtf -> FMUL, same 14 slots: is the MUFU the limit?"),
    ("diag_nomufu_p2", dict(NB_DIAG=1, NB_P=2, NB_MINB=4), "diag: the same with 2 bodies per thread"),
]
# kernels16/nbody2_diag.cu: bodies j as float immediates, 12 FP32 + 1 MUFU, no LDS, no barrier
NBODY_CDIAG = [
    ("cdiag", dict(NB_CMUFU=1), "diag: the interaction alone, 13 slots, no memory instruction"),
    ("cdiag_nomufu", dict(NB_CMUFU=0), "diag: 12 FP32 slots and nothing else: the issue ceiling"),
]


def nbody_source(name: str, defs: dict, diag_file: bool = False) -> str:
    """nbody2.cu (or nbody2_diag.cu) with ``defs`` and its kernel renamed ``nbody_<name>``."""
    src = (HERE / ("nbody2_diag.cu" if diag_file else "nbody2.cu")).read_text()
    kernel = "nbody_cdiag" if diag_file else "nbody_v"
    src = variant(src, **({} if diag_file else NBODY_BASE) | defs)
    return src.replace(f"{kernel}(", f"nbody_{name}(")


def nbody_split(blocks: int, regs: int, threads: int, sms: int) -> int:
    """j shares per block row so that blocks x shares fills whole waves of resident blocks."""
    import math

    per_sm = min(2048 // threads, 32, 65536 // (-(-regs // 8) * 8 * threads))
    return min(64, sms * per_sm // math.gcd(blocks, sms * per_sm))


def nbody_slots(loop_ops: list) -> tuple[float, dict]:
    """Issue slots per interaction and the opcodes per interaction of the innermost SASS loop
    that holds the most interactions (6 FFMA each in every candidate); a tile's load and barriers,
    outside that loop, add 20-30 instructions per tile (~0.1 slot per interaction at 256)."""
    from collections import Counter

    loops = [[op.split(".")[0] for op in body] for body in loop_ops]
    loops = [body for body in loops if body.count("FFMA") >= 6]
    if not loops:
        return float("nan"), {}
    body = min(loops, key=lambda b: (-b.count("FFMA"), len(b)))   # not a remainder loop
    inter = body.count("FFMA") / 6
    return len(body) / inter, {op: round(c / inter, 2) for op, c in Counter(body).most_common()}


@section
def nbody():
    import cupy as cp

    from benchmarks.common import cell_defining

    mhz = float(subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits"],
                               capture_output=True, text=True).stdout.split()[0])
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    peak = sms * 128 * 2 * mhz / 1e3
    rows = []
    rng = np.random.default_rng(20)
    eps2 = np.float32(0.05 ** 2)
    nchk = 1500
    body = rng.random((nchk, 4)).astype(np.float32)
    body[:, 3] = 1.0 / nchk
    d = body[None, :, :3].astype(np.float64) - body[:, None, :3].astype(np.float64)
    r2 = (d ** 2).sum(-1) + float(eps2)
    ref = (d * (body[None, :, 3] / r2 ** 1.5)[..., None]).sum(1)
    sizes = {n: cp.asarray(rng.random((n, 4)).astype(np.float32)) for n in (1 << 16, 1 << 18)}
    cands = []   # (name, source, threads, per, split, diag, what)
    for lab, per in (("nbody_unrolled", 1), ("nbody_pair", 2)):
        text, opts = cell_defining("20_nbody.ipynb", lab)
        cands.append((f"lab_{lab}", text, lab, opts, 256, per, False, False, "the lab's kernel"))
    for name, defs, what in NBODY_CONFIGS:
        cfg = NBODY_BASE | defs
        cands.append((name, nbody_source(name, defs), f"nbody_{name}", ["-ftz=true"], cfg["NB_T"],
                      cfg["NB_P"], bool(cfg["NB_SPLIT"]), bool(cfg["NB_DIAG"]), what))
    for name, defs, what in NBODY_CDIAG:
        cands.append((name, nbody_source(name, defs, diag_file=True), f"nbody_{name}", ["-ftz=true"],
                      256, 1, False, True, what))
    for name, src, kname, opts, tpb, per, split, diag, what in cands:
        t0 = time.time()
        k, info = build(src, [kname], opts)
        k = k[kname]
        regs = int(info["regs"][0]) if info["regs"] else 32
        slots, ops = nbody_slots(info["loop_ops"])

        def launch(n, bodies, out, k=k, tpb=tpb, per=per, split=split, regs=regs):
            bx = (n + tpb * per - 1) // (tpb * per)
            gy = nbody_split(bx, regs, tpb, sms) if split else 1
            if split:
                out.data.memset_async(0, out.nbytes)
            k((bx, gy), (tpb,), (bodies, out, np.int32(n), eps2))
            return gy

        err = None
        if not diag:
            acc = cp.full((nchk, 4), np.nan, cp.float32)
            launch(nchk, cp.asarray(body), acc)
            got = acc.get()[:, :3]
            err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref)) if np.isfinite(got).all() else float("inf")
        row = dict(name=name, what=what, regs=regs, spills=info["spills"], slots=slots, ops=ops,
                   bound=20 / (2 * slots), err=err, ok=diag or err < 1e-5, diag=diag)
        for n, bodies in sizes.items():
            out = cp.empty((n, 4), cp.float32)
            gy = launch(n, bodies, out)
            ms = time_ms(lambda: launch(n, bodies, out), warmup=1, repeat=5)
            g = 20.0 * n * n / ms / 1e6
            row[f"n{n}"] = dict(ms=ms, gflops=g, of_peak=g / peak, issue=g / peak * slots / 10, gy=gy)
        rows.append(row)
        big = row[f"n{1 << 18}"]
        flag = "diag" if diag else ("ok" if row["ok"] else "WRONG")
        print(f"nbody {name:15s} {flag:5s} err {err if err is not None else float('nan'):.1e} regs {regs:3d} "
              f"slots {slots:5.2f} (bound {row['bound']:.3f}) 256K {big['of_peak']:.3f} of peak, issue "
              f"{big['issue']:.3f}; 64K {row[f'n{1 << 16}']['of_peak']:.3f} [{time.time() - t0:.1f} s] "
              f"{ops}", flush=True)
    RESULTS["nbody"] = {"peak": peak, "mhz": mhz, "sms": sms, "rows": rows}


@section
def stencil():
    import cupy as cp

    from benchmarks.common import build_kernels

    src = (HERE / "stencil3d.cu").read_text()
    ks, info = build(src, ["heat3d_vec4", "heat3d_zreg"])
    lab = build_kernels("21_stencil.ipynb", ["heat3d", "heat3d_stream", "copy4"])
    rng = np.random.default_rng(21)
    c1 = np.float32(0.1)
    c0 = np.float32(1 - 6 * c1)
    # correctness on an odd-ish grid (nx % 4 == 0)
    nz, ny, nx = 37, 45, 68
    u = rng.random((nz, ny, nx), dtype=np.float32)
    uu = u.astype(np.float64)
    ref = uu.copy()
    c = (slice(1, -1),) * 3
    ref[c] = c0 * uu[c] + c1 * (uu[:-2, 1:-1, 1:-1] + uu[2:, 1:-1, 1:-1] + uu[1:-1, :-2, 1:-1]
                                + uu[1:-1, 2:, 1:-1] + uu[1:-1, 1:-1, :-2] + uu[1:-1, 1:-1, 2:])
    checks = {}
    for name, block, slabs in (("heat3d_vec4", (32, 4), 1), ("heat3d_vec4", (16, 2), 5),
                               ("heat3d_zreg", (32, 4), 3)):
        du, dv = cp.asarray(u), cp.asarray(u)
        w = nx // 4 if name == "heat3d_vec4" else nx
        ks[name](((w + block[0] - 1) // block[0], (ny + block[1] - 1) // block[1], slabs), (*block, 1),
                 (du, dv, np.int32(nx), np.int32(ny), np.int32(nz), c0, c1))
        checks[f"{name} {block} {slabs}"] = float(np.abs(dv.get() - ref).max())
    print("stencil checks (max abs error):", checks, flush=True)
    n = 512
    u = cp.asarray(rng.random((n, n, n), dtype=np.float32))
    v = u.copy()
    sweep = 8 * n ** 3
    args = (u, v, np.int32(n), np.int32(n), np.int32(n), c0, c1)
    rows = {}
    n4 = n ** 3 // 4
    rows["copy4"] = time_ms(lambda: lab["copy4"](((n4 + 1023) // 1024,), (1024,), (u, v, np.uint64(n4))))
    rows["memcpy"] = time_ms(lambda: v.data.copy_from_device(u.data, u.nbytes))
    rows["heat3d 128x2x1"] = time_ms(lambda: lab["heat3d"](((n + 127) // 128, n // 2, n), (128, 2, 1), args))
    for slabs in (8, 32):
        rows[f"heat3d_stream s{slabs}"] = time_ms(lambda s=slabs: lab["heat3d_stream"](
            ((n + 31) // 32, (n + 7) // 8, s), (32, 8), args))
    for block in ((32, 1), (32, 2), (32, 4), (64, 1), (64, 2), (128, 1), (16, 8)):
        for slabs in (1, 2, 4, 8, 16, 32, 64):
            g = ((n // 4 + block[0] - 1) // block[0], (n + block[1] - 1) // block[1], slabs)
            rows[f"heat3d_vec4 {block[0]}x{block[1]} s{slabs}"] = time_ms(
                lambda g=g, b=block: ks["heat3d_vec4"](g, (*b, 1), args))
    for block in ((32, 4), (64, 2), (128, 1), (32, 8)):
        for slabs in (4, 16, 64):
            g = ((n + block[0] - 1) // block[0], (n + block[1] - 1) // block[1], slabs)
            rows[f"heat3d_zreg {block[0]}x{block[1]} s{slabs}"] = time_ms(
                lambda g=g, b=block: ks["heat3d_zreg"](g, (*b, 1), args))
    out = {k: dict(ms=ms, gbs=sweep / ms / 1e6, of_copy4=rows["copy4"] / ms) for k, ms in rows.items()}
    RESULTS["stencil"] = {"checks": checks, "rows": out}
    top = sorted(out.items(), key=lambda kv: kv[1]["ms"])[:8]
    print("stencil 512^3: copy4 %.0f GB/s memcpy %.0f naive %.3f of copy4" % (
        out["copy4"]["gbs"], out["memcpy"]["gbs"], out["heat3d 128x2x1"]["of_copy4"]))
    for k, r in top:
        print(f"  {k}: {r['gbs']:.0f} GB/s {r['of_copy4']:.3f} of copy4", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--only", nargs="*", default=["reduction", "transpose", "matmul", "nbody", "stencil"])
    parser.add_argument("--quick", action="store_true", help="matmul: QUICK_SGEMM and QUICK_ASYNC only")
    opts = parser.parse_args()
    opts.out.mkdir(parents=True, exist_ok=True)
    from benchmarks.common import environment_line

    RESULTS["env"] = environment_line()
    print(RESULTS["env"], flush=True)
    clocks = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,"
         "clocks_throttle_reasons.active", "--format=csv,noheader", "-lms", "100"],
        stdout=open(opts.out / "clocks.csv", "w"), stderr=subprocess.DEVNULL)
    for name in opts.only:
        print(f"== {name} starts at {time.strftime('%H:%M:%S')}", flush=True)
        globals()[name](*((opts.quick,) if name == "matmul" else ()))
        (opts.out / "sweep16.json").write_text(json.dumps(RESULTS, indent=1, default=str))
    clocks.terminate()


if __name__ == "__main__":
    main()
