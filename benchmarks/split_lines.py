"""What a warp's request costs when its 128 bytes straddle two L2 lines.

llm.c's block-per-row softmax kernels run 40–60 % longer on rows of 50257 floats than on rows
of 50272 (a multiple of 32 floats) on an H200 (session 26, ``fixtures/h200_softmax_rows.json``),
with the same DRAM bytes within 10 %. This probe streams 1 GiB (from DRAM) and 16 MiB (kept
in L2) through kernels whose every warp request starts ``offset`` floats past a 128-byte line:
0 (one line, four sectors), 8 (two lines, four whole sectors) and 1 (two lines, five sectors,
the two at the ends written in part):

    python -m benchmarks.split_lines --time --out times.json                    # GPU
    ncu --csv --print-units base --cache-control none --metrics ... \\
        python -m benchmarks.split_lines --launch > raw.csv                      # GPU
    python -m benchmarks.split_lines --parse raw.csv times.json --out fixture.json

Kernels: ``read`` (a scalar float per lane), ``copy`` (load and store, both at the offset) and
``fill`` (stores only), each a grid-stride loop over the buffer with blocks of 256, at 8 blocks
per SM (all warps resident) and 2 (a quarter of them). ``--time``: the median event time of
one launch among 10 back to back (20 samples), less nothing; ``--launch``: every case twice
for Nsight Compute (the second is kept: in L2 what fits). Written by hand: a microbenchmark.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks.common import back_to_back_ms, emit_json, gpu_line, ncu_launches

SOURCE = r"""
__global__ void read(const float *x, long n, int off, float *sink) {
    float acc = 0.0f;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) acc += x[i + off];
    if (acc == -1.0f) sink[0] = acc;
}
__global__ void copy(const float *x, float *y, long n, int off) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) y[i + off] = x[i + off];
}
__global__ void fill(float *y, long n, int off, float v) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) y[i + off] = v;
}
"""
SIZES = (1 << 30, 16 << 20)
OFFSETS = (0, 8, 1)  # floats past a line's start
KINDS = ("read", "copy", "fill")
BLOCKS_PER_SM = (8, 2)
BLOCK = 256


def cases() -> list[tuple[str, int, int, int]]:
    """(kind, bytes, offset, blocks per SM), in launch order."""
    return [(k, s, o, b) for k in KINDS for s in SIZES for b in BLOCKS_PER_SM for o in OFFSETS]


def _launcher(kind: str, size: int, offset: int, per_sm: int):
    import cudakit
    from cudakit import cuda

    k = cudakit.load(SOURCE, options=["-O3"])
    grid = (cudakit.device_info().multiprocessors * per_sm,)
    n, off = np.int64(size // 4 - 32), np.int32(offset)

    def zeros():
        d = cuda.mem_alloc(size)
        cuda.memset_d8(d, 0, size)
        return d

    x = zeros()
    if kind == "read":
        sink = cuda.mem_alloc(4)
        return lambda: k["read"](x, n, off, sink, grid=grid, block=(BLOCK,)), (x, sink)
    if kind == "copy":
        y = zeros()
        return lambda: k["copy"](x, y, n, off, grid=grid, block=(BLOCK,)), (x, y)
    return lambda: k["fill"](x, n, off, np.float32(1), grid=grid, block=(BLOCK,)), (x,)


def predict(case: tuple[str, int, int, int], device: str):
    """The model's prediction of one case (buffers of zeros, as the GPU's)."""
    import cudakit

    kind, size, offset, per_sm = case
    n, off = np.int64(size // 4 - 32), np.int32(offset)
    x = np.zeros(size // 4, np.float32)
    args = {"read": (x, n, off, np.zeros(1, np.float32)), "copy": (x, x.copy(), n, off),
            "fill": (x, n, off, np.float32(1))}[kind]
    return cudakit.predict(SOURCE, kind, grid=(132 * per_sm,), block=(BLOCK,), args=args,
                           device=device)


def launch_all() -> None:
    from cudakit import cuda

    for case in cases():
        go, keep = _launcher(*case)
        go()
        go()
        cuda.Context.synchronize()
        for d in keep:
            d.free()


def time_all() -> dict:
    out = {}
    for case in cases():
        go, keep = _launcher(*case)
        ms = back_to_back_ms(go, repeat=20, warmup=2)
        out[" ".join(map(str, case))] = ms
        print(f"{case} {ms * 1e3:9.2f} us", flush=True)
        for d in keep:
            d.free()
    return out


def parse(raw: str, times: dict) -> dict:
    """ncu's CSV (two launches per case, in order) and the event times as one record per
    case: the second launch's metrics."""
    launches = ncu_launches(raw)
    if len(launches) != 2 * len(cases()):
        raise ValueError(f"expected {2 * len(cases())} launches, found {len(launches)}")
    out = []
    for j, case in enumerate(cases()):
        key = " ".join(map(str, case))
        out.append({"kind": case[0], "bytes": case[1], "offset_floats": case[2],
                    "blocks_per_sm": case[3], "event_ms": times[key],
                    "ncu": launches[2 * j + 1]})
    return {"cases": out}


