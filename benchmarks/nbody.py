"""N-body benchmark (labs/20_nbody.ipynb): correctness against NumPy float64, then H100 GFLOP/s.

Builds the lab's ``%%cuda`` cells with CuPy's NVRTC, checks every kernel against a float64
NumPy reference (accelerations, and a few leapfrog steps), then times the all-pairs kernels
for N from 1K to 256K with CUDA events, counting 20 flop per interaction.  The FP32 peak is
computed from the SM count and the maximum SM clock (132 SMs x 128 FP32 lanes x 2 flop per
FMA on an H100 SXM).  Run on the device machine:

    python -m benchmarks.nbody --out results/

>>> pos = np.array([[0.0, 0, 0], [1.0, 0, 0]]); m = np.array([1.0, 2.0])
>>> round(float(accelerations(pos, m, eps2=1e-12)[0, 0]), 6)  # towards body 1, G m = 2
2.0
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
from functools import partial
from pathlib import Path

import numpy as np

from benchmarks.common import (
    build_kernels,
    environment_line,
    markdown_table,
    relative_error,
    time_ms,
)

NOTEBOOK = "20_nbody.ipynb"
KERNELS = ("force1d_global", "force1d_register", "force1d_shared", "nbody_naive", "nbody_tiled",
           "nbody_unrolled", "nbody_pair", "nbody_split", "kick", "drift")
SASS_OPS = ("FFMA", "FADD", "FMUL", "MUFU", "LDS")  # the instructions of one interaction
FLOP_PER_PAIR = 20
EPS2 = np.float32(0.05 ** 2)


def accelerations(pos: np.ndarray, mass: np.ndarray, eps2: float) -> np.ndarray:
    """Softened gravitational accelerations (G = 1) in float64, all pairs."""
    d = pos[None, :, :] - pos[:, None, :]                    # d[i, j] = x_j - x_i
    r2 = (d ** 2).sum(-1) + eps2
    return (d * (mass[None, :] / r2 ** 1.5)[..., None]).sum(1)


def leapfrog_reference(pos, vel, mass, eps2, dt, steps):
    """Kick-drift-kick leapfrog in float64: the same scheme as the lab's kernels."""
    pos, vel = pos.astype(np.float64), vel.astype(np.float64)
    acc = accelerations(pos, mass, eps2)
    for _ in range(steps):
        vel = vel + 0.5 * dt * acc
        pos = pos + dt * vel
        acc = accelerations(pos, mass, eps2)
        vel = vel + 0.5 * dt * acc
    return pos, vel


