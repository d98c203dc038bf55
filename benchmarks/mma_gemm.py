"""Half-precision GEMMs written with inline PTX, ``ldmatrix`` and ``mma.sync``, as hand-tuned
kernels are: timed on a GPU and predicted here, a held-out check of ``cudakit.predict`` on
tensor-core code the tensor rates (``benchmarks/tensor_probe.py``) did not see. Both were
predicted (``--blind``) before they were first timed.

C = A B with A row-major, B stored by columns (row j of ``b`` is column j of B), float
accumulators; fragments of A and B come from padded shared tiles through ``ldmatrix.x4``:

* ``hgemm_mma``: 64 x 64 tiles of C per block of 4 warps (32 x 32 each), 32-wide slices of K
  staged with 16-byte loads and stores, one buffer;
* ``hgemm_mma_async``: 128 x 128 tiles per block of 8 warps (64 x 32 each), two buffers
  filled by ``cp.async`` while the other is multiplied.

    python -m benchmarks.mma_gemm --blind                        # here, before timing
    python -m benchmarks.mma_gemm --record OUT.json --held-out   # on the GPU
    python -m benchmarks.mma_gemm                                # here: stored, predicted

A third kernel, ``hgemm_mma_copy_wait`` (``AFTER``), came after the model's rule for copies
waited for at once (``model.lockstep_hidden``): predicted before it was timed
(``fixtures/h200_mma_gemm_copy_wait_predicted.json``), not blind to the rule.

Written by hand: a benchmark.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from benchmarks import wmma_gemm

STORED = None  # every kernel here is held out
HELD_OUT_STORED = Path(__file__).parent / "fixtures" / "h200_mma_gemm.json"
BLIND = Path(__file__).parent / "fixtures" / "h200_mma_gemm_blind.json"
AFTER_PREDICTED = Path(__file__).parent / "fixtures" / "h200_mma_gemm_copy_wait_predicted.json"
SIZES = wmma_gemm.SIZES

SOURCE = r"""
#include <cuda_fp16.h>

// four 8 x 8 matrices of halves from shared memory, lane l giving the address of one row
__device__ __forceinline__ void ldmatrix_x4(unsigned *r, const half *row)
{
    unsigned addr = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// d += a b for one 16 x 8 tile of C, k = 16
__device__ __forceinline__ void mma16816(float *d, const unsigned *a, const unsigned *b)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// a warp's MI x NI tiles of 16 x 8 at (wm, wn) of the block's tile, for one 32-wide slice
template <int MI, int NI>
__device__ __forceinline__ void slice(float (*acc)[NI][4], const half *sa, const half *sb,
                                      int ld, int wm, int wn, int lane)
{
    for (int kk = 0; kk < 32; kk += 16) {
        unsigned fa[MI][4], fb[NI][2];
        for (int i = 0; i < MI; ++i)
            ldmatrix_x4(fa[i], &sa[(wm + i * 16 + lane % 16) * ld + kk + (lane / 16) * 8]);
        for (int j = 0; j < NI; j += 2) {
            unsigned r[4];
            ldmatrix_x4(r, &sb[(wn + j * 8 + lane % 8 + (lane / 16) * 8) * ld + kk +
                               ((lane / 8) % 2) * 8]);
            fb[j][0] = r[0]; fb[j][1] = r[1]; fb[j + 1][0] = r[2]; fb[j + 1][1] = r[3];
        }
        for (int i = 0; i < MI; ++i)
            for (int j = 0; j < NI; ++j) mma16816(acc[i][j], fa[i], fb[j]);
    }
}

template <int MI, int NI>
__device__ __forceinline__ void store_tiles(float *c, int n, float (*acc)[NI][4], int r0,
                                            int c0, int lane)
{
    int g = lane / 4, t = lane % 4;
    for (int i = 0; i < MI; ++i)
        for (int j = 0; j < NI; ++j)
            for (int e = 0; e < 4; ++e)
                c[(size_t)(r0 + i * 16 + g + 8 * (e / 2)) * n + c0 + j * 8 + 2 * t + e % 2] =
                    acc[i][j][e];
}

#define LD 40  // a 32-half row and 8 of padding: the 8 rows of an ldmatrix hit 8 bank groups

extern "C" __global__ void hgemm_mma(const half *a, const half *b, float *c, int m, int n,
                                     int k)
{
    __shared__ __align__(16) half sa[64 * LD], sb[64 * LD];
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
    int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
    float acc[2][4][4] = {};
    for (int k0 = 0; k0 < k; k0 += 32) {
        for (int e = tid; e < 64 * 4; e += blockDim.x) {  // 16 bytes a thread at a time
            int r = e / 4, q = (e % 4) * 8;
            *(uint4 *)&sa[r * LD + q] = *(const uint4 *)&a[(size_t)(row0 + r) * k + k0 + q];
            *(uint4 *)&sb[r * LD + q] = *(const uint4 *)&b[(size_t)(col0 + r) * k + k0 + q];
        }
        __syncthreads();
        slice<2, 4>(acc, sa, sb, LD, wm, wn, lane);
        __syncthreads();
    }
    store_tiles<2, 4>(c, n, acc, row0 + wm, col0 + wn, lane);
}

// 16 bytes of A's slice and of B's (chunk e: row e / 4, 8 halves) by cp.async
__device__ __forceinline__ void copy_chunk(half *sa, half *sb, const half *a, const half *b,
                                           int row0, int col0, int k0, int k, int e)
{
    int r = e / 4, q = (e % 4) * 8;
    unsigned da = (unsigned)__cvta_generic_to_shared(&sa[r * LD + q]);
    unsigned db = (unsigned)__cvta_generic_to_shared(&sb[r * LD + q]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                 :: "r"(da), "l"(&a[(size_t)(row0 + r) * k + k0 + q]));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                 :: "r"(db), "l"(&b[(size_t)(col0 + r) * k + k0 + q]));
}

