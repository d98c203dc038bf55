"""The PyCUDA-shaped host API: memory, copies, pitched 2D, events, streams, gpuarray, symbols."""

from __future__ import annotations

import numpy as np
import pytest

from cudakit import emu

from .conftest import build


def test_memcpy_family_and_memset():
    x = np.arange(10, dtype=np.int32)
    d = emu.mem_alloc(x.nbytes)
    emu.memcpy_htod(d, x)
    d2 = emu.mem_alloc_like(x)
    emu.memcpy_dtod(d2, d, x.nbytes)
    y = np.empty_like(x)
    emu.memcpy_dtoh(y, d2)
    np.testing.assert_array_equal(x, y)
    emu.memset_d32(d2, 7, 10)
    np.testing.assert_array_equal(emu.from_device_like(d2, x), np.full(10, 7))
    emu.memcpy_htod(int(d) + 8, np.array([99], np.int32))  # addresses are plain integers
    assert emu.from_device(d, (10,), np.int32)[2] == 99
    with pytest.raises(emu.MemcheckError):
        emu.memcpy_htod(d, np.zeros(11, np.int32))


def test_async_copies_streams_and_events():
    s = emu.Stream()
    host = emu.pagelocked_empty((256,), np.float32)
    host[:] = np.arange(256)
    d = emu.mem_alloc(host.nbytes)
    start, end = emu.Event(), emu.Event()
    start.record(s)
    emu.memcpy_htod_async(d, host, s)
    back = emu.pagelocked_zeros((256,), np.float32)
    emu.memcpy_dtoh_async(back, d, s)
    end.record(s)
    end.synchronize()
    s.synchronize()
    emu.Context.synchronize()
    assert end.query() and s.is_done()
    np.testing.assert_array_equal(back, host)
    assert start.time_till(end) == pytest.approx(end.time_since(start))
    assert start.time_till(end) >= 0
    assert "emulated" in repr(end)


def test_pitched_allocation_and_memcpy2d():
    h, w = 5, 7
    a = np.arange(h * w, dtype=np.float32).reshape(h, w)
    d, pitch = emu.mem_alloc_pitch(w * 4, h, 4)
    assert pitch % 512 == 0 and pitch >= w * 4
    up = emu.Memcpy2D()
    up.set_src_host(a)
    up.set_dst_device(d)
    up.src_pitch, up.dst_pitch, up.width_in_bytes, up.height = w * 4, pitch, w * 4, h
    up(aligned=True)
    mod = build("""__global__ void scale(float* p, size_t pitch, int w, int h) {
        int x = threadIdx.x, y = blockIdx.x;
        if (x < w && y < h) {
            float* row = (float*)((char*)p + y * pitch);
            row[x] *= 2.0f;
        }
    }""")
    mod.get_function("scale")(d, np.uint64(pitch), np.int32(w), np.int32(h), grid=(h, 1),
                              block=(32, 1, 1))
    out = np.zeros_like(a)
    down = emu.Memcpy2D()
    down.set_src_device(d)
    down.set_dst_host(out)
    down.src_pitch, down.dst_pitch, down.width_in_bytes, down.height = pitch, w * 4, w * 4, h
    down()
    np.testing.assert_array_equal(out, 2 * a)


def test_gpuarray_basics():
    g = emu.gpuarray.to_gpu(np.arange(6, dtype=np.float64).reshape(2, 3))
    assert (g.shape, g.dtype, g.size, g.nbytes) == ((2, 3), np.dtype(np.float64), 6, 48)
    z = emu.gpuarray.zeros(4, np.int32)
    e = emu.gpuarray.empty((4,), np.int32)
    mod = build("__global__ void inc(int* a, const int* b) { a[threadIdx.x] = b[threadIdx.x]+1; }")
    mod.get_function("inc")(e, z.gpudata, block=(4, 1, 1))
    assert e.get().tolist() == [1, 1, 1, 1]
    assert g.get()[1, 2] == 5


