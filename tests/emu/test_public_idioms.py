"""Idioms that public CUDA code leans on, each in a kernel of our own, on the emulator against
NumPy; the tests marked ``gpu`` run the same kernels on a GPU.

Warp-aggregated atomics with ``cg::coalesced_threads()``; cooperative groups' labeled and
binary partitions; a grid's last block summing the others' partial sums after
``__threadfence()`` and a wrapping ``atomicInc``; ``atomicDec``'s wrap; ``__half2``
arithmetic rounded once (``__hfma2``, and ``__hmul2`` then ``__hadd2``, which ptxas
contracts: :mod:`cudakit.emu.contract`) and twice (``__hmul2_rn`` then ``__hadd2``);
``__match_any_sync`` and ``__reduce_add_sync``. The cuda-samples and Rodinia kernels that
first showed the emulator these idioms are not kept in the tree (the tool library's terms
keep fetched code out of commits)."""

from __future__ import annotations

import numpy as np
import pytest

from cudakit import emu

from .suite import pycuda_engine

SOURCE = r"""
#include <cooperative_groups.h>
#include <cuda_fp16.h>
namespace cg = cooperative_groups;

// the indices of the values above `limit`, appended in any order: the active threads of a
// warp take their places with one atomic, made by their leader
extern "C" __global__ void keep_above(const float* x, int n, float limit, int* kept,
                                      int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || x[i] <= limit) return;
    cg::coalesced_group active = cg::coalesced_threads();
    int base = 0;
    if (active.thread_rank() == 0) base = atomicAdd(count, (int)active.size());
    base = active.shfl(base, 0);
    kept[base + active.thread_rank()] = i;
}

// how many values carry each key (0..7) and how many are odd: each group of a warp's
// threads with one key adds its size once
extern "C" __global__ void count_keys(const int* keys, int n, int* per_key, int* odd) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    int key = i < n ? keys[i] : 8;
    cg::coalesced_group same = cg::labeled_partition(warp, key);
    if (same.thread_rank() == 0 && key < 8) atomicAdd(&per_key[key], (int)same.size());
    cg::coalesced_group parity = cg::binary_partition(warp, (key & 1) && key < 8);
    if (parity.thread_rank() == 0 && (key & 1) && key < 8) atomicAdd(odd, (int)parity.size());
}

// every block sums its stride of x; the block that finishes last sums the blocks' sums.
// `ticket` wraps back to 0 (atomicInc), so the kernel can run again
__device__ unsigned ticket = 0;
extern "C" __global__ void sum_last_block(const float* x, int n, float* partial, float* out) {
    __shared__ float s[256];
    __shared__ bool last;
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        v += x[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        last = atomicInc(&ticket, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float t = 0.0f;
        for (int b = 0; b < gridDim.x; ++b) t += ((volatile float*)partial)[b];
        out[0] = t;
    }
}

// every thread takes one step down a counter that wraps from 0 to `top`
extern "C" __global__ void step_down(unsigned* counter, unsigned top) {
    atomicDec(counter, top);
}

// a*b+c on pairs of halves: by __hfma2; by __hmul2 then __hadd2, which ptxas contracts
// into one HFMA2 as well; and by __hmul2_rn then __hadd2, rounded after each
extern "C" __global__ void half_pairs(const __half2* a, const __half2* b, const __half2* c,
                                      __half2* fused, __half2* contracted, __half2* apart,
                                      int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fused[i] = __hfma2(a[i], b[i], c[i]);
    contracted[i] = __hadd2(__hmul2(a[i], b[i]), c[i]);
    apart[i] = __hadd2(__hmul2_rn(a[i], b[i]), c[i]);
}

// for each lane, the lanes of its warp with the same key, and the warp's sum of keys
extern "C" __global__ void same_keys(const unsigned* keys, unsigned* peers, unsigned* total) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    peers[i] = __match_any_sync(0xffffffffu, keys[i]);
    total[i] = __reduce_add_sync(0xffffffffu, keys[i]);
}
"""


