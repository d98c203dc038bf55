"""The kernels added to labs 10, 11, 12, 20 and 21 for issue 16, at awkward sizes, against NumPy.

Each ``%%cuda`` cell is loaded on its own on this machine's engine (the emulator in CI): the
flat copy and the 64 x 64 transpose on thin and misaligned shapes, ``sgemm`` in all three tile
sizes of the lab with split-K, ``sgemm_async`` (the kernel the sweep measured, on its interior and
edge paths), the 3D float4 stencil with more slabs than planes, and two
N-body bodies per thread with a count that fills no block, also with the j range shared among
blocks (``nbody_split``).
"""

from __future__ import annotations

import numpy as np
import pytest

import cudakit
from benchmarks.common import cell_defining
from benchmarks.matmul import ASYNC_THREADS, ASYNC_TILE, SGEMM_CONFIGS
from benchmarks.stencil import C0, C1, heat3d_reference
from benchmarks.sweep16 import ASYNC_CONFIGS, async_source
from cudakit import cuda


@pytest.fixture(scope="module")
def transpose(lab_kernels):
    return lab_kernels("11_transpose.ipynb")


@pytest.fixture(scope="module")
def sgemm_variants():
    body, options = cell_defining("12_matmul.ipynb", "sgemm")
    return {name: cudakit.load(body, (*options, *extra))["sgemm"]
            for name, (_, _, _, extra) in SGEMM_CONFIGS.items()}


@pytest.fixture(scope="module")
def sgemm_async():
    body, options = cell_defining("12_matmul.ipynb", "sgemm_async")
    return cudakit.load(body, options)["sgemm_async"]


