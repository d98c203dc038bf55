"""Microbenchmarks of the device: the facts a performance model of its kernels needs.

    python -m benchmarks.microbench --out h100_device.json     # on the GPU, under 90 s
    python -m benchmarks.microbench --only copies --out part.json  # some of them
    CUDAKIT_BACKEND=emu python -m benchmarks.microbench --small  # runs; numbers meaningless

Writes one JSON object: a ``header`` (engine, device, driver, CUDA, nvcc, date), one number per
key, ``methods`` (how each key was measured) and ``errors`` (a key whose benchmark failed is
missing, with the reason there; one failure never loses the others). All kernels are in
``SOURCE``, compiled once with ``cudakit.load``; times come from CUDA events
(``cudakit.benchmark``: median, with a head start so host launch cost is hidden), cycles
from ``clock64()``. Every rate (bytes, operations or instructions per second or per clock)
divides by the event time less one empty kernel's: the model adds that fixed cost of a launch
once (``kernel_min_us``), so it must not be inside the rates too. On the emulator the
figures are host times and say ``engine: emu``.

Methods, in order:

- ``sm_count``, ``l2_bytes``: driver attributes.
- ``clock_ghz``: a long FMA loop (one wave of blocks); thread 0 of each block reads
  ``clock64`` and ``%globaltimer`` before and after; the median of cycles / ns.
- ``dram_read_gbs``, ``dram_write_gbs``, ``dram_copy_gbs``: grid-stride float4 sum, fill and
  copy over 1 GiB buffers (copy counts bytes read + written); fill and copy take the best of
  three grids (8 and 32 blocks of 256 per SM, and one float4 per thread), as a kernel that
  streams one element per thread (the labs' copies) keeps more requests in flight than a
  grid-stride loop.
- ``dram_streams``: the read and copy rates (``read_gbs``, ``copy_gbs``) when the buffer
  is split into S regions (``streams``: 1 to one per warp) that separate groups of warps
  stream through at once, as a block or a thread per row of a large matrix does.
- ``l2_read_gbs``: the sum kernel reading a 16 MiB buffer many times (index masked into it).
- ``partial_store_sectors_per_s``, ``partial_store_pairs_per_s``,
  ``partial_store_lines_per_s``: 4-byte stores, one per 32-byte sector (a warp's store: 32
  sectors in 8 lines), one per 64 bytes (16 lines) or one per 128-byte line (32 sectors in
  32 lines: a warp storing a column of a row-major matrix), over a 16 MiB buffer (it stays
  in L2): the rates at which the L2 takes stores that cover part of a sector. The model uses
  the first and the last; the middle one checks its cost per line plus per sector.
- ``l1_read_bytes_per_clk_per_sm``: every block reads the same 16 KiB many times (it stays
  in each SM's L1); bytes / (SMs x event time x clock).
- ``l1_line_requests_per_clk_per_sm``, ``l1_scattered_lines_per_clk_per_sm``,
  ``l1_broadcast_requests_per_clk_per_sm``: 4-byte loads from 32 KiB held in L1, 8 per loop
  trip, each warp's request one line, 32 lines or one address: how the L1 serves requests
  of scalar loads by the lines they touch.
- ``shared_bytes_per_clk_per_sm``: conflict-free ``volatile`` 4-byte shared loads, 16 per
  loop trip, in every block of a full wave.
- ``dram/l2/l1/shared_latency_cycles``: one thread chases a random cycle of pointers (one per
  128-byte line: 1 GiB and 8 MiB with ``ld.global.cg``, 16 KiB with ordinary L1-cached loads,
  shared memory), after one untimed pass; ``clock64`` difference / steps. Includes the
  loop's one or two integer instructions per step.
- ``fp32/fp64/sfu/sfu_ftz_latency_cycles``, ``div_f32/rcp_f32/sqrt_f32/div_s32/div_u32/
  div_f64/rcp_f64/sqrt_f64/div_u64_latency_cycles``: one thread, a dependent
  chain of ``fmaf``, ``fma``, ``rsqrtf``, the bare ``rsqrt.approx.ftz.f32`` (what
  ``-ftz=true`` makes of ``rsqrtf``), IEEE division, IEEE ``1.0f / x``, IEEE ``sqrtf`` (plus
  an add), ``int`` and ``unsigned`` division, and the same in double precision and 64-bit
  integers (of 64-bit values: NVVM's PTX divides values below 2^32 with 32-bit division);
  ``clock64`` difference / operations (the issue-to-result latency of each, expansions
  included).
- ``dram_loaded_latency``: DRAM latency under load, ``{"gbs": [...], "cycles": [...]}``: from
  1 to 64 warps per SM, each chasing 1 or 4 random 128-byte lines at a time over 1 GiB (the
  32 lanes read one line); the bandwidth drawn (bytes / event time) and the median warp's
  cycles per step, at the same time.
- ``fp32_fma``, ``fp64_fma``, ``int32_imad``, ``int32_add``, ``sfu`` (``rsqrtf``), ``shfl``
  (``__shfl_xor_sync``), ``int32_lop3``, ``int32_shf``, ``int32_mul_hi`` (``__umulhi``),
  ``int32_mul_wide_lop3`` (a 32 x 32 -> 64-bit multiply and a xor of its halves): warp
  instructions per clock per SM. 8 independent chains per thread, 2048 threads per SM;
  counted source operations / (SMs x event time x clock). (ptxas splits ``int32_add``'s adds
  between IADD3 and IMAD.IADD, two pipes; a LOP3 or SHF has one, at half that rate.)
- ``constant_replays_per_clk_per_sm``: ``__constant__`` reads with 32 distinct addresses per
  warp request; the 31 addresses beyond a request's first served per clock per SM (the
  constant cache serialises a request by its distinct addresses).
- ``global_atomic_same_address_per_s``, ``global_atomic_distinct_per_s``: ``atomicAdd`` of
  every thread to one word, or each to its own word; thread operations per second.
- ``shared_atomic_per_clk_per_sm``: ``atomicAdd`` to a distinct shared word per thread.
- ``launch_overhead_us``: 1000 empty launches queued back to back (event time / 1000);
  ``launch_issue_us``: the host's time per cudakit launch (no parameters);
  ``launch_issue_per_arg_us``: what each parameter adds to it (an 8-parameter kernel called
  with integer addresses, Python ints and float32s); ``kernel_min_us``: one empty
  kernel alone, event time; ``block_launch_per_s``: the rate at which the GPU starts blocks,
  from one empty kernel of 2^21 blocks of 32 threads less one of a single block;
  ``launch_shapes``: the same 2^21 warps in blocks of 32 to 1024 threads
  (``{"threads": [...], "us": [...]}``): whether the block rate depends on the block's size.
- ``barrier_cycles``: 1024 threads, a loop of ``__syncthreads()``; cycles per barrier.
- ``barrier_curve``: the same for blocks of 1, 2, 4 ... 32 warps.
- ``copy_curves``: microseconds per synchronous copy against its size (256 B to 256 MiB, x4
  apart) for ``h2d_pinned``, ``d2h_pinned``, ``h2d_pageable``, ``d2h_pageable`` and ``d2d``
  (``{"bytes": [...], "us": [...]}`` each); ``h2d/d2h_pinned/pageable_gbs``: their 256 MiB
  points as rates; ``copy_latency_us``, ``copy_fit_gbs``:
  :func:`cudakit.timing.fit_latency_bandwidth` over the pinned host-to-device curve up to
  64 MiB; ``pcie_duplex_gbs``: 256 MiB up and 256 MiB down at once on two streams (both
  directions' bytes / time); ``copy_issue_us``: the host's time per ``memcpy_htod_async``
  of 4 bytes.
- ``d2d_alignment``: ``memcpy_dtod`` of 1-256 MiB plus 0, 1, 2, 4, 8 or 12 bytes (microseconds,
  ``{"bytes": bases, "us": {extra: [...]}}``); ``d2d_unaligned_us``: from it, the microseconds
  a size that is not a multiple of 16 adds (the median over the extras less extra 0).

Written by hand because no library measures these for a CUDA teaching model (nvbench times
kernels one gives it; gpu-benches and the papers' suites are C++ programs outside Python).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

import numpy as np

SOURCE = r"""
#define CHAINS 8
__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t;
}

