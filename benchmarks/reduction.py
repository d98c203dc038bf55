"""Lab 10 on the GPU: every reduction kernel checked against NumPy and timed with events.

Run where there is a CUDA GPU, nvcc and CuPy (the H100 test machine)::

    python -m benchmarks.reduction --log2n 26 28

The kernels are read from the ``%%cuda`` cells of ``labs/10_reduction.ipynb``, so the measured
code is the taught code. For each size the script prints one table: time, effective bandwidth
(bytes read / time), step and cumulative speed-up, and the ratios that the course's goals name:
the best kernel against the best streaming read (the lab's ``read_ceiling`` rebuilt with 4, 8
and 16 sixteen-byte loads in flight, on 6 grid shapes), ``read_ceiling`` against that best read,
and the best kernel against CUB.

>>> passes_needed(1 << 20, per_block=512)
[2048, 4, 1]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np

from .common import (
    build_kernels,
    build_source,
    cell_defining,
    environment_line,
    markdown_table,
    time_ms,
)

BLOCK = 256  # threads per block for every kernel; must equal BLOCK_SIZE in the lab
NOTEBOOK = "10_reduction.ipynb"
KERNELS = tuple(f"reduce{k}" for k in range(8)) + ("read_ceiling",)
LOADS = (4, 8, 16)  # LOADS_IN_FLIGHT of the read variants
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


def read_variants() -> dict[int, object]:
    """The lab's ``read_ceiling`` rebuilt with each number of loads in flight."""
    body, options = cell_defining(NOTEBOOK, "read_ceiling")
    return {loads: build_source(body.replace("#define LOADS_IN_FLIGHT 4",
                                             f"#define LOADS_IN_FLIGHT {loads}"),
                                options, ["read_ceiling"])["read_ceiling"] for loads in LOADS}


def one_size(log2n: int, k: dict, reads: dict, repeat: int) -> None:
    import cupy as cp

    n = 1 << log2n
    rng = np.random.default_rng(2026 + log2n)
    host = rng.integers(-7, 8, size=n, dtype=np.int32)  # |sum| < 2**31 for n <= 2**28
    exact = int(host.sum(dtype=np.int64))
    d_in = cp.asarray(host)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
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

    def read(kernel, grid, threads):
        return lambda: kernel((grid,), (threads,), (d_in, sink, np.uint32(n)))

    shapes = [(sms * per_sm * 256 // threads, threads) for per_sm in (4, 8, 16)
              for threads in (256, 512)]
    read_ms = {(loads, grid, threads): time_ms(read(kernel, grid, threads), repeat=repeat)
               for loads, kernel in reads.items() for grid, threads in shapes}
    best_read = min(read_ms, key=read_ms.get)
    best_read_ms = read_ms[best_read]
    ceiling_ms = time_ms(read(k["read_ceiling"], resident_grid, BLOCK), repeat=repeat)

    print(f"\nn = 2^{log2n} int32 ({n * 4 / 2**20:.0f} MiB), block {BLOCK}, {sms} SMs")
    rows, times = [], {}
    first = prev = None
    for name, fn in runs.items():
        got = int(fn().get().reshape(-1)[0])
        ok = got == exact
        ms = time_ms(fn, repeat=repeat)
        times[name] = ms
        gbs = n * 4 / ms / 1e6
        first = first or ms
        step = f"{prev / ms:.2f}x" if prev else "-"
        prev = ms
        harris = HARRIS_G80.get(name)
        rows.append([name, ok, f"{ms:.4f}", f"{gbs:.0f}", step, f"{first / ms:.1f}x",
                     f"{100 * best_read_ms / ms:.1f}%",
                     f"{harris[0]} ms, {harris[1]} GB/s" if harris else "-"])
        if not ok:
            print(f"WRONG: {name} gave {got}, NumPy {exact}")
    for name, ms in (("read_ceiling (lab)", ceiling_ms),
                     (f"best read: {best_read[0]} loads, {best_read[1]} x {best_read[2]}",
                      best_read_ms)):
        rows.append([name, "-", f"{ms:.4f}", f"{n * 4 / ms / 1e6:.0f}", "-", "-",
                     f"{100 * best_read_ms / ms:.1f}%", "-"])
    print(markdown_table(["kernel", "exact", "ms", "GB/s", "step", "cumulative", "of best read",
                          "Harris 2007 (G80, 2^22)"], rows))
    best = min(("reduce6", "reduce7"), key=times.get)
    print(f"\ngoal: best ({best}) / best streaming read = "
          f"{best_read_ms / times[best]:.3f} (>= 0.95)")
    print(f"goal: read_ceiling / best 16-byte-load read = "
          f"{best_read_ms / ceiling_ms:.3f} (>= 0.97)")
    if cub is not None:
        cub_ms = times["CUB DeviceReduce::Sum"]
        print(f"goal: best ({best}) / CUB = {cub_ms / times[best]:.3f} (>= 1.10, speed ratio); "
              f"CUB / best read = {best_read_ms / cub_ms:.3f}")
    else:
        print("CUB through CuPy is not available here: that goal is not measured")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, nargs="*", default=[26, 28],
                        help="number of ints = 2**log2n (one table each)")
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args(argv)
    k = build_kernels(NOTEBOOK, list(KERNELS))
    reads = read_variants()
    print(environment_line())
    print("times: median of CUDA-event samples, each with a head start (benchmarks/common.py)")
    for log2n in args.log2n:
        one_size(log2n, k, reads, args.repeat)


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
