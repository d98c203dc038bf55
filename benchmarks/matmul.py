"""Lab 12 on the GPU: every SGEMM kernel checked against NumPy float64 and timed with events.

Run where there is a CUDA GPU, nvcc and CuPy (the H100 test machine)::

    python -m benchmarks.matmul

cuBLAS SGEMM through CuPy is the reference, in true FP32 (``CUPY_TF32=0``: no TensorFloat-32).
The goal is the best kernel >= 60% of cuBLAS at 4096 x 4096 x 4096.

>>> relative_error(np.ones((2, 2)), np.ones((2, 2)))
0.0
"""

from __future__ import annotations

import argparse
import math
import os

import numpy as np

from .common import build_kernels, environment_line, markdown_table, relative_error, time_ms

os.environ["CUPY_TF32"] = "0"  # before CuPy is imported: cuBLAS in plain FP32

BM = BN = 128  # block tile of the register-tiled kernels; must match the lab
TILE = 32  # block tile of matmul_naive / matmul_tiled
NOTEBOOK = "12_matmul.ipynb"
KERNELS = ["matmul_naive", "matmul_tiled", "matmul_regtile", "matmul_vec", "matmul_dbuf"]
SIZES = [(512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
         (1000, 1000, 1000), (1023, 777, 1029)]
TOLERANCE = 1e-4  # |C - C64| / |C64| (Frobenius): FP32 is ~1e-6, TF32 ~3e-4, wrong ~1


def launch_shape(kernel: str, m: int, n: int) -> tuple[tuple[int, int], tuple[int, ...]]:
    """Grid and block for an m x n result."""
    if kernel in ("matmul_naive", "matmul_tiled"):
        return (math.ceil(n / TILE), math.ceil(m / TILE)), (TILE, TILE)
    return (math.ceil(n / BN), math.ceil(m / BM)), (256,)


def main(argv: list[str] | None = None) -> None:
    import cupy as cp

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--kernels", nargs="*", default=KERNELS)
    parser.add_argument("--sizes", nargs="*", default=[f"{m}x{n}x{k}" for m, n, k in SIZES],
                        help="M x N x K of each problem, e.g. 4096x4096x4096")
    args = parser.parse_args(argv)
    k = build_kernels(NOTEBOOK, args.kernels)
    rng = np.random.default_rng(2026)
    print(environment_line())
    table, gflops = [], {}
    sizes = [tuple(int(v) for v in size.split("x")) for size in args.sizes]
    for m, n, kk in sizes:
        a = rng.uniform(-1, 1, (m, kk)).astype(np.float32)
        b = rng.uniform(-1, 1, (kk, n)).astype(np.float32)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        d_a, d_b = cp.asarray(a), cp.asarray(b)
        flop = 2.0 * m * n * kk
        d_c = cp.empty((m, n), dtype=cp.float32)

        def cublas(d_a=d_a, d_b=d_b, d_c=d_c):
            cp.matmul(d_a, d_b, out=d_c)

        runs = {"cuBLAS SGEMM": cublas}
        for name in args.kernels:
            grid, block = launch_shape(name, m, n)

            launch_args = (d_a, d_b, d_c, np.int32(m), np.int32(n), np.int32(kk))

            def run(f=k[name], grid=grid, block=block, launch_args=launch_args):
                f(grid, block, launch_args)

            runs[name] = run
        for name, fn in runs.items():
            d_c.fill(np.nan)  # poison: a skipped element fails the check
            fn()
            err = relative_error(d_c.get().astype(np.float64), ref)
            ok = err < TOLERANCE
            repeat = 3 if name == "matmul_naive" and m >= 4096 else args.repeat
            ms = time_ms(fn, warmup=2, repeat=repeat)
            gflops[(m, n, kk, name)] = flop / ms / 1e6
            table.append([f"{m}x{n}x{kk}", name, ok, f"{err:.1e}", f"{ms:.3f}",
                          f"{flop / ms / 1e6:.0f}"])
            if not ok:
                print(f"WRONG: {name} at {m}x{n}x{kk}: relative error {err:.2e}")
        cublas_rate = gflops[(m, n, kk, "cuBLAS SGEMM")]
        for row in table[-len(runs):]:
            row.append(f"{100 * gflops[(m, n, kk, row[1])] / cublas_rate:.1f}%")
    print(markdown_table(["M x N x K", "kernel", "ok", "rel. error", "ms", "GFLOP/s", "of cuBLAS"],
                         table))
    big = max(sizes)
    best = max(args.kernels, key=lambda name: gflops[(*big, name)])
    share = gflops[(*big, best)] / gflops[(*big, "cuBLAS SGEMM")]
    shape = "x".join(map(str, big))
    print(f"\ngoal: best ({best}) / cuBLAS FP32 at {shape} = {share:.3f} (>= 0.60, aim 0.80)")


if __name__ == "__main__":
    main()