def test_constant_and_device_symbols():
    mod = build("""__constant__ float coef[4];
    __device__ int hits = 5;
    __global__ void k(float* out) {
        out[threadIdx.x] = coef[threadIdx.x] * 2.0f;
        atomicAdd(&hits, 1);
    }""")
    ptr, size = mod.get_global("coef")
    assert size == 16
    emu.memcpy_htod(ptr, np.array([1, 2, 3, 4], np.float32))
    out = np.zeros(4, np.float32)
    mod.get_function("k")(emu.Out(out), block=(4, 1, 1))
    assert out.tolist() == [2, 4, 6, 8]
    hp, _ = mod.get_global("hits")
    assert emu.from_device(hp, (1,), np.int32)[0] == 9
    with pytest.raises(emu.LaunchError, match="no __device__ or __constant__ symbol"):
        mod.get_global("nope")


def test_kernel_names_templates_and_mangled():
    mod = build("""template <int B> __global__ void fill(int* a) { a[threadIdx.x] = B; }
    extern "C" __global__ void plain(int* a) { a[threadIdx.x] = -1; }""")
    a = np.zeros(4, np.int32)
    mod.get_function("fill<7>")(emu.InOut(a), block=(4, 1, 1))
    assert a.tolist() == [7] * 4
    mod.get_function("_Z5plainPi")(emu.InOut(a), block=(2, 1, 1))
    assert a.tolist() == [-1, -1, 7, 7]
    with pytest.raises(emu.LaunchError, match="kernels: fill, plain"):
        mod.get_function("missing")
    with pytest.raises(emu.LaunchError, match="template arguments"):
        mod.get_function("fill")


def test_function_attributes():
    f = build("""__global__ void k(float* a) {
        __shared__ float s[32][33];
        float t[6];
        for (int i = 0; i < 6; ++i) t[i] = i;
        s[threadIdx.x][0] = t[threadIdx.x % 6];
        a[threadIdx.x] = s[threadIdx.x][0];
    }""").get_function("k")
    assert (f.shared_size_bytes, f.local_size_bytes, f.max_threads_per_block) == \
        (32 * 33 * 4, 32, 1024)  # local arrays are laid out in 16-byte steps


def test_defines_from_options():
    mod = emu.SourceModule("""__global__ void k(int* a) {
    #if SCALE > 2
        a[threadIdx.x] = SCALE * 10;
    #else
        a[threadIdx.x] = SCALE;
    #endif
    }""", options=["-DSCALE=3"], no_extern_c=True)
    a = np.zeros(2, np.int32)
    mod.get_function("k")(emu.Out(a), block=(2, 1, 1))
    assert a.tolist() == [30, 30]


def test_printf_once_per_thread_in_block_then_thread_order(capsys):
    mod = build(r"""__global__ void hello(float f) {
        if (threadIdx.x % 2 == 0) printf("b%d t%u %.1f %5.2e 0x%x %s 100%%\n", blockIdx.x,
                                         threadIdx.x, f * threadIdx.x, (double)f, -1, "ok");
    }""")
    mod.get_function("hello")(np.float32(0.5), grid=(2, 1), block=(4, 1, 1))
    assert capsys.readouterr().out.splitlines() == [
        "b0 t0 0.0 5.00e-01 0xffffffff ok 100%", "b0 t2 1.0 5.00e-01 0xffffffff ok 100%",
        "b1 t0 0.0 5.00e-01 0xffffffff ok 100%", "b1 t2 1.0 5.00e-01 0xffffffff ok 100%"]


def test_doctests_of_the_emulator_modules():
    import doctest
    import importlib

    for name in ("frontend", "decode", "numeric", "warp", "batch", "memory", "racecheck",
                 "driver", "gpuarray", "module", "trace", "video", "device_heap"):
        mod = importlib.import_module(f"cudakit.emu.{name}")
        assert doctest.testmod(mod).failed == 0, name
    assert doctest.testmod(emu).failed == 0
