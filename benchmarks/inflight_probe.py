"""How many global loads an SM keeps in flight: warps that each issue N independent loads
from DRAM and then use them, one block of W warps on each of G SMs, timed by CUDA events.

    python -m benchmarks.inflight_probe --record OUT.json   # on the GPU
    python -m benchmarks.inflight_probe                     # here: the stored run, a table

Each warp load reads a 4-byte word per lane, the lanes ``width`` words apart (1: one
128-byte line, 4 sectors; 8: 8 lines, 32 sectors), at a place in a 2 GiB array that no other
load of the launch reads; loads ``stride`` apart in the
warp's sequence are neighbours in memory (1: the warps of a launch sweep the array together;
37: each load opens a DRAM page of its own). The trips of a warp's loop are not unrolled,
so a warp has exactly N loads in flight, then waits for them. If nothing but the latency
limited an SM, its bandwidth would grow as W x N; where it stops growing, the SM holds its
most loads in flight (Little's law: lines in flight = bandwidth x latency / line).

Written by hand: no library measures an SM's loads in flight.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from benchmarks.common import open_text

FIXTURE = Path(__file__).parent / "fixtures" / "h200_inflight_probe.json"
GRIDS = (16, 132)
WARPS = (1, 2, 4, 8, 16, 32)
LOADS = (1, 2, 4, 8, 16, 32)
WIDTHS = (1, 8)
STRIDES = (1, 37)
PER_WARP = 1024  # loads each warp issues per launch
LINES = 1 << 24  # 128-byte lines in the array (2 GiB)

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
// into the LDG: no address arithmetic between the loads), the loads 257 lines apart
template <int N>
__global__ void offsets(const float *__restrict__ a, float *out, int trips)
{
    long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    long long warps = (gridDim.x * (long long)blockDim.x) >> 5;
    int lane = threadIdx.x & 31;
    float acc = 0.0f;
#pragma unroll 1
    for (int t = 0; t < trips; ++t) {
        const float *p = a + ((((long long)t * warps + warp) * N * 257) & ((1LL << 24) - 1)) * 32
                         + lane;
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

    def fastest(kernel, grid: int, warps: int, args: tuple) -> float:
        """Milliseconds of a launch: the fastest of 3, after one to warm up."""
        kernel((grid,), (32 * warps,), args)
        times = []
        for _ in range(3):
            start.record()
            kernel((grid,), (32 * warps,), args)
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop))
        return min(times)

    rows = []
    for grid, warps, n, width, stride in itertools.product(GRIDS, WARPS, LOADS, WIDTHS, STRIDES):
        args = (array, result, cp.int32(PER_WARP // n), cp.int32(stride))
        rows.append({"kernel": "inflight", "grid": grid, "warps": warps, "loads": n,
                     "width": width, "stride": stride,
                     "ms": fastest(module.get_function(f"inflight<{n}, {width}>"), grid, warps,
                                   args)})
    for grid, warps, n in itertools.product(GRIDS, WARPS, LOADS):
        args = (array, result, cp.int32(PER_WARP // n))
        rows.append({"kernel": "offsets", "grid": grid, "warps": warps, "loads": n, "width": 1,
                     "stride": 257,
                     "ms": fastest(module.get_function(f"offsets<{n}>"), grid, warps, args)})
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
    runs = sorted({(r.get("kernel", "inflight"), r["grid"], r["width"], r["stride"])
                   for r in rows})
    for kernel, grid, width, stride in runs:
        pick = {(r["warps"], r["loads"]): r for r in rows
                if (r.get("kernel", "inflight"), r["grid"], r["width"], r["stride"])
                == (kernel, grid, width, stride)}
        latency = pick[1, 1]["ms"] * 1e6 / PER_WARP
        out.append(f"\n`{kernel}`, {grid} SMs, warp loads of {width} lines, stride {stride}: "
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", metavar="JSON", help="run the probe on this GPU")
    args = parser.parse_args(argv)
    if args.record:
        record(Path(args.record))
        return
    with open_text(FIXTURE) as f:
        print(table(json.load(f)))


if __name__ == "__main__":
    main()