__global__ void fma_clock(float *out, long long *cycles, unsigned long long *ns, int iters) {
    float v[CHAINS], a = 1.0f + threadIdx.x * 1e-9f, b = 1e-7f;
    for (int j = 0; j < CHAINS; ++j) v[j] = threadIdx.x + j;
    long long c0 = clock64(); unsigned long long t0 = global_ns();
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int j = 0; j < CHAINS; ++j) v[j] = fmaf(v[j], a, b);
    }
    long long c1 = clock64(); unsigned long long t1 = global_ns();
    float s = 0; for (int j = 0; j < CHAINS; ++j) s += v[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if (threadIdx.x == 0) { cycles[blockIdx.x] = c1 - c0; ns[blockIdx.x] = t1 - t0; }
}

struct Fma32 { __device__ float operator()(float v, float, float a, float b) const {
    return fmaf(v, a * 1e-9f + 1.0f, b); } };
struct Fma64 { __device__ double operator()(double v, double, double a, double b) const {
    return fma(v, a * 1e-9 + 1.0, b); } };
struct Imad { __device__ int operator()(int v, int, int a, int b) const { return v * a + b; } };
struct Iadd { __device__ int operator()(int v, int other, int, int) const { return v + other; } };
struct Lop3 { __device__ int operator()(int v, int other, int a, int) const {
    int r; asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r) : "r"(v), "r"(other), "r"(a));
    return r; } };  // a three-way xor: LOP3.LUT
struct Shf { __device__ int operator()(int v, int other, int, int) const {
    int r; asm("shf.l.wrap.b32 %0, %1, %2, 7;" : "=r"(r) : "r"(other), "r"(v)); return r; } };
struct MulHi { __device__ int operator()(int v, int, int a, int b) const {
    return (int)__umulhi((unsigned)v, (unsigned)a) + b; } };  // IMAD.HI.U32 (its add fused)
struct MulWide { __device__ int operator()(int v, int, int a, int) const {
    unsigned long long w = (unsigned long long)(unsigned)v * (unsigned)a;  // IMAD.WIDE.U32
    return (int)(w >> 32) ^ (int)w; } };  // and a LOP3 for the two halves
struct Rsqrt { __device__ float operator()(float v, float, float, float b) const {
    return rsqrtf(v + b); } };
struct Shfl { __device__ int operator()(int v, int, int a, int) const {
    return __shfl_xor_sync(0xffffffffu, v, a & 31); } };

/* CHAINS independent chains per thread (Iadd: each adds the next chain's value) */
template <typename T, typename Op> __device__ void chains(T *out, int iters) {
    T v[CHAINS]; T a = (T)(threadIdx.x | 1); T b = (T)(blockIdx.x + 1);
    for (int j = 0; j < CHAINS; ++j) v[j] = (T)(threadIdx.x + j);
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int j = 0; j < CHAINS; ++j) v[j] = Op()(v[j], v[(j + 1) % CHAINS], a, b);
    }
    T s = 0; for (int j = 0; j < CHAINS; ++j) s += v[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void fp32_fma(float *out, int iters) { chains<float, Fma32>(out, iters); }
__global__ void fp64_fma(double *out, int iters) { chains<double, Fma64>(out, iters); }
__global__ void int32_imad(int *out, int iters) { chains<int, Imad>(out, iters); }
__global__ void int32_add(int *out, int iters) { chains<int, Iadd>(out, iters); }
__global__ void int32_lop3(int *out, int iters) { chains<int, Lop3>(out, iters); }
__global__ void int32_shf(int *out, int iters) { chains<int, Shf>(out, iters); }
__global__ void int32_mul_hi(int *out, int iters) { chains<int, MulHi>(out, iters); }
__global__ void int32_mul_wide_lop3(int *out, int iters) { chains<int, MulWide>(out, iters); }
__global__ void sfu(float *out, int iters) { chains<float, Rsqrt>(out, iters); }
__global__ void shfl(int *out, int iters) { chains<int, Shfl>(out, iters); }

__global__ void read_sum(const float4 *__restrict__ p, size_t mask, size_t total, float *out) {
    float s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        float4 v = p[i & mask]; s += v.x + v.y + v.z + v.w;
    }
    if (s == -1.0f) out[0] = s;  /* never true: keeps the loads */
}

/* 8 independent 4-byte loads per trip from 32 KiB that stay in L1, 4 KiB apart; a warp's
   lanes `stride` floats apart (1: one 128-byte line per request, 32: 32 lines, 0: one
   address). The base moves by `step` (0 at run time, unknown to ptxas, so no load is
   hoisted or merged) and each load is an immediate offset from it: a trip issues 8 loads,
   8 adds and the loop's few instructions. */
#define L1_LOAD(k) asm volatile("ld.global.ca.f32 %0, [%1+" #k "];" : "=f"(v) : "l"(base)); \
    s[(k / 4096) % 2] += v;
__global__ void l1_pattern(const float *p, int stride, int step, int iters, float *out) {
    float s[2] = {0, 0}, v;  /* two sums: ptxas drops a load whose value is unused */
    const float *base = p + (threadIdx.x % 32) * stride;
    for (int i = 0; i < iters; ++i, base += step) {
        L1_LOAD(0) L1_LOAD(4096) L1_LOAD(8192) L1_LOAD(12288)
        L1_LOAD(16384) L1_LOAD(20480) L1_LOAD(24576) L1_LOAD(28672)
    }
    if (s[0] + s[1] == -1.0f) out[0] = s[0];
}

__global__ void write_fill(float4 *p, size_t n, float x) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) p[i] = make_float4(x, x, x, x);
}

// one 4-byte store every `gap` floats (8: one per sector, 32: one per line), passes over a
// buffer of `units` such strides
__global__ void partial_store(float *p, size_t units, size_t total, int gap) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += stride)
        p[(i & (units - 1)) * gap] = (float)i;
}
__global__ void copy4(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) dst[i] = src[i];
}

