"""Why lab 12's ``sgemm_async`` takes longer than predicted with one warp per scheduler: each
block's SM and clock64 span at four shapes, register-only FFMA outer products alone on their
schedulers, and Nsight Compute's stall samples per instruction of the 1000^3 launch.

    python -m benchmarks.sgemm_blocks --record OUT.json       # on the GPU
    ncu --kernel-name sgemm_async --launch-skip 2 --launch-count 1 --section WarpStateStats \
        --section SourceCounters -o sa python -m benchmarks.sgemm_blocks --ncu-run
    ncu -i sa.ncu-rep --page source --csv --print-source sass > sa.csv
    python -m benchmarks.sgemm_blocks --stalls sa.csv --into OUT.json
    python -m benchmarks.sgemm_blocks                         # here: the stored run, as tables
                                                              # (the model beside the probes)
    python -m benchmarks.sgemm_blocks --record OUT.json --shapes 1000x1000x2000 ...
                                                              # on the GPU: other shapes only
    python -m benchmarks.sgemm_blocks --held-out              # here: those against the model

``fixtures/h100_outer_source.ncu.csv.gz`` is the same source page for ``outer_8_16`` (its loop's
``dispatch`` stalls are the register-bank cycles of :func:`cudakit.predict.sass.read_conflicts`).
``sgemm_async`` is the lab's cell as recorded in ``fixtures/h100_lab_launches.jsonl.gz``,
compiled with nvcc for the GPU, plus a copy that writes each block's SM (``%smid``) and its
``clock64`` span. Its blocks take one of three loops: blocks wholly inside the matrices with
16-byte copies (the ``FAST`` loop), edge blocks with 16-byte copies and bounds checks, and,
when rows are not 16-byte aligned, 4-byte copies. The outer products (``outer_R_U``: R x 8
accumulators, U steps per trip, every FFMA with three register operands) run with one block
of 128 W threads per SM. ``--stalls``
reads the source page of Nsight Compute and sums each stall reason over each hot loop
(instructions executed by every warp of the loop's blocks on every trip), per instruction
issued. Written by hand: the probe is specific to this question.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

from benchmarks.common import ncu_number, open_text

FIXTURE = Path(__file__).parent / "fixtures" / "h100_sgemm_blocks.json"
#: five shapes timed on an H200 (same SMs) after the model's instruction-fetch rule was made
HELD_OUT = FIXTURE.with_name("h200_sgemm_heldout.json")
LAB = Path(__file__).parent / "fixtures" / "h100_lab_launches.jsonl.gz"
SHAPES = [(1000, 1000, 1000), (1023, 777, 1029), (1024, 1024, 1024), (896, 896, 1000)]

TIMED = r"""
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_timed(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
            int M, int N, int K, unsigned long long *rec)
{
    unsigned sm;
    long long c0 = clock64();
    sgemm_body(A, B, C, M, N, K);
    __syncthreads();
    long long c1 = clock64();
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    if (threadIdx.x == 0) {
        int b = blockIdx.y * gridDim.x + blockIdx.x;
        rec[2 * b] = sm;
        rec[2 * b + 1] = c1 - c0;
    }
}
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_async(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
            int M, int N, int K)
{
    sgemm_body(A, B, C, M, N, K);
}
"""

OUTER = r"""
#define UNROLL _Pragma("unroll")
#define PROBE_HEAD(R)                                                                    \
    float acc[R][8];                                                                      \
    UNROLL for (int r = 0; r < R; ++r) UNROLL for (int c = 0; c < 8; ++c) acc[r][c] = 0.f; \
    long long c0 = clock64();
#define PROBE_TAIL(R)                                                                    \
    long long c1 = clock64();                                                             \
    float s = 0;                                                                          \
    UNROLL for (int r = 0; r < R; ++r) UNROLL for (int c = 0; c < 8; ++c) s += acc[r][c]; \
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;                                       \
    if ((threadIdx.x & 31) == 0) cyc[(blockIdx.x * blockDim.x + threadIdx.x) >> 5] = c1 - c0;