// the next slice of A and B (128 rows each) into one buffer by cp.async, two 16-byte
// copies of each per thread
__device__ __forceinline__ void stage(half *sa, half *sb, const half *a, const half *b,
                                      int row0, int col0, int k0, int k, int tid)
{
    for (int e = tid; e < 128 * 4; e += 256) copy_chunk(sa, sb, a, b, row0, col0, k0, k, e);
    asm volatile("cp.async.commit_group;");
}

extern "C" __global__ void hgemm_mma_async(const half *a, const half *b, float *c, int m,
                                           int n, int k)
{
    __shared__ __align__(16) half sa[2][128 * LD], sb[2][128 * LD];
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int row0 = blockIdx.y * 128, col0 = blockIdx.x * 128;
    int wm = (warp / 4) * 64, wn = (warp % 4) * 32;
    float acc[4][4][4] = {};
    int slices = k / 32;
    stage(sa[0], sb[0], a, b, row0, col0, 0, k, tid);
    for (int s = 0; s < slices; ++s) {
        if (s + 1 < slices) {
            stage(sa[(s + 1) % 2], sb[(s + 1) % 2], a, b, row0, col0, (s + 1) * 32, k, tid);
            asm volatile("cp.async.wait_group 1;");
        } else {
            asm volatile("cp.async.wait_group 0;");
        }
        __syncthreads();
        slice<4, 4>(acc, sa[s % 2], sb[s % 2], LD, wm, wn, lane);
        __syncthreads();
    }
    store_tiles<4, 4>(c, n, acc, row0 + wm, col0 + wn, lane);
}

// the same tiles through one buffer: each slice copied by cp.async and waited for at once,
// so that the copy and the multiplications take turns (added after the model's rule for
// copies waited for at once; timed after it was predicted)
extern "C" __global__ void hgemm_mma_copy_wait(const half *a, const half *b, float *c, int m,
                                               int n, int k)
{
    __shared__ __align__(16) half sa[128 * LD], sb[128 * LD];
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int row0 = blockIdx.y * 128, col0 = blockIdx.x * 128;
    int wm = (warp / 4) * 64, wn = (warp % 4) * 32;
    float acc[4][4][4] = {};
    for (int k0 = 0; k0 < k; k0 += 32) {
        for (int i = 0; i < 2; ++i)  // a fixed count: ptxas unrolls it
            copy_chunk(sa, sb, a, b, row0, col0, k0, k, tid + 256 * i);
        asm volatile("cp.async.commit_group;");
        asm volatile("cp.async.wait_group 0;");
        __syncthreads();
        slice<4, 4>(acc, sa, sb, LD, wm, wn, lane);
        __syncthreads();
    }
    store_tiles<4, 4>(c, n, acc, row0 + wm, col0 + wn, lane);
}
"""
KERNELS: dict = {}
#: kernel: (input type, output type, block, grid of a size); all predicted before timing
HELD_OUT = {
    "hgemm_mma": ("f16", np.float32, (128, 1, 1), lambda s: (s // 64, s // 64, 1)),
    "hgemm_mma_async": ("f16", np.float32, (256, 1, 1), lambda s: (s // 128, s // 128, 1)),
}
#: predicted with the rule for copies waited for at once (model.hidden_waits), then timed
AFTER = {
    "hgemm_mma_copy_wait": ("f16", np.float32, (256, 1, 1), lambda s: (s // 128, s // 128, 1)),
}


def main(argv=None) -> None:
    """As ``benchmarks.wmma_gemm``'s; ``--record OUT --held-out`` times ``AFTER`` too."""
    suite = sys.modules[__name__]
    if argv is None:
        argv = sys.argv[1:]
    if "--held-out" in argv and "--record" in argv:
        out = Path(argv[argv.index("--record") + 1])
        wmma_gemm.record(out, {**HELD_OUT, **AFTER}, suite)
        return
    wmma_gemm.main(argv, suite=suite)


if __name__ == "__main__":
    main()