// the buffer as `streams` regions of `region` float4s, each read (and, with dst, written)
// front to back by its own group of warps: warp w serves region w % streams, and the group's
// warps take its 512-byte pieces in turn. streams = 1 is the plain grid-stride stream;
// streams = all warps gives every warp a region of its own (a thread or block per row).
__global__ void stream_regions(const float4 *__restrict__ src, float4 *__restrict__ dst,
                               size_t region, int streams, float *out) {
    size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    size_t warps = (size_t)gridDim.x * blockDim.x / 32, lane = threadIdx.x % 32;
    size_t base = (warp % streams) * region, step = warps / streams * 32;
    float s = 0;
    for (size_t i = warp / streams * 32 + lane; i < region; i += step) {
        float4 v = src[base + i];
        if (dst) dst[base + i] = v; else s += v.x + v.y + v.z + v.w;
    }
    if (s == -1.0f) out[0] = s;  /* never true: keeps the loads */
}

__global__ void shared_read(float *out, int iters) {
    __shared__ float s[4096];
    for (int k = threadIdx.x; k < 4096; k += blockDim.x) s[k] = k;
    __syncthreads();
    volatile float *vs = s;
    float acc[4] = {0, 0, 0, 0};
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int j = 0; j < 16; ++j) acc[j & 3] += vs[(threadIdx.x + j * 256) & 4095];
    }
    if (acc[0] + acc[1] + acc[2] + acc[3] == -1.0f) out[0] = 1;
}

/* restart = 1: the timed pass revisits the lines of the untimed one (they are in L2);
   restart = 0: it goes on along the chain, to lines not touched yet (DRAM) */
__global__ void chase_global(const unsigned *next, int steps, int restart, long long *cycles,
                             unsigned *sink) {
    unsigned j = 0;
    for (int i = 0; i < steps; ++i) j = __ldcg(next + j);  /* untimed pass */
    if (restart) j = 0;
    long long c0 = clock64();
    for (int i = 0; i < steps; ++i) j = __ldcg(next + j);
    long long c1 = clock64();
    cycles[0] = c1 - c0; sink[0] = j;
}

__global__ void chase_l1(const unsigned *next, int steps, long long *cycles, unsigned *sink) {
    unsigned j = 0;
    for (int i = 0; i < steps; ++i) j = next[j];
    long long c0 = clock64();
    for (int i = 0; i < steps; ++i) j = next[j];
    long long c1 = clock64();
    cycles[0] = c1 - c0; sink[0] = j;
}

__global__ void chase_shared(const unsigned *next, int words, int steps, long long *cycles,
                             unsigned *sink) {
    __shared__ unsigned s[4096];
    for (int k = 0; k < words; ++k) s[k] = next[k];
    unsigned j = 0;
    for (int i = 0; i < steps; ++i) j = s[j];
    long long c0 = clock64();
    for (int i = 0; i < steps; ++i) j = s[j];
    long long c1 = clock64();
    cycles[0] = c1 - c0; sink[0] = j;
}

/* one thread, one dependent chain: cycles per operation (8 per loop trip) */
struct Div32 { __device__ float operator()(float v) const { return 1.0001f / v; } };
struct Sqrt32 { __device__ float operator()(float v) const { return sqrtf(v) + 0.5f; } };
struct Rsqrt32 { __device__ float operator()(float v) const { return rsqrtf(v); } };
struct RsqrtFtz { __device__ float operator()(float v) const {
    float r; asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v)); return r; } };
struct Chain32 { __device__ float operator()(float v) const {
    return fmaf(v, 0.999f, 0.001f); } };
struct Chain64 { __device__ double operator()(double v) const { return fma(v, 0.999, 0.001); } };
struct DivS32 { __device__ int operator()(int v) const { return 1000000007 / (v | 1) - 3; } };
struct DivU32 { __device__ unsigned operator()(unsigned v) const {
    return 4000000007u / (v | 1u) + 5u; } };
struct Rcp32 { __device__ float operator()(float v) const { return 1.0f / v; } };
struct Div64 { __device__ double operator()(double v) const { return 1.0001 / v; } };
struct Rcp64 { __device__ double operator()(double v) const { return 1.0 / v; } };
struct Sqrt64 { __device__ double operator()(double v) const { return sqrt(v) + 0.5; } };
struct DivU64 { __device__ unsigned long long operator()(unsigned long long v) const {
    return 0xfedcba9876543210ull / (v | 1ull) + 5ull; } };
template <typename T, typename Op>
__device__ void dependent(T v, int steps, T *out, long long *cycles) {
    long long c0 = clock64();
    for (int i = 0; i < steps; i += 8) {
        #pragma unroll
        for (int k = 0; k < 8; ++k) v = Op()(v);
    }
    long long c1 = clock64();
    out[0] = v; cycles[0] = c1 - c0;
}
__global__ void lat_div_f32(float *o, long long *c, int n, float v) {
    dependent<float, Div32>(v, n, o, c); }
__global__ void lat_sqrt_f32(float *o, long long *c, int n, float v) {
    dependent<float, Sqrt32>(v, n, o, c); }
__global__ void lat_sfu(float *o, long long *c, int n, float v) {
    dependent<float, Rsqrt32>(v, n, o, c); }
__global__ void lat_sfu_ftz(float *o, long long *c, int n, float v) {
    dependent<float, RsqrtFtz>(v, n, o, c); }
__global__ void lat_fp32(float *o, long long *c, int n, float v) {
    dependent<float, Chain32>(v, n, o, c); }
__global__ void lat_fp64(double *o, long long *c, int n, double v) {
    dependent<double, Chain64>(v, n, o, c); }
__global__ void lat_div_s32(int *o, long long *c, int n, int v) {
    dependent<int, DivS32>(v, n, o, c); }
__global__ void lat_div_u32(unsigned *o, long long *c, int n, unsigned v) {
    dependent<unsigned, DivU32>(v, n, o, c); }
__global__ void lat_rcp_f32(float *o, long long *c, int n, float v) {
    dependent<float, Rcp32>(v, n, o, c); }
__global__ void lat_div_f64(double *o, long long *c, int n, double v) {
    dependent<double, Div64>(v, n, o, c); }
__global__ void lat_rcp_f64(double *o, long long *c, int n, double v) {
    dependent<double, Rcp64>(v, n, o, c); }
__global__ void lat_sqrt_f64(double *o, long long *c, int n, double v) {
    dependent<double, Sqrt64>(v, n, o, c); }
__global__ void lat_div_u64(unsigned long long *o, long long *c, int n, unsigned long long v) {
    dependent<unsigned long long, DivU64>(v, n, o, c); }

/* DRAM latency under load: each warp chases CHASES random 128-byte lines at once, its 32
   lanes reading the 32 words of a line (one request of 4 sectors); every word of a line
   holds the next line's index. Each launch starts elsewhere in the cycle (seed), so no
   launch revisits the lines an earlier one left in L2. Lane 0 writes its warp's cycles. */
