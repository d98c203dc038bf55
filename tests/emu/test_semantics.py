"""C and CUDA semantics the labs rely on, each against an independent NumPy computation."""

from __future__ import annotations

import numpy as np
import pytest

from cudakit import emu

from .conftest import build


def run(src, name, *arrays, block=(32, 1, 1), grid=(1, 1), scalars=()):
    """Launch with ``arrays`` copied in and out; return the arrays after the kernel."""
    host = [a.copy() for a in arrays]
    build(src).get_function(name)(*[emu.InOut(a) for a in host], *scalars, grid=grid,
                                  block=block)
    return host


def test_float_arithmetic_stays_single_precision_and_double_promotes():
    src = """__global__ void k(float* f, double* d) {
        float a = 0.1f, b = 0.2f;
        f[0] = a + b;
        f[1] = a * 3.0f;
        d[0] = a + 0.2;           // float + double literal: computed in double
        d[1] = (double)a * 3.0;
        f[2] = 16777216.0f + 1.0f; // 2^24 + 1 is not a float
    }"""
    f, d = run(src, "k", np.zeros(3, np.float32), np.zeros(2, np.float64), block=(1, 1, 1))
    a, b = np.float32(0.1), np.float32(0.2)
    assert f.tolist() == [a + b, a * np.float32(3), np.float32(16777216)]
    assert d.tolist() == [np.float64(a) + 0.2, np.float64(a) * 3.0]


def test_float_to_int_conversions_saturate_like_the_gpu():
    src = """__global__ void k(const float* x, int* i, unsigned int* u) {
        int t = threadIdx.x;
        i[t] = (int)x[t];
        u[t] = (unsigned int)x[t];
        i[8 + t] = __float2int_rn(x[t]);
    }"""
    x = np.array([3e10, -3e10, -1.5, 2.5, np.nan, np.inf, 7.99, -0.0], np.float32)
    _, i, u = run(src, "k", x, np.zeros(16, np.int32), np.zeros(8, np.uint32),
                  block=(8, 1, 1))
    big, small = 2**31 - 1, -2**31
    assert i[:8].tolist() == [big, small, -1, 2, 0, big, 7, 0]
    assert u.tolist() == [2**32 - 1, 0, 0, 2, 0, 2**32 - 1, 7, 0]
    assert i[8:].tolist() == [big, small, -2, 2, 0, big, 8, 0]


def test_fma_contraction_like_nvcc():
    src = """__device__ float prod(const float* a, const float* b, int i, float* spill) {
        spill[i] += a[i] * b[i];  // a nested fused update with its own target
        return a[i];
    }
    __global__ void k(const float* a, const float* b, const float* c, float* o) {
        int i = threadIdx.x;
        float acc = c[i];
        o[i] = a[i] * b[i] + c[i];
        o[32 + i] = c[i] - a[i] * b[i];
        acc += a[i] * b[i];
        o[64 + i] = acc;
        o[96 + i] = c[i];
        o[96 + i] += prod(a, b, i, o + 128) * b[i];
    }"""
    r = np.random.default_rng(3)
    a, b, c = (r.random(32, dtype=np.float32) * 10 for _ in range(3))
    *_, o = run(src, "k", a, b, c, np.zeros(160, np.float32))
    fused = (a.astype(np.float64) * b + c).astype(np.float32)
    np.testing.assert_array_equal(o[:32], fused)
    np.testing.assert_array_equal(o[32:64], (c - a.astype(np.float64) * b).astype(np.float32))
    np.testing.assert_array_equal(o[64:96], fused)
    np.testing.assert_array_equal(o[96:128], fused)
    np.testing.assert_array_equal(o[128:], (a.astype(np.float64) * b).astype(np.float32))


def test_unsigned_arithmetic_and_division_by_zero():
    src = """__global__ void k(unsigned int* u, int* s) {
        unsigned int zero = threadIdx.x, big = 4000000000u;
        u[0] = big + big;          // wraps modulo 2^32
        u[1] = 7u / zero;          // the GPU gives all ones
        u[2] = big >> 31;
        s[0] = -7 / (int)zero;     // signed: -1
        s[1] = (int)big;
    }"""
    u, s = run(src, "k", np.zeros(3, np.uint32), np.zeros(2, np.int32), block=(1, 1, 1))
    assert u.tolist() == [(8000000000) % 2**32, 2**32 - 1, 1]
    assert s.tolist() == [-1, 4000000000 - 2**32]


