"""Kernels for barriers over part of a block, the device heap and SIMD video instructions,
shared by their tests (``test_device_code.py``) and the GPU recording of the video
instructions (``record_video.py``)."""

from __future__ import annotations

import numpy as np

SOURCE = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// a cooperative launch: each block sums its stride of x, the grid waits, thread 0 of the
// grid adds the blocks' sums; twice (the grid barrier is used again), the second time x2
extern "C" __global__ void grid_sum(const float* x, float* partial, float* out, int n) {
    cg::grid_group grid = cg::this_grid();
    __shared__ float s[128];
    for (int round = 1; round <= 2; ++round) {
        float v = 0.0f;
        for (int i = grid.thread_rank(); i < n; i += grid.size()) v += round * x[i];
        s[threadIdx.x] = v;
        __syncthreads();
        for (int k = blockDim.x / 2; k > 0; k /= 2) {
            if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
            __syncthreads();
        }
        if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
        grid.sync();
        if (grid.thread_rank() == 0) {
            float t = 0.0f;
            for (int b = 0; b < gridDim.x; ++b) t += partial[b];
            out[round - 1] = t;
        }
        grid.sync();
    }
}

// warps 0-1 produce a tile, warps 2-3 consume it: named barriers 1 (full) and 2 (empty),
// producers arrive and consumers wait, then the other way round (as CUTLASS's warp-
// specialised kernels do)
extern "C" __global__ void producer_consumer(const float* in, float* out, int rounds) {
    __shared__ float tile[64];
    int t = threadIdx.x;
    float acc = 0.0f;
    for (int r = 0; r < rounds; ++r) {
        if (t < 64) {
            if (r > 0) asm volatile("bar.sync 2, 128;" ::: "memory");
            tile[t] = in[(blockIdx.x * rounds + r) * 64 + t];
            asm volatile("bar.arrive 1, 128;" ::: "memory");
        } else {
            asm volatile("bar.sync 1, 128;" ::: "memory");
            acc += tile[127 - t] * (r + 1);
            if (r + 1 < rounds) asm volatile("bar.arrive 2, 128;" ::: "memory");
        }
    }
    if (t >= 64) out[blockIdx.x * 64 + t - 64] = acc;
}

// each half of the block reverses its own half of the array, synchronised on its own barrier
extern "C" __global__ void halves(const int* in, int* out) {
    __shared__ int s[256];
    int t = threadIdx.x, half = t / 128, base = blockIdx.x * 256;
    s[t] = in[base + t];
    asm volatile("bar.sync %0, 128;" :: "r"(1 + half) : "memory");
    out[base + t] = s[half * 128 + 127 - t % 128];
}

// half of the block waits at barrier 3 for more threads than ever arrive
extern "C" __global__ void short_barrier(int* out, int expected) {
    if (threadIdx.x < 64) {
        asm volatile("bar.sync 3, %0;" :: "r"(expected) : "memory");
        out[threadIdx.x] = 1;
    }
}

// consumers read the tile before the producers' barrier: a race
extern "C" __global__ void unsynchronised(const float* in, float* out) {
    __shared__ float tile[64];
    int t = threadIdx.x;
    if (t < 64) {
        tile[t] = in[t];
        asm volatile("bar.arrive 1, 128;" ::: "memory");
    } else {
        out[t - 64] = tile[127 - t];
        asm volatile("bar.sync 1, 128;" ::: "memory");
    }
}

// every thread builds a list of n values on the device heap, sums it and frees it
extern "C" __global__ void heap_lists(const int* n, long long* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long* list = (long long*)malloc(n[i] * sizeof(long long));
    if (list == nullptr) { out[i] = -1; return; }
    for (int k = 0; k < n[i]; ++k) list[k] = (long long)k * (i + 1);
    long long s = 0;
    for (int k = 0; k < n[i]; ++k) s += list[k];
    free(list);
    out[i] = s;
}

// a block's buffer outlives its kernel: allocated by one launch, read and freed by the next
extern "C" __global__ void heap_keep(float** kept, int n) {
    if (threadIdx.x == 0) kept[blockIdx.x] = (float*)malloc(n * sizeof(float));
    __syncthreads();
    float* p = kept[blockIdx.x];
    for (int k = threadIdx.x; k < n; k += blockDim.x) p[k] = blockIdx.x + 0.5f * k;
}