template <int CHASES>
__device__ void chase_lines(const unsigned *next, unsigned lines, int steps, unsigned seed,
                            long long *cycles, unsigned *sink) {
    unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    unsigned j[CHASES];
    #pragma unroll
    for (int c = 0; c < CHASES; ++c)
        j[c] = (unsigned)(((warp * CHASES + c) * 2654435761ull + seed) % lines);
    long long c0 = clock64();
    for (int i = 0; i < steps; ++i) {
        #pragma unroll
        for (int c = 0; c < CHASES; ++c) j[c] = __ldcg(next + (size_t)j[c] * 32 + lane);
    }
    long long c1 = clock64();
    unsigned s = 0;
    #pragma unroll
    for (int c = 0; c < CHASES; ++c) s += j[c];
    if (lane == 0) cycles[warp] = c1 - c0;
    if (s == 0xffffffffu) sink[0] = s;
}
__global__ void chase_lines1(const unsigned *n, unsigned l, int s, unsigned e, long long *c,
                             unsigned *k) { chase_lines<1>(n, l, s, e, c, k); }
__global__ void chase_lines4(const unsigned *n, unsigned l, int s, unsigned e, long long *c,
                             unsigned *k) { chase_lines<4>(n, l, s, e, c, k); }

/* constant memory: every lane of a warp at one address (spread 0) or at its own (spread 1);
   the constant cache serves a warp's request one distinct address at a time (spread 1 is
   what constant_cache times) */
__constant__ float coefficients[1024];
__global__ void constant_reads(float *out, int iters, int spread) {
    float acc = threadIdx.x;
    int lane = threadIdx.x & 31;
    for (int i = 0; i < iters; ++i)
        acc = fmaf(acc, 0.999f, coefficients[(i * 32 + lane * spread) & 1023]);
    if (acc == -1.0f) out[0] = acc;
}

__global__ void atomic_same(unsigned *p, int iters) {
    for (int i = 0; i < iters; ++i) atomicAdd(p, 1u);
}

__global__ void atomic_distinct(unsigned *p, int iters) {
    unsigned *mine = p + blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < iters; ++i) atomicAdd(mine, 1u);
}

__global__ void atomic_shared(unsigned *out, int iters) {
    __shared__ unsigned s[1024];
    s[threadIdx.x] = 0;
    __syncthreads();
    for (int i = 0; i < iters; ++i) atomicAdd(&s[threadIdx.x], 1u);
    __syncthreads();
    if (s[threadIdx.x] == 0xffffffffu) out[0] = 1;
}

__global__ void barriers(long long *cycles, int iters) {
    long long c0 = clock64();
    for (int i = 0; i < iters; ++i) __syncthreads();
    long long c1 = clock64();
    if (threadIdx.x == 0) cycles[blockIdx.x] = c1 - c0;
}

