"""How fast an SM fetches its instructions: loops of independent FFMAs from 4 kB to 128 kB of
code, one block per SM, with the other SM of the same TPC (SMs 2t and 2t + 1) running the
same loop, another copy of it at other addresses, or nothing.

    python -m benchmarks.fetch_probe --record OUT.json    # on the GPU
    python -m benchmarks.fetch_probe --placement OUT.json # on the GPU: where blocks start
    python -m benchmarks.fetch_probe --phases OUT.json    # on the GPU: warps spread over a
                                                          # loop (fixtures/h200_fetch_phases)
    python -m benchmarks.fetch_probe [--model]            # here: the stored run, as a table
                                                          # (the model's mode-0 column)
    python -m benchmarks.fetch_probe --curves             # the device figures it gives

Each kernel ``fetch_N_C`` holds two copies of a loop whose body is N FFMAs in C dependent
chains (16 for most runs, independent enough to issue one a clock; 1, 2 and 4 to see whether
fetch and dependencies add), the two multipliers kept in the operand reuse cache, so no
register-bank conflicts.
A block reads its SM (``%smid``) and picks its copy by ``mode``: 0, copy 0 everywhere; 1,
copy 0 on even SMs and copy 1 on odd ones (the two SMs of each TPC run different code); 2,
copy by TPC (``(sm >> 1) & 1``: partners run the same code, neighbouring TPCs not); 3, copy 0
on even SMs, odd SMs idle. Dynamic shared memory keeps one block per SM. Per block the probe
records its SM, its copy, the clock64 span of its first trip (cold code) and of all trips.
Written by hand: no library measures instruction fetch.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks.common import open_text

FIXTURE = Path(__file__).parent / "fixtures" / "h200_fetch_probe.json.gz"
PHASES_FIXTURE = Path(__file__).parent / "fixtures" / "h200_fetch_phases.json"
#: the runs: (FFMAs per loop body, dependent chains they form, threads per block, modes)
PLAN = ([(n, 16, t, (0, 1, 2, 3)) for n in (256, 512, 768, 1024, 1280, 1536, 2048, 3072, 4096,
                                           8192) for t in (128, 256, 512)]
        + [(n, 16, t, (0, 1, 3)) for n in (1056, 1088, 1120, 1152, 1184, 1216, 1248, 2112, 2176,
                                           2304, 2432, 2560, 2816) for t in (128, 256)]
        + [(n, c, 128, (0, 1)) for n in (512, 1280, 3072) for c in (1, 2, 4)])
WORK = 1 << 20  # FFMAs per warp per launch
MODES = {0: "same code", 1: "partner other code", 2: "partner same, neighbours other",
         3: "partner idle"}
SHARED = 150 * 1024  # bytes of dynamic shared memory per block: one block per SM
OTHERS = 6  # the loop's other SASS instructions: counter, compare, clock read, branches


def _body(n: int, chains: int, copy: int) -> str:
    a, b = (f"%{chains}", f"%{chains + 1}")[::1 if copy == 0 else -1]
    return "".join(f"fma.rn.f32 %{i % chains}, %{i % chains}, {a}, {b};\\n" for i in range(n))


def kernel_source(n: int, chains: int = 16) -> str:
    """The CUDA source of ``fetch_n_chains``: two copies of a loop body of n FFMAs in
    ``chains`` dependent chains, chosen by SM."""
    regs = [f"r{i}" for i in range(chains)]
    outs = ", ".join(f'"+f"({r})' for r in regs)
    loops = []
    for copy in (0, 1):
        loops.append(f"""    {'if' if copy == 0 else 'else if'} (path == {copy}) {{
        for (int i = 0; i < iters; i++) {{
            asm volatile("{_body(n, chains, copy)}" : {outs} : "f"(a), "f"(b));
            if (i == 0) c1 = clock64();
        }}
    }}""")
    init = "\n".join(f"    float {r} = threadIdx.x * 1e-3f + {i};" for i, r in enumerate(regs))
    return f"""
