"""The kernels of labs 10-12 at sizes the notebooks never use, against NumPy.

Each ``%%cuda`` cell is loaded on its own (as the magic does) on whatever engine this
machine has: the CPU emulator in CI, the GPU where there is one. Sizes are small and
awkward: one element, lengths that are not multiples of 4 or of the block, thin matrices.
"""

from __future__ import annotations

import numpy as np
import pytest

from cudakit import cuda


@pytest.fixture(scope="module")
def reduction(lab_kernels):
    return lab_kernels("10_reduction.ipynb")


@pytest.fixture(scope="module")
def transpose(lab_kernels):
    return lab_kernels("11_transpose.ipynb")


@pytest.fixture(scope="module")
def matmul(lab_kernels):
    return lab_kernels("12_matmul.ipynb")


def reduce_all(kernel, x: np.ndarray, block: int, per_block: int, grid_cap=None, shared=0) -> int:
    """The labs' host driver: launch until one partial sum is left."""
    d_in, n = cuda.gpuarray.to_gpu(x), x.size
    while True:
        blocks = -(-n // per_block)
        if grid_cap:
            blocks = min(blocks, grid_cap)
        d_out = cuda.gpuarray.empty(blocks, np.int32)
        kernel(d_in, d_out, n, grid=(blocks,), block=(block,), shared=shared)
        if blocks == 1:
            return int(d_out.get()[0])
        d_in, n = d_out, blocks


# kernel -> (block, elements per block, dynamic shared bytes, grid cap)
REDUCTIONS = {
    "reduce0": (64, 64, 256, None),
    "reduce1": (64, 64, 256, None),
    "reduce2": (128, 128, 512, None),
    "reduce3": (64, 128, 256, None),
    "reduce4": (64, 128, 256, None),
    "reduce5": (256, 512, 0, None),  # BLOCK_SIZE is 256 at compile time
    "reduce6": (256, 512, 0, 2),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("n", [1, 77, 1283])
def test_tree_reductions_are_exact(reduction, name, n):
    x = np.random.default_rng(n).integers(-1000, 1000, size=n, dtype=np.int32)
    block, per_block, shared, cap = REDUCTIONS[name]
    assert reduce_all(reduction[name], x, block, per_block, cap, shared) == int(x.sum())


@pytest.mark.parametrize("n", [1, 6, 4 * 64 * 3 + 3, 2049])
def test_reduce7_handles_tails_and_any_grid(reduction, n):
    x = np.random.default_rng(7).integers(-1000, 1000, size=n, dtype=np.int32)
    d_sum = cuda.gpuarray.zeros(1, np.int32)
    reduction["reduce7"](cuda.gpuarray.to_gpu(x), d_sum, n, grid=(3,), block=(64,))
    assert int(d_sum.get()[0]) == int(x.sum())


@pytest.mark.parametrize("name", ["transpose_naive", "transpose_tiled", "transpose_padded",
                                  "transpose_vec4", "copy"])
@pytest.mark.parametrize("shape", [(1, 33), (33, 1), (40, 72), (37, 65)])
def test_transposes_match_numpy(transpose, name, shape):
    a = np.random.default_rng(sum(shape)).standard_normal(shape, dtype=np.float32)
    is_copy = name == "copy"
    d_out = cuda.gpuarray.to_gpu(np.full(a.shape if is_copy else a.T.shape, np.nan, np.float32))
    block = (8, 32) if name == "transpose_vec4" else (32, 8)
    grid = (-(-shape[1] // 32), -(-shape[0] // 32))
    transpose[name](cuda.gpuarray.to_gpu(a), d_out, shape[0], shape[1], grid=grid, block=block)
    np.testing.assert_array_equal(d_out.get(), a if is_copy else a.T)


@pytest.mark.parametrize("name", ["matmul_naive", "matmul_tiled", "matmul_regtile", "matmul_vec",
                                  "matmul_dbuf"])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (5, 130, 3), (130, 7, 9), (33, 68, 20)])
def test_matmuls_match_numpy(matmul, name, m, n, k):
    rng = np.random.default_rng(m * n * k)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    d_c = cuda.gpuarray.to_gpu(np.full((m, n), np.nan, np.float32))
    tile, block = (32, (32, 32)) if name in ("matmul_naive", "matmul_tiled") else (128, (256,))
    grid = (-(-n // tile), -(-m // tile))
    matmul[name](cuda.gpuarray.to_gpu(a), cuda.gpuarray.to_gpu(b), d_c, m, n, k,
                 grid=grid, block=block)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    c = d_c.get()
    assert np.isfinite(c).all()
    assert np.linalg.norm(c - ref) <= 1e-5 * np.linalg.norm(ref)
