"""How much DRAM a scattered read costs: each warp reads one chunk of 4, 32, 64 or 128 bytes
at a random, aligned place in 1 GiB (or 2 or 4 separate 32-byte chunks), sums it and writes
one float. The L2 asks DRAM for 32-byte sectors; if DRAM moves more per access, scattered
sectors cost more than their bytes.

    python -m benchmarks.dram_random --record benchmarks/fixtures/h100_dram_random.json  # GPU
    python -m benchmarks.dram_random          # here: the model's predictions beside them

``--record`` times each pattern with CUDA events (3 warm-up launches, then the median of 10
samples of 5 launches) with CuPy, on the same chunk starts the prediction uses.
Written by hand: it joins a start generator, the GPU's clock and the model.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.common import batch_ms, gpu_line, probe_main, probe_row

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "h100_dram_random.json"
FLOATS = 1 << 28  # 1 GiB read from
WARPS = 1 << 21
SOURCE = r"""
extern "C" __global__ void chunks(const float *in, const int *start, float *out, int lanes,
                                  int pieces) {
    // lanes 0 .. lanes-1 of a warp read consecutive floats from `pieces` random starts
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    int piece = lane / lanes, k = lane % lanes;
    float v = piece < pieces ? in[start[w * pieces + piece] + k] : 0.0f;
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    if (lane == 0) out[w] = v;
}
"""
#: (name, floats read together, separate pieces per warp)
PATTERNS = [("4 B", 1, 1), ("32 B", 8, 1), ("64 B", 16, 1), ("128 B", 32, 1),
            ("2 x 32 B apart", 8, 2), ("4 x 32 B apart", 8, 4)]


def starts(lanes: int, pieces: int) -> np.ndarray:
    r = np.random.default_rng(23)
    return (r.integers(0, FLOATS // 32, WARPS * pieces) * 32).astype(np.int32)


def record(path: Path) -> None:
    import cupy

    fn = cupy.RawModule(code=SOURCE).get_function("chunks")
    data = cupy.ones(FLOATS, cupy.float32)
    out = cupy.zeros(WARPS, cupy.float32)
    result = {}
    for name, lanes, pieces in PATTERNS:
        start = cupy.asarray(starts(lanes, pieces))
        result[name] = batch_ms(
            lambda start=start, lanes=lanes, pieces=pieces: fn(
                (WARPS * 32 // 256,), (256,),
                (data, start, out, np.int32(lanes), np.int32(pieces))))
        print(f"{name:16s} {result[name]:.4f} ms", flush=True)
    path.write_text(json.dumps({"device": gpu_line(), "warps": WARPS, "ms": result},
                               indent=1) + "\n")


def compare(path: Path = FIXTURE) -> list[dict]:
    import cudakit

    stored = json.loads(path.read_text())["ms"]
    data = np.ones(FLOATS, np.float32)
    rows = []
    for name, lanes, pieces in PATTERNS:
        p = cudakit.predict(SOURCE, "chunks", grid=(WARPS * 32 // 256,), block=(256,),
                            args=[data, starts(lanes, pieces), np.zeros(WARPS, np.float32),
                                  np.int32(lanes), np.int32(pieces)])
        measured = stored[name]
        rows.append(probe_row(name, measured, p, dram_read_bytes=p.counts["dram_read_bytes"]))
        print(f"| {name} | {measured:.4f} | {p.ms:.4f} | {rows[-1]['error_pct']:+.0f}% | "
              f"{p.bound} | {p.counts['dram_read_bytes'] / 1e6:.0f} |", flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    probe_main(argv, __doc__, record, compare,
               "| pattern | H100 ms | predicted ms | error | bound | DRAM MB read |\n"
               "|---|---|---|---|---|---|")


if __name__ == "__main__":
    main()