extern "C" __global__ void heap_use(float** kept, int n, float* out) {
    float* p = kept[blockIdx.x];
    float s = 0.0f;
    for (int k = 0; k < n; ++k) s += p[k];
    __syncthreads();
    if (threadIdx.x == 0) { out[blockIdx.x] = s; free(p); }
}

// a thread writes one element past the block malloc gave it
extern "C" __global__ void heap_overflow(int n) {
    int* p = (int*)malloc(n * sizeof(int));
    p[n] = 1;
    free(p);
}

// the same block freed twice
extern "C" __global__ void heap_twice() {
    void* p = malloc(64);
    free(p);
    free(p);
}

// CUDA's SIMD intrinsics that compile to video instructions
extern "C" __global__ void simd_intrinsics(const unsigned* a, const unsigned* b, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[4 * i] = __vabsdiffu4(a[i], b[i]);
    out[4 * i + 1] = __vsadu4(a[i], b[i]);
    out[4 * i + 2] = __vsads4(a[i], b[i]);
    out[4 * i + 3] = __vsadu2(a[i], b[i]);
}
"""

#: video instructions with their modifiers, selectors and masks, each run by ``video``
VIDEO = [
    "vadd2.u32.u32.u32 %0, %1, %2, %3;",
    "vadd2.s32.s32.s32.sat %0, %1, %2, %3;",
    "vadd4.u32.u32.u32.sat %0, %1, %2, %3;",
    "vsub4.s32.s32.s32.sat %0, %1, %2, %3;",
    "vsub2.u32.u32.s32 %0, %1, %2, %3;",
    "vavrg2.s32.s32.s32 %0, %1, %2, %3;",
    "vavrg4.u32.u32.u32 %0, %1, %2, %3;",
    "vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;",
    "vabsdiff2.s32.s32.s32.add %0, %1, %2, %3;",
    "vmin4.s32.s32.s32 %0.b20, %1, %2, %3;",
    "vmax2.u32.u32.u32 %0.h1, %1.h21, %2.h03, %3;",
    "vmax4.u32.u32.u32.add %0.b31, %1, %2, %3;",
    "vmin2.s32.u32.s32.sat %0, %1.h23, %2.h10, %3;",
    "vadd4.s32.s32.u32.sat %0, %1.b0123, %2.b4567, %3;",
    "vset4.u32.u32.lt %0, %1, %2, %3;",
    "vset2.s32.s32.ge.add %0, %1, %2, %3;",
    "vset4.s32.s32.ne %0.b210, %1.b7531, %2, %3;",
]


def video_source() -> str:
    """A kernel ``video`` running every form of :data:`VIDEO` on the same inputs."""
    body = "\n".join(
        f'    asm("{form}" : "=r"(d) : "r"(x), "r"(y), "r"(z)); out[{k} * n + i] = d;'
        for k, form in enumerate(VIDEO))
    return (r'extern "C" __global__ void video(const unsigned* a, const unsigned* b, '
            r'const unsigned* c, unsigned* out, int n) {' "\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i >= n) return;\n"
            "    unsigned x = a[i], y = b[i], z = c[i], d;\n" + body + "\n}\n")


def video_inputs(n: int = 1024) -> list[np.ndarray]:
    """Operands a, b, c: random words, and words of extreme bytes (0, 1, 0x7F, 0x80, 0xFF)."""
    rng = np.random.default_rng(11)
    edge = np.array([0x00, 0x01, 0x7F, 0x80, 0xFF], np.uint32)
    words = []
    for _ in range(3):
        w = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
        picks = edge[rng.integers(0, edge.size, (n // 2, 4))]
        w[: n // 2] = (picks << np.array([0, 8, 16, 24], np.uint32)).sum(axis=1).astype(np.uint32)
        words.append(w)
    return words


def run_video(engine, a, b, c) -> np.ndarray:
    """The outputs of ``video`` on ``engine`` (``cudakit.emu`` or PyCUDA), one row per form."""
    n = a.size
    out = np.zeros(len(VIDEO) * n, np.uint32)
    fn = engine.SourceModule(video_source(), no_extern_c=True).get_function("video")
    fn(engine.In(a), engine.In(b), engine.In(c), engine.Out(out), np.int32(n),
       block=(128, 1, 1), grid=(-(-n // 128), 1))
    return out.reshape(len(VIDEO), n)