// R x 8 accumulators, U outer-product steps per trip (a changes every trip: no folding)
#define OUTER(NAME, R, U)                                                                \
    __device__ __forceinline__ void NAME(float *out, long long *cyc, int iters) {         \
        float a[R], b[8];                                                                 \
        UNROLL for (int r = 0; r < R; ++r) a[r] = threadIdx.x * 1e-3f + r;                \
        UNROLL for (int c = 0; c < 8; ++c) b[c] = threadIdx.x * 2e-3f + c;                \
        PROBE_HEAD(R)                                                                     \
        for (int i = 0; i < iters; ++i) {                                                 \
            UNROLL for (int u = 0; u < U; ++u) UNROLL for (int r = 0; r < R; ++r)         \
                UNROLL for (int c = 0; c < 8; ++c) acc[r][c] = fmaf(a[r], b[c], acc[r][c]); \
            a[0] += 1e-7f;                                                                \
        }                                                                                 \
        PROBE_TAIL(R)                                                                     \
    }
OUTER(outer_8x4, 8, 4)
OUTER(outer_8x16, 8, 16)
__global__ void outer_8_4(float *o, long long *c, int n) { outer_8x4(o, c, n); }
__global__ void outer_8_16(float *o, long long *c, int n) { outer_8x16(o, c, n); }
"""
OUTER_FFMA = {"outer_8_4": 256, "outer_8_16": 1024}


def lab_source() -> str:
    """The recorded ``%%cuda`` cell of lab 12 that defines ``sgemm_async``, with the kernel
    made a device function (``sgemm_body``) under the two kernels of :data:`TIMED`."""
    with open_text(LAB) as f:
        for line in f:
            rec = json.loads(line)
            for op in rec.get("ops", ()):
                if op.get("op") == "launch" and op.get("kernel") == "sgemm_async":
                    body = rec["sources"][op["source"]]
                    head = "__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)\nsgemm_async("
                    if head not in body:
                        raise RuntimeError("lab 12's sgemm_async no longer has the recorded form")
                    device = "__device__ __forceinline__ void\nsgemm_body("
                    return body.replace(head, device) + TIMED
    raise RuntimeError(f"no sgemm_async launch in {LAB}")


def record(out: Path, shapes=SHAPES, outer: bool = True) -> None:
    """Time the blocks of ``sgemm_async`` at ``shapes`` (M, N, K) and, with ``outer``, the
    outer products on this GPU."""
    import cupy as cp

    from benchmarks.common import build_source, gpu_line, time_ms

    gemm = build_source(lab_source())
    timed = []
    for m, n, k in shapes:
        a = cp.random.rand(m * k, dtype=cp.float32)
        b = cp.random.rand(k * n, dtype=cp.float32)
        c = cp.zeros(m * n, cp.float32)
        grid = ((n + 127) // 128, (m + 127) // 128, 1)
        args = (a, b, c, np.int32(m), np.int32(n), np.int32(k))
        ms = time_ms(lambda grid=grid, args=args: gemm["sgemm_async"](grid, (128,), args))
        rec = cp.zeros(2 * grid[0] * grid[1], cp.uint64)
        runs = []
        for _ in range(5):
            gemm["sgemm_timed"](grid, (128,), args + (rec,))
            runs.append(cp.asnumpy(rec).reshape(-1, 2).tolist())
        timed.append({"shape": [m, n, k], "grid": list(grid), "launch_ms": ms,
                      "blocks": runs})  # per run, per block (y * grid x + x): [SM, cycles]
        print(m, n, k, f"{ms * 1e3:.1f} us", flush=True)
    rows = []
    if outer:
        rows = outer_products()
    out.write_text(json.dumps({"header": {"device": gpu_line(),
                                          "how": "python -m benchmarks.sgemm_blocks --record"},
                               "shapes": timed, "outer": rows}, indent=0) + "\n")


def outer_products() -> list[dict]:
    """The outer products' FFMA per clock on this GPU, one and two warps per scheduler."""
    import cupy as cp

    from benchmarks.common import build_source

    outer = build_source(OUTER)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    rows = []
    for name, ffma in OUTER_FFMA.items():
        iters = (1 << 21) // ffma
        for w in (1, 2):
            o = cp.zeros(sms * 128 * w, cp.float32)
            cyc = cp.zeros(sms * 4 * w, cp.int64)
            outer[name]((sms,), (128 * w,), (o, cyc, np.int32(iters)))
            per_trip = float(np.median(cp.asnumpy(cyc))) / iters
            rows.append({"kernel": name, "ffma_per_trip": ffma, "warps_per_sched": w,
                         "cycles_per_trip": per_trip, "ffma_per_clk": w * ffma / per_trip})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def ncu_run() -> None:
    """Three launches of ``sgemm_async`` at 1000^3, for Nsight Compute to profile the third."""
    import cupy as cp

    from benchmarks.common import build_source

    gemm = build_source(lab_source(), names=["sgemm_async"])
    a, b = cp.random.rand(10 ** 6, dtype=cp.float32), cp.random.rand(10 ** 6, dtype=cp.float32)
    c = cp.zeros(10 ** 6, cp.float32)
    for _ in range(3):
        gemm["sgemm_async"]((8, 8, 1), (128,), (a, b, c, np.int32(1000), np.int32(1000),
                                                np.int32(1000)))
    cp.cuda.Device().synchronize()


