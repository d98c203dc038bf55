"""Lab 11 on the GPU: every transpose kernel checked against NumPy and timed with events.

Run where there is a CUDA GPU, nvcc and CuPy (the H100 test machine)::

    python -m benchmarks.transpose

Effective bandwidth counts each matrix element read once and written once (8 bytes per
float32 element). The copy kernel, with the same tiles and accesses, is the ceiling;
the goal is transpose_padded >= 90% of copy at 8192 x 8192.

>>> launch_shape("transpose_vec4", rows=100, cols=70)
((3, 4), (8, 32))
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from .common import build_kernels, environment_line, markdown_table, time_ms

TILE, BLOCK_ROWS = 32, 8  # must match the lab's #defines
NOTEBOOK = "11_transpose.ipynb"
KERNELS = ["copy", "transpose_naive", "transpose_tiled", "transpose_padded", "transpose_vec4"]
SHAPES = [(8192, 8192), (4096, 4096), (8192, 2048), (2048, 8192), (4097, 3001)]


def launch_shape(kernel: str, rows: int, cols: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """Grid and block of ``kernel`` for a rows x cols input: one block per 32 x 32 tile."""
    grid = (math.ceil(cols / TILE), math.ceil(rows / TILE))
    block = (TILE // 4, TILE) if kernel == "transpose_vec4" else (TILE, BLOCK_ROWS)
    return grid, block


def main(argv: list[str] | None = None) -> None:
    import cupy as cp

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--shapes", nargs="*", default=[f"{r}x{c}" for r, c in SHAPES],
                        help="rows x cols of each input, e.g. 4097x3001")
    args = parser.parse_args(argv)
    shapes = [tuple(int(v) for v in shape.split("x")) for shape in args.shapes]
    k = build_kernels(NOTEBOOK, KERNELS)
    rng = np.random.default_rng(2026)
    print(environment_line())
    rows_out, ratio = [], {}
    for rows, cols in shapes:
        host = rng.standard_normal((rows, cols), dtype=np.float32)
        d_in = cp.asarray(host)
        nbytes = 2 * host.nbytes
        d2d = cp.empty_like(d_in)

        def memcpy(d_in=d_in, d2d=d2d):
            d2d.data.copy_from_device(d_in.data, d_in.nbytes)

        line = {"cudaMemcpy D2D": time_ms(memcpy, repeat=args.repeat)}
        for name in KERNELS:
            out_shape = (rows, cols) if name == "copy" else (cols, rows)
            d_out = cp.full(out_shape, np.nan, dtype=cp.float32)  # poison: every element written?
            grid, block = launch_shape(name, rows, cols)
            args_ = (d_in, d_out, np.int32(rows), np.int32(cols))

            def run(f=k[name], grid=grid, block=block, args_=args_):
                f(grid, block, args_)

            run()
            expect = host if name == "copy" else host.T
            ok = bool(np.array_equal(d_out.get(), expect))
            line[name] = time_ms(run, repeat=args.repeat)
            if not ok:
                print(f"WRONG: {name} at {rows}x{cols}")
            line[name + " ok"] = ok
        for name in ["cudaMemcpy D2D", *KERNELS]:
            ms = line[name]
            gbs = nbytes / ms / 1e6
            rows_out.append([f"{rows}x{cols}", name, line.get(name + " ok", "-"), f"{ms:.4f}",
                             f"{gbs:.0f}", f"{100 * line['copy'] / ms:.1f}%"])
        ratio[(rows, cols)] = line["copy"] / line["transpose_padded"]
    print(markdown_table(["shape", "kernel", "matches NumPy", "ms", "GB/s", "of copy kernel"],
                         rows_out))
    if (8192, 8192) in ratio:
        print(f"\ngoal: transpose_padded / copy at 8192x8192 = {ratio[(8192, 8192)]:.3f} (>= 0.90)")


if __name__ == "__main__":
    main()
