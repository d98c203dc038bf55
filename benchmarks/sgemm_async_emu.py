"""``sgemm_async`` (kernels16/sgemm_async.cu) on the emulator at small awkward sizes, against NumPy.

The sweep (``python -m benchmarks.sweep16 --only matmul``) needs CuPy and a GPU; this runs the
same variants (``ASYNC_CONFIGS``) through ``cudakit.load`` on this machine's engine and checks
each result against float64 NumPy: both copy paths (16-byte copies when K and N are multiples
of 4, 4-byte copies otherwise), partial tiles in M, N and K, fewer K steps than stages, and
split-K; and memcheck and racecheck on one launch of each copy path. The emulator performs
each ``cp.async`` at once, so it checks the indexing, the zero fill and the ring of buffers
(racecheck flags a missing ``__syncthreads``), not the waiting (a missing wait passes here)::

    CUDAKIT_BACKEND=emu python -m benchmarks.sgemm_async_emu
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import cudakit
from benchmarks.sweep16 import ASYNC_CONFIGS, async_name, async_source
from cudakit import cuda

# (M, N, K, split): odd and even edges; K = 20 and 36 give several K steps with and without a
# partial last one; K = 4 is fewer steps than stages; the last one has a split-K chunk that
# starts past K. The last three have blocks wholly inside A, B and C with whole K steps (the
# FAST path of 128 x 128 and 256 x 128 tiles) next to edge blocks, with split-K, and chunks
# that start past K on that path.
SHAPES = [(40, 36, 20, 1), (37, 33, 29, 1), (130, 132, 36, 1), (5, 7, 4, 1), (70, 68, 33, 3),
          (64, 128, 16, 5), (256, 260, 40, 1), (260, 256, 64, 3), (128, 128, 16, 5)]


def check(kernel, cfg, m: int, n: int, k: int, split: int) -> float:
    """Relative error of one launch against float64 NumPy (NaN-filled C unless split)."""
    bm, bn, _, tm = cfg[:4]
    rng = np.random.default_rng(m * n * k + split)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    start = np.zeros((m, n), np.float32) if split > 1 else np.full((m, n), np.nan, np.float32)
    d_c = cuda.gpuarray.to_gpu(start)
    kernel(cuda.gpuarray.to_gpu(a), cuda.gpuarray.to_gpu(b), d_c, m, n, k,
           grid=(-(-n // bn), -(-m // bm), split), block=((bm // tm) * (bn // 8),))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    c = d_c.get()
    return float(np.linalg.norm(c - ref) / np.linalg.norm(ref)) if np.isfinite(c).all() else np.inf


def sanitized(kernel, cfg, m: int, n: int, k: int) -> list[str]:
    """What memcheck and racecheck find in one launch (empty: nothing)."""
    from cudakit.sanitizer import sanitize

    bm, bn, _, tm = cfg[:4]
    rng = np.random.default_rng(m + n + k)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    found = []
    for tool in ("memcheck", "racecheck"):
        report = sanitize(kernel, a, b, np.zeros((m, n), np.float32), np.int32(m), np.int32(n),
                          np.int32(k), grid=(-(-n // bn), -(-m // bm), 1),
                          block=((bm // tm) * (bn // 8),), tool=tool)
        found += [f"{tool}: {f.kind} at lines {f.lines}" for f in report.findings]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", type=int, nargs="*", help="indices into ASYNC_CONFIGS")
    opts = parser.parse_args()
    bad = 0
    for i, cfg in enumerate(ASYNC_CONFIGS):
        if opts.configs and i not in opts.configs:
            continue
        kernel = cudakit.load('extern "C" {\n' + async_source(cfg) + "\n}\n")["sgemm_async"]
        for m, n, k, split in SHAPES:
            t0 = time.time()
            err = check(kernel, cfg, m, n, k, split)
            bad += not err < 1e-5
            print(f"{async_name(cfg)} {m}x{n}x{k} split{split}: rel. error {err:.1e} "
                  f"{'ok' if err < 1e-5 else 'WRONG'} ({time.time() - t0:.1f} s)", flush=True)
        for m, n, k in ((37, 33, 29), (40, 36, 20), (256, 260, 40)):
            found = sanitized(kernel, cfg, m, n, k)
            bad += bool(found)
            print(f"{async_name(cfg)} {m}x{n}x{k} memcheck, racecheck: {found or 'clean'}",
                  flush=True)
    print("all correct" if not bad else f"{bad} WRONG")
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