def loop_stalls(source_csv: Path, kernel: str = "sgemm_async",
                min_executed: float = 5000) -> list[dict]:
    """Stall samples per instruction issued (``selected`` = 1) over each hot loop of
    ``kernel`` in an ncu source page (runs of consecutive instructions executed at least
    ``min_executed`` times by warps, within a factor of 2 of each other), and over the whole
    kernel. The page may hold other kernels (CuPy's random numbers): each starts with a
    ``"Kernel Name"`` line."""
    with open_text(source_csv) as f:
        lines = [line for line in f if line.startswith('"')]
    rows = list(csv.reader(lines))
    first = next(i for i, r in enumerate(rows) if r[:2] == ["Kernel Name", kernel])
    end = next((i for i in range(first + 1, len(rows)) if rows[i][0] == "Kernel Name"),
               len(rows))
    head, data = rows[first + 1], rows[first + 2:end]
    col = {name: i for i, name in enumerate(head)}
    reasons = [n for n in head if n.startswith("stall_") and "Not Issued" not in n]

    def number(text: str) -> float:
        return ncu_number(text) or 0.0

    runs: list[list] = []  # [executed, indices] per run of hot instructions
    for i, r in enumerate(data):
        executed = number(r[col["Instructions Executed"]])
        if executed < min_executed:
            continue
        if runs and runs[-1][1][-1] == i - 1 and runs[-1][0] / 2 < executed < 2 * runs[-1][0]:
            runs[-1][1].append(i)
        else:
            runs.append([executed, [i]])
    regions = [(f"loop of {len(idx)} instructions executed {executed:.0f} times", executed, idx)
               for executed, idx in runs if len(idx) >= 64]
    regions.append(("whole kernel", None, range(len(data))))
    result = []
    for name, executed, idx in regions:
        total = {reason: sum(number(data[i][col[reason]]) for i in idx) for reason in reasons}
        issued = max(total["stall_selected"], 1.0)
        result.append({"region": name, "instructions": len(idx), "executed": executed,
                       "per_issue": {reason[6:]: round(v / issued, 3)
                                     for reason, v in total.items() if v}})
    return result