def _keep_above(engine, rng):
    n = 5000
    x = rng.random(n, dtype=np.float32)
    kept, count = np.full(n, -1, np.int32), np.zeros(1, np.int32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("keep_above")(
        engine.In(x), np.int32(n), np.float32(0.7), engine.InOut(kept), engine.InOut(count),
        block=(128, 1, 1), grid=(-(-n // 128), 1))
    want = np.flatnonzero(x > 0.7)
    return [count[0], np.sort(kept[:count[0]]), kept[count[0]:]], \
        [want.size, want, np.full(n - want.size, -1)]


def _count_keys(engine, rng):
    n = 3000
    keys = rng.integers(0, 8, n).astype(np.int32)
    per_key, odd = np.zeros(8, np.int32), np.zeros(1, np.int32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("count_keys")(
        engine.In(keys), np.int32(n), engine.InOut(per_key), engine.InOut(odd),
        block=(96, 1, 1), grid=(-(-n // 96), 1))
    return [per_key, odd[0]], [np.bincount(keys, minlength=8), (keys & 1).sum()]


def _sum_last_block(engine, rng):
    n, blocks = 100_000, 37
    x = rng.random(n, dtype=np.float32)
    kernel = engine.SourceModule(SOURCE, no_extern_c=True).get_function("sum_last_block")
    partial = engine.mem_alloc(blocks * 4)
    sums = []
    for scale in (1, 2):  # twice: the ticket must have wrapped back to 0
        out = np.zeros(1, np.float32)
        kernel(engine.In(x * scale), np.int32(n), partial, engine.Out(out), block=(256, 1, 1),
               grid=(blocks, 1))
        sums.append(out[0])
    return [np.array(sums)], [np.array([1, 2]) * x.astype(np.float64).sum()]


def _step_down(engine, rng):
    counter = np.array([3], np.uint32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("step_down")(
        engine.InOut(counter), np.uint32(9), block=(250, 1, 1), grid=(3, 1))
    return [counter[0]], [(3 - 750) % 10]


def _half_pairs(engine, rng):
    n = 4096
    a, b, c = (rng.uniform(-4, 4, 2 * n).astype(np.float16) for _ in range(3))
    fused, contracted, apart = (np.zeros(2 * n, np.float16) for _ in range(3))
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("half_pairs")(
        engine.In(a), engine.In(b), engine.In(c), engine.Out(fused), engine.Out(contracted),
        engine.Out(apart), np.int32(n), block=(256, 1, 1), grid=(n // 256, 1))
    a64, b64, c64 = (v.astype(np.float64) for v in (a, b, c))  # exact products and sums
    once = (a64 * b64 + c64).astype(np.float16).view(np.uint16)
    twice = ((a64 * b64).astype(np.float16) + c).view(np.uint16)
    assert (once != twice).any()  # the inputs tell the two apart
    return [fused.view(np.uint16), contracted.view(np.uint16), apart.view(np.uint16)], \
        [once, once, twice]


def _same_keys(engine, rng):
    keys = rng.integers(0, 5, 256).astype(np.uint32)
    peers, total = np.zeros(256, np.uint32), np.zeros(256, np.uint32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("same_keys")(
        engine.In(keys), engine.Out(peers), engine.Out(total), block=(128, 1, 1), grid=(2, 1))
    warps = keys.reshape(-1, 32)
    lanes = (1 << np.arange(32, dtype=np.uint64))
    want = [((w[:, None] == w[None, :]) * lanes[None, :]).sum(axis=1) for w in warps]
    return [peers, total], [np.concatenate(want).astype(np.uint32),
                            np.repeat(warps.sum(axis=1), 32).astype(np.uint32)]


CASES = [_keep_above, _count_keys, _sum_last_block, _step_down, _half_pairs, _same_keys]


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def _compare(got, want):
    for g, w in zip(got, want, strict=True):
        if np.asarray(w).dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=1e-5)
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__[1:])
def test_on_the_emulator(case, rng):
    _compare(*case(emu, rng))


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__[1:])
def test_on_the_gpu(case, rng):
    import pycuda.driver as drv

    gpu = pycuda_engine()
    gpu.In, gpu.Out, gpu.InOut, gpu.mem_alloc = drv.In, drv.Out, drv.InOut, drv.mem_alloc
    _compare(*case(gpu, rng))