def plummer_like(n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Random bodies in a unit ball, equal masses summing to 1, as (n, 4) float32 x,y,z,m."""
    direction = rng.normal(size=(n, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    pos = direction * rng.random((n, 1)) ** (1 / 3)
    vel = 0.1 * rng.normal(size=(n, 3))
    vel -= vel.mean(0)
    body = np.hstack([pos, np.full((n, 1), 1.0 / n)]).astype(np.float32)
    return body, np.hstack([vel, np.zeros((n, 1))]).astype(np.float32)


def fp32_peak_gflops() -> tuple[float, str]:
    """Peak FP32 GFLOP/s from SM count x 128 lanes x 2 flop x max SM clock (nvidia-smi)."""
    import cupy as cp

    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    mhz = float(subprocess.run(
        ["nvidia-smi", "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits"],
        capture_output=True, text=True, check=True).stdout.split()[0])
    return sms * 128 * 2 * mhz / 1e3, f"{sms} SMs x 128 lanes x 2 flop x {mhz:.0f} MHz"


def whole_wave_shares(blocks: int, wave: int) -> int:
    """Shares of the j range so that blocks x shares is a multiple of ``wave`` (at most 64).

    >>> whole_wave_shares(512, 132 * 4)   # 256K bodies on an H100: 33 shares, 32 full waves
    33
    """
    import math

    return min(64, wave // math.gcd(blocks, wave))


@functools.cache
def split_wave() -> int:
    """Blocks of ``nbody_split`` the GPU holds at once: SMs x resident blocks per SM.

    The blocks per SM come from cudakit's occupancy calculator with the registers ptxas gives
    the lab's cell (61 on sm_90: 4 blocks of 256 threads), as in the lab.
    """
    import cupy as cp

    import cudakit
    from benchmarks.common import cell_defining

    major, minor = cp.cuda.Device().compute_capability
    body, options = cell_defining(NOTEBOOK, "nbody_split")
    info = cudakit.compile(body, options, arch=f"sm_{major}{minor}").kernels["nbody_split"]
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    return sms * cudakit.occupancy.calculate(info, 256).active_blocks_per_sm


def launch(k, name: str, bodies, acc, n: int, block: int = 256) -> None:
    """One all-pairs evaluation with kernel ``name``.

    ``bodies`` and ``acc`` are (n, 4) device arrays, or for ``nbody_naive`` tuples of the
    x, y, z, m (in) and x, y, z (out) columns. ``nbody_split`` adds into ``acc``, which is
    zeroed first (inside the timed region, as in the lab).
    """
    grid = (-(-n // block),)
    if name == "nbody_naive":                      # structure of arrays: 4 in, 3 out
        k[name](grid, (block,), (*bodies, *acc, np.int32(n), EPS2))
    elif name == "nbody_tiled":
        k[name](grid, (block,), (bodies, acc, np.int32(n), EPS2), shared_mem=16 * block)
    elif name == "nbody_pair":                     # two bodies per thread
        k[name]((-(-n // 512),), (256,), (bodies, acc, np.int32(n), EPS2))
    elif name == "nbody_split":                    # two per thread, j range over gridDim.y
        blocks = -(-n // 512)
        acc.fill(0)
        k[name]((blocks, whole_wave_shares(blocks, split_wave())), (256,),
                (bodies, acc, np.int32(n), EPS2))
    else:
        k[name]((-(-n // 256),), (256,), (bodies, acc, np.int32(n), EPS2))


def check(k, rng) -> list[list]:
    import cupy as cp

    rows = []
    n = 1000
    x = rng.random(n, dtype=np.float32)
    ref = x.sum(dtype=np.float64) - n * x.astype(np.float64)
    for name, shared in (("force1d_global", 0), ("force1d_register", 0),
                         ("force1d_shared", 128 * 4)):
        f = cp.zeros(n, dtype=np.float32)
        k[name]((-(-n // 128),), (128,), (cp.asarray(x), f, np.int32(n)), shared_mem=shared)
        rows.append([name, n, relative_error(f.get(), ref)])

    n = 1500
    body, vel = plummer_like(n, rng)
    ref = accelerations(body[:, :3].astype(np.float64), body[:, 3].astype(np.float64), EPS2)
    d_body = cp.asarray(body)
    soa = tuple(cp.asarray(body[:, c].copy()) for c in range(4))
    acc3 = tuple(cp.full(n, np.nan, dtype=np.float32) for _ in range(3))
    launch(k, "nbody_naive", soa, acc3, n)
    rows.append(["nbody_naive", n, relative_error(np.stack([a.get() for a in acc3], 1), ref)])
    for name in ("nbody_tiled", "nbody_unrolled", "nbody_pair", "nbody_split"):
        acc = cp.full((n, 4), np.nan, dtype=np.float32)
        launch(k, name, d_body, acc, n)
        rows.append([name, n, relative_error(acc.get()[:, :3], ref)])

    n, steps, dt = 512, 20, 1e-3
    body, vel = plummer_like(n, rng)
    mass = body[:, 3].astype(np.float64)
    ref_pos, ref_vel = leapfrog_reference(body[:, :3], vel[:, :3], mass, EPS2, dt, steps)
    d_body, d_vel = cp.asarray(body), cp.asarray(vel)
    acc = cp.empty((n, 4), dtype=np.float32)
    grid = (-(-n // 256),)
    launch(k, "nbody_unrolled", d_body, acc, n)
    for _ in range(steps):
        k["kick"](grid, (256,), (d_vel, acc, np.int32(n), np.float32(dt / 2)))
        k["drift"](grid, (256,), (d_body, d_vel, np.int32(n), np.float32(dt)))
        launch(k, "nbody_unrolled", d_body, acc, n)
        k["kick"](grid, (256,), (d_vel, acc, np.int32(n), np.float32(dt / 2)))
    rows.append([f"leapfrog {steps} steps (positions)", n,
                 relative_error(d_body.get()[:, :3], ref_pos)])
    rows.append([f"leapfrog {steps} steps (velocities)", n,
                 relative_error(d_vel.get()[:, :3], ref_vel)])
    return rows


def time_all(k, sizes, rng) -> list[dict]:
    import cupy as cp

    results = []
    for n in sizes:
        body, _ = plummer_like(n, rng)
        d_body = cp.asarray(body)
        soa = tuple(cp.asarray(body[:, c].copy()) for c in range(4))
        acc = cp.empty((n, 4), dtype=np.float32)
        acc3 = tuple(cp.empty(n, dtype=np.float32) for _ in range(3))
        repeat = 5 if n >= 1 << 17 else 20
        runs = [("nbody_naive", partial(launch, k, "nbody_naive", soa, acc3, n))]
        runs += [(f"nbody_tiled b={b}", partial(launch, k, "nbody_tiled", d_body, acc, n, b))
                 for b in (128, 256, 512)]
        runs += [(name, partial(launch, k, name, d_body, acc, n))
                 for name in ("nbody_unrolled", "nbody_pair", "nbody_split")]
        for name, fn in runs:
            ms = time_ms(fn, warmup=2, repeat=repeat)
            results.append({"kernel": name, "n": n, "ms": ms,
                            "gflops": FLOP_PER_PAIR * n * n / ms / 1e6})
    return results


def sass_per_interaction() -> dict[str, float] | None:
    """Instructions per interaction of ``nbody_unrolled`` from ``cuobjdump -sass`` (None: no tool).

    The unrolled loop body holds 32 interactions (``#pragma unroll 32``), so whole-kernel counts
    of the interaction's instructions divided by 32 are per interaction.
    """
    import re
    import shutil
    import tempfile
    from collections import Counter

    from benchmarks.common import cell_defining

    if not (shutil.which("cuobjdump") and shutil.which("nvcc")):
        return None
    body, options = cell_defining(NOTEBOOK, "nbody_unrolled")
    with tempfile.TemporaryDirectory() as tmp:
        cu, cubin = Path(tmp) / "nbody.cu", Path(tmp) / "nbody.cubin"
        cu.write_text(body)
        subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-O3", *options, "-o", str(cubin),
                        str(cu)], check=True)
        sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True,
                              check=True).stdout
    ops = Counter(re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?P\w+\s+)?([A-Z][A-Z0-9]*)", sass))
    return {op: ops[op] / 32 for op in SASS_OPS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("."))
    opts = parser.parse_args()
    rng = np.random.default_rng(20)
    k = build_kernels(NOTEBOOK, list(KERNELS))
    print(environment_line())
    peak, how = fp32_peak_gflops()
    print(f"FP32 peak (computed): {peak:.0f} GFLOP/s = {how}")
    checks = check(k, rng)
    print(markdown_table(["kernel", "N", "rel. error vs NumPy float64"],
                         [[a, b, f"{e:.1e}"] for a, b, e in checks]))
    sizes = [1 << p for p in (10, 12, 14, 16, 17, 18)]
    results = time_all(k, sizes, rng)
    rows = [[r["kernel"], r["n"], f"{r['ms']:.3f}", f"{r['gflops']:.0f}",
             f"{r['gflops'] / peak:.1%}"] for r in results]
    print(markdown_table(["kernel", "N", "ms", "GFLOP/s (20/pair)", "of FP32 peak"], rows))
    counts = sass_per_interaction()
    best = max((r for r in results if r["n"] == sizes[-1]), key=lambda r: r["gflops"])
    if counts:
        bound = FLOP_PER_PAIR / (2 * sum(counts.values()))
        print(f"\nSASS per interaction (nbody_unrolled): {counts}; issue bound {bound:.1%} of peak")
        print(f"goal: best ({best['kernel']}) at N = {sizes[-1]}: {best['gflops'] / peak:.1%} of "
              f"FP32 peak (>= 65%), {best['gflops'] / peak / bound:.0%} of nbody_unrolled's bound")
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "nbody.json").write_text(json.dumps(
        {"env": environment_line(), "peak_gflops": peak, "peak_how": how, "checks": checks,
         "results": results, "sass_per_interaction": counts}, indent=1))
    bad = [r for r in checks if not r[2] < 1e-4]
    if bad:
        raise SystemExit(f"wrong results: {bad}")


if __name__ == "__main__":
    main()