def test_pointers_typedef_local_2d_array_and_nested_loops():
    src = """typedef float real;
    __global__ void k(const real* in, real* out, long long* diff) {
        real m[2][3] = {{1, 2, 3}, {4, 5, 6}};
        const real* p = in + threadIdx.x;
        real* q = out + 2 * threadIdx.x;
        real s = 0;
        for (int r = 0; r < 2; ++r) {
            int c = 0;
            do {
                if (c == 1 && threadIdx.x % 2) { c++; continue; }
                s += m[r][c] * *p;
                c++;
            } while (c < 3);
            if (threadIdx.x == 3) break;
        }
        q[0] = s;
        q[1] = p[0];
        diff[threadIdx.x] = q - out;
    }"""
    x = np.arange(8, dtype=np.float32) + 1
    _, out, diff = run(src, "k", x, np.zeros(16, np.float32), np.zeros(8, np.int64),
                       block=(8, 1, 1))
    # even threads: 1+..+6; odd ones skip column 1 (2 and 5); thread 3 stops after row 0
    weights = np.array([21, 14, 21, 1 + 3, 21, 14, 21, 14], np.float32)
    np.testing.assert_array_equal(out[0::2], weights * x)
    np.testing.assert_array_equal(out[1::2], x)
    assert diff.tolist() == [2 * t for t in range(8)]


def test_atomic_return_values_are_a_permutation():
    src = """__global__ void k(int* count, int* slots) {
        int t = blockIdx.x * blockDim.x + threadIdx.x;
        int my = atomicAdd(count, 1);
        slots[my] = t;
    }"""
    count, slots = run(src, "k", np.zeros(1, np.int32), np.full(300, -1, np.int32),
                       block=(100, 1, 1), grid=(3, 1))
    assert count[0] == 300
    assert sorted(slots.tolist()) == list(range(300))


def test_float_and_double_atomics_and_cas_loop():
    src = """__device__ float atomic_mul(float* addr, float v) {
        int* p = (int*)addr;
        int old = *p, assumed;
        do {
            assumed = old;
            old = atomicCAS(p, assumed, __float_as_int(v * __int_as_float(assumed)));
        } while (assumed != old);
        return __int_as_float(old);
    }
    __global__ void k(float* f, double* d, float* prod) {
        atomicAdd(f, 0.5f);
        atomicAdd(d, 0.25);
        if (threadIdx.x < 10) atomic_mul(prod, 2.0f);
    }"""
    f, d, prod = run(src, "k", np.zeros(1, np.float32), np.zeros(1, np.float64),
                     np.ones(1, np.float32), block=(64, 1, 1))
    assert (f[0], d[0], prod[0]) == (32.0, 16.0, 1024.0)


def test_syncthreads_count_and_or_and_assert():
    src = """__global__ void k(int* out) {
        int t = threadIdx.x;
        out[t] = __syncthreads_count(t % 3 == 0) + 100 * __syncthreads_or(t == 5)
                 + 1000 * __syncthreads_and(t < 64);
    }"""
    (out,) = run(src, "k", np.zeros(64, np.int32), block=(64, 1, 1))
    assert set(out.tolist()) == {22 + 100 + 1000}
    with pytest.raises(emu.KernelFaultError, match="assert failed at line 1"):
        run("__global__ void k(int* a) { assert(threadIdx.x < 5); a[0] = 1; }", "k",
            np.zeros(1, np.int32))


def test_extern_c_wrapper_instantiates_a_template_device_function():
    src = """template <int BLOCK, typename T> __device__ T block_sum(const T* x) {
        T s = 0;
        for (int i = 0; i < BLOCK; ++i) s += x[i];
        return s;
    }
    extern "C" __global__ void sum64(const int* x, int* out) {
        out[threadIdx.x] = block_sum<64, int>(x + threadIdx.x);
    }"""
    x = np.arange(128, dtype=np.int32)
    _, out = run(src, "sum64", x, np.zeros(4, np.int32), block=(4, 1, 1))
    assert out.tolist() == [int(x[t:t + 64].sum()) for t in range(4)]


