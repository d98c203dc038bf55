"""How many global loads an SM keeps in flight: warps that each issue N independent loads
and then use them, one block of W warps on each of G SMs, timed by CUDA events.

    python -m benchmarks.inflight_probe --record OUT.json   # on the GPU
    python -m benchmarks.inflight_probe                     # here: the stored runs, as tables

``inflight``: each warp load reads a 4-byte word per lane, the lanes ``width`` words apart
(1: one 128-byte line, 4 sectors; 8: 8 lines, 32 sectors), at a place in a 2 GiB array that
no other load of the launch reads; loads ``stride`` apart in the warp's sequence are
neighbours in memory (1: the warps of a launch sweep the array together; 37: each load opens
a DRAM page of its own). The trips of a warp's loop are not unrolled, so a warp has N loads
in flight, then waits for them (ptxas puts address arithmetic between them). If nothing but
the latency limited an SM, its bandwidth would grow as W x N; where it stops growing, the SM
holds its most loads in flight (Little's law: lines in flight = bandwidth x latency / line).

``offsets``: the same with nothing between the loads (constant offsets, folded into the
``LDG``s). Where its loads are served is the ``footprint`` (:data:`FOOTPRINTS`).

Two stored runs on an H200: ``fixtures/h200_inflight_probe.json`` (commit c0c1401's probe,
where every timed launch re-read the lines of its warm-up launch: those of ``offsets`` on 16
SMs, at most 16 MiB, came from the L2) and ``fixtures/h200_inflight_footprints.json`` (this
probe: ``offsets`` from the L2 and from DRAM).

Written by hand: no library measures an SM's loads in flight.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from benchmarks.common import open_text, probe_main

STORED = [Path(__file__).parent / "fixtures" / name
          for name in ("h200_inflight_probe.json", "h200_inflight_footprints.json")]
GRIDS = (16, 132)
WARPS = (1, 2, 4, 8, 16, 32)
LOADS = (1, 2, 4, 8, 16, 32)
WIDTHS = (1, 8)
STRIDES = (1, 37)
PER_WARP = 1024  # loads each warp issues per launch
LINES = 1 << 24  # 128-byte lines in the array (2 GiB)
#: where ``offsets``'s loads are served: lines it spreads them over. From DRAM, each launch
#: reads 2^20 lines (128 MiB) of its own, one of 15 such parts of the array in turn, so
#: that the launches between two reads of a part evict it from the L2; from the L2, every
#: launch reads the same 2^16 lines (8 MiB), which the warm-up launch leaves there
FOOTPRINTS = {"dram": 1 << 20, "l2": 1 << 16}

SOURCE = r"""
template <int N, int SPREAD>
__global__ void inflight(const float *__restrict__ a, float *out, int trips, int stride)
{
    long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    long long warps = (gridDim.x * (long long)blockDim.x) >> 5;
    int lane = threadIdx.x & 31;
    const long long chunks = (1LL << 24) / SPREAD - 1;  // chunk: one warp load, SPREAD lines
    float acc = 0.0f;
#pragma unroll 1
    for (int t = 0; t < trips; ++t) {
        float v[N];
#pragma unroll
        for (int k = 0; k < N; ++k) {
            long long chunk = (((long long)t * N + k) * stride * warps + warp) & chunks;
            v[k] = a[(chunk * 32 + lane) * SPREAD];
        }
#pragma unroll
        for (int k = 0; k < N; ++k)
            acc += v[k];
    }
    out[warp * 32 + lane] = acc;
}

