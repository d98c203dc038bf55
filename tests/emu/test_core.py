"""Core kernels on the emulator, compared with NumPy."""

from __future__ import annotations

import numpy as np

from cudakit import emu

from .conftest import build

REDUCE = r"""
__global__ void reduce(const float* in, float* out, int n) {
    extern __shared__ float s[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[tid] = v;
    __syncthreads();
    for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
"""

MATMUL = r"""
#define TILE 16
__global__ void matmul(const float* A, const float* B, float* C, int N) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < N / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = A[row * N + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * N + col];
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * N + col] = acc;
}
"""


def test_vector_add_partial_last_block(rng):
    mod = build("""
    __global__ void add(const float* a, const float* b, float* c, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) c[i] = a[i] + b[i];
    }""")
    n = 1000
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    mod.get_function("add")(emu.In(a), emu.In(b), emu.Out(c), np.int32(n),
                            grid=((n + 127) // 128, 1), block=(128, 1, 1))
    np.testing.assert_array_equal(c, a + b)


def test_tree_reduction_dynamic_shared(rng):
    mod = build(REDUCE)
    n = 5000
    x = rng.random(n, dtype=np.float32)
    blocks = (n + 511) // 512
    out = np.zeros(blocks, np.float32)
    mod.get_function("reduce")(emu.In(x), emu.Out(out), np.int32(n), grid=(blocks, 1),
                               block=(256, 1, 1), shared=256 * 4)
    expect = [x[i * 512:(i + 1) * 512].astype(np.float64).sum() for i in range(blocks)]
    np.testing.assert_allclose(out, expect, rtol=1e-5)


def test_tiled_matmul_2d_grid(rng):
    mod = build(MATMUL)
    n = 48
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.zeros_like(a)
    mod.get_function("matmul")(emu.In(a), emu.In(b), emu.Out(c), np.int32(n),
                               grid=(n // 16, n // 16), block=(16, 16, 1))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5)


def test_device_memory_api_roundtrip():
    x = np.arange(10, dtype=np.int32)
    d = emu.mem_alloc(x.nbytes)
    emu.memcpy_htod(d, x)
    d2 = emu.mem_alloc(x.nbytes)
    emu.memcpy_dtod(d2, d, x.nbytes)
    y = np.empty_like(x)
    emu.memcpy_dtoh(y, d2)
    np.testing.assert_array_equal(x, y)
    g = emu.gpuarray.to_gpu(x)
    np.testing.assert_array_equal(g.get(), x)
    assert (g.shape, g.dtype, g.size, g.nbytes) == ((10,), np.dtype(np.int32), 10, 40)
    d.free()
    d2.free()


def test_memory_handed_out_again_is_zero_and_growth_keeps_what_was_written():
    # the heap zeroes only what was ever written (a fresh arena is the system's zero pages)
    # and copies only that when it grows: whatever was written, by a copy or by a kernel,
    # must come back as zeros once freed, and must survive a growth
    from cudakit.emu.memory import HEAP_BASE, Heap

    heap = Heap()
    a = heap.alloc(4096)
    heap.write(a, np.full(1024, 7, np.int32))
    heap.free(a)
    b = heap.alloc(4096)  # the same range, written before: zeroed
    assert not heap.read(b, 4096).any()
    heap.write(b, np.arange(1024, dtype=np.int32))
    c = heap.alloc(64 << 20)  # grows the arena, past everything written
    assert not heap.read(c, 64 << 20).any()
    assert (heap.read(b, 4096).view(np.int32) == np.arange(1024)).all()
    d = heap.alloc(4096)
    heap.launching()  # a kernel may write any live allocation: here the last one
    heap.view(np.int32)[(d - HEAP_BASE) // 4:(d - HEAP_BASE) // 4 + 1024] = 9
    heap.free(d)
    assert not heap.read(heap.alloc(4096), 4096).any()


def test_a_kernel_never_sees_what_a_freed_buffer_held():
    k = build(r"""
    __global__ void fill(int *a) { a[threadIdx.x] = 5; }
    __global__ void copy(const int *a, int *b) { b[threadIdx.x] = a[threadIdx.x]; }""")
    from cudakit.emu.memory import HEAP

    # above all the process has written so far: only the kernel writes a
    spacer = emu.mem_alloc(max(HEAP._written - HEAP._top, 0) + 1)
    a = emu.mem_alloc(256 * 4)
    k.get_function("fill")(a, grid=(1,), block=(256,))
    a.free()
    fresh, out = emu.mem_alloc(256 * 4), emu.mem_alloc(256 * 4)
    k.get_function("copy")(fresh, out, grid=(1,), block=(256,))
    assert not emu.from_device(out, (256,), np.int32).any()
    spacer.free()


def test_zeroing_a_range_hands_whole_pages_back_and_writes_the_edges():
    import mmap
    import sys

    from cudakit.emu.memory import _mapping, _zero, _zeroed_arena

    page = mmap.PAGESIZE
    arena = _zeroed_arena(64 * page)
    # on Linux the arena is an anonymous mapping whose pages madvise hands back
    assert (_mapping(arena) is not None) == sys.platform.startswith("linux")
    arena[:] = 7
    _zero(arena, 3, 40 * page + 5)  # 3 bytes into the first page, 5 into the 41st
    assert (arena[:3] == 7).all() and (arena[40 * page + 5:] == 7).all()
    assert not arena[3:40 * page + 5].any()