def predicted(run: dict) -> float:
    """The model's cycles per trip for one outer-product run of the fixture."""
    import cudakit
    from benchmarks.common import predicted_cycles_per_trip

    threads, iters = 128 * run["warps_per_sched"], (1 << 21) // run["ffma_per_trip"]
    module = cudakit.compile('extern "C" {\n' + OUTER + "\n}\n", options=["-O3"])
    cycles, _ = predicted_cycles_per_trip(module, run["kernel"], threads, [
        np.zeros(132 * threads, np.float32), np.zeros(132 * threads // 32, np.int64),
        np.int32(iters)], iters)
    return cycles


def predicted_launch(m: int, n: int, k: int) -> float:
    """The model's microseconds for one launch of the lab's ``sgemm_async`` at M x N x K."""
    import cudakit

    a, b = np.random.rand(m * k).astype(np.float32), np.random.rand(k * n).astype(np.float32)
    p = cudakit.predict(lab_source(), "sgemm_async", grid=((n + 127) // 128, (m + 127) // 128),
                        block=(128,), args=[a, b, np.zeros(m * n, np.float32), np.int32(m),
                                            np.int32(n), np.int32(k)])
    return p.ms * 1e3


def _slowest(shape: dict, count: int) -> tuple[np.ndarray, str]:
    """A stored shape's last run (per block: SM, cycles) and its ``count`` slowest blocks as
    "(x, y): SM s, kcycles"."""
    gx = shape["grid"][0]
    last = np.array(shape["blocks"][-1], dtype=float)
    return last, ", ".join(f"({i % gx}, {i // gx}): SM {int(last[i, 0])}, {last[i, 1] / 1e3:.0f}"
                           for i in np.argsort(-last[:, 1])[:count])


def held_out() -> str:
    """The held-out shapes (:data:`HELD_OUT`): launch time measured and predicted, and the
    slowest blocks (a TPC whose two SMs run the interior and the edge loop)."""
    stored = json.loads(HELD_OUT.read_text())
    out = [f"Stored: {stored['header']['device']}", "",
           "| M x N x K | grid | measured µs | predicted µs | error | slowest blocks (x, y): "
           "SM, kcycles; median block |", "|---|---|---|---|---|---|"]
    for s in stored["shapes"]:
        gx = s["grid"][0]
        last, slow = _slowest(s, 2)
        measured, predicted = s["launch_ms"] * 1e3, predicted_launch(*s["shape"])
        out.append(f"| {'x'.join(map(str, s['shape']))} | {gx}x{s['grid'][1]} | {measured:.1f} "
                   f"| {predicted:.1f} | {(predicted / measured - 1) * 100:+.0f} % | {slow}; "
                   f"{np.median(last[:, 1]) / 1e3:.0f} |")
    return "\n".join(out)


def tables(stored: dict) -> str:
    """The stored run as Markdown: per shape the launch and the blocks' clock64 spans, the
    slowest blocks' SMs; the outer products' FFMA per clock; the stall samples per loop."""
    out = [f"Stored: {stored['header']['device']}", "",
           "| shape | grid | launch µs | block cycles min / median / max | slowest blocks "
           "(x, y): SM, kcycles |", "|---|---|---|---|---|"]
    for s in stored["shapes"]:
        last, slow = _slowest(s, 3)
        out.append(f"| {'x'.join(map(str, s['shape']))} | {s['grid'][0]}x{s['grid'][1]} | "
                   f"{s['launch_ms'] * 1e3:.1f} | {last[:, 1].min() / 1e3:.0f}k / "
                   f"{np.median(last[:, 1]) / 1e3:.0f}k / {last[:, 1].max() / 1e3:.0f}k | {slow} |")
    out += ["", "| kernel | FFMA per trip | warps per scheduler | cycles per trip | FFMA per "
            "clock | predicted cycles per trip |", "|---|---|---|---|---|---|"]
    out += [f"| {r['kernel']} | {r['ffma_per_trip']} | {r['warps_per_sched']} | "
            f"{r['cycles_per_trip']:.0f} | {r['ffma_per_clk']:.2f} | {predicted(r):.0f} |"
            for r in stored["outer"]]
    for region in stored.get("stalls", ()):
        out.append(f"\n{region['region']}: " + ", ".join(
            f"{k} {v}" for k, v in sorted(region["per_issue"].items(), key=lambda kv: -kv[1])))
    return "\n".join(out)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", metavar="JSON", help="time the blocks on this GPU")
    parser.add_argument("--shapes", nargs="+", metavar="MxNxK",
                        help="with --record: these shapes instead, without the outer products")
    parser.add_argument("--ncu-run", action="store_true", help="launches for ncu to profile")
    parser.add_argument("--stalls", metavar="CSV", help="ncu's source page (SASS), as csv")
    parser.add_argument("--held-out", action="store_true",
                        help="the held-out shapes: measured against predicted")
    parser.add_argument("--into", metavar="JSON", default=str(FIXTURE),
                        help="the recording that --stalls adds its sums to")
    args = parser.parse_args(argv)
    if args.record and args.shapes:
        record(Path(args.record), [tuple(int(v) for v in s.split("x")) for s in args.shapes],
               outer=False)
    elif args.record:
        record(Path(args.record))
    elif args.ncu_run:
        ncu_run()
    elif args.held_out:
        print(held_out())
    elif args.stalls:
        stored = json.loads(Path(args.into).read_text())
        stored["stalls"] = loop_stalls(Path(args.stalls))
        Path(args.into).write_text(json.dumps(stored, indent=0) + "\n")
        print(tables(stored))
    else:
        print(tables(json.loads(FIXTURE.read_text())))


if __name__ == "__main__":
    main()
