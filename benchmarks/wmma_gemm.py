"""Tensor-core GEMMs timed on a GPU and predicted here: a check of ``cudakit.predict`` on
``wmma`` kernels, whose rates come from ``benchmarks/tensor_probe.py`` (not from these).

Three kernels of C = A B (A row-major M x K, B column-major K x N, C row-major, float
accumulators), each warp computing 16 x 16 tiles of C:

* ``gemm_wmma``: every warp reads its fragments of A and B from global memory (the L1 and
  L2 serve the re-reads), half precision;
* ``gemm_wmma_shared``: a block of 8 warps stages 128 x 32 tiles of A and B in shared
  memory, each warp computing 64 x 32 of C (4 x 2 fragments), half precision;
* ``gemm_wmma_tf32``: the first kernel in TF32 (float inputs, m16n16k8).

    python -m benchmarks.wmma_gemm --record OUT.json   # on the GPU
    python -m benchmarks.wmma_gemm                     # here: stored against predicted

Written by hand: a benchmark.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.common import back_to_back_ms, gpu_line, open_text, probe_main

STORED = Path(__file__).parent / "fixtures" / "h200_wmma_gemm.json"
SIZES = (1024, 2048, 4096)

SOURCE = r"""
#include <mma.h>
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
"""
#: kernel: (input dtype, block, grid of a size)
KERNELS = {
    "gemm_wmma": (np.float16, (128, 4, 1), lambda s: (s // 64, s // 64, 1)),
    "gemm_wmma_shared": (np.float16, (256, 1, 1), lambda s: (s // 128, s // 128, 1)),
    "gemm_wmma_tf32": (np.float32, (128, 4, 1), lambda s: (s // 64, s // 64, 1)),
}


def _inputs(size: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(size)
    a = rng.standard_normal((size, size)).astype(dtype)
    b = rng.standard_normal((size, size)).astype(dtype)  # column-major B: row j is column j
    return a, b


def record(out: Path) -> None:
    """Check each kernel against NumPy at the first size, time it at every size, write
    ``out`` (cudakit on a GPU: its ``load`` and events)."""
    import cudakit
    from cudakit import cuda

    kernels = cudakit.load(SOURCE, options=["-O3"])
    rows = []
    for name, (dtype, block, grid) in KERNELS.items():
        for size in SIZES:
            a, b = _inputs(size, dtype)
            da, db = cuda.gpuarray.to_gpu(a), cuda.gpuarray.to_gpu(b)
            dc = cuda.gpuarray.zeros((size, size), np.float32)
            n, shape = np.int32(size), grid(size)

            def launch(kernel=kernels[name], shape=shape, block=block, da=da, db=db,
                       dc=dc, n=n):
                kernel(da, db, dc, n, n, n, grid=shape, block=block)
            row = {"kernel": name, "size": size, "ms": back_to_back_ms(launch)}
            if size == SIZES[0]:
                ref = a.astype(np.float64) @ b.astype(np.float64).T
                row["max_rel_error"] = float(np.abs(dc.get() - ref).max() / np.abs(ref).max())
            rows.append(row)
    out.write_text(json.dumps({"device": gpu_line(), "rows": rows}, indent=1))


def predicted(name: str, size: int, device: str = "H200"):
    """``cudakit.predict`` of kernel ``name`` at ``size`` on ``device``."""
    import cudakit

    dtype, block, grid = KERNELS[name]
    a = np.zeros((size, size), dtype)
    c = np.zeros((size, size), np.float32)
    n = np.int32(size)
    return cudakit.predict(SOURCE, name, grid=grid(size), block=block,
                           args=[a, a, c, n, n, n], device=device)


def show() -> None:
    """The stored times against the predictions for the same device."""
    with open_text(STORED) as f:
        stored = json.load(f)
    print(f"{stored['device']}: measured (back-to-back launches) against predicted")
    print("| kernel | size | measured ms | predicted ms | error | bound |")
    print("|---|---|---|---|---|---|")
    for row in stored["rows"]:
        p = predicted(row["kernel"], row["size"])
        print(f"| {row['kernel']} | {row['size']} | {row['ms']:.4f} | {p.ms:.4f} | "
              f"{(p.ms / row['ms'] - 1) * 100:+.0f} % | {p.bound} |")


def main(argv=None) -> None:
    probe_main(argv, __doc__, record, show)


if __name__ == "__main__":
    main()
