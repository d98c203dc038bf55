"""Barriers for part of a block (``bar.sync id, n`` / ``bar.arrive``), ``malloc`` and
``free`` in kernels, and SIMD video instructions, on the emulator against NumPy and
against the GPU's outputs (``fixtures/h200_video.npz``, made by ``record_video.py``);
the kernels marked ``gpu`` run the same checks on a GPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cudakit import emu
from cudakit.emu.device_heap import DEVICE_HEAP
from cudakit.errors import (
    BarrierError,
    KernelFaultError,
    LaunchError,
    MemcheckError,
    RaceError,
    UnsupportedError,
)

from .device_code import SOURCE, VIDEO, run_video
from .suite import pycuda_engine

FIXTURE = Path(__file__).parent / "fixtures" / "h200_video.npz"


def _producer_consumer(engine, rng):
    blocks, rounds = 3, 5
    x = rng.random(blocks * rounds * 64, dtype=np.float32)
    out = np.zeros(blocks * 64, np.float32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("producer_consumer")(
        engine.In(x), engine.Out(out), np.int32(rounds), block=(128, 1, 1), grid=(blocks, 1))
    tiles = x.reshape(blocks, rounds, 64)[:, :, ::-1].astype(np.float64)
    want = (tiles * np.arange(1, rounds + 1)[None, :, None]).sum(axis=1).reshape(-1)
    return out, want


def _halves(engine, rng):
    x = rng.integers(0, 1000, 4 * 256, dtype=np.int32)
    out = np.zeros_like(x)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("halves")(
        engine.In(x), engine.Out(out), block=(256, 1, 1), grid=(4, 1))
    return out, x.reshape(-1, 128)[:, ::-1].reshape(-1)


def _heap_lists(engine, rng):
    n = rng.integers(1, 40, 256).astype(np.int32)
    out = np.zeros(256, np.int64)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("heap_lists")(
        engine.In(n), engine.Out(out), block=(64, 1, 1), grid=(4, 1))
    i = np.arange(256, dtype=np.int64)
    return out, (i + 1) * n * (n - 1) // 2


def _heap_across_launches(engine, rng):
    mod = engine.SourceModule(SOURCE, no_extern_c=True)
    blocks, n = 5, 300
    kept = engine.mem_alloc(8 * blocks)
    out = np.zeros(blocks, np.float32)
    mod.get_function("heap_keep")(kept, np.int32(n), block=(64, 1, 1), grid=(blocks, 1))
    mod.get_function("heap_use")(kept, np.int32(n), engine.Out(out), block=(64, 1, 1),
                                 grid=(blocks, 1))
    k = np.arange(n)
    return out, np.array([(b + 0.5 * k).sum() for b in range(blocks)], np.float32)


def _grid_sum(engine, rng, kernel=None):
    x = rng.random(50_000, dtype=np.float32)
    out = np.zeros(2, np.float32)
    blocks = 2 * 132  # two blocks of 128 threads on each SM of an H100 or H200
    kernel = kernel or engine.SourceModule(SOURCE, no_extern_c=True).get_function("grid_sum")
    kernel(engine.In(x), engine.mem_alloc(4 * blocks), engine.Out(out), np.int32(x.size),
           block=(128, 1, 1), grid=(blocks, 1), cooperative=True)
    return out, np.array([1, 2]) * x.sum(dtype=np.float64)


CASES = [_producer_consumer, _halves, _heap_lists, _heap_across_launches, _grid_sum]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__[1:])
def test_part_barriers_and_the_heap_match_numpy(case, rng):
    used = DEVICE_HEAP.used
    got, want = case(emu, rng)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert DEVICE_HEAP.used == used  # every block was freed


def test_a_barrier_that_is_never_complete_names_its_line_and_count():
    fn = emu.SourceModule(SOURCE, no_extern_c=True).get_function("short_barrier")
    out = emu.mem_alloc(4 * 128)
    with pytest.raises(BarrierError, match=r"barrier 3 at line \d+ .* waits for 96 threads, "
                                           r"but only 64 arrived"):
        fn(out, np.int32(96), block=(128, 1, 1), grid=(1, 1))
    fn(out, np.int32(64), block=(128, 1, 1), grid=(1, 1))  # 64 of them arrive: it completes
    with pytest.raises(BarrierError, match="positive multiple of 32"):
        fn(out, np.int32(48), block=(128, 1, 1), grid=(1, 1))


def test_a_named_barrier_is_not_the_blocks_barrier():
    # warp 0 waits at barrier 1 for the whole block, warp 1 at __syncthreads(): a GPU hangs
    src = r"""extern "C" __global__ void apart(int* out) {
        if (threadIdx.x < 32) asm volatile("bar.sync 1, 64;");
        else __syncthreads();
        out[threadIdx.x] = 1;
    }"""
    fn = emu.SourceModule(src, no_extern_c=True).get_function("apart")
    with pytest.raises(BarrierError, match=r"barrier 1 at line 2 .* only 32 arrived"):
        fn(emu.mem_alloc(256), block=(64, 1, 1), grid=(1, 1))


def test_racecheck_sees_a_read_before_the_named_barrier():
    fn = emu.SourceModule(SOURCE, no_extern_c=True).get_function("unsynchronised")
    x = np.ones(64, np.float32)
    with pytest.raises(RaceError):
        fn(emu.In(x), emu.Out(np.zeros(64, np.float32)), block=(128, 1, 1), grid=(1, 1))


def test_grid_sync_needs_a_cooperative_launch_of_resident_blocks():
    fn = emu.SourceModule(SOURCE, no_extern_c=True).get_function("grid_sum")
    x, out = np.ones(1000, np.float32), np.zeros(2, np.float32)
    partial = emu.mem_alloc(4 * 4000)
    with pytest.raises(UnsupportedError, match=r"cooperative=True \(line \d+ of kernel "
                                               r"'grid_sum'\)"):
        fn(emu.In(x), partial, emu.Out(out), np.int32(1000), block=(128, 1, 1), grid=(8, 1))
    # 128 threads and 512 bytes of shared memory: 16 blocks on each of 132 SMs at once
    with pytest.raises(LaunchError, match="at most 2112 blocks"):
        fn(emu.In(x), partial, emu.Out(out), np.int32(1000), block=(128, 1, 1),
           grid=(2113, 1), cooperative=True)


def test_predict_says_it_does_not_model_grid_sync():
    import cudakit

    x = np.ones(1000, np.float32)
    with pytest.raises(UnsupportedError, match=r"grid_sum' synchronises the whole grid"):
        cudakit.predict(SOURCE, "grid_sum", grid=(8, 1, 1), block=(128, 1, 1),
                        args=(x, np.zeros(8, np.float32), np.zeros(2, np.float32),
                              np.int32(1000)))


def test_malloc_beyond_the_heap_limit_gives_null_until_the_limit_is_raised():
    n = np.full(64, 4000, np.int32)  # 64 lists of 32 kB: 2 MB, over a heap of 1 MiB
    out = np.zeros(64, np.int64)
    fn = emu.SourceModule(SOURCE, no_extern_c=True).get_function("heap_lists")
    assert emu.Context.get_limit(emu.limit.MALLOC_HEAP_SIZE) == 8 << 20  # CUDA's default
    try:
        emu.Context.set_limit(emu.limit.MALLOC_HEAP_SIZE, DEVICE_HEAP.used + (1 << 20))
        fn(emu.In(n), emu.Out(out), block=(64, 1, 1), grid=(1, 1))
        fits = (1 << 20) // (4000 * 8)
        assert (out[:fits] >= 0).all() and (out[fits:] == -1).all()
        emu.Context.set_limit(emu.limit.MALLOC_HEAP_SIZE, DEVICE_HEAP.used + (4 << 20))
        fn(emu.In(n), emu.Out(out), block=(64, 1, 1), grid=(1, 1))
    finally:
        emu.Context.set_limit(emu.limit.MALLOC_HEAP_SIZE, 8 << 20)
    assert (out == (np.arange(64) + 1) * 4000 * 3999 // 2).all()


def test_heap_misuse_is_reported_with_the_line():
    mod = emu.SourceModule(SOURCE, no_extern_c=True)
    with pytest.raises(MemcheckError, match="a block malloc.. gave at line"):
        mod.get_function("heap_overflow")(np.int32(10), block=(32, 1, 1), grid=(1, 1))
    with pytest.raises(KernelFaultError, match=r"free\(0x[0-9a-f]+\) at line \d+ of kernel "
                                               r"'heap_twice': no block malloc"):
        mod.get_function("heap_twice")(block=(1, 1, 1), grid=(1, 1))


def _simd_intrinsics(engine, rng):
    a = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    out = np.zeros(4 * 256, np.uint32)
    engine.SourceModule(SOURCE, no_extern_c=True).get_function("simd_intrinsics")(
        engine.In(a), engine.In(b), engine.Out(out), block=(128, 1, 1), grid=(2, 1))
    def parts(x, dtype, n):
        return x.view(dtype).reshape(-1, n).astype(int)

    ua, ub = parts(a, np.uint8, 4), parts(b, np.uint8, 4)
    sa, sb = parts(a, np.int8, 4), parts(b, np.int8, 4)
    ha, hb = parts(a, np.uint16, 2), parts(b, np.uint16, 2)
    bytes_diff = np.abs(ua - ub)
    want = np.stack([(bytes_diff << [0, 8, 16, 24]).sum(axis=1), bytes_diff.sum(axis=1),
                     np.abs(sa - sb).sum(axis=1), np.abs(ha - hb).sum(axis=1)],
                    axis=1).reshape(-1).astype(np.uint32)
    return out, want


def test_simd_intrinsics_match_numpy(rng):
    got, want = _simd_intrinsics(emu, rng)
    np.testing.assert_array_equal(got, want)


def test_video_instructions_match_the_gpu():
    recorded = np.load(FIXTURE)
    assert list(recorded["forms"]) == VIDEO
    mine = run_video(emu, recorded["a"], recorded["b"], recorded["c"])
    for form, m, g in zip(VIDEO, mine, recorded["out"], strict=True):
        np.testing.assert_array_equal(m, g, err_msg=form)


def _gpu():
    import pycuda.driver as drv

    gpu = pycuda_engine()
    gpu.In, gpu.Out, gpu.mem_alloc = drv.In, drv.Out, drv.mem_alloc
    return gpu


@pytest.mark.gpu
@pytest.mark.parametrize("case", [c for c in CASES if c is not _grid_sum] + [_simd_intrinsics],
                         ids=lambda c: c.__name__[1:])
def test_the_same_kernels_on_the_gpu(case, rng):
    got, want = case(_gpu(), rng)
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.gpu
def test_a_cooperative_launch_on_the_gpu(rng):
    from cudakit import gpu

    kernel = gpu.SourceModule(SOURCE, no_extern_c=True).get_function("grid_sum")
    got, want = _grid_sum(_gpu(), rng, kernel)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    engine = _gpu()
    with pytest.raises(LaunchError, match="COOPERATIVE_LAUNCH_TOO_LARGE"):
        kernel(engine.In(np.zeros(1, np.float32)), engine.mem_alloc(4 << 20),
               engine.Out(np.zeros(2, np.float32)), np.int32(1), block=(1024, 1, 1),
               grid=(100_000, 1), cooperative=True)