@pytest.mark.parametrize("shape", [(1, 1), (1, 33), (33, 1), (3, 5), (37, 65)])
def test_copy_vec4_copies_any_shape(transpose, shape):
    a = np.random.default_rng(sum(shape)).standard_normal(shape, dtype=np.float32)
    d_out = cuda.gpuarray.to_gpu(np.full(shape, np.nan, np.float32))
    transpose["copy_vec4"](cuda.gpuarray.to_gpu(a), d_out, *shape,
                           grid=(a.size // 4 // 256 + 1,), block=(256,))
    np.testing.assert_array_equal(d_out.get(), a)


@pytest.mark.parametrize("shape", [(1, 70), (70, 1), (65, 64), (67, 130)])
def test_transpose_wide_matches_numpy(transpose, shape):
    a = np.random.default_rng(sum(shape)).standard_normal(shape, dtype=np.float32)
    d_out = cuda.gpuarray.to_gpu(np.full(a.T.shape, np.nan, np.float32))
    transpose["transpose_wide"](cuda.gpuarray.to_gpu(a), d_out, *shape,
                                grid=(-(-shape[1] // 64), -(-shape[0] // 64)), block=(64, 16))
    np.testing.assert_array_equal(d_out.get(), a.T)


@pytest.mark.parametrize("config", sorted(SGEMM_CONFIGS))
@pytest.mark.parametrize("m,n,k,split", [(1, 1, 1, 1), (5, 130, 3, 1), (70, 9, 37, 3),
                                         (33, 68, 20, 2), (64, 128, 16, 5)])
def test_sgemm_matches_numpy(sgemm_variants, config, m, n, k, split):
    rng = np.random.default_rng(m * n * k + split)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    start = np.zeros((m, n), np.float32) if split > 1 else np.full((m, n), np.nan, np.float32)
    d_c = cuda.gpuarray.to_gpu(start)
    bm, bn, tm, _ = SGEMM_CONFIGS[config]
    sgemm_variants[config](cuda.gpuarray.to_gpu(a), cuda.gpuarray.to_gpu(b), d_c, m, n, k,
                           grid=(-(-n // bn), -(-m // bm), split), block=((bm // tm) * (bn // 8),))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    c = d_c.get()
    assert np.isfinite(c).all()
    assert np.linalg.norm(c - ref) <= 1e-5 * np.linalg.norm(ref)


def test_sgemm_async_cell_is_the_measured_kernel():
    # the lab's cell is kernels16/sgemm_async.cu with the constants of the winner on the H100
    body, options = cell_defining("12_matmul.ipynb", "sgemm_async")
    winner = (ASYNC_TILE, ASYNC_TILE, 8, 16, 4, 0, 2, 1, 0, 1)
    assert winner in ASYNC_CONFIGS and options == ()
    assert (ASYNC_TILE // 16) * (ASYNC_TILE // 8) == ASYNC_THREADS
    assert body.strip() == async_source(winner).strip()


# interior blocks (K a multiple of 8, N of 4) beside edge blocks, 4-byte copies (odd K or N),
# fewer steps than stages, and one block
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (256, 260, 40), (129, 128, 16), (37, 29, 41),
                                   (130, 132, 4)])
def test_sgemm_async_matches_numpy(sgemm_async, m, n, k):
    rng = np.random.default_rng(m * n * k)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    d_c = cuda.gpuarray.to_gpu(np.full((m, n), np.nan, np.float32))
    sgemm_async(cuda.gpuarray.to_gpu(a), cuda.gpuarray.to_gpu(b), d_c, m, n, k,
                     grid=(-(-n // ASYNC_TILE), -(-m // ASYNC_TILE)), block=(ASYNC_THREADS,))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    c = d_c.get()
    assert np.isfinite(c).all()
    assert np.linalg.norm(c - ref) <= 1e-5 * np.linalg.norm(ref)


@pytest.mark.parametrize("shape,block,slabs", [((3, 3, 4), (32, 1), 1), ((9, 7, 8), (1, 4), 20),
                                               ((12, 5, 44), (4, 2), 3)])
def test_heat3d_vec4_matches_numpy(lab_kernels, shape, block, slabs):
    u = np.random.default_rng(sum(shape)).random(shape, dtype=np.float32)
    nz, ny, nx = shape
    d_u, d_v = cuda.to_device(u), cuda.to_device(u)
    lab_kernels("21_stencil.ipynb")["heat3d_vec4"](
        d_u, d_v, nx, ny, nz, np.float32(C0 - 2 * C1), np.float32(C1),
        grid=(-(-nx // 4 // block[0]), -(-ny // block[1]), slabs), block=(*block, 1))
    got = cuda.from_device(d_v, shape, np.float32)
    np.testing.assert_allclose(got, heat3d_reference(u, C0 - 2 * C1, C1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [1, 300, 513])
def test_nbody_pair_matches_unrolled_reference(lab_kernels, n):
    from benchmarks.nbody import EPS2, accelerations

    rng = np.random.default_rng(n)
    body = np.hstack([rng.random((n, 3)), np.full((n, 1), 1.0 / n)]).astype(np.float32)
    d_acc = cuda.to_device(np.full((n, 4), np.nan, np.float32))  # float4 *: raw device memory
    lab_kernels("20_nbody.ipynb")["nbody_pair"](cuda.to_device(body), d_acc, n, EPS2,
                                                grid=(-(-n // 512),), block=(256,))
    ref = accelerations(body[:, :3].astype(np.float64), body[:, 3].astype(np.float64), EPS2)
    got = cuda.from_device(d_acc, (n, 4), np.float32)[:, :3]
    assert np.linalg.norm(got - ref) <= 1e-5 * max(np.linalg.norm(ref), 1e-30)


@pytest.mark.parametrize(("n", "shares"), [(1, 1), (300, 4), (513, 3), (777, 7), (1025, 33)])
def test_nbody_split_adds_its_shares_to_the_reference(lab_kernels, n, shares):
    from benchmarks.nbody import EPS2, accelerations

    rng = np.random.default_rng(n)
    body = np.hstack([rng.random((n, 3)), np.full((n, 1), 1.0 / n)]).astype(np.float32)
    d_acc = cuda.to_device(np.zeros((n, 4), np.float32))      # the blocks add into acc
    lab_kernels("20_nbody.ipynb")["nbody_split"](cuda.to_device(body), d_acc, n, EPS2,
                                                 grid=(-(-n // 512), shares), block=(256,))
    ref = accelerations(body[:, :3].astype(np.float64), body[:, 3].astype(np.float64), EPS2)
    got = cuda.from_device(d_acc, (n, 4), np.float32)[:, :3]
    assert np.linalg.norm(got - ref) <= 1e-5 * max(np.linalg.norm(ref), 1e-30)


@pytest.mark.parametrize(("blocks", "wave"), [(512, 528), (128, 528), (1, 4), (7, 16)])
def test_nbody_split_shares_fill_whole_waves(blocks, wave):
    from benchmarks.nbody import whole_wave_shares

    shares = whole_wave_shares(blocks, wave)
    assert 1 <= shares <= 64
    assert (blocks * shares) % wave == 0 or shares == 64
