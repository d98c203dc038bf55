"""The N-body candidates of ``kernels16/nbody2.cu`` on the emulator, against NumPy.

The sweep (``python -m benchmarks.sweep16 --only nbody``) needs CuPy and a GPU; this runs every
force-computing variant of ``NBODY_CONFIGS`` through ``cudakit.load`` on this machine's
engine at sizes that are no multiple of the tile (a partial last tile, idle threads, and for
the split variants j shares that end inside a tile or are empty) and checks the forces
against float64 NumPy (relative error < 1e-5), plus racecheck and memcheck on one launch of
each shared-tile variant. The "diag" rows compute wrong forces on purpose and are skipped::

    CUDAKIT_BACKEND=emu python -m benchmarks.nbody_emu
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import cudakit
from benchmarks.sweep16 import NBODY_BASE, NBODY_CONFIGS, nbody_source
from cudakit import cuda

EPS2 = np.float32(0.05 ** 2)


def bodies(n: int) -> tuple[np.ndarray, np.ndarray]:
    """n random bodies (x, y, z, mass) and their float64 accelerations."""
    rng = np.random.default_rng(n)
    body = rng.random((n, 4)).astype(np.float32)
    body[:, 3] = rng.uniform(0.5, 1.5, n) / n
    d = body[None, :, :3].astype(np.float64) - body[:, None, :3].astype(np.float64)
    r2 = (d ** 2).sum(-1) + float(EPS2)
    return body, (d * (body[None, :, 3] / r2 ** 1.5)[..., None]).sum(1)


def grid(cfg: dict, n: int, split: int) -> tuple[tuple[int, int], tuple[int]]:
    per_block = cfg["NB_T"] * cfg["NB_P"]
    return ((n + per_block - 1) // per_block, split), (cfg["NB_T"],)


def check(kernel, cfg: dict, n: int, split: int) -> float:
    """Relative error of one launch against float64 NumPy (NaN-filled output; zeros for the
    split variants, which add into it)."""
    body, ref = bodies(n)
    start = np.zeros((n, 4), np.float32) if cfg["NB_SPLIT"] else np.full((n, 4), np.nan, np.float32)
    d_acc = cuda.to_device(start)
    g, b = grid(cfg, n, split)
    kernel(cuda.to_device(body), d_acc, np.int32(n), EPS2, grid=g, block=b)
    cuda.memcpy_dtoh(start, d_acc)
    got = start[:, :3]
    if not np.isfinite(got).all():
        return float("inf")
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def sanitized(kernel, cfg: dict, n: int, split: int) -> list[str]:
    """What memcheck and racecheck find in one launch (empty: nothing)."""
    from cudakit.sanitizer import sanitize

    body, _ = bodies(n)
    g, b = grid(cfg, n, split)
    found = []
    for tool in ("memcheck", "racecheck"):
        report = sanitize(kernel, body.view("V16").ravel(), np.zeros(n, "V16"), np.int32(n), EPS2,
                          grid=g, block=b, tool=tool)
        found += [f"{tool}: {f.kind} at lines {f.lines}" for f in report.findings]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--names", nargs="*", help="only these NBODY_CONFIGS names")
    opts = parser.parse_args()
    bad = 0
    for name, defs, _ in NBODY_CONFIGS:
        cfg = NBODY_BASE | defs
        if cfg["NB_DIAG"] or (opts.names and name not in opts.names):
            continue
        source = 'extern "C" {\n' + nbody_source(name, defs) + "\n}\n"
        kernel = cudakit.load(source)[f"nbody_{name}"]
        tile = cfg["NB_T"] * cfg["NB_P"]
        for n, split in ((tile + 37, 1), (2 * tile + 5, 1)) + (((tile + 37, 3), (61, 7), (5, 9))
                                                               if cfg["NB_SPLIT"] else ()):
            t0 = time.time()
            err = check(kernel, cfg, n, split)
            bad += not err < 1e-5
            verdict = "ok" if err < 1e-5 else "WRONG"
            print(f"{name} n={n} split {split}: rel. error {err:.1e} {verdict}"
                  f" ({time.time() - t0:.1f} s)", flush=True)
        if cfg["NB_MODE"] != 2:
            found = sanitized(kernel, cfg, tile + 37, 3 if cfg["NB_SPLIT"] else 1)
            bad += bool(found)
            print(f"{name} memcheck, racecheck: {found or 'clean'}", flush=True)
    print("all correct" if not bad else f"{bad} WRONG")
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