__global__ void fetch_{n}_{chains}(float *out, long long *rec, int iters, int mode, float a,
                                   float b)
{{
    extern __shared__ float pad[];
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    int path = mode == 0 ? 0 : mode == 1 ? int(sm & 1) : mode == 2 ? int((sm >> 1) & 1)
             : (sm & 1 ? -1 : 0);
{init}
    pad[threadIdx.x] = 0.f;
    __syncthreads();
    long long c0 = clock64(), c1 = c0;
{chr(10).join(loops)}
    __syncthreads();
    long long c2 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = {' + '.join(regs)} + pad[threadIdx.x];
    if (threadIdx.x == 0) {{
        rec[4 * blockIdx.x] = sm;
        rec[4 * blockIdx.x + 1] = path;
        rec[4 * blockIdx.x + 2] = c1 - c0;
        rec[4 * blockIdx.x + 3] = c2 - c0;
    }}
}}
"""


PLACE = r"""
extern "C" __global__ void place(unsigned *sm_of, long long hold)
{
    unsigned sm;  // the launch's dynamic shared memory sets how many blocks fit on an SM
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    long long t0 = clock64();
    while (clock64() - t0 < hold) {}
    if (threadIdx.x == 0) sm_of[blockIdx.x] = sm;
}
"""
GRIDS = (8, 16, 32, 64, 66, 100, 132, 133, 200, 264)


def record_placement(out: Path) -> None:
    """Which SM each block of a launch starts on (``%smid``), for launches of :data:`GRIDS`
    blocks of 128 threads that hold their SM for a millisecond, with one block per SM
    (dynamic shared memory) and with as many as fit."""
    import cupy as cp

    from benchmarks.common import gpu_line

    fn = cp.RawKernel(PLACE, "place")
    fn.max_dynamic_shared_size_bytes = SHARED
    runs = []
    for shared in (SHARED, 0):
        for blocks in GRIDS:
            sm_of = cp.zeros(blocks, cp.uint32)
            fn((blocks,), (128,), (sm_of, np.int64(2_000_000)), shared_mem=shared)
            runs.append({"blocks": blocks, "shared": shared,
                         "sm": cp.asnumpy(sm_of).tolist()})
            print(blocks, shared, runs[-1]["sm"][:16], flush=True)
    out.write_text(json.dumps({"header": {"device": gpu_line(), "how":
                                          "python -m benchmarks.fetch_probe --placement"},
                               "runs": runs}) + "\n")


def phase_source(n: int, chains: int) -> str:
    """The CUDA source of ``phase_n_chains``: one loop of n FFMAs in ``chains`` chains, which
    warp w enters after spinning ``w * stagger`` cycles, so that the warps of a block run
    different parts of it at once (as the blocks of a launch's later waves do)."""
    regs = [f"r{i}" for i in range(chains)]
    outs = ", ".join(f'"+f"({r})' for r in regs)
    init = "\n".join(f"    float {r} = threadIdx.x * 1e-3f + {i};" for i, r in enumerate(regs))
    return f"""
__global__ void phase_{n}_{chains}(float *out, long long *rec, int iters, long long stagger,
                                   float a, float b)
{{
    extern __shared__ float pad[];
    int warp = threadIdx.x >> 5;
{init}
    pad[threadIdx.x] = 0.f;
    long long t0 = clock64();
    while (clock64() - t0 < warp * stagger) {{}}
    long long c0 = clock64();
    for (int i = 0; i < iters; i++)
        asm volatile("{_body(n, chains, 0)}" : {outs} : "f"(a), "f"(b));
    long long c1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = {' + '.join(regs)} + pad[threadIdx.x];
    if ((threadIdx.x & 31) == 0) rec[blockIdx.x * (blockDim.x >> 5) + warp] = c1 - c0;
}}
"""


#: the phase runs: (FFMAs per loop body, chains, threads per block)
PHASES = [(n, c, t) for n in (512, 2048, 3072, 8192) for c in (1, 16) for t in (256, 768)]


def record_phases(out: Path) -> None:
    """Cycles per FFMA of each warp for the :data:`PHASES`, one block per SM, the warps
    entering the loop together (stagger 0) and spread over it (each 0.618 of a trip's
    dependent time, 4 cycles an FFMA, after the one before)."""
    import cupy as cp

    from benchmarks.common import build_source, gpu_line

    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    rows = []
    for n, chains, threads in PHASES:
        fn = build_source(phase_source(n, chains))[f"phase_{n}_{chains}"]
        fn.max_dynamic_shared_size_bytes = SHARED
        iters, warps = WORK // n, threads // 32
        o, rec = cp.zeros(sms * threads, cp.float32), cp.zeros(sms * warps, cp.int64)
        for stagger in (0, int(0.618 * 4 * n)):
            runs = []
            for _ in range(3):
                fn((sms,), (threads,), (o, rec, np.int32(iters), np.int64(stagger),
                                        np.float32(1.0000001), np.float32(1e-7)),
                   shared_mem=SHARED)
                runs.append((cp.asnumpy(rec) / (iters * n)).tolist())
            rows.append({"ffma": n, "chains": chains, "threads": threads, "stagger": stagger,
                         "cycles_per_ffma": runs})
            print(n, chains, threads, stagger, f"{np.median(runs[-1]):.3f} cycles per FFMA",
                  flush=True)
    out.write_text(json.dumps({"header": {"device": gpu_line(),
                                          "how": "python -m benchmarks.fetch_probe --phases"},
                               "rows": rows}) + "\n")


def stored() -> dict:
    """The recorded run (:data:`FIXTURE`)."""
    with open_text(FIXTURE) as f:
        return json.load(f)


def cycles_per_ffma(row: dict) -> np.ndarray:
    """Per busy block of a run's last launch: clock64 cycles per FFMA of one warp."""
    last = np.array(row["blocks"][-1], float)
    busy = last[last[:, 1] >= 0]
    return busy[:, 3] / (row["iters"] * row["ffma"])


def record(out: Path) -> None:
    """Run the :data:`PLAN` on this GPU."""
    import cupy as cp

    from benchmarks.common import build_source, gpu_line

    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    rows = []
    for n, chains, threads, modes in PLAN:
        fn = build_source(kernel_source(n, chains))[f"fetch_{n}_{chains}"]
        fn.max_dynamic_shared_size_bytes = SHARED
        iters = WORK // n
        o = cp.zeros(sms * threads, cp.float32)
        for mode in modes:
            rec = cp.zeros(4 * sms, cp.int64)
            runs = []
            for _ in range(3):
                fn((sms,), (threads,), (o, rec, np.int32(iters), np.int32(mode),
                                        np.float32(1.0000001), np.float32(1e-7)),
                   shared_mem=SHARED)
                runs.append(cp.asnumpy(rec).reshape(-1, 4).tolist())
            rows.append({"ffma": n, "chains": chains, "threads": threads, "mode": mode,
                         "iters": iters, "blocks": runs})  # per block: SM, copy, first, all
            print(n, chains, threads, mode,
                  f"{np.median(cycles_per_ffma(rows[-1])):.3f} cycles per FFMA", flush=True)
    out.write_text(json.dumps({"header": {"device": gpu_line(),
                                          "how": "python -m benchmarks.fetch_probe --record"},
                               "rows": rows}) + "\n")


def predicted(n: int, chains: int, threads: int, paired: bool = False) -> float:
    """The model's cycles per FFMA of one warp for ``fetch_n_chains`` in mode 0, one block of
    ``threads`` per SM (the loop's prologue and the launch's fixed cost left out). With
    ``paired``, odd blocks run the other copy (the emulator has no SMs to choose by): the
    H100 puts blocks 0 and 1 on one TPC, as mode 1 does every TPC, and the launch takes as
    long as they do."""
    import cudakit
    from benchmarks.common import predicted_cycles_per_trip

    iters = WORK // n
    source = kernel_source(n, chains)
    if paired:
        source = source.replace("int path = mode == 0 ? 0", "int path = mode == 4 ? "
                                "int(blockIdx.x & 1) : mode == 0 ? 0")
    module = cudakit.compile('extern "C" {\n' + source + "\n}\n", options=["-O3"])
    sms = 132
    cycles, _ = predicted_cycles_per_trip(module, f"fetch_{n}_{chains}", threads, [
        np.zeros(sms * threads, np.float32), np.zeros(4 * sms, np.int64), np.int32(iters),
        np.int32(4 if paired else 0), np.float32(1.0000001), np.float32(1e-7)], iters,
        shared=SHARED)
    return cycles / n


def curves(stored: dict) -> dict:
    """The device figures this probe measures (``cudakit/predict/devices/h100.json``): per
    TPC, the bytes of loop code and a warp's cycles per instruction (one warp per scheduler,
    median block), for one loop (``fetch_alone_curve``: the other SM runs the same loop or
    none) and for two (``fetch_paired_curve``: the two SMs run different loops; their bytes
    summed), from the first size past 32 kB of code on."""
    out = {}
    for name, mode, copies in (("fetch_alone_curve", 0, 1), ("fetch_paired_curve", 1, 2)):
        points = sorted((copies * 16 * (r["ffma"] + OTHERS),
                         float(np.median(cycles_per_ffma(r))) * r["ffma"] / (r["ffma"] + OTHERS))
                        for r in stored["rows"] if r["mode"] == mode and r["chains"] == 16
                        and r["threads"] == 128)
        points = [(b, c) for b, c in points if b > 32768]
        out[name] = {"bytes": [b for b, _ in points], "cycles": [round(c, 3) for _, c in points]}
    return out


def tables(stored: dict, model: bool = False) -> str:
    """Per run: a warp's cycles per FFMA (median block; the slowest) in each mode, and with
    ``model`` the model's (mode 0)."""
    out = [f"Stored: {stored['header']['device']}", "",
           "| FFMAs (kB) | chains | warps per scheduler | " + " | ".join(MODES.values()) + " |"
           + (" model |" if model else ""),
           "|---|---|---|" + "---|" * (len(MODES) + model)]
    by = {(r["ffma"], r["chains"], r["threads"], r["mode"]): r for r in stored["rows"]}
    for n, chains, threads, _ in PLAN:
        cells = []
        for mode in MODES:
            r = by.get((n, chains, threads, mode))
            per = cycles_per_ffma(r) if r else None
            cells.append(f"{np.median(per):.2f} / {per.max():.2f}" if r else "-")
        if model:
            cells.append(f"{predicted(n, chains, threads):.2f}")
        out.append(f"| {n} ({n * 16 / 1024:.1f}) | {chains} | {threads // 128} | "
                   + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", metavar="JSON", help="run the probe on this GPU")
    parser.add_argument("--model", action="store_true", help="add the model's column")
    parser.add_argument("--curves", action="store_true", help="the device figures, as JSON")
    parser.add_argument("--placement", metavar="JSON", help="record where blocks start")
    parser.add_argument("--phases", metavar="JSON",
                        help="record warps entering a loop together and spread over it")
    args = parser.parse_args(argv)
    if args.record:
        record(Path(args.record))
    elif args.phases:
        record_phases(Path(args.phases))
    elif args.placement:
        record_placement(Path(args.placement))
    elif args.curves:
        print(json.dumps(curves(stored())))
    else:
        print(tables(stored(), model=args.model))


if __name__ == "__main__":
    main()