__global__ void empty() {}
__global__ void empty8(const float *u, float *v, int a, int b, int c, int d, float e, float f) {}
"""

GIB = 1 << 30


class Bench:
    """The device, its kernels, the sizes for this run, and the results so far."""

    def __init__(self, small: bool):
        import cudakit
        from cudakit import cuda

        self.cudakit, self.cuda, self.small = cudakit, cuda, small
        self.k = cudakit.load(SOURCE, options=["-O3"])
        info = cudakit.device_info()
        self.sms = info.multiprocessors or 1
        self.l2 = info.l2_cache_bytes
        self.nominal_ghz = (info.sm_clock_khz or 0) / 1e6 or None
        self.results: dict = {}
        self.methods: dict = {}
        self.errors: dict = {}
        self._empty_ms: float | None = None

    def size(self, gpu: int, emu: int) -> int:
        return emu if self.small else gpu

    def ms(self, launch, repeat: int = 10) -> float:
        return self.cudakit.benchmark(launch, warmup=1 if self.small else 2,
                                      repeat=2 if self.small else repeat).median

    def work_ms(self, launch, repeat: int = 10) -> float:
        """The event time of ``launch`` less that of one empty kernel: the fixed cost of a
        launch is the model's own term (``kernel_min_us``), so a rate measured with it
        inside would count it twice."""
        if self._empty_ms is None:
            self._empty_ms = self.ms(lambda: self.k["empty"](grid=(1,), block=(32,)), 50)
        return max(self.ms(launch, repeat) - self._empty_ms, 1e-9)

    def put(self, key: str, value, method: str) -> None:
        self.results[key] = None if value is None else float(f"{float(value):.6g}")
        self.methods[key] = method

    def clock_hz(self) -> float:
        return 1e9 * (self.results.get("clock_ghz") or self.nominal_ghz or 1.0)

    def per_clk_per_sm(self, count: float, ms: float) -> float:
        return count / (self.sms * ms * 1e-3 * self.clock_hz())

    def zeros(self, nbytes: int):
        d = self.cuda.mem_alloc(max(int(nbytes), 4))
        self.cuda.memset_d8(d, 0, max(int(nbytes), 4))
        return d


def device_facts(b: Bench) -> None:
    b.put("sm_count", b.sms, "driver attribute MULTIPROCESSOR_COUNT")
    b.put("l2_bytes", b.l2, "driver attribute L2_CACHE_SIZE")


def clock(b: Bench) -> None:
    blocks, iters = b.sms * 4, b.size(1 << 20, 4)
    out, cyc, ns = b.zeros(4 * blocks * 256), b.zeros(8 * blocks), b.zeros(8 * blocks)
    b.k["fma_clock"](out, cyc, ns, iters, grid=(blocks,), block=(256,))
    c = b.cuda.from_device(cyc, (blocks,), np.int64)
    t = b.cuda.from_device(ns, (blocks,), np.uint64)
    ok = t > 0
    b.put("clock_ghz", np.median(c[ok] / t[ok]) if ok.any() else None,
          f"clock64 cycles / globaltimer ns over a {iters}-step FMA loop, median of "
          f"{blocks} blocks")


def dram(b: Bench) -> None:
    n = b.size(GIB, 1 << 16) // 16  # float4 elements
    src, dst, sink = b.zeros(16 * n), b.zeros(16 * n), b.zeros(4)
    grid = (b.sms * 8,)
    ms = b.work_ms(lambda: b.k["read_sum"](src, n - 1, n, sink, grid=grid, block=(256,)))
    b.put("dram_read_gbs", 16 * n / ms / 1e6, f"float4 grid-stride sum of {16 * n} B")
    grids = {"8 blocks per SM": grid, "32 blocks per SM": (b.sms * 32,),
             "one float4 per thread": (-(-n // 256),)}
    fill = {k: b.work_ms(lambda g=g: b.k["write_fill"](dst, n, 1.0, grid=g, block=(256,)))
            for k, g in grids.items()}
    best = min(fill, key=fill.get)
    b.put("dram_write_gbs", 16 * n / fill[best] / 1e6,
          f"float4 grid-stride fill of {16 * n} B, best of three grids ({best})")
    copy = {k: b.work_ms(lambda g=g: b.k["copy4"](src, dst, n, grid=g, block=(256,)))
            for k, g in grids.items()}
    best = min(copy, key=copy.get)
    b.put("dram_copy_gbs", 32 * n / copy[best] / 1e6,
          f"float4 copy of {16 * n} B (read + write), best of three grids ({best})")


def dram_streams(b: Bench) -> None:
    """DRAM rates when the resident warps stream through many separate regions at once (a
    block or a thread per row of a large matrix) rather than one: the read and copy rates
    against the number of regions."""
    n = b.size(GIB, 1 << 16) // 16  # float4 elements
    src, dst, sink = b.zeros(16 * n), b.zeros(16 * n), b.zeros(4)
    grid, block = (b.sms * 8,), (256,)
    warps = grid[0] * block[0] // 32
    counts = sorted({s for s in (1, 4, 16, 64, b.sms, 2 * b.sms, 4 * b.sms, 8 * b.sms,
                                 16 * b.sms, 32 * b.sms, 64 * b.sms) if warps % s == 0})
    rates: dict = {"streams": counts, "read_gbs": [], "copy_gbs": []}
    for streams in counts:
        region = n // streams // 32 * 32
        moved = 16 * region * streams
        def run(out, region=region, streams=streams):
            return b.work_ms(lambda: b.k["stream_regions"](src, out, region, streams, sink,
                                                           grid=grid, block=block))

        read, copy = run(np.uint64(0)), run(dst)
        rates["read_gbs"].append(round(moved / read / 1e6, 1))
        rates["copy_gbs"].append(round(2 * moved / copy / 1e6, 1))
    b.results["dram_streams"] = rates
    b.methods["dram_streams"] = (f"{warps} warps (8 blocks of 256 per SM) over 1 GiB split "
                                 "into S regions, each read (or copied) front to back by "
                                 "its own warps, 512 bytes per warp and step")

def l2(b: Bench) -> None:
    n = b.size(16 << 20, 1 << 14) // 16
    total = n * b.size(256, 2)
    src, sink = b.zeros(16 * n), b.zeros(4)
    ms = b.work_ms(lambda: b.k["read_sum"](src, n - 1, total, sink, grid=(b.sms * 8,),
                                            block=(256,)))
    b.put("l2_read_gbs", 16 * total / ms / 1e6,
          f"float4 sum over a {16 * n} B buffer read {total // n} times")


def partial_stores(b: Bench) -> None:
    size = b.size(16 << 20, 1 << 14)  # a buffer that stays in L2
    buf = b.zeros(size)
    for key, gap, what in (("partial_store_sectors_per_s", 8, "32 sectors in 8 lines"),
                           ("partial_store_pairs_per_s", 16, "32 sectors in 16 lines"),
                           ("partial_store_lines_per_s", 32, "32 sectors in 32 lines")):
        units = size // (4 * gap)
        total = units * b.size(32, 2)
        ms = b.work_ms(lambda units=units, total=total, gap=gap: b.k["partial_store"](
            buf, units, total, gap, grid=(b.sms * 8,), block=(256,)))
        b.put(key, total / ms * 1e3,
              f"4-byte stores one per {4 * gap} B over a {size} B buffer, {total // units} "
              f"passes (each warp's store: {what})")


def l1(b: Bench) -> None:
    n = (16 << 10) // 16 if not b.small else 64
    threads = b.sms * 8 * 256
    total = threads * b.size(8192, 2)
    src, sink = b.zeros(16 * n), b.zeros(4)
    ms = b.work_ms(lambda: b.k["read_sum"](src, n - 1, total, sink, grid=(b.sms * 8,),
                                            block=(256,)))
    b.put("l1_read_bytes_per_clk_per_sm", b.per_clk_per_sm(16 * total, ms),
          f"float4 sum over one {16 * n} B buffer, {total} loads by {threads} threads")


def l1_patterns(b: Bench) -> None:
    blocks, iters = b.sms * 8, b.size(4096, 2)
    src, sink = b.zeros(36 << 10), b.zeros(4)
    for key, stride, lines, what in (
            ("l1_line_requests_per_clk_per_sm", 1, 1, "one 128-byte line"),
            ("l1_scattered_lines_per_clk_per_sm", 32, 32, "32 lines (lanes 128 B apart)"),
            ("l1_broadcast_requests_per_clk_per_sm", 0, 1, "one address")):
        ms = b.work_ms(lambda stride=stride: b.k["l1_pattern"](
            src, stride, 0, iters, sink, grid=(blocks,), block=(256,)))
        requests = blocks * 8 * 8 * iters  # warps x loads per trip x trips
        b.put(key, b.per_clk_per_sm(requests * lines, ms),
              f"4-byte loads from 32 KiB held in L1, each warp's request {what}, 8 per trip "
              f"(8 adds), 8 blocks of 256 per SM; {'lines' if lines > 1 else 'requests'} per "
              f"clock")


def shared(b: Bench) -> None:
    blocks, iters = b.sms * 8, b.size(4096, 2)
    sink = b.zeros(4)
    ms = b.work_ms(lambda: b.k["shared_read"](sink, iters, grid=(blocks,), block=(256,)))
    b.put("shared_bytes_per_clk_per_sm", b.per_clk_per_sm(4 * 16 * iters * blocks * 256, ms),
          "volatile 4-byte conflict-free shared loads, 16 per trip, 8 blocks of 256 per SM")


def _chain(words: int, stride: int, rng) -> np.ndarray:
    """A random cycle through ``words // stride`` slots ``stride`` words apart (uint32 indices)."""
    slots = max(words // stride, 2)
    order = rng.permutation(slots).astype(np.uint32) * stride
    chain = np.zeros(slots * stride, np.uint32)
    chain[order] = np.roll(order, -1)
    return chain


def latencies(b: Bench) -> None:
    rng = np.random.default_rng(0)
    steps = b.size(20_000, 8)
    cases = [  # the DRAM chase goes on to new lines; the others revisit warmed ones
        ("dram_latency_cycles", (0,), b.size(GIB, 1 << 16), "ld.global.cg, new lines"),
        ("l2_latency_cycles", (1,), b.size(8 << 20, 1 << 14), "ld.global.cg, warmed lines"),
        ("l1_latency_cycles", (), 16 << 10, "ordinary (L1-cached) loads"),
    ]
    cyc, sink = b.zeros(8), b.zeros(4)
    for key, restart, nbytes, how in cases:
        try:
            chain = b.cuda.to_device(_chain(nbytes // 4, 32, rng))
            kernel = b.k["chase_global" if restart else "chase_l1"]
            kernel(chain, steps, *restart, cyc, sink, grid=(1,), block=(1,))
            c = b.cuda.from_device(cyc, (1,), np.int64)[0]
            b.put(key, c / steps, f"one thread, random cycle over {nbytes} B, 128 B apart, "
                                  f"{how}, {steps} steps after one untimed pass")
            del chain
        except Exception as exc:  # the other two are still worth having
            b.errors[key] = f"{type(exc).__name__}: {exc}"
    words = 4096
    chain = b.cuda.to_device(_chain(words, 1, rng))
    b.k["chase_shared"](chain, words, steps, cyc, sink, grid=(1,), block=(1,))
    c = b.cuda.from_device(cyc, (1,), np.int64)[0]
    b.put("shared_latency_cycles", c / steps,
          f"one thread, random cycle over {words} shared words, {steps} steps")


#: dependent-issue latencies: key -> (kernel, NumPy type of its chain, start value, operation)
DEPENDENT = {
    "fp32_latency_cycles": ("lat_fp32", np.float32, 0.5, "fmaf"),
    "fp64_latency_cycles": ("lat_fp64", np.float64, 0.5, "fma (double)"),
    "sfu_latency_cycles": ("lat_sfu", np.float32, 0.7, "rsqrtf (MUFU.RSQ, range fix-ups)"),
    "sfu_ftz_latency_cycles": ("lat_sfu_ftz", np.float32, 0.7, "rsqrt.approx.ftz (MUFU.RSQ)"),
    "div_f32_latency_cycles": ("lat_div_f32", np.float32, 0.9, "IEEE float division"),
    "sqrt_f32_latency_cycles": ("lat_sqrt_f32", np.float32, 2.0, "IEEE sqrtf and an add"),
    "div_s32_latency_cycles": ("lat_div_s32", np.int32, 12345, "int division"),
    "div_u32_latency_cycles": ("lat_div_u32", np.uint32, 12345, "unsigned division"),
    "rcp_f32_latency_cycles": ("lat_rcp_f32", np.float32, 0.9, "IEEE 1.0f / x"),
    "div_f64_latency_cycles": ("lat_div_f64", np.float64, 0.9, "IEEE double division"),
    "rcp_f64_latency_cycles": ("lat_rcp_f64", np.float64, 0.9, "IEEE 1.0 / x (double)"),
    "sqrt_f64_latency_cycles": ("lat_sqrt_f64", np.float64, 2.0, "IEEE sqrt and an add (double)"),
    "div_u64_latency_cycles": ("lat_div_u64", np.uint64, 12345, "64-bit unsigned division"),
}


def dependent_latencies(b: Bench) -> None:
    steps = b.size(1 << 14, 8)
    cyc = b.zeros(8)
    for key, (name, dtype, start, what) in DEPENDENT.items():
        try:
            out = b.zeros(8)
            b.k[name](out, cyc, steps, dtype(start), grid=(1,), block=(1,))  # warm (loads code)
            b.k[name](out, cyc, steps, dtype(start), grid=(1,), block=(1,))
            c = b.cuda.from_device(cyc, (1,), np.int64)[0]
            b.put(key, c / steps, f"one thread, {steps} dependent {what}, 8 per loop trip; "
                                  "clock64 difference / steps")
        except Exception as exc:
            b.errors[key] = f"{type(exc).__name__}: {exc}"


def loaded_latency(b: Bench) -> None:
    """``dram_loaded_latency``: DRAM latency against the bandwidth drawn at the same time."""
    lines = b.size(GIB, 1 << 16) // 128
    order = np.random.default_rng(1).permutation(lines).astype(np.uint32)
    following = np.empty(lines, np.uint32)
    following[order] = np.roll(order, -1)
    chain = b.cuda.to_device(np.repeat(following, 32))
    del order, following
    sink = b.zeros(4)
    gbs, cycles, levels = [], [], []
    for warps, chases in ((1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (32, 1), (64, 1), (32, 4),
                          (64, 4)):
        per_block = min(warps, 32)
        blocks = b.sms * (warps // per_block)
        total = blocks * per_block
        steps = max(16, min(1024, lines // (2 * total * chases)))
        steps = b.size(steps, 4)
        cyc = b.zeros(8 * total)
        kernel, launches = b.k[f"chase_lines{chases}"], iter(range(1, 1 << 20))

        def launch(kernel=kernel, cyc=cyc, steps=steps, blocks=blocks, per_block=per_block,
                   launches=launches):  # each launch from other starting lines
            seed = np.uint32(next(launches) * (lines // 4 + 7) % lines)
            kernel(chain, lines, steps, seed, cyc, sink, grid=(blocks,),
                   block=(32 * per_block,))

        ms = b.work_ms(launch, repeat=5)
        c = b.cuda.from_device(cyc, (total,), np.int64)
        gbs.append(float(f"{total * chases * steps * 128 / ms / 1e6:.6g}"))
        cycles.append(float(f"{np.median(c) / steps:.6g}"))
        levels.append([warps, chases])
    order = np.argsort(gbs, kind="stable")  # the model reads latency against bandwidth
    b.results["dram_loaded_latency"] = {"gbs": [gbs[i] for i in order],
                                        "cycles": [cycles[i] for i in order],
                                        "warps_chases": [levels[i] for i in order]}
    b.methods["dram_loaded_latency"] = (
        "warps per SM x chases per warp of 128-byte lines (32 lanes, one line each step, "
        "ld.global.cg) in a random cycle over 1 GiB: bytes / event time (gbs) and the median "
        "warp's clock64 cycles per step (cycles), from 1 warp per SM to 64 x 4; points in "
        "order of bandwidth")


THROUGHPUT = {  # kernel -> (iterations on the GPU, what one step is)
    "fp32_fma": (1 << 16, "fmaf"),
    "fp64_fma": (1 << 13, "fma (double)"),
    "int32_imad": (1 << 15, "int multiply-add"),
    "int32_add": (1 << 15, "int add"),
    "int32_lop3": (1 << 15, "lop3.b32 (three-way xor)"),
    "int32_shf": (1 << 15, "shf.l.wrap.b32 (funnel shift)"),
    "int32_mul_hi": (1 << 15, "__umulhi (IMAD.HI.U32)"),
    "int32_mul_wide_lop3": (1 << 15, "a 32 x 32 -> 64-bit multiply and a xor of its halves "
                                     "(IMAD.WIDE.U32 and LOP3: two instructions a step)"),
    "sfu": (1 << 13, "rsqrtf"),
    "shfl": (1 << 14, "__shfl_xor_sync"),
}


def throughputs(b: Bench) -> None:
    blocks = b.sms * 8
    out = b.zeros(8 * blocks * 256)
    for name, (iters, what) in THROUGHPUT.items():
        try:
            iters = b.size(iters, 2)
            ms = b.work_ms(lambda name=name, iters=iters: b.k[name](out, iters, grid=(blocks,),
                                                               block=(256,)), repeat=5)
            warp_ops = blocks * 8 * iters * 8
            b.put(name, b.per_clk_per_sm(warp_ops, ms),
                  f"warp instructions per clock per SM: {what}, 8 chains x {iters} steps, "
                  "2048 threads per SM, event time x clock_ghz")
        except Exception as exc:
            b.errors[name] = f"{type(exc).__name__}: {exc}"


def constant_cache(b: Bench) -> None:
    blocks, iters = b.sms * 8, b.size(4096, 2)
    sink = b.zeros(4)
    ms = b.work_ms(lambda: b.k["constant_reads"](sink, iters, 1, grid=(blocks,), block=(256,)))
    b.put("constant_replays_per_clk_per_sm", b.per_clk_per_sm(blocks * 8 * iters * 31, ms),
          "__constant__ reads, 32 distinct addresses per warp request (31 beyond the first), "
          "8 blocks of 256 per SM; those extra addresses served per clock per SM")


def atomics(b: Bench) -> None:
    blocks = b.sms * 8
    threads = blocks * 256
    p = b.zeros(4 * threads)
    iters = b.size(16, 2)
    ms = b.work_ms(lambda: b.k["atomic_same"](p, iters, grid=(blocks,), block=(256,)), repeat=5)
    b.put("global_atomic_same_address_per_s", threads * iters / ms * 1e3,
          f"atomicAdd of {threads} threads x {iters} to one word; thread operations per s")
    iters = b.size(256, 2)
    ms = b.work_ms(lambda: b.k["atomic_distinct"](p, iters, grid=(blocks,), block=(256,)), repeat=5)
    b.put("global_atomic_distinct_per_s", threads * iters / ms * 1e3,
          f"atomicAdd of {threads} threads x {iters}, each to its own word")
    iters = b.size(4096, 2)
    ms = b.work_ms(lambda: b.k["atomic_shared"](p, iters, grid=(blocks,), block=(256,)), repeat=5)
    b.put("shared_atomic_per_clk_per_sm", b.per_clk_per_sm(threads * iters, ms),
          "shared atomicAdd, each thread its own word; thread operations per clock per SM")


def launches(b: Bench) -> None:
    import time

    empty = b.k["empty"]
    count = b.size(1000, 3)

    def many():
        for _ in range(count):
            empty(grid=(1,), block=(32,))

    b.put("launch_overhead_us", b.ms(many, repeat=5) * 1e3 / count,
          f"{count} empty kernels queued back to back (head start hides the host); "
          "event time per launch")
    t0 = time.perf_counter()
    many()
    b.cuda.Context.synchronize()
    b.put("launch_issue_us", (time.perf_counter() - t0) * 1e6 / count,
          "host time per launch of a cudakit kernel (typed checks + PyCUDA prepared call)")
    empty8, d = b.k["empty8"], b.zeros(1024)
    args = (int(d), int(d) + 512, 1, 2, 3, 4, np.float32(0.5), np.float32(0.25))
    empty8(*args, grid=(1,), block=(32,))
    b.cuda.Context.synchronize()
    t0 = time.perf_counter()
    for _ in range(count):
        empty8(*args, grid=(1,), block=(32,))
    b.cuda.Context.synchronize()
    b.put("launch_issue_per_arg_us",
          max((time.perf_counter() - t0) * 1e6 / count - b.results["launch_issue_us"], 0) / 8,
          "host time per launch of an empty 8-parameter kernel (2 integer addresses, 4 Python "
          "ints, 2 float32) less launch_issue_us, per parameter")
    one = b.ms(lambda: empty(grid=(1,), block=(32,)), repeat=50)
    b.put("kernel_min_us", one * 1e3, "one empty kernel alone, event time, median of 50")
    blocks = b.size(1 << 21, 256)
    grid = b.ms(lambda: empty(grid=(blocks,), block=(32,)), repeat=10)
    b.put("block_launch_per_s", (blocks - 1) / max(grid - one, 1e-6) * 1e3,
          f"one empty kernel of {blocks} blocks of 32 threads less one of 1 block, "
          "event time; blocks started per second")
    # the same warps in blocks of 32 to 1024 threads: whether blocks start at one rate
    # whatever their size (the model's block dispatch term assumes so)
    shapes: dict[str, list[float]] = {"threads": [], "us": []}
    for threads in (32, 64, 128, 256, 512, 1024):
        ms = b.ms(lambda t=threads: empty(grid=(blocks * 32 // t,), block=(t,)), repeat=10)
        shapes["threads"].append(threads)
        shapes["us"].append(float(f"{(ms - one) * 1e3:.6g}"))
    b.results["launch_shapes"] = shapes
    b.methods["launch_shapes"] = (f"one empty kernel of {blocks} warps in blocks of 32 to 1024 "
                                  "threads less one of 1 block, event time (microseconds)")


def barrier(b: Bench) -> None:
    iters = b.size(100_000, 4)
    cyc = b.zeros(8 * b.sms)
    b.k["barriers"](cyc, iters, grid=(b.sms,), block=(1024,))
    c = b.cuda.from_device(cyc, (b.sms,), np.int64)
    b.put("barrier_cycles", np.median(c) / iters,
          f"1024 threads, {iters} __syncthreads() in a loop, one block per SM")


def barrier_warps(b: Bench) -> None:
    """``barrier_curve``: cycles per ``__syncthreads()`` in a loop of them, one block per SM,
    for blocks of 1 to 32 warps (a barrier waits for its block's last warp, and all warps
    take their turns at the schedulers between two)."""
    iters = b.size(100_000, 4)
    cyc = b.zeros(8 * b.sms)
    warps, cycles = [], []
    for w in (1, 2, 4, 8, 16, 32):
        b.k["barriers"](cyc, iters, grid=(b.sms,), block=(32 * w,))
        c = b.cuda.from_device(cyc, (b.sms,), np.int64)
        warps.append(w)
        cycles.append(float(f"{np.median(c) / iters:.6g}"))
    b.results["barrier_curve"] = {"warps": warps, "cycles": cycles}
    b.methods["barrier_curve"] = (f"blocks of 1-32 warps, {iters} __syncthreads() in a loop, "
                                  "one block per SM; clock64 difference / barriers, median over "
                                  "the SMs")


#: the copies of ``copy_curves``: name -> (direction, host memory)
CURVES = {"h2d_pinned": ("htod", "pinned"), "d2h_pinned": ("dtoh", "pinned"),
          "h2d_pageable": ("htod", "pageable"), "d2h_pageable": ("dtoh", "pageable"),
          "d2d": ("dtod", None)}


def copies(b: Bench) -> None:
    cuda = b.cuda
    n = b.size(256 << 20, 1 << 16)
    sizes = [256 << (2 * i) for i in range(11) if 256 << (2 * i) <= n]  # 256 B ... 256 MiB
    dev, other = b.zeros(n), b.zeros(n)
    host = {"pinned": cuda.pagelocked_empty(n, np.uint8), "pageable": np.empty(n, np.uint8)}
    for array in host.values():  # touched, as a program's arrays are: np.zeros alone leaves
        array[:] = 1             # every page mapped to the kernel's one zero page

    def copy(direction: str, memory: str | None, size: int):
        if direction == "htod":
            return lambda: cuda.memcpy_htod(dev, host[memory][:size])
        if direction == "dtoh":
            return lambda: cuda.memcpy_dtoh(host[memory][:size], dev)
        return lambda: cuda.memcpy_dtod(other, dev, size)

    curves = {}
    for name, (direction, memory) in CURVES.items():
        us = [b.ms(copy(direction, memory, s), repeat=5 if s >= 64 << 20 else 10) * 1e3
              for s in sizes]
        curves[name] = {"bytes": sizes, "us": [float(f"{t:.6g}") for t in us]}
        if name != "d2d":
            b.put(f"{name}_gbs", sizes[-1] / us[-1] / 1e3,
                  f"memcpy_{direction}, {memory}, {sizes[-1]} B, CUDA events")
    b.results["copy_curves"] = curves
    b.methods["copy_curves"] = (
        f"microseconds per synchronous copy of {sizes[0]} to {sizes[-1]} B (x4 apart), CUDA "
        "events, median: memcpy_htod/dtoh from pinned and from pageable host memory, "
        "memcpy_dtod within device memory")
    pinned = curves["h2d_pinned"]
    fit = [(s, t / 1e3) for s, t in zip(pinned["bytes"], pinned["us"], strict=True)
           if s <= 64 << 20]
    latency_ms, gbs = b.cudakit.fit_latency_bandwidth(*zip(*fit, strict=True))
    b.put("copy_latency_us", latency_ms * 1e3,
          f"fit ms = latency + bytes / bandwidth over pinned memcpy_htod of {fit[0][0]} to "
          f"{fit[-1][0]} B (cudakit.timing.fit_latency_bandwidth)")
    b.put("copy_fit_gbs", gbs, "the bandwidth of the same fit")
    up, down, back = cuda.Stream(), cuda.Stream(), cuda.pagelocked_empty(n, np.uint8)
    back[:] = 0

    def both():
        cuda.memcpy_htod_async(dev, host["pinned"], up)
        cuda.memcpy_dtoh_async(back, other, down)

    b.put("pcie_duplex_gbs", 2 * n / b.ms(both, repeat=5) / 1e6,
          f"memcpy_htod_async and memcpy_dtoh_async of {n} B each, pinned, on two streams at "
          "once; bytes of both / event time")
    import time

    stream, calls = cuda.Stream(), b.size(1000, 3)
    small = host["pinned"][:4]
    cuda.Context.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        cuda.memcpy_htod_async(dev, small, stream)
    elapsed = time.perf_counter() - t0
    stream.synchronize()
    b.put("copy_issue_us", elapsed * 1e6 / calls,
          f"host time per memcpy_htod_async of 4 B from pinned memory, {calls} calls")


def copy_alignment(b: Bench) -> None:
    """``d2d_alignment``: ``memcpy_dtod`` of sizes a few bytes past a multiple of 16."""
    cuda = b.cuda
    bases = [b.size(m << 20, 1 << 12) for m in (1, 4, 16, 48, 64, 256)]
    extras = (0, 1, 2, 4, 8, 12)
    dev, other = b.zeros(bases[-1] + 16), b.zeros(bases[-1] + 16)
    us = {str(extra): [b.ms(lambda n=base + extra: cuda.memcpy_dtod(other, dev, n),
                            repeat=5 if base >= 64 << 20 else 10) * 1e3 for base in bases]
          for extra in extras}
    b.results["d2d_alignment"] = {"bytes": bases,
                                  "us": {k: [float(f"{t:.6g}") for t in v]
                                         for k, v in us.items()}}
    b.methods["d2d_alignment"] = (
        "microseconds per synchronous memcpy_dtod of base + extra bytes (extra 0, 1, 2, 4, 8, "
        "12; bases 1-256 MiB), CUDA events, median; both pointers at the start of their "
        "allocations")
    extra = [max(float(np.median([us[str(e)][i] for e in extras[1:]])) - us["0"][i], 0.01)
             for i in range(len(bases))]
    b.results["d2d_unaligned_us"] = {"bytes": bases, "us": [float(f"{t:.6g}") for t in extra]}
    b.methods["d2d_unaligned_us"] = (
        "what a memcpy_dtod whose size is not a multiple of 16 B takes beyond one that is: "
        "per base size, the median over extras 1-12 B less extra 0 (d2d_alignment)")


#: in this order: ``loaded_latency`` comes last, as its 1 GiB host array, freed, slows the
#: pageable copies measured right after it (64 KiB: 85 us against 25-27 us alone, H100)
BENCHMARKS = [device_facts, clock, dram, dram_streams, l2, partial_stores, l1, l1_patterns, shared,
              latencies, dependent_latencies, throughputs, constant_cache, atomics, launches,
              barrier, barrier_warps, copies, copy_alignment, loaded_latency]


def header() -> dict:
    """Engine, device, driver, CUDA and nvcc versions and the date, as recordings have them."""
    from cudakit.record import header as record_header

    return record_header()


def run(small: bool, out: Path | None = None, only: list[str] | None = None) -> dict:
    """Every benchmark (or those named in ``only``); a failed one is named in ``errors`` and
    the others still run.

    With ``out``, the results so far are written there after each benchmark (a run stopped
    by a time limit keeps what it measured)."""
    import time

    names = [bench.__name__ for bench in BENCHMARKS]
    unknown = sorted(set(only or ()) - set(names))
    if unknown:
        raise SystemExit(f"benchmarks.microbench: no benchmark {', '.join(unknown)} "
                         f"(there are: {', '.join(names)})")
    b = Bench(small)
    head = header()
    head["small"] = small
    if head["engine"] == "emu":
        head["note"] = "emulator: host times, meaningless as GPU figures"
    seconds: dict = {}
    for bench in BENCHMARKS:
        if only and bench.__name__ not in only:
            continue
        start = time.perf_counter()
        try:
            bench(b)
        except Exception as exc:
            b.errors[bench.__name__] = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        seconds[bench.__name__] = round(time.perf_counter() - start, 2)
        print(f"{bench.__name__}: {seconds[bench.__name__]} s", file=sys.stderr, flush=True)
        result = {"header": head, **b.results, "methods": b.methods, "errors": b.errors,
                  "seconds": seconds}
        if out is not None:
            out.write_text(json.dumps(result, indent=1) + "\n")
    return result


def merge(result: dict, path: Path) -> None:
    """Write ``result``'s figures into the microbenchmark file at ``path``, over its own; the
    header's ``updated`` lists when and which (an error of this run leaves the old figure)."""
    earlier = json.loads(path.read_text())
    if earlier["header"].get("device") != result["header"].get("device"):
        raise SystemExit(f"benchmarks.microbench: {path} is of {earlier['header'].get('device')}"
                         f", this run of {result['header'].get('device')}")
    figures = {k: v for k, v in result.items()
               if k not in ("header", "methods", "errors", "seconds") and v is not None}
    earlier.update(figures)
    earlier["methods"].update({k: v for k, v in result["methods"].items() if k in figures})
    earlier["header"].setdefault("updated", []).append(
        {"date": result["header"].get("date"), "keys": sorted(figures)})
    path.write_text(json.dumps(earlier, indent=1) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=None, help="JSON file to write (default: stdout)")
    parser.add_argument("--small", action="store_true", help="tiny sizes (the emulator)")
    parser.add_argument("--only", nargs="+", default=None, metavar="BENCHMARK",
                        help="only these benchmarks (function names: copies loaded_latency)")
    parser.add_argument("--into", default=None, metavar="DEVICE_JSON",
                        help="merge this run's figures into an earlier run's file (with "
                             "--only: a device file re-measured in part)")
    options = parser.parse_args(argv)
    result = run(options.small, Path(options.out) if options.out else None, options.only)
    if options.into:
        merge(result, Path(options.into))
    elif not options.out:
        print(json.dumps(result, indent=1))
    for key in sorted(k for k in result if k not in ("header", "methods", "errors", "seconds",
                                                  "copy_curves", "dram_loaded_latency",
                                                  "dram_streams")):
        print(f"{key:36s} {result[key]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
