"""Where a transpose's time goes at 8192 x 8192 floats, DRAM-bound: the placement of its
tiles against its instructions. Ten kernels over the same tiles of 32 x 32 (blocks of
32 x 8 threads), timed back to back on a GPU with ``cudaMemcpy`` device to device:

* ``copy``: lab 11's copy (a guarded loop: ptxas issues 3 loads, 3 stores, then 1 and 1);
* ``copy_sync``: its 4 loads, a barrier, its 4 stores; ``copy_smem``: through shared memory;
* ``swap``/``swap_smem``: the same, each tile written where a transpose puts it (rows kept);
* ``transpose_padded``: lab 11's padded transpose;
* ``readonly``/``readonly_t``, ``write_only``/``write_only_t``: reads or writes alone, in
  place or in the transposed placement.

    python -m benchmarks.transpose_placement --record OUT.json   # on the GPU
    python -m benchmarks.transpose_placement                     # here: the stored times

Not modelled yet (``benchmarks/README.md``, session 28): the placement costs DRAM time, and
``copy``'s second round trip its own; on the H100 they nearly cancel. Written by hand: a
microbenchmark.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.common import back_to_back_ms, gpu_line, open_text, probe_main

STORED = Path(__file__).parent / "fixtures" / "h200_transpose_placement.json"
N = 8192
KERNELS = ("copy", "copy_sync", "copy_smem", "swap", "swap_smem", "transpose_padded",
           "readonly", "readonly_t", "write_only", "write_only_t")
SOURCE = r"""
#define TILE 32
#define BR 8
#define KERNEL(name) extern "C" __global__ void name(const float *__restrict__ in, \
                                                     float *__restrict__ out, int rows, int cols)
#define AT(r, c, ld) ((r) * (ld) + (c))

KERNEL(copy)  // lab 11's: guarded, so ptxas issues 3 loads, 3 stores, then 1 load, 1 store
{
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BR)
        if (x < cols && y + j < rows) out[AT(y + j, x, cols)] = in[AT(y + j, x, cols)];
}
KERNEL(copy_sync)  // its 4 loads, a barrier, its 4 stores: one round trip
{
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    float v[4];
    for (int j = 0; j < 4; j++) v[j] = in[AT(y + BR * j, x, cols)];
    __syncthreads();
    for (int j = 0; j < 4; j++) out[AT(y + BR * j, x, cols)] = v[j];
}
KERNEL(copy_smem)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BR) tile[threadIdx.y + j][threadIdx.x] = in[AT(y + j, x, cols)];
    __syncthreads();
    for (int j = 0; j < TILE; j += BR) out[AT(y + j, x, cols)] = tile[threadIdx.y + j][threadIdx.x];
}
KERNEL(swap)  // tile (bx, by) of in to tile (by, bx) of out, rows kept: a transpose's placement
{
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    int ox = blockIdx.y * TILE + threadIdx.x, oy = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BR) out[AT(oy + j, ox, rows)] = in[AT(y + j, x, cols)];
}
KERNEL(swap_smem)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BR) tile[threadIdx.y + j][threadIdx.x] = in[AT(y + j, x, cols)];
    __syncthreads();
    int ox = blockIdx.y * TILE + threadIdx.x, oy = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BR)
        out[AT(oy + j, ox, rows)] = tile[threadIdx.y + j][threadIdx.x];
}
KERNEL(transpose_padded)  // lab 11's
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BR)
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[AT(y + j, x, cols)];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BR)
        if (x < rows && y + j < cols) out[AT(y + j, x, rows)] = tile[threadIdx.x][threadIdx.y + j];
}
KERNEL(readonly)
{
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    float s = 0;
    for (int j = 0; j < TILE; j += BR) s += in[AT(y + j, x, cols)];
    if (s == 1234.5f) out[0] = s;  // never: keeps the loads
}
KERNEL(readonly_t)  // the tiles a transpose writes, read
{
    int x = blockIdx.y * TILE + threadIdx.x, y = blockIdx.x * TILE + threadIdx.y;
    float s = 0;
    for (int j = 0; j < TILE; j += BR) s += in[AT(y + j, x, cols)];
    if (s == 1234.5f) out[0] = s;
}
KERNEL(write_only)
{
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BR) out[AT(y + j, x, cols)] = 1.0f;
}
KERNEL(write_only_t)
{
    int x = blockIdx.y * TILE + threadIdx.x, y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BR) out[AT(y + j, x, cols)] = 1.0f;
}
"""


def record(out: Path) -> None:
    """Time every kernel and ``cudaMemcpy`` on this GPU; write the medians to ``out``."""
    import cudakit
    from cudakit import cuda

    kernels = cudakit.load(SOURCE, options=["-O3"])
    a = cuda.gpuarray.to_gpu(np.random.default_rng(0).standard_normal((N, N), np.float32))
    b = cuda.gpuarray.empty_like(a)
    ms = {}
    for name in KERNELS:
        kernel = kernels[name]
        ms[name] = back_to_back_ms(lambda kernel=kernel: kernel(
            a.gpudata, b.gpudata, np.int32(N), np.int32(N), grid=(N // 32, N // 32),
            block=(32, 8)))
    ms["cudaMemcpy"] = back_to_back_ms(lambda: cuda.memcpy_dtod(b.gpudata, a.gpudata, a.nbytes))
    out.write_text(json.dumps({"device": gpu_line(), "n": N, "ms": ms}, indent=1))


def show() -> None:
    with open_text(STORED) as f:
        stored = json.load(f)
    base = stored["ms"]["copy"]
    print(f"{stored['device']}: {stored['n']}^2 floats, one launch back to back")
    print("| kernel | ms | against copy |")
    print("|---|---|---|")
    for name, ms in stored["ms"].items():
        print(f"| {name} | {ms:.4f} | {(ms / base - 1) * 100:+.1f} % |")


def main(argv=None) -> None:
    probe_main(argv, __doc__, record, show)


if __name__ == "__main__":
    main()
