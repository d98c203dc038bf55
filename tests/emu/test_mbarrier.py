"""Asynchronous barriers (``cuda::barrier``, raw ``mbarrier`` PTX) and the copies that arrive
on them (``cuda::memcpy_async``, ``cp.async.bulk``; ``cuda::pipeline`` and cooperative
groups' ``memcpy_async``) on the emulator against NumPy, and (marked ``gpu``) the same
kernels on a GPU against the same answers."""

from __future__ import annotations

import numpy as np
import pytest

from cudakit import emu
from cudakit.emu import mbarrier
from cudakit.emu.counts import InstructionCounter
from cudakit.errors import KernelFaultError, KernelTimeout

from .conftest import build
from .suite import pycuda_engine

SOURCE = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cstdint>
namespace cg = cooperative_groups;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

// warps 0-3 fill a tile, warps 4-7 sum it: each half waits at its own arrive_and_wait
extern "C" __global__ void produce_consume(const float* in, float* out, int rounds) {
    __shared__ block_barrier filled, emptied;
    __shared__ float tile[128];
    int t = threadIdx.x;
    if (t == 0) { init(&filled, blockDim.x); init(&emptied, blockDim.x); }
    __syncthreads();
    float acc = 0.0f;
    for (int r = 0; r < rounds; ++r) {
        if (t < 128) {
            tile[t] = 2.0f * in[(blockIdx.x * rounds + r) * 128 + t];
            filled.arrive_and_wait();
            emptied.arrive_and_wait();
        } else {
            filled.arrive_and_wait();
            acc += tile[t - 128];
            emptied.arrive_and_wait();
        }
    }
    if (t >= 128) out[blockIdx.x * 128 + t - 128] = acc;
}

// one thread copies the block's 4 KiB with a bulk copy (TMA on sm_90), all wait for it
extern "C" __global__ void bulk_stage(const float4* in, float* out) {
    __shared__ block_barrier ready;
    __shared__ alignas(128) float4 tile[256];
    if (threadIdx.x == 0) init(&ready, blockDim.x);
    __syncthreads();
    if (threadIdx.x == 0)
        cuda::memcpy_async(tile, in + blockIdx.x * 256, cuda::aligned_size_t<16>(sizeof(tile)),
                           ready);
    ready.arrive_and_wait();
    float4 v = tile[255 - threadIdx.x];
    out[blockIdx.x * 256 + threadIdx.x] = v.x + 2.0f * v.y + 3.0f * v.z + 4.0f * v.w;
}

// every thread copies one float (cp.async with an arrive-on), then all wait
extern "C" __global__ void word_stage(const float* in, float* out) {
    __shared__ block_barrier ready;
    __shared__ float tile[256];
    if (threadIdx.x == 0) init(&ready, blockDim.x);
    __syncthreads();
    cuda::memcpy_async(&tile[threadIdx.x], &in[blockIdx.x * 256 + threadIdx.x],
                       cuda::aligned_size_t<4>(sizeof(float)), ready);
    ready.arrive_and_wait();
    out[blockIdx.x * 256 + threadIdx.x] = tile[(threadIdx.x + 1) % 256];
}

// raw PTX, as CUTLASS writes it: a transaction barrier waited on by phase parity
extern "C" __global__ void parity_rounds(const float4* in, float* out, int rounds) {
    __shared__ alignas(8) uint64_t bar;
    __shared__ alignas(128) float4 tile[64];
    uint32_t b = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
    uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
    if (threadIdx.x == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(1));
    __syncthreads();
    float acc = 0.0f;
    for (int r = 0; r < rounds; ++r) {
        if (threadIdx.x == 0) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                         :: "r"(b), "r"(1024));
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                         " [%0], [%1], %2, [%3];"
                         :: "r"(dst), "l"(in + (blockIdx.x * rounds + r) * 64), "r"(1024),
                            "r"(b) : "memory");
        }
        asm volatile("{\n\t.reg .pred done;\n"
                     "WAIT:\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
                     "@!done bra WAIT;\n\t}" :: "r"(b), "r"(r & 1) : "memory");
        float4 v = tile[threadIdx.x];
        acc += v.x - v.y + v.z - v.w;
        __syncthreads();  // all have read the tile before the next copy lands
    }
    out[blockIdx.x * 64 + threadIdx.x] = acc;
}

