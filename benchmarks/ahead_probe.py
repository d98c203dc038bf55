"""How much of a global load's latency a block in lockstep hides behind the instructions
issued between the load and its use: one block of W warps on each SM, each trip a load,
D independent FMAs, then the loaded value stored to shared memory (the wait) and two
barriers, timed by CUDA events.

    python -m benchmarks.ahead_probe --record OUT.json   # on the GPU
    python -m benchmarks.ahead_probe                     # here: the stored run, as a table

The loads read 8 MiB that the warm-up launch leaves in the L2, one 128-byte line per warp
load. Two rules for the cycles of a trip with n = W / 4 warps per scheduler:

* the warp's own instructions hide the latency L: ``max(L - D, 0) + n x D``
  (:func:`cudakit.predict.model.hidden_waits`);
* the other warps' turns hide it as well: ``max(L - n x D, 0) + n x D``.

Printed beside each row: ptxas's distance from the load to its wait, read from the SASS
(:func:`cudakit.predict.sass.global_waits`), which the model uses for D.

Written by hand: no library measures this.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from benchmarks.common import open_text, probe_main

STORED = Path(__file__).parent / "fixtures" / "h200_ahead_probe.json"
WARPS = (4, 8, 16, 32)  # per block, one block per SM: 1, 2, 4, 8 warps per scheduler
DISTANCES = (0, 16, 32, 64, 128, 256, 512)
TRIPS = 2048
LINES = 1 << 16  # 8 MiB of 128-byte lines: the L2 keeps them

SOURCE = r"""
template <int D>
__global__ void ahead(const float *__restrict__ a, float *out, int trips)
{
    __shared__ float tile[1024];
    int t = threadIdx.x, lane = t & 31;
    long long warp = (blockIdx.x * (long long)blockDim.x + t) >> 5;
    long long warps = (gridDim.x * (long long)blockDim.x) >> 5;
    float x[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) x[j] = t + j;
    float acc = 0.0f;
#pragma unroll 1
    for (int s = 0; s < trips; ++s) {
        float v = a[((s * warps + warp) & ((1 << 16) - 1)) * 32 + lane];
#pragma unroll
        for (int k = 0; k < D; ++k) x[k % 8] = fmaf(x[k % 8], 1.0001f, 0.5f);
        tile[t] = v;  // the wait for the load
        __syncthreads();
        acc += tile[(t + 32) % blockDim.x];
        __syncthreads();
    }
    float s = acc;
#pragma unroll
    for (int j = 0; j < 8; ++j) s += x[j];
    out[warp * 32 + lane] = s;
}
"""


def record(out: Path) -> None:
    """Run every configuration on this GPU and write the rows to ``out``."""
    import cupy as cp

    names = [f"ahead<{d}>" for d in DISTANCES]
    module = cp.RawModule(code=SOURCE, name_expressions=names, options=("-std=c++17",))
    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    array = cp.ones(LINES * 32, cp.float32)
    result = cp.zeros(sms * max(WARPS) * 32, cp.float32)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    rows = []
    for warps, d in itertools.product(WARPS, DISTANCES):
        kernel = module.get_function(f"ahead<{d}>")
        times = []
        for _ in range(4):  # the fastest of 3, after one to warm up
            start.record()
            kernel((sms,), (32 * warps,), (array, result, cp.int32(TRIPS)))
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop))
        rows.append({"warps": warps, "fmas": d, "ms": min(times[1:])})
    out.write_text(json.dumps({"device": props["name"].decode(), "sms": sms, "trips": TRIPS,
                               "sm_clock_khz": props["clockRate"], "rows": rows}, indent=1))


def sass_distances() -> dict[int, int]:
    """Per D, ptxas's distance (instructions) from the load to its wait, here."""
    import cudakit
    from cudakit.predict.sass import global_waits

    text = SOURCE + "".join(f"template __global__ void ahead<{d}>(const float *, float *, int);\n"
                            for d in DISTANCES)
    cubin = cudakit.compile(text, options=["-O3"]).cubin
    out = {}
    for d in DISTANCES:
        waits = global_waits(cubin, f"_Z5aheadILi{d}EEvPKfPfi")
        out[d] = min(waits.distances) if waits and waits.distances else -1
    return out


def table(stored: dict, distances: dict[int, int] | None = None) -> str:
    """Cycles per trip for each W x D, with the two rules' figures from the trip of D = 0
    at the same W (the latency, the barriers and the rest of a trip) and ptxas's distance
    from the load to its wait (``distances``, else D)."""
    clock = stored["sm_clock_khz"] * 1e3
    cycles = {(r["warps"], r["fmas"]): r["ms"] * 1e-3 * clock / stored["trips"]
              for r in stored["rows"]}
    out = [f"{stored['device']}, {stored['sms']} SMs: cycles per trip, measured (own rule / "
           "turns rule)"]
    out.append("| D (SASS distance) | " + " | ".join(f"{w // 4} warps/scheduler"
                                                    for w in WARPS) + " |")
    out.append("|---" * (len(WARPS) + 1) + "|")
    for d in DISTANCES:
        sass = f" ({distances[d]})" if distances else ""
        cells = []
        ahead = distances[d] if distances else d  # ptxas's distance, else D
        for w in WARPS:
            n, base = w // 4, cycles[w, 0]
            own = max(base - ahead, 0) + n * d
            turns = max(base - n * ahead, 0) + n * d
            cells.append(f"{cycles[w, d]:.0f} ({own:.0f} / {turns:.0f})")
        out.append(f"| {d}{sass} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def show() -> None:
    """The stored run as a table, with ptxas's distances compiled here."""
    with open_text(STORED) as f:
        print(table(json.load(f), sass_distances()))


def main(argv=None) -> None:
    probe_main(argv, __doc__, record, show)


if __name__ == "__main__":
    main()
