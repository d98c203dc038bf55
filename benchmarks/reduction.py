"""Lab 10 on the GPU: every reduction kernel checked against NumPy and timed with events.

Run where there is a CUDA GPU, nvcc and CuPy (the H100 test machine)::

    python -m benchmarks.reduction --log2n 26

The kernels are read from the ``%%cuda`` cells of ``labs/10_reduction.ipynb`` (or its
draft), so the measured code is the taught code. The script prints one table: time,
effective bandwidth (bytes read / time), step and cumulative speed-up, and the ratios
that the course's goals name (best kernel / read ceiling, best kernel / CUB).

>>> passes_needed(1 << 20, per_block=512)
[2048, 4, 1]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np

from .common import build_kernels, environment_line, markdown_table, time_ms

BLOCK = 256  # threads per block for every kernel; must equal BLOCK_SIZE in the lab
NOTEBOOK = "10_reduction.ipynb"
KERNELS = tuple(f"reduce{k}" for k in range(8)) + ("read_ceiling",)
# (time in ms, GB/s) of Harris, "Optimizing Parallel Reduction in CUDA" (2007),
# 2^22 ints on a GeForce 8800 GTX (G80, 86.4 GB/s peak).
HARRIS_G80 = {
    "reduce0": (8.054, 2.083),
    "reduce1": (3.456, 4.854),
    "reduce2": (1.722, 9.741),
    "reduce3": (0.965, 17.377),
    "reduce4": (0.536, 31.289),
    "reduce5": (0.381, 43.996),
    "reduce6": (0.268, 62.671),
}


def passes_needed(n: int, per_block: int) -> list[int]:
    """Number of blocks of each launch when every block reduces ``per_block`` elements."""
    blocks = []
    while n > 1:
        n = math.ceil(n / per_block)
        blocks.append(n)
    return blocks


def multi_pass(kernel, d_in, n: int, per_block: int, shared: int, grid_cap: int | None = None):
    """Reduce ``d_in[:n]`` to one value by launching ``kernel`` until one partial sum is left.

    ``grid_cap`` limits the grid (grid-stride kernels); the scratch buffers alternate.
    """
    import cupy as cp

    src = d_in
    while True:
        blocks = math.ceil(n / per_block)
        if grid_cap:
            blocks = min(blocks, grid_cap)
        out = cp.empty(blocks, dtype=cp.int32)
        kernel((blocks,), (BLOCK,), (src, out, np.uint32(n)), shared_mem=shared)
        if blocks == 1:
            return out
        src, n = out, blocks


def main(argv: list[str] | None = None) -> None:
    import cupy as cp

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, default=26, help="number of ints = 2**log2n")
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args(argv)

    n = 1 << args.log2n
    rng = np.random.default_rng(2026)
    host = rng.integers(-16, 17, size=n, dtype=np.int32)  # |sum| < 2**31 for n <= 2**26
    exact = int(host.sum(dtype=np.int64))
    d_in = cp.asarray(host)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    k = build_kernels(NOTEBOOK, list(KERNELS))
    resident_grid = sms * (2048 // BLOCK)
    dyn = BLOCK * 4

    runs: dict[str, Callable[[], object]] = {
        "reduce0": lambda: multi_pass(k["reduce0"], d_in, n, BLOCK, dyn),
        "reduce1": lambda: multi_pass(k["reduce1"], d_in, n, BLOCK, dyn),
        "reduce2": lambda: multi_pass(k["reduce2"], d_in, n, BLOCK, dyn),
        "reduce3": lambda: multi_pass(k["reduce3"], d_in, n, 2 * BLOCK, dyn),
        "reduce4": lambda: multi_pass(k["reduce4"], d_in, n, 2 * BLOCK, dyn),
        "reduce5": lambda: multi_pass(k["reduce5"], d_in, n, 2 * BLOCK, 0),
        "reduce6": lambda: multi_pass(k["reduce6"], d_in, n, 2 * BLOCK, 0, resident_grid),
    }
    out7 = cp.zeros(1, dtype=cp.int32)

    def reduce7():
        out7.fill(0)
        k["reduce7"]((resident_grid,), (BLOCK,), (d_in, out7, np.uint32(n)))
        return out7

    runs["reduce7"] = reduce7
    cub = _cub_sum(d_in)
    if cub is not None:
        runs["CUB DeviceReduce::Sum"] = cub
    sink = cp.zeros(1, dtype=cp.int32)

    def ceiling():
        k["read_ceiling"]((resident_grid,), (BLOCK,), (d_in, sink, np.uint32(n)))

    print(environment_line())
    print(f"n = 2^{args.log2n} int32 ({n * 4 / 2**20:.0f} MiB), block {BLOCK}, {sms} SMs")
    rows, times = [], {}
    ceiling_ms = time_ms(ceiling, repeat=args.repeat)
    ceiling_gbs = n * 4 / ceiling_ms / 1e6
    first = prev = None
    for name, fn in runs.items():
        got = int(fn().get().reshape(-1)[0])
        ok = got == exact
        ms = time_ms(fn, repeat=args.repeat)
        times[name] = ms
        gbs = n * 4 / ms / 1e6
        first = first or ms
        step = f"{prev / ms:.2f}x" if prev else "-"
        prev = ms
        harris = HARRIS_G80.get(name)
        rows.append([name, ok, f"{ms:.4f}", f"{gbs:.0f}", step, f"{first / ms:.1f}x",
                     f"{100 * gbs / ceiling_gbs:.1f}%",
                     f"{harris[0]} ms, {harris[1]} GB/s" if harris else "-"])
        if not ok:
            print(f"WRONG: {name} gave {got}, NumPy {exact}")
    rows.append(["read_ceiling", "-", f"{ceiling_ms:.4f}", f"{ceiling_gbs:.0f}", "-", "-",
                 "100%", "-"])
    print(markdown_table(["kernel", "exact", "ms", "GB/s", "step", "cumulative", "of ceiling",
                          "Harris 2007 (G80, 2^22)"], rows))
    best = min(("reduce6", "reduce7"), key=times.get)
    print(f"\ngoal: best ({best}) / read ceiling = {ceiling_ms / times[best]:.3f} (>= 0.90)")
    if cub is not None:
        cub_ms = times["CUB DeviceReduce::Sum"]
        print(f"goal: best ({best}) / CUB = {cub_ms / times[best]:.3f} (>= 1.00, speed ratio)")
    else:
        print("CUB through CuPy is not available here: that goal is not measured")


def _cub_sum(d_in):
    """CUB's DeviceReduce::Sum through CuPy, or None where CuPy has no CUB."""
    try:
        from cupy.cuda import cub
    except ImportError:
        return None
    # dtype=int32: CUB sums in the input's type (CuPy's default would promote to int64)
    if cub.cub_reduction(d_in, cub.CUPY_CUB_SUM, dtype=np.int32) is None:
        return None
    return lambda: cub.cub_reduction(d_in, cub.CUPY_CUB_SUM, dtype=np.int32)


if __name__ == "__main__":
    main()
