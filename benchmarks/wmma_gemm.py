"""Tensor-core GEMMs timed on a GPU and predicted here: a check of ``cudakit.predict`` on
``wmma`` kernels, whose rates come from ``benchmarks/tensor_probe.py`` (not from these).

Three kernels of C = A B (A row-major M x K, B column-major K x N, C row-major, float
accumulators), each warp computing 16 x 16 tiles of C:

* ``gemm_wmma``: every warp reads its fragments of A and B from global memory (the L1 and
  L2 serve the re-reads), half precision;
* ``gemm_wmma_shared``: a block of 8 warps stages 128 x 32 tiles of A and B in shared
  memory, each warp computing 64 x 32 of C (4 x 2 fragments), half precision;
* ``gemm_wmma_tf32``: the first kernel in TF32 (float inputs, m16n16k8).

    python -m benchmarks.wmma_gemm --blind                        # here, before timing
    python -m benchmarks.wmma_gemm --record OUT.json [--held-out]  # on the GPU
    python -m benchmarks.wmma_gemm                                # here: stored, predicted

Held out (predicted by ``--blind`` before a second device call timed them):
``gemm_wmma_bf16_async`` (the shared-tile GEMM in bf16, its tiles double-buffered by
``cp.async``), ``gemm_dmma`` (doubles, DMMA, fragments from global memory) and ``gemm_imma``
(8-bit integers, IMMA, the same).

Written by hand: a benchmark.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from benchmarks.common import back_to_back_ms, gpu_line, open_text
from cudakit.analysis.analyze import Pointer

STORED = Path(__file__).parent / "fixtures" / "h200_wmma_gemm.json"
HELD_OUT_STORED = Path(__file__).parent / "fixtures" / "h200_wmma_gemm_held_out.json"
SIZES = (1024, 2048, 4096)

SOURCE = r"""
#include <mma.h>
#include <cuda_bf16.h>
#include <cuda_pipeline.h>
using namespace nvcuda;

// 4 x 4 warps per block, a 16 x 16 tile of C each
__global__ void gemm_wmma(const half *a, const half *b, float *c, int m, int n, int k)
{
    int wm = (blockIdx.y * blockDim.y + threadIdx.y) * 16;
    int wn = (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * 16;
    if (wm >= m || wn >= n) return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int i = 0; i < k; i += 16) {
        wmma::load_matrix_sync(fa, a + (size_t)wm * k + i, k);
        wmma::load_matrix_sync(fb, b + (size_t)wn * k + i, k);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + (size_t)wm * n + wn, acc, n, wmma::mem_row_major);
}