def dram_merge_rate(fixture: dict) -> float:
    """Parts of sectors merged per second on lines the L2 writes to DRAM: the fill of 1 GiB
    at all warps resident, one word past a sector (each warp's 128 bytes leave a part of a
    sector at both ends, which its neighbours finish) against the fill one sector past a
    line (whole sectors, the same lines split in two): 2 parts per warp request over the
    time between them (``partial_store_dram_sectors_per_s``).

    >>> cases = [{"kind": "fill", "bytes": 1 << 30, "offset_floats": o, "blocks_per_sm": 8,
    ...           "event_ms": ms} for o, ms in ((8, 0.3), (1, 0.7))]
    >>> round(dram_merge_rate({"cases": cases}) / 1e9, 1)
    41.9
    """
    fills = {c["offset_floats"]: c for c in fixture["cases"] if c["kind"] == "fill"
             and c["bytes"] == SIZES[0] and c["blocks_per_sm"] == BLOCKS_PER_SM[0]}
    parts = 2 * (SIZES[0] // 4 - 32) // 32
    return parts / ((fills[1]["event_ms"] - fills[8]["event_ms"]) * 1e-3)


def compare(path: Path) -> None:
    """The stored cases against the model's predictions for the fixture's device."""
    stored = json.loads(path.read_text())
    device = "H200" if "H200" in stored.get("device", "") else "H100"
    print("| kind | MiB | offset | blocks/SM | measured us | predicted us | error | bound |")
    for c in stored["cases"]:
        p = predict((c["kind"], c["bytes"], c["offset_floats"], c["blocks_per_sm"]), device)
        us = c["event_ms"] * 1e3
        print(f"| {c['kind']} | {c['bytes'] >> 20} | {c['offset_floats']} | "
              f"{c['blocks_per_sm']} | {us:.1f} | {p.ms * 1e3:.1f} | "
              f"{(p.ms * 1e3 / us - 1) * 100:+.0f}% | {p.bound} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launch", action="store_true", help="every case twice (for ncu)")
    parser.add_argument("--time", action="store_true", help="time every case (events)")
    parser.add_argument("--parse", nargs=2, metavar=("CSV", "TIMES"))
    parser.add_argument("--compare", type=Path, metavar="FIXTURE")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.launch:
        launch_all()
        return
    if args.compare:
        compare(args.compare)
        return
    result = time_all() if args.time else parse(Path(args.parse[0]).read_text(),
                                                 json.loads(Path(args.parse[1]).read_text()))
    if args.parse:
        result = {"device": gpu_line(), **result}
    emit_json(result, args.out)


if __name__ == "__main__":
    main()
