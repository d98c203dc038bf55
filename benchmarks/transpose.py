"""Lab 11 on the GPU: every transpose kernel checked against NumPy and timed with events.

Run where there is a CUDA GPU, nvcc and CuPy (the H100 test machine)::

    python -m benchmarks.transpose

Effective bandwidth counts each matrix element read once and written once (8 bytes per
float32 element). The ceilings are ``cudaMemcpy`` device to device and the lab's ``copy_vec4``
(a flat float4 copy); ``copy`` is the copy with the transposes' own 32 x 32 tiles. The goals:
``copy_vec4`` >= 95 % of ``cudaMemcpy`` and ``transpose`` (the lab's host function:
``transpose_wide``, or a copy for 1 x N and N x 1) >= 90 % of ``copy_vec4`` at every shape.

>>> launch_shape("transpose_vec4", rows=100, cols=70)
((3, 4), (8, 32))
>>> launch_shape("transpose_wide", rows=100, cols=70)
((2, 2), (64, 16))
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from .common import build_kernels, environment_line, markdown_table, time_ms

TILE, BLOCK_ROWS = 32, 8  # must match the lab's #defines
WIDE, WIDE_ROWS = 64, 16
NOTEBOOK = "11_transpose.ipynb"
KERNELS = ["copy", "copy_vec4", "transpose_naive", "transpose_tiled", "transpose_padded",
           "transpose_vec4", "transpose_wide"]
THIN = 1 << 24
SHAPES = [(8192, 8192), (4096, 4096), (8192, 2048), (2048, 8192), (4097, 3001), (3001, 4097),
          (1, THIN), (THIN, 1)]
MAX_GRID_Y = 65535


def launch_shape(kernel: str, rows: int, cols: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Grid and block of ``kernel`` for a rows x cols input."""
    if kernel == "copy_vec4":
        return (rows * cols // 4 // 256 + 1,), (256,)
    if kernel == "transpose_wide":
        return (math.ceil(cols / WIDE), math.ceil(rows / WIDE)), (WIDE, WIDE_ROWS)
    grid = (math.ceil(cols / TILE), math.ceil(rows / TILE))
    block = (TILE // 4, TILE) if kernel == "transpose_vec4" else (TILE, BLOCK_ROWS)
    return grid, block


def transpose_kernel(rows: int, cols: int) -> str:
    """What the lab's ``transpose`` runs: a copy for 1 x N and N x 1 (same bytes)."""
    return "copy_vec4" if rows == 1 or cols == 1 else "transpose_wide"


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
    print("times: median of CUDA-event samples, each with a head start (benchmarks/common.py)")
    rows_out, goals = [], []
    for rows, cols in shapes:
        host = rng.standard_normal((rows, cols), dtype=np.float32)
        d_in = cp.asarray(host)
        nbytes = 2 * host.nbytes
        d2d = cp.empty_like(d_in)

        def memcpy(d_in=d_in, d2d=d2d):
            d2d.data.copy_from_device(d_in.data, d_in.nbytes)

        line = {"cudaMemcpy D2D": time_ms(memcpy, repeat=args.repeat)}
        names = [*KERNELS, "transpose"]
        for name in names:
            kernel = transpose_kernel(rows, cols) if name == "transpose" else name
            grid, block = launch_shape(kernel, rows, cols)
            if len(grid) > 1 and grid[1] > MAX_GRID_Y:
                continue  # a tiled grid of an N x 1 matrix is taller than the hardware allows
            flip = name not in ("copy", "copy_vec4")
            d_out = cp.full((cols, rows) if flip else (rows, cols), np.nan, dtype=cp.float32)
            args_ = (d_in, d_out, np.int32(rows), np.int32(cols))

            def run(f=k[kernel], grid=grid, block=block, args_=args_):
                f(grid, block, args_)

            run()
            ok = bool(np.array_equal(d_out.get(), host.T if flip else host))
            line[name] = time_ms(run, repeat=args.repeat)
            line[name + " ok"] = ok
            if not ok:
                print(f"WRONG: {name} at {rows}x{cols}")
        for name in ["cudaMemcpy D2D", *names]:
            if name not in line:
                continue
            ms = line[name]
            rows_out.append([f"{rows}x{cols}", name, line.get(name + " ok", "-"), f"{ms:.4f}",
                             f"{nbytes / ms / 1e6:.0f}", f"{100 * line['copy_vec4'] / ms:.1f}%",
                             f"{100 * line['copy'] / ms:.1f}%" if "copy" in line else "-"])
        goals.append((f"{rows}x{cols}", line["cudaMemcpy D2D"] / line["copy_vec4"],
                      line["copy_vec4"] / line["transpose"],
                      line["copy"] / line["transpose"] if "copy" in line else float("nan")))
        del d_in, d2d
    print(markdown_table(["shape", "kernel", "matches NumPy", "ms", "GB/s", "of copy_vec4",
                          "of copy (32x32 tiles)"], rows_out))
    print("\ngoals: copy_vec4 / cudaMemcpy >= 0.95; transpose / copy_vec4 >= 0.90")
    print(markdown_table(["shape", "copy_vec4 / cudaMemcpy", "transpose / copy_vec4",
                          "transpose / copy (32x32 tiles)"],
                         [[s, f"{a:.3f}", f"{b:.3f}", f"{c:.3f}"] for s, a, b, c in goals]))


if __name__ == "__main__":
    main()