// 8 warps (2 x 4) per block, a 128 x 128 tile of C; each warp 64 x 32 (4 x 2 fragments)
#define BM 128
#define BN 128
#define BK 32
#define PAD 8
__global__ void gemm_wmma_shared(const half *a, const half *b, float *c, int m, int n, int k)
{
    __shared__ half sa[BM][BK + PAD];
    __shared__ half sb[BN][BK + PAD];
    int warp = threadIdx.x / 32, wy = warp / 4, wx = warp % 4;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    for (int kk = 0; kk < k; kk += BK) {
        for (int e = threadIdx.x; e < BM * BK / 8; e += blockDim.x) {  // 8 halves a thread
            int r = e / (BK / 8), q = (e % (BK / 8)) * 8;
            *(int4 *)&sa[r][q] = *(const int4 *)&a[(size_t)(row0 + r) * k + kk + q];
            *(int4 *)&sb[r][q] = *(const int4 *)&b[(size_t)(col0 + r) * k + kk + q];
        }
        __syncthreads();
        for (int s = 0; s < BK; s += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa[4];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb[2];
            for (int i = 0; i < 4; ++i)
                wmma::load_matrix_sync(fa[i], &sa[wy * 64 + i * 16][s], BK + PAD);
            for (int j = 0; j < 2; ++j)
                wmma::load_matrix_sync(fb[j], &sb[wx * 32 + j * 16][s], BK + PAD);
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(c + (size_t)(row0 + wy * 64 + i * 16) * n + col0 + wx * 32
                                    + j * 16, acc[i][j], n, wmma::mem_row_major);
}

__global__ void gemm_wmma_tf32(const float *a, const float *b, float *c, int m, int n, int k)
{
    int wm = (blockIdx.y * blockDim.y + threadIdx.y) * 16;
    int wn = (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * 16;
    if (wm >= m || wn >= n) return;
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int i = 0; i < k; i += 8) {
        wmma::load_matrix_sync(fa, a + (size_t)wm * k + i, k);
        wmma::load_matrix_sync(fb, b + (size_t)wn * k + i, k);
        for (int e = 0; e < fa.num_elements; ++e) fa.x[e] = wmma::__float_to_tf32(fa.x[e]);
        for (int e = 0; e < fb.num_elements; ++e) fb.x[e] = wmma::__float_to_tf32(fb.x[e]);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + (size_t)wm * n + wn, acc, n, wmma::mem_row_major);
}

// held out, predicted before they were timed: a double-buffered bf16 GEMM whose tiles arrive
// by cp.async, a DMMA GEMM in doubles and an 8-bit GEMM, both from global memory
#define BK2 32
__global__ void gemm_wmma_bf16_async(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *c,
                                     int m, int n, int k)
{
    __shared__ __nv_bfloat16 sa[2][BM][BK2 + PAD];
    __shared__ __nv_bfloat16 sb[2][BN][BK2 + PAD];
    int warp = threadIdx.x / 32, wy = warp / 4, wx = warp % 4;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    auto stage = [&](int buf, int kk) {
        for (int e = threadIdx.x; e < BM * BK2 / 8; e += blockDim.x) {
            int r = e / (BK2 / 8), q = (e % (BK2 / 8)) * 8;
            __pipeline_memcpy_async(&sa[buf][r][q], &a[(size_t)(row0 + r) * k + kk + q], 16);
            __pipeline_memcpy_async(&sb[buf][r][q], &b[(size_t)(col0 + r) * k + kk + q], 16);
        }
        __pipeline_commit();
    };
    stage(0, 0);
    for (int kk = 0, buf = 0; kk < k; kk += BK2, buf ^= 1) {
        if (kk + BK2 < k) stage(buf ^ 1, kk + BK2);
        else __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        for (int s = 0; s < BK2; s += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa[4];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb[2];
            for (int i = 0; i < 4; ++i)
                wmma::load_matrix_sync(fa[i], &sa[buf][wy * 64 + i * 16][s], BK2 + PAD);
            for (int j = 0; j < 2; ++j)
                wmma::load_matrix_sync(fb[j], &sb[buf][wx * 32 + j * 16][s], BK2 + PAD);
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(c + (size_t)(row0 + wy * 64 + i * 16) * n + col0 + wx * 32
                                    + j * 16, acc[i][j], n, wmma::mem_row_major);
}

// 4 x 4 warps per block, an 8 x 8 tile of C each
__global__ void gemm_dmma(const double *a, const double *b, double *c, int m, int n, int k)
{
    int wm = (blockIdx.y * blockDim.y + threadIdx.y) * 8;
    int wn = (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * 8;
    if (wm >= m || wn >= n) return;
    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc;
    wmma::fill_fragment(acc, 0.0);
    for (int i = 0; i < k; i += 4) {
        wmma::load_matrix_sync(fa, a + (size_t)wm * k + i, k);
        wmma::load_matrix_sync(fb, b + (size_t)wn * k + i, k);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + (size_t)wm * n + wn, acc, n, wmma::mem_row_major);
}

__global__ void gemm_imma(const signed char *a, const signed char *b, int *c, int m, int n,
                          int k)
{
    int wm = (blockIdx.y * blockDim.y + threadIdx.y) * 16;
    int wn = (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * 16;
    if (wm >= m || wn >= n) return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
    wmma::fill_fragment(acc, 0);
    for (int i = 0; i < k; i += 16) {
        wmma::load_matrix_sync(fa, a + (size_t)wm * k + i, k);
        wmma::load_matrix_sync(fb, b + (size_t)wn * k + i, k);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + (size_t)wm * n + wn, acc, n, wmma::mem_row_major);
}
"""
#: kernel: (input type, output type, block, grid of a size)
KERNELS = {
    "gemm_wmma": ("f16", np.float32, (128, 4, 1), lambda s: (s // 64, s // 64, 1)),
    "gemm_wmma_shared": ("f16", np.float32, (256, 1, 1), lambda s: (s // 128, s // 128, 1)),
    "gemm_wmma_tf32": ("f32", np.float32, (128, 4, 1), lambda s: (s // 64, s // 64, 1)),
}
#: predicted before they were timed (``BLIND``), and timed in a second device call
HELD_OUT = {
    "gemm_wmma_bf16_async": ("bf16", np.float32, (256, 1, 1),
                             lambda s: (s // 128, s // 128, 1)),
    "gemm_dmma": ("f64", np.float64, (128, 4, 1), lambda s: (s // 32, s // 32, 1)),
    "gemm_imma": ("s8", np.int32, (128, 4, 1), lambda s: (s // 64, s // 64, 1)),
}
BLIND = Path(__file__).parent / "fixtures" / "h200_wmma_gemm_blind.json"


def _inputs(size: int, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A (row-major) and B (column-major: row j is column j) as the kernel reads them, and
    their values in float64."""
    rng = np.random.default_rng(size)
    if kind == "s8":
        a, b = (rng.integers(-8, 8, (size, size)).astype(np.int8) for _ in range(2))
        return a, b, a.astype(np.float64), b.astype(np.float64)
    a, b = (rng.standard_normal((size, size)).astype(np.float32) for _ in range(2))
    if kind == "bf16":  # the upper halves of the float32s
        a, b = ((x.view(np.uint32) >> 16).astype(np.uint16) for x in (a, b))
        return a, b, *((x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
                       for x in (a, b))
    dtype = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[kind]
    a, b = a.astype(dtype), b.astype(dtype)
    return a, b, a.astype(np.float64), b.astype(np.float64)


def _suite(suite):
    """This module, or another laid out as it is (``benchmarks/mma_gemm.py``): its
    ``SOURCE``, ``KERNELS``, ``HELD_OUT``, ``STORED``, ``HELD_OUT_STORED`` and ``BLIND``."""
    return suite or sys.modules[__name__]


def record(out: Path, kernels: dict | None = None, suite=None) -> None:
    """Check each kernel against NumPy at the first size, time it at every size, write
    ``out`` (cudakit on a GPU: its ``load`` and events)."""
    import cudakit
    from cudakit import cuda

    suite = _suite(suite)
    module = cudakit.load(suite.SOURCE, options=["-O3"])
    rows = []
    for name, (kind, out_type, block, grid) in (kernels or suite.KERNELS).items():
        for size in SIZES:
            a, b, a_val, b_val = _inputs(size, kind)
            da, db = cuda.gpuarray.to_gpu(a), cuda.gpuarray.to_gpu(b)
            dc = cuda.gpuarray.zeros((size, size), out_type)
            n, shape = np.int32(size), grid(size)

            def launch(kernel=module[name], shape=shape, block=block, da=da, db=db,
                       dc=dc, n=n):
                kernel(da.gpudata, db.gpudata, dc, n, n, n, grid=shape, block=block)
            row = {"kernel": name, "size": size, "ms": back_to_back_ms(launch)}
            if size == SIZES[0]:
                ref = a_val @ b_val.T
                row["max_rel_error"] = float(np.abs(dc.get() - ref).max() / np.abs(ref).max())
            rows.append(row)
    out.write_text(json.dumps({"device": gpu_line(), "rows": rows}, indent=1))


def predicted(name: str, size: int, device: str = "H200", suite=None):
    """``cudakit.predict`` of kernel ``name`` at ``size`` on ``device``."""
    import cudakit

    suite = _suite(suite)
    kind, out_type, block, grid = {**suite.KERNELS, **suite.HELD_OUT,
                                   **getattr(suite, "AFTER", {})}[name]
    storage = {"f16": np.float16, "f32": np.float32, "bf16": np.uint16, "f64": np.float64,
               "s8": np.int8}[kind]
    a = np.zeros((size, size), storage)
    c = np.zeros((size, size), out_type)
    n = np.int32(size)
    return cudakit.predict(suite.SOURCE, name, grid=grid(size), block=block,
                           args=[Pointer(a), Pointer(a), c, n, n, n], device=device)


def blind(suite=None) -> None:
    """Write the held-out kernels' predictions, before they are timed."""
    suite = _suite(suite)
    rows = [{"kernel": name, "size": size, "predicted_ms": predicted(name, size,
                                                                     suite=suite).ms}
            for name in suite.HELD_OUT for size in SIZES]
    suite.BLIND.write_text(json.dumps({"device": "H200", "rows": rows}, indent=1) + "\n")


def show(suite=None) -> None:
    """The stored times against the predictions for the same device (the held-out kernels'
    with their predictions made before they were timed)."""
    suite = _suite(suite)
    blind = {}
    for first in (suite.BLIND, getattr(suite, "AFTER_PREDICTED", None)):
        if first is not None and first.exists():
            blind.update({(r["kernel"], r["size"]): r["predicted_ms"]
                          for r in json.loads(first.read_text())["rows"]})
    for path in (suite.STORED, suite.HELD_OUT_STORED):
        if path is None or not path.exists():
            continue
        with open_text(path) as f:
            stored = json.load(f)
        print(f"{stored['device']}: measured (back-to-back launches) against predicted")
        print("| kernel | size | measured ms | predicted ms | error | bound |")
        print("|---|---|---|---|---|---|")
        for row in stored["rows"]:
            p = predicted(row["kernel"], row["size"], suite=suite)
            before = blind.get((row["kernel"], row["size"]))
            label = "blind" if row["kernel"] in suite.HELD_OUT else "predicted first"
            note = f" ({label}: {(before / row['ms'] - 1) * 100:+.0f} %)" if before else ""
            print(f"| {row['kernel']} | {row['size']} | {row['ms']:.4f} | {p.ms:.4f} | "
                  f"{(p.ms / row['ms'] - 1) * 100:+.0f} %{note} | {p.bound} |")


def main(argv=None, suite=None) -> None:
    import argparse

    suite = _suite(suite)
    parser = argparse.ArgumentParser(description=suite.__doc__.split("\n\n")[0])
    parser.add_argument("--record", metavar="JSON", help="time the kernels on this GPU")
    parser.add_argument("--held-out", action="store_true",
                        help="with --record: the held-out kernels")
    parser.add_argument("--blind", action="store_true",
                        help="write the held-out kernels' predictions before they are timed")
    args = parser.parse_args(argv)
    if args.record:
        record(Path(args.record), suite.HELD_OUT if args.held_out else suite.KERNELS, suite)
    elif args.blind:
        blind(suite)
    else:
        show(suite)


if __name__ == "__main__":
    main()