def test_partial_warps_in_2d_blocks():
    src = """__global__ void k(int* out, int w) {
        int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
        int lane = (threadIdx.y * blockDim.x + threadIdx.x) % warpSize;
        int first = __shfl_sync(0xffffffffu, x, 0);
        out[y * w + x] = lane * 1000 + (x - first);
    }"""
    (out,) = run(src, "k", np.zeros((10, 14), np.int32), block=(7, 5, 1), grid=(2, 2),
                 scalars=(np.int32(14),))
    ys, xs = np.mgrid[0:10, 0:14]
    tid = (ys % 5) * 7 + xs % 7
    lane = tid % 32
    first_x = (xs // 7) * 7 + ((tid // 32) * 32) % 7
    np.testing.assert_array_equal(out, lane * 1000 + (xs - first_x))


def test_structs_array_of_structures_like_the_textbook():
    """Textbook 3-2 (coalescing with structures): an AoS kernel, member layout, sizeof."""
    src = """struct KOUZOU { float a; float b; };
    typedef struct { char tag; double w; float2 xy; } Rec;
    __device__ KOUZOU doubled(KOUZOU k) { KOUZOU r = k; r.a *= 2; r.b = r.b * 2; return r; }
    __global__ void kernel(KOUZOU* dAB, Rec* recs, Rec one, int* sizes) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        dAB[i].a = dAB[i].a + 1.0f;
        dAB[i].b = dAB[i].b + 2.0f;
        KOUZOU k = dAB[i];
        if (i % 2) k = doubled(k);
        dAB[i] = k;
        Rec r = {1, 0.5};
        r.xy.y = one.w + i;
        recs[i] = r;
        sizes[0] = sizeof(KOUZOU);
        sizes[1] = sizeof(Rec);
        sizes[2] = one.tag;
    }"""
    ab = np.zeros(16, dtype=[("a", np.float32), ("b", np.float32)])
    ab["a"] = np.arange(16)
    rec = np.dtype({"names": ["tag", "w", "xy"], "formats": [np.int8, np.float64, (np.float32, 2)],
                    "offsets": [0, 8, 16], "itemsize": 24})
    one = np.zeros(1, rec)
    one["tag"], one["w"] = 9, 100.0
    ab, recs, sizes = (a.copy() for a in (ab, np.zeros(16, rec), np.zeros(3, np.int32)))
    build(src).get_function("kernel")(emu.InOut(ab), emu.InOut(recs), one[0], emu.Out(sizes),
                                      block=(16, 1, 1))
    odd = np.arange(16) % 2 == 1
    np.testing.assert_array_equal(ab["a"], (np.arange(16) + 1) * np.where(odd, 2, 1))
    np.testing.assert_array_equal(ab["b"], np.where(odd, 4, 2))
    assert recs["tag"].tolist() == [1] * 16 and recs["w"].tolist() == [0.5] * 16
    np.testing.assert_array_equal(recs["xy"][:, 1], 100 + np.arange(16))
    assert sizes.tolist() == [8, 24, 9]


def test_address_of_local_variables_for_out_parameters():
    src = """__device__ void minmax(const float* x, int n, float* lo, float* hi) {
        *lo = x[0]; *hi = x[0];
        for (int i = 1; i < n; ++i) { *lo = fminf(*lo, x[i]); *hi = fmaxf(*hi, x[i]); }
    }
    __global__ void k(const float* x, float* out) {
        float s, c, lo, hi = 0;
        sincosf(x[threadIdx.x], &s, &c);
        minmax(x + threadIdx.x, 4, &lo, &hi);
        int count = 0;
        int* p = &count;
        (*p)++;
        float* o = out + 5 * threadIdx.x;
        o[0] = s; o[1] = c; o[2] = lo; o[3] = hi; o[4] = count;
    }"""
    x = np.random.default_rng(0).random(40, dtype=np.float32)
    _, o = run(src, "k", x, np.zeros(5 * 32, np.float32))
    o = o.reshape(32, 5)
    window = np.lib.stride_tricks.sliding_window_view(x, 4)[:32]
    np.testing.assert_allclose(o[:, 0], np.sin(x[:32]), rtol=1e-6)
    np.testing.assert_allclose(o[:, 1], np.cos(x[:32]), rtol=1e-6)
    np.testing.assert_array_equal(o[:, 2], window.min(axis=1))
    np.testing.assert_array_equal(o[:, 3], window.max(axis=1))
    assert (o[:, 4] == 1).all()


def test_reference_parameters():
    src = """__device__ void swap(float& a, float& b) { float t = a; a = b; b = t; }
    __device__ float sq(const float& x) { return x * x; }
    __device__ void bump(int& c) { c += 1; }
    __global__ void k(float* x, int* n) {
        int i = threadIdx.x;
        float lo = x[2 * i], hi = x[2 * i + 1];
        if (lo > hi) swap(lo, hi);
        x[2 * i] = lo;
        x[2 * i + 1] = sq(hi + 1.0f);
        int c = 0;
        bump(c);
        bump(c);
        bump(n[i]);
        n[i] += c;
    }"""
    x = np.random.default_rng(1).random(64, dtype=np.float32)
    out, n = run(src, "k", x, np.zeros(32, np.int32))
    pairs = x.reshape(32, 2)
    np.testing.assert_array_equal(out[0::2], pairs.min(axis=1))
    np.testing.assert_array_equal(out[1::2], (pairs.max(axis=1) + np.float32(1)) ** 2)
    assert (n == 3).all()


REDUCE6 = r"""
#include <cuda_runtime.h>
enum { UNUSED_TAG = 7 };
template <unsigned int blockSize>
__device__ void warpReduce(volatile int* sdata, unsigned int tid) {
    if (blockSize >= 64) { sdata[tid] += sdata[tid + 32]; __syncwarp(); }
    if (blockSize >= 32) { sdata[tid] += sdata[tid + 16]; __syncwarp(); }
    if (blockSize >= 16) { sdata[tid] += sdata[tid + 8]; __syncwarp(); }
    if (blockSize >= 8) { sdata[tid] += sdata[tid + 4]; __syncwarp(); }
    if (blockSize >= 4) { sdata[tid] += sdata[tid + 2]; __syncwarp(); }
    if (blockSize >= 2) { sdata[tid] += sdata[tid + 1]; __syncwarp(); }
}
template <unsigned int blockSize>
__global__ void reduce6(const int* g_idata, int* g_odata, unsigned int n) {
    __shared__ int sdata[blockSize];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    sdata[tid] = 0;
    while (i < n) {
        sdata[tid] += g_idata[i] + (i + blockSize < n ? g_idata[i + blockSize] : 0);
        i += gridSize;
    }
    __syncthreads();
    if (blockSize >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
    if (tid < 32) warpReduce<blockSize>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}"""


def test_templated_reduction_and_its_warp_level_race():
    """Harris's reduce6: correct in lockstep, but each `s[t] += s[t + k]` reads a word another
    lane of the warp writes in the same statement; __syncwarp() after it is too late."""
    mod = build(REDUCE6)
    x = np.arange(1000, dtype=np.int32)
    out = np.zeros(4, np.int32)
    mod.get_function("reduce6<128>")(emu.In(x), emu.Out(out), np.uint32(1000), grid=(4, 1),
                                     block=(128, 1, 1), racecheck=False)
    assert out.sum() == x.sum()
    with pytest.raises(emu.RaceError, match="write-after-read.*line 7"):
        mod.get_function("reduce6<128>")(emu.In(x), emu.Out(out), np.uint32(1000), grid=(4, 1),
                                         block=(128, 1, 1))


def test_enum_constexpr_casts_comma_loops_and_extern_c_block():
    src = r"""enum { BLOCK = 64, HALF = BLOCK / 2 };
    enum Mode { FIRST, SECOND = 10, THIRD };
    constexpr int EXTRA = 3;
    static __device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }
    extern "C" {
    __global__ void misc(int* out, const float* a) {
        constexpr int K = 4;
        float local[K];
        const int tid = threadIdx.x;
        int i, j;
        for (i = 0, j = K - 1; i < j; i++, j--) { local[i] = i; local[j] = j; }
        const float4* v = reinterpret_cast<const float4*>(a);
        float4 q = v[tid % 2];
        size_t addr = (size_t)(a + 1);
        Mode m = THIRD;
        out[tid] = BLOCK + HALF + EXTRA + lane_id() + (int)local[K - 1] + (int)q.w
                   + (int)(addr % 16) + (!a ? 1000 : 0) + m;
        while (true) { if (tid >= 0) break; }
    }
    }"""
    out, _ = run(src, "misc", np.zeros(40, np.int32), np.arange(8, dtype=np.float32),
                 block=(40, 1, 1))
    t = np.arange(40)
    assert (out == 64 + 32 + 3 + (t & 31) + 3 + np.where(t % 2, 7, 3) + 4 + 11).all()


def test_one_instruction_touching_several_buffers():
    src = """__global__ void k(const int* a, const int* b, int* out) {
        int t = threadIdx.x;
        const int* p = (t % 2) ? a : b;
        out[t] = p[t / 2];
    }"""
    a, b = np.arange(16, dtype=np.int32), -np.arange(16, dtype=np.int32)
    *_, out = run(src, "k", a, b, np.zeros(32, np.int32))
    t = np.arange(32)
    np.testing.assert_array_equal(out, np.where(t % 2, a[t // 2], b[t // 2]))


def test_overloads_and_default_arguments():
    src = """__device__ int twice(int v) { return 2 * v; }
    __device__ double twice(double v) { return v + 0.5; }
    __device__ float scale(float x, float by = 3.0f, int times = 1) { return x * by * times; }
    __global__ void k(int* i, double* d, float* f) {
        int t = threadIdx.x;
        i[t] = twice(t);
        d[t] = twice((double)t);
        f[t] = scale(t) + scale(t, 0.5f) + scale(t, 1.0f, 10);
    }"""
    i, d, f = run(src, "k", np.zeros(8, np.int32), np.zeros(8, np.float64),
                  np.zeros(8, np.float32), block=(8, 1, 1))
    t = np.arange(8)
    assert i.tolist() == (2 * t).tolist()
    assert d.tolist() == (t + 0.5).tolist()
    np.testing.assert_array_equal(f, (3 * t + 0.5 * t + 10 * t).astype(np.float32))


def test_function_pointers_and_virtual_functions():
    src = r"""
    typedef float (*op_t)(float, float);
    __device__ float add(float a, float b) { return a + b; }
    __device__ float mul(float a, float b) { return a * b; }
    __device__ op_t table[2] = {add, mul};
    struct Shape { __device__ virtual float area() const = 0; };
    struct Sq : Shape {
        float s;
        __device__ Sq(float s) : s(s) {}
        __device__ float area() const override { return s * s; }
    };
    struct Tri : Shape {
        float b, h;
        __device__ Tri(float b, float h) : b(b), h(h) {}
        __device__ float area() const override { return 0.5f * b * h; }
    };
    __global__ void k(const float* x, float* out) {
        int i = threadIdx.x;
        op_t f = table[i % 2];
        Sq sq(x[i]);
        Tri tr(x[i], 2.0f);
        const Shape* s = (i % 3 == 0) ? (const Shape*)&sq : (const Shape*)&tr;
        out[i] = f(x[i], 3.0f) + s->area();
    }"""
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    emu.SourceModule(src).get_function("k")(emu.In(x), emu.Out(out), block=(64, 1, 1))
    i = np.arange(64)
    expected = np.where(i % 2 == 0, x + 3, x * 3) + np.where(i % 3 == 0, x * x, x)
    np.testing.assert_array_equal(out, expected)


def test_calls_whose_return_slots_differ_in_size():
    # cos(double) calls a function returning 16 bytes, pow(double) one returning 8: the
    # caller declares a "retval0" in each call block, one as wide as the other's widest
    # (Rodinia's particlefilter likelihood kernel failed on it)
    src = r"""__global__ void k(double* x) {
        int i = threadIdx.x; x[i] = cos(x[i] * 1e6) + pow(x[i], 2.5); }"""
    x = np.array([0.5, 1.5, 2.0, 3.0])
    want = np.cos(x * 1e6) + x ** 2.5
    emu.SourceModule(src).get_function("k")(emu.InOut(x), block=(4, 1, 1), grid=(1, 1))
    np.testing.assert_allclose(x, want, rtol=1e-13)
