"""Stencil benchmark (labs/21_stencil.ipynb): correctness against NumPy, then H100 timings.

Builds every kernel of the lab's ``%%cuda`` cells with CuPy's NVRTC, checks each against a
NumPy reference on odd-sized grids, then times them with CUDA events at full size: the copy
ceiling, the single-step 2D and 3D kernels, and the temporally blocked 2D kernel over its
time-block depth and window size.  Run on the device machine:

    python -m benchmarks.stencil --out results/

>>> import numpy as np
>>> u = np.arange(16, dtype=np.float64).reshape(4, 4)
>>> float(heat2d_reference(u, 0.5, 0.125, steps=1)[1, 1])  # 0.5*5 + 0.125*(1+9+4+6)
5.0
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks.common import (
    build_kernels,
    environment_line,
    lab_constant,
    markdown_table,
    relative_error,
    time_ms,
)

NOTEBOOK = "21_stencil.ipynb"
KERNELS = ("average3", "average3_shared", "heat2d", "heat2d_shared", "heat2d_rows", "heat2d_vec4",
           "heat3d", "heat3d_stream", "heat3d_vec4", "heat2d_temporal", "copy4")
C0, C1 = 0.6, 0.1          # c0 + 4 c1 = 1: a stable explicit heat step
FLOP_2D, FLOP_3D = 6, 8    # flop per updated point
BYTES_PER_POINT = 8        # one float read, one written, per sweep


def heat2d_reference(u: np.ndarray, c0: float, c1: float, steps: int) -> np.ndarray:
    """``steps`` Jacobi steps of the 2D 5-point heat stencil; the border stays fixed."""
    u = np.array(u, dtype=np.float64)
    for _ in range(steps):
        v = u.copy()
        v[1:-1, 1:-1] = c0 * u[1:-1, 1:-1] + c1 * (u[:-2, 1:-1] + u[2:, 1:-1]
                                                   + u[1:-1, :-2] + u[1:-1, 2:])
        u = v
    return u


def heat3d_reference(u: np.ndarray, c0: float, c1: float) -> np.ndarray:
    """One Jacobi step of the 3D 7-point heat stencil (array indexed [z, y, x])."""
    u = np.asarray(u, dtype=np.float64)
    v = u.copy()
    c = (slice(1, -1),) * 3
    v[c] = c0 * u[c] + c1 * (u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] + u[1:-1, :-2, 1:-1]
                             + u[1:-1, 2:, 1:-1] + u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:])
    return v


def rows_launch(k, u, v, nx, ny, width=256):
    """Launch ``heat2d_rows``: blocks of ``width`` threads, each thread a column of H2_ROWS."""
    rows = lab_constant(NOTEBOOK, "H2_ROWS")
    k((-(-nx // width), -(-(ny - 2) // rows)), (width, 1),
      (u, v, np.int32(nx), np.int32(ny), np.float32(C0), np.float32(C1)))


def vec4_launch(k, u, v, nx, ny, width=32):
    """Launch ``heat2d_vec4`` (nx % 4 == 0): each thread a float4 column of V4_ROWS rows."""
    rows = lab_constant(NOTEBOOK, "V4_ROWS")
    k((-(-nx // 4 // width), -(-(ny - 2) // rows)), (width, 1),
      (u, v, np.int32(nx), np.int32(ny), np.float32(C0), np.float32(C1)))


def copy_launch(k, u, v, n4: int):
    """Launch the lab's ``copy4``: one float4 per thread."""
    k((-(-n4 // 1024),), (1024,), (u, v, np.uint64(n4)))


def grid2(nx: int, ny: int, block: tuple[int, int]) -> tuple[int, int]:
    return (-(-nx // block[0]), -(-ny // block[1]))


def temporal_launch(k, u, v, nx, ny, wx, wy, depth, block=(32, 8)):
    """Launch ``heat2d_temporal``: one pass that advances ``depth`` steps."""
    tx, ty = wx - 2 * depth, wy - 2 * depth
    grid = (-(-nx // tx), -(-ny // ty))
    shared = 2 * wx * wy * 4
    k.max_dynamic_shared_size_bytes = shared
    k(grid, block, (u, v, np.int32(nx), np.int32(ny), np.float32(C0), np.float32(C1),
                    np.int32(wx), np.int32(wy), np.int32(depth)), shared_mem=shared)


def step_row(name: str, steps, ms: float, sweep: int, flop: int) -> list:
    """A table row: kernel, steps per pass, ms per step, effective GB/s, GFLOP/s."""
    return [name, str(steps), f"{ms:.3f}", f"{sweep / ms / 1e6:.0f}", f"{flop / ms / 1e6:.0f}"]


def check(k, rng) -> list[list]:
    """Every kernel against NumPy on grids whose sizes divide by no block size."""
    import cupy as cp

    rows = []

    n = 1001
    a = rng.random(n, dtype=np.float32)
    ref = a.astype(np.float64)
    ref[1:-1] = (ref[:-2] + ref[1:-1] + ref[2:]) / 3
    for name, block in (("average3", 256), ("average3_shared", 128)):
        d_in, d_out = cp.asarray(a), cp.asarray(a)
        k[name]((-(-n // block),), (block,), (d_in, d_out, np.int32(n)))
        rows.append([name, f"{n}", relative_error(d_out.get(), ref)])

    ny, nx = 333, 517
    u = rng.random((ny, nx), dtype=np.float32)
    ref1 = heat2d_reference(u, C0, C1, 1)
    for name, block in (("heat2d", (32, 8)), ("heat2d_shared", (32, 8))):
        d_in, d_out = cp.asarray(u), cp.asarray(u)
        k[name](grid2(nx, ny, block), block,
                (d_in, d_out, np.int32(nx), np.int32(ny), np.float32(C0), np.float32(C1)))
        rows.append([name, f"{ny}x{nx}", relative_error(d_out.get(), ref1)])
    d_in, d_out = cp.asarray(u), cp.asarray(u)
    rows_launch(k["heat2d_rows"], d_in, d_out, nx, ny, width=128)
    rows.append(["heat2d_rows", f"{ny}x{nx}", relative_error(d_out.get(), ref1)])
    u4 = np.ascontiguousarray(u[:, :nx // 4 * 4])
    d_in, d_out = cp.asarray(u4), cp.asarray(u4)
    vec4_launch(k["heat2d_vec4"], d_in, d_out, u4.shape[1], ny)
    rows.append(["heat2d_vec4", f"{ny}x{u4.shape[1]}",
                 relative_error(d_out.get(), heat2d_reference(u4, C0, C1, 1))])

    steps = 12
    ref = heat2d_reference(u, C0, C1, steps)
    for wx, wy, depth, block in ((64, 32, 1, (32, 8)), (64, 32, 3, (64, 8)), (128, 32, 4, (32, 8)),
                                 (96, 48, 6, (128, 4)), (64, 64, 12, (32, 8)),
                                 (128, 96, 12, (64, 8))):
        d_in, d_out = cp.asarray(u), cp.asarray(u)
        for _ in range(steps // depth):
            temporal_launch(k["heat2d_temporal"], d_in, d_out, nx, ny, wx, wy, depth, block)
            d_in, d_out = d_out, d_in
        rows.append([f"heat2d_temporal w={wx}x{wy} k={depth} b={block[0]}x{block[1]}",
                     f"{ny}x{nx}, {steps} steps", relative_error(d_in.get(), ref)])

    nz, ny3, nx3 = 37, 45, 70
    u3 = rng.random((nz, ny3, nx3), dtype=np.float32)
    ref3 = heat3d_reference(u3, C0 - 2 * C1, C1)
    dims = (np.int32(nx3), np.int32(ny3), np.int32(nz), np.float32(C0 - 2 * C1), np.float32(C1))
    d_in, d_out = cp.asarray(u3), cp.asarray(u3)
    k["heat3d"]((-(-nx3 // 32), -(-ny3 // 4), -(-nz // 2)), (32, 4, 2), (d_in, d_out, *dims))
    rows.append(["heat3d", f"{nz}x{ny3}x{nx3}", relative_error(d_out.get(), ref3)])
    for slabs in (1, 3, 40):
        d_in, d_out = cp.asarray(u3), cp.asarray(u3)
        k["heat3d_stream"]((*grid2(nx3, ny3, (32, 8)), slabs), (32, 8), (d_in, d_out, *dims))
        rows.append([f"heat3d_stream, {slabs} slabs", f"{nz}x{ny3}x{nx3}",
                     relative_error(d_out.get(), ref3)])
    nx4 = nx3 // 4 * 4
    u4 = np.ascontiguousarray(u3[:, :, :nx4])
    ref4 = heat3d_reference(u4, C0 - 2 * C1, C1)
    dims4 = (np.int32(nx4), *dims[1:])
    for block, slabs in (((32, 1), 1), ((32, 1), 5), ((16, 4), 64)):
        d_in, d_out = cp.asarray(u4), cp.asarray(u4)
        k["heat3d_vec4"]((-(-nx4 // 4 // block[0]), -(-ny3 // block[1]), slabs), (*block, 1),
                         (d_in, d_out, *dims4))
        rows.append([f"heat3d_vec4 {block[0]}x{block[1]}, {slabs} slabs", f"{nz}x{ny3}x{nx4}",
                     relative_error(d_out.get(), ref4)])
    return rows


def time_2d(k, n: int, rng) -> tuple[list[list], dict]:
    """Single-step and temporally blocked 2D kernels on an n x n grid."""
    import cupy as cp

    u = cp.asarray(rng.random((n, n), dtype=np.float32))
    v = u.copy()
    sweep = BYTES_PER_POINT * n * n
    rows, data = [], {"n": n, "temporal": []}

    n4 = n * n // 4
    copy_ms = time_ms(lambda: copy_launch(k["copy4"], u, v, n4))
    data["copy_gbs"] = sweep / copy_ms / 1e6
    rows.append(["copy4 (ceiling)", "-", f"{copy_ms:.3f}", f"{data['copy_gbs']:.0f}", "-"])
    memcpy_ms = time_ms(lambda: v.data.copy_from_device(u.data, u.nbytes))
    data["memcpy_gbs"] = sweep / memcpy_ms / 1e6
    rows.append(["cudaMemcpy DtoD", "-", f"{memcpy_ms:.3f}", f"{data['memcpy_gbs']:.0f}", "-"])

    args = (u, v, np.int32(n), np.int32(n), np.float32(C0), np.float32(C1))
    single = {f"heat2d {b[0]}x{b[1]}": lambda b=b: k["heat2d"](grid2(n, n, b), b, args)
              for b in ((32, 4), (32, 8), (64, 4), (128, 2), (128, 4), (256, 1))}
    single["heat2d_shared 32x8"] = lambda: k["heat2d_shared"](grid2(n, n, (32, 8)), (32, 8), args)
    single |= {f"heat2d_rows {w}x1": lambda w=w: rows_launch(k["heat2d_rows"], u, v, n, n, w)
               for w in (128, 256, 512)}
    single |= {f"heat2d_vec4 {w}x1": lambda w=w: vec4_launch(k["heat2d_vec4"], u, v, n, n, w)
               for w in (32, 64, 128)}
    single_ms = {name: time_ms(launch) for name, launch in single.items()}
    rows += [step_row(name, 1, ms, sweep, FLOP_2D * n * n) for name, ms in single_ms.items()]
    data["single_step_ms"] = min(single_ms.values())

    for wx, wy in ((64, 32), (64, 64), (128, 32), (128, 64), (128, 96), (256, 32)):
        for depth in (1, 2, 3, 4, 6, 8, 12):
            if wx - 2 * depth < 8 or wy - 2 * depth < 8:
                continue
            for block in ((32, 8), (64, 8), (128, 4)):
                ms = time_ms(lambda w=(wx, wy, depth), b=block: temporal_launch(
                    k["heat2d_temporal"], u, v, n, n, *w, block=b), repeat=10)
                per_step = ms / depth
                data["temporal"].append({"wx": wx, "wy": wy, "depth": depth, "block": block,
                                         "ms_per_step": per_step})
    top = sorted(data["temporal"], key=lambda r: r["ms_per_step"])[:6]
    for r in top:
        rows.append(step_row(
            f"heat2d_temporal w={r['wx']}x{r['wy']} b={r['block'][0]}x{r['block'][1]}",
            r["depth"], r["ms_per_step"], sweep, FLOP_2D * n * n))
    data["temporal_best_ms"] = top[0]["ms_per_step"]
    return rows, data


def time_3d(k, n: int, rng) -> tuple[list[list], dict]:
    """3D naive and register-streaming kernels on an n^3 grid."""
    import cupy as cp

    u = cp.asarray(rng.random((n, n, n), dtype=np.float32))
    v = u.copy()
    sweep = BYTES_PER_POINT * n ** 3
    rows, data = [], {"n": n}
    n4 = n ** 3 // 4
    copy_ms = time_ms(lambda: copy_launch(k["copy4"], u, v, n4))
    data["copy_gbs"] = sweep / copy_ms / 1e6
    rows.append(["copy4 (ceiling)", "-", f"{copy_ms:.3f}", f"{data['copy_gbs']:.0f}", "-"])
    args = (u, v, np.int32(n), np.int32(n), np.int32(n), np.float32(C0 - 2 * C1), np.float32(C1))
    for block in ((32, 4, 2), (32, 8, 1), (64, 4, 1), (128, 2, 1)):
        grid = tuple(-(-n // b) for b in block)
        ms = time_ms(lambda g=grid, b=block: k["heat3d"](g, b, args))
        rows.append(step_row(f"heat3d {'x'.join(map(str, block))}", 1, ms, sweep,
                             FLOP_3D * n ** 3))
    data["naive_ms"] = min(time_ms(lambda g=tuple(-(-n // b) for b in block), b=block:
                                   k["heat3d"](g, b, args)) for block in ((128, 2, 1),))
    for slabs in (1, 4, 8, 16, 32):
        grid = (*grid2(n, n, (32, 8)), slabs)
        ms = time_ms(lambda g=grid: k["heat3d_stream"](g, (32, 8), args))
        rows.append(step_row(f"heat3d_stream 32x8, {slabs} z-slabs", 1, ms, sweep,
                             FLOP_3D * n ** 3))
    vec4 = {}
    for block in ((32, 1), (64, 1), (32, 2)):
        for slabs in (16, 32, 64):
            grid = (-(-n // 4 // block[0]), -(-n // block[1]), slabs)
            vec4[(block, slabs)] = time_ms(lambda g=grid, b=block: k["heat3d_vec4"](g, (*b, 1),
                                                                                     args))
            rows.append(step_row(f"heat3d_vec4 {block[0]}x{block[1]}, {slabs} z-slabs", 1,
                                 vec4[(block, slabs)], sweep, FLOP_3D * n ** 3))
    data["vec4_best_ms"] = min(vec4.values())
    data["copy_ms"] = copy_ms
    return rows, data


def profile_runs(k, n: int, rng) -> None:
    """Each 2D kernel twice at full size, untimed: the workload for ``ncu``."""
    import cupy as cp

    u = cp.asarray(rng.random((n, n), dtype=np.float32))
    v = u.copy()
    args = (u, v, np.int32(n), np.int32(n), np.float32(C0), np.float32(C1))
    for _ in range(2):
        copy_launch(k["copy4"], u, v, n * n // 4)
        k["heat2d"](grid2(n, n, (128, 2)), (128, 2), args)
        rows_launch(k["heat2d_rows"], u, v, n, n)
        vec4_launch(k["heat2d_vec4"], u, v, n, n)
        temporal_launch(k["heat2d_temporal"], u, v, n, n, 128, 96, 12, block=(64, 8))
    cp.cuda.Device().synchronize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--n2d", type=int, default=8192)
    parser.add_argument("--n3d", type=int, default=512)
    parser.add_argument("--profile", action="store_true", help="only run the 2D kernels, for ncu")
    opts = parser.parse_args()
    rng = np.random.default_rng(8)
    k = build_kernels(NOTEBOOK, list(KERNELS))
    if opts.profile:
        return profile_runs(k, opts.n2d, rng)
    header = ["kernel", "steps/pass", "ms/step", "GB/s", "GFLOP/s"]
    print(environment_line())
    checks = check(k, rng)
    print(markdown_table(["kernel", "size", "rel. error vs NumPy"],
                         [[a, b, f"{e:.1e}"] for a, b, e in checks]))
    bad = [r for r in checks if not r[2] < 1e-5]
    rows2, data2 = time_2d(k, opts.n2d, rng)
    rows3, data3 = time_3d(k, opts.n3d, rng)
    print(f"\n2D {opts.n2d}^2, float32\n" + markdown_table(header, rows2))
    print(f"\n3D {opts.n3d}^3, float32\n" + markdown_table(header, rows3))
    single_gbs = BYTES_PER_POINT * opts.n2d ** 2 / data2["single_step_ms"] / 1e6
    ceiling = max(data2["copy_gbs"], data2["memcpy_gbs"])
    speedup = data2["single_step_ms"] / data2["temporal_best_ms"]
    print(f"\nbest single step: {single_gbs:.0f} GB/s = {single_gbs / data2['copy_gbs']:.1%} "
          f"of the copy kernel, {single_gbs / data2['memcpy_gbs']:.1%} of cudaMemcpy "
          f"(goal: >= 85% of the faster, {ceiling:.0f} GB/s);\n"
          f"temporal blocking: {speedup:.2f}x faster per step than the best single step "
          f"(goal: >= 1.5x)")
    best3 = data3["vec4_best_ms"]
    vec4_gbs = BYTES_PER_POINT * opts.n3d ** 3 / best3 / 1e6
    print(f"3D: best heat3d_vec4 {vec4_gbs:.0f} GB/s = {data3['copy_ms'] / best3:.1%} of the "
          f"copy kernel (goal >= 90%), {data3['naive_ms'] / best3:.2f}x the naive heat3d "
          f"128x2x1 (goal > 1)")
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "stencil.json").write_text(json.dumps(
        {"env": environment_line(), "checks": checks, "2d": data2, "3d": data3,
         "table2d": rows2, "table3d": rows3}, indent=1))
    if bad:
        raise SystemExit(f"wrong results: {bad}")


if __name__ == "__main__":
    main()