// the same with each load's address a constant offset from the trip's base (ptxas folds it
// into the LDG: no address arithmetic between the loads), the loads 257 lines apart, within
// ``lines`` lines from ``start`` (a power of two: few enough for the L2, or 2^20 at a new
// place for each launch)
template <int N>
__global__ void offsets(const float *__restrict__ a, float *out, int trips, long long lines,
                        long long start)
{
    long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    long long warps = (gridDim.x * (long long)blockDim.x) >> 5;
    int lane = threadIdx.x & 31;
    float acc = 0.0f;
#pragma unroll 1
    for (int t = 0; t < trips; ++t) {
        const float *p = a + (start + ((((long long)t * warps + warp) * N * 257) & (lines - 1)))
                         * 32 + lane;
        float v[N];
#pragma unroll
        for (int k = 0; k < N; ++k)
            v[k] = p[k * 257 * 32];
#pragma unroll
        for (int k = 0; k < N; ++k)
            acc += v[k];
    }
    out[warp * 32 + lane] = acc;
}
"""


def record(out: Path) -> None:
    """Run every configuration on this GPU and write the rows to ``out``."""
    import cupy as cp

    names = [f"inflight<{n}, {w}>" for n in LOADS for w in WIDTHS] + \
        [f"offsets<{n}>" for n in LOADS]
    module = cp.RawModule(code=SOURCE, name_expressions=names)
    array = cp.ones((LINES + 257 * max(LOADS)) * 32, cp.float32)
    result = cp.zeros(max(GRIDS) * max(WARPS) * 32, cp.float32)
    start, stop = cp.cuda.Event(), cp.cuda.Event()

    launches = itertools.count()

    def fastest(kernel, grid: int, warps: int, args: tuple, fresh: bool = False) -> float:
        """Milliseconds of a launch: the fastest of 3, after one to warm up (``fresh``: each
        reading a part of the array of its own, the last argument)."""
        times = []
        for _ in range(4):
            part = (cp.int64((next(launches) % 15) << 20),) if fresh else ()
            start.record()
            kernel((grid,), (32 * warps,), args + part)
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop))
        return min(times[1:])

    rows = []
    for grid, warps, n, width, stride in itertools.product(GRIDS, WARPS, LOADS, WIDTHS, STRIDES):
        args = (array, result, cp.int32(PER_WARP // n), cp.int32(stride))
        rows.append({"kernel": "inflight", "grid": grid, "warps": warps, "loads": n,
                     "width": width, "stride": stride,
                     "ms": fastest(module.get_function(f"inflight<{n}, {width}>"), grid, warps,
                                   args)})
    for (footprint, lines), grid, warps, n in itertools.product(FOOTPRINTS.items(), GRIDS,
                                                                WARPS, LOADS):
        args = (array, result, cp.int32(PER_WARP // n), cp.int64(lines))
        kernel = module.get_function(f"offsets<{n}>")
        ms = fastest(kernel, grid, warps, args, fresh=True) if footprint == "dram" else \
            fastest(kernel, grid, warps, args + (cp.int64(0),))
        rows.append({"kernel": "offsets", "footprint": footprint, "grid": grid, "warps": warps,
                     "loads": n, "width": 1, "stride": 257, "ms": ms})
    props = cp.cuda.runtime.getDeviceProperties(0)
    out.write_text(json.dumps({"device": props["name"].decode(), "per_warp": PER_WARP,
                               "sm_clock_khz": props["clockRate"], "rows": rows}, indent=1))


def lines_per_sm(row: dict, latency_ns: float) -> tuple[float, float]:
    """A run's bandwidth per SM (bytes per ns) and the 128-byte lines in flight per SM it
    implies at ``latency_ns`` (Little's law)."""
    moved = row["warps"] * PER_WARP * 128 * row["width"]  # bytes of lines per SM
    rate = moved / (row["ms"] * 1e6)
    return rate, rate * latency_ns / 128


def table(stored: dict) -> str:
    """Per grid, width and stride: lines in flight per SM for each W x N."""
    rows = stored["rows"]
    out = []
    def run(r: dict) -> tuple:
        return r["kernel"], r.get("footprint", "re-read"), r["grid"], r["width"], r["stride"]

    for key in sorted({run(r) for r in rows}):
        kernel, footprint, grid, width, stride = key
        pick = {(r["warps"], r["loads"]): r for r in rows if run(r) == key}
        latency = pick[1, 1]["ms"] * 1e6 / PER_WARP
        out.append(f"\n`{kernel}` from {footprint}, {grid} SMs, warp loads of {width} lines, "
                   f"stride {stride}: "
                   f"latency {latency:.0f} ns (one load in flight); lines in flight per SM "
                   "(GB/s per SM)")
        out.append("| warps \\ loads | " + " | ".join(map(str, LOADS)) + " |")
        out.append("|---" * (len(LOADS) + 1) + "|")
        for w in WARPS:
            cells = []
            for n in LOADS:
                rate, lines = lines_per_sm(pick[w, n], latency)
                cells.append(f"{lines:.0f} ({rate:.0f})")
            out.append(f"| {w} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def show() -> None:
    """The stored runs as tables."""
    for path in STORED:
        print(f"\n## {path.name}")
        with open_text(path) as f:
            print(table(json.load(f)))


def main(argv=None) -> None:
    probe_main(argv, __doc__, record, show)


if __name__ == "__main__":
    main()