// the CUDA programming guide's two-stage pipeline: a block-scoped cuda::pipeline
extern "C" __global__ void staged_sum(const float* in, float* out, int batches) {
    constexpr int stages = 2;
    auto block = cg::this_thread_block();
    extern __shared__ float stage[];  // stages x blockDim.x
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, stages> state;
    auto pipe = cuda::make_pipeline(block, &state);
    float acc = 0.0f;
    int fetch = 0;
    for (int use = 0; use < batches; ++use) {
        for (; fetch < batches && fetch < use + stages; ++fetch) {
            pipe.producer_acquire();
            cuda::memcpy_async(block, stage + (fetch % stages) * blockDim.x,
                               in + (blockIdx.x * batches + fetch) * blockDim.x,
                               sizeof(float) * blockDim.x, pipe);
            pipe.producer_commit();
        }
        pipe.consumer_wait();
        acc += stage[(use % stages) * blockDim.x + (blockDim.x - 1 - threadIdx.x)];
        pipe.consumer_release();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// cooperative groups' memcpy_async and wait
extern "C" __global__ void group_copy(const float* in, float* out) {
    auto block = cg::this_thread_block();
    extern __shared__ float tile[];
    cg::memcpy_async(block, tile, in + blockIdx.x * blockDim.x, sizeof(float) * blockDim.x);
    cg::wait(block);
    out[blockIdx.x * blockDim.x + threadIdx.x] = 2.0f * tile[(threadIdx.x + 1) % blockDim.x];
}

// a barrier initialised for fewer threads than arrive
extern "C" __global__ void too_many(float* out) {
    __shared__ block_barrier bar;
    if (threadIdx.x == 0) init(&bar, 32);
    __syncthreads();
    bar.arrive_and_wait();
    out[threadIdx.x] = 1.0f;
}

// a barrier initialised for more threads than arrive: its phase never completes
extern "C" __global__ void never_done(float* out) {
    __shared__ block_barrier bar;
    if (threadIdx.x == 0) init(&bar, 2 * blockDim.x);
    __syncthreads();
    bar.arrive_and_wait();
    out[threadIdx.x] = 1.0f;
}
"""


def _floats(rng, n):
    return rng.integers(-8, 8, n).astype(np.float32)


def _produce_consume(engine, rng):
    rounds, blocks = 5, 3
    x = _floats(rng, blocks * rounds * 128)
    out = np.zeros(blocks * 128, np.float32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("produce_consume")(
        engine.In(x), engine.Out(out), np.int32(rounds), block=(256, 1, 1), grid=(blocks, 1))
    return out, 2 * x.reshape(blocks, rounds, 128).sum(axis=1).ravel()


def _bulk_stage(engine, rng):
    x = _floats(rng, 2 * 256 * 4)
    out = np.zeros(2 * 256, np.float32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("bulk_stage")(
        engine.In(x), engine.Out(out), block=(256, 1, 1), grid=(2, 1))
    v = x.reshape(2, 256, 4)[:, ::-1]
    return out, (v @ np.float32([1, 2, 3, 4])).ravel()


def _word_stage(engine, rng):
    x = _floats(rng, 2 * 256)
    out = np.zeros(2 * 256, np.float32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("word_stage")(
        engine.In(x), engine.Out(out), block=(256, 1, 1), grid=(2, 1))
    return out, np.roll(x.reshape(2, 256), -1, axis=1).ravel()


def _parity_rounds(engine, rng):
    rounds, blocks = 4, 2
    x = _floats(rng, blocks * rounds * 64 * 4)
    out = np.zeros(blocks * 64, np.float32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("parity_rounds")(
        engine.In(x), engine.Out(out), np.int32(rounds), block=(64, 1, 1), grid=(blocks, 1))
    v = x.reshape(blocks, rounds, 64, 4)
    return out, (v @ np.float32([1, -1, 1, -1])).sum(axis=1).ravel()


def _staged_sum(engine, rng):
    blocks, batches, threads = 3, 5, 128
    x = _floats(rng, blocks * batches * threads)
    out = np.zeros(blocks * threads, np.float32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("staged_sum")(
        engine.In(x), engine.Out(out), np.int32(batches), block=(threads, 1, 1),
        grid=(blocks, 1), shared=2 * threads * 4)
    return out, x.reshape(blocks, batches, threads)[:, :, ::-1].sum(axis=1).ravel()


def _group_copy(engine, rng):
    x = _floats(rng, 3 * 128)
    out = np.zeros(3 * 128, np.float32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("group_copy")(
        engine.In(x), engine.Out(out), block=(128, 1, 1), grid=(3, 1), shared=128 * 4)
    return out, 2 * np.roll(x.reshape(3, 128), -1, axis=1).ravel()


CASES = [_produce_consume, _bulk_stage, _word_stage, _parity_rounds, _staged_sum, _group_copy]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__[1:])
def test_asynchronous_barriers_match_numpy(case, rng):
    got, want = case(emu, rng)
    np.testing.assert_array_equal(got, want)


def test_each_lanes_bulk_copy_is_counted_once(rng):
    """The model prices bulk copies per lane (ptxas issues a warp's one lane at a time):
    ``bulk_stage`` has thread 0 of each of 2 blocks copy once, ``parity_rounds`` once a round
    in each of 2 blocks, ``word_stage`` none (``cp.async`` with an arrive-on)."""
    for case, copies in ((_bulk_stage, 2), (_parity_rounds, 2 * 4), (_word_stage, 0)):
        counter = InstructionCounter()
        engine = type("Counted", (), {"SourceModule": _counted(counter), "In": emu.In,
                                      "Out": emu.Out})
        got, want = case(engine, rng)
        np.testing.assert_array_equal(got, want)
        assert counter.bulk_copies == copies, case.__name__


def _counted(counter):
    """An emulator ``SourceModule`` whose functions count into ``counter``."""
    def module(source, **kw):
        mod = emu.SourceModule(source, **kw)
        get = mod.get_function

        def function(name):
            f = get(name)
            return lambda *args, **launch: f(*args, counter=counter, **launch)
        mod.get_function = function
        return mod
    return module


def test_more_arrivals_than_the_barrier_expects_are_reported():
    with pytest.raises(KernelFaultError, match="more threads arrived.*init\\(\\)"):
        build(SOURCE).get_function("too_many")(emu.mem_alloc(64 * 4), block=(64, 1, 1),
                                               grid=(1, 1))


def test_a_phase_that_never_completes_times_out_with_its_line():
    with pytest.raises(KernelTimeout, match="kernel 'never_done' did not finish"):
        build(SOURCE).get_function("never_done")(emu.mem_alloc(64 * 4), block=(64, 1, 1),
                                                 grid=(1, 1), timeout=0.5)


def test_the_word_counts_arrivals_bytes_and_phases():
    word = mbarrier.pack(pending=3, expected=3, tx=0, phase=0)
    word, tokens, over = mbarrier.arrive_words(word, np.int64(2), np.int64(512))
    assert mbarrier.unpack(word) == (1, 3, 512, 0) and not over
    word, tokens, over = mbarrier.arrive_words(word, np.int64(1), np.int64(0))
    assert mbarrier.unpack(word) == (0, 3, 512, 0)  # all arrived, 512 bytes still to come
    assert not mbarrier.completed(word, tokens >> np.uint64(63))
    pending, expected, tx, phase = mbarrier.unpack(word)
    word = mbarrier.pack(pending, expected, 0, phase)  # complete_tx of 512 bytes, settled:
    assert mbarrier.unpack(mbarrier.arrive_words(word, np.int64(0), np.int64(0))[0]) == \
        (3, 3, 0, 1)


def _gpu():
    import pycuda.driver as drv

    return type("Gpu", (), {"SourceModule": pycuda_engine().SourceModule, "In": drv.In,
                            "Out": drv.Out})


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__[1:])
def test_the_same_kernels_on_the_gpu(case, rng):
    got, want = case(_gpu(), rng)
    np.testing.assert_array_equal(got, want)
