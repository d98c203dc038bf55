"""cuRAND's device API (``curand_kernel.h``, header-only device code) on the emulator:
Philox4x32-10 against a NumPy implementation of the Random123 generator (Salmon et al., SC
2011), XORWOW's first thread against Marsaglia's xorwow with cuRAND's seeding, and (marked
``gpu``) every thread's draws, XORWOW's subsequences (skipped ahead through cuRAND's tables
of precomputed matrices) included, against the same kernel on a GPU. The header comes from
the toolkit or, where it has no cuRAND, from the ``nvidia-curand`` wheel."""

from __future__ import annotations

import numpy as np
import pytest

SOURCE = r"""
#include <curand_kernel.h>
extern "C" __global__ void draws(unsigned long long seed, unsigned int *xorwow,
                                 unsigned int *philox, float *uniform)
{
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curandState x;
    curand_init(seed, id, 0, &x);  // subsequence id: skipped ahead through the tables
    xorwow[2 * id] = curand(&x);
    xorwow[2 * id + 1] = curand(&x);
    curandStatePhilox4_32_10_t p;
    curand_init(seed, id, 0, &p);
    uint4 a = curand4(&p), b = curand4(&p);
    unsigned int *out = philox + 8 * id;
    out[0] = a.x; out[1] = a.y; out[2] = a.z; out[3] = a.w;
    out[4] = b.x; out[5] = b.y; out[6] = b.z; out[7] = b.w;
    uniform[id] = curand_uniform(&p);  // the third block of four, first word
}
"""
SEED = 0x0123456789ABCDEF
THREADS = 64
M32 = np.uint64(0xFFFFFFFF)


def philox4x32_10(counter: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Random123's Philox4x32 with 10 rounds: ``counter`` (n, 4), ``key`` (2,) uint32."""
    c = counter.astype(np.uint64)
    k = key.astype(np.uint64)
    for r in range(10):
        if r:
            k = (k + np.array([0x9E3779B9, 0xBB67AE85], np.uint64)) & M32
        p0 = np.uint64(0xD2511F53) * c[:, 0]
        p1 = np.uint64(0xCD9E8D57) * c[:, 2]
        c = np.stack([(p1 >> np.uint64(32)) ^ c[:, 1] ^ k[0], p1 & M32,
                      (p0 >> np.uint64(32)) ^ c[:, 3] ^ k[1], p0 & M32], axis=1)
    return c.astype(np.uint32)


def xorwow_first(seed: int, n: int) -> list[int]:
    """The first ``n`` draws of cuRAND's XORWOW seeded with ``seed``, subsequence 0."""
    mask = 0xFFFFFFFF
    t0 = 1099087573 * ((seed & mask) ^ 0xAAD26B49) & mask
    t1 = 2591861531 * ((seed >> 32) ^ 0xF7DCEFDD) & mask
    d = (6615241 + t1 + t0) & mask
    v = [(123456789 + t0) & mask, 362436069 ^ t0, (521288629 + t1) & mask, 88675123 ^ t1,
         (5783321 + t0) & mask]
    out = []
    for _ in range(n):
        t = v[0] ^ (v[0] >> 2)
        v = v[1:] + [(v[4] ^ (v[4] << 4) ^ t ^ (t << 1)) & mask]
        d = (d + 362437) & mask
        out.append((v[4] + d) & mask)
    return out


def run(engine, out_of=np.zeros):
    xorwow = out_of(2 * THREADS, np.uint32)
    philox = out_of(8 * THREADS, np.uint32)
    uniform = out_of(THREADS, np.float32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("draws")(
        np.uint64(SEED), engine.Out(xorwow), engine.Out(philox), engine.Out(uniform),
        grid=(2, 1, 1), block=(THREADS // 2, 1, 1))
    return xorwow, philox, uniform


def test_philox_draws_are_random123s():
    from cudakit import emu

    _, philox, uniform = run(emu)
    ids = np.arange(THREADS, dtype=np.uint32)
    key = np.array([SEED & 0xFFFFFFFF, SEED >> 32], np.uint32)
    zeros = np.zeros(THREADS, np.uint32)
    for block in range(3):  # counter (block, 0, subsequence, 0)
        want = philox4x32_10(np.stack([zeros + block, zeros, ids, zeros], axis=1), key)
        if block < 2:
            np.testing.assert_array_equal(philox.reshape(THREADS, 2, 4)[:, block], want)
        else:  # curand_uniform: x 2^-32 + 2^-33, in float32 (an FMA or not: within an ulp)
            expected = want[:, 0].astype(np.float64) * 2.0**-32 + 2.0**-33
            np.testing.assert_allclose(uniform, expected, rtol=2**-23)
            assert ((uniform > 0) & (uniform <= 1)).all()


def test_xorwow_first_thread_is_marsaglias_xorwow_and_others_differ():
    from cudakit import emu

    xorwow, _, _ = run(emu)
    assert xorwow[:2].tolist() == xorwow_first(SEED, 2)
    assert len(set(xorwow[::2].tolist())) == THREADS  # each subsequence its own stream


@pytest.mark.gpu
def test_every_draw_matches_the_gpu():
    import pycuda.driver as drv

    from .suite import pycuda_engine

    gpu = type("Gpu", (), {"SourceModule": pycuda_engine().SourceModule, "Out": drv.Out})
    from cudakit import emu

    for got, want in zip(run(emu), run(gpu), strict=True):
        np.testing.assert_array_equal(got, want)
