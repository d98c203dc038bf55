"""A suite of kernels with NumPy references, runnable on any PyCUDA-shaped engine.

Each :class:`Case` builds its inputs, launches one kernel and names the output
arrays; ``run_case(case, engine)`` works with ``cudakit.emu`` and with PyCUDA
(``pycuda.driver`` plus ``pycuda.compiler.SourceModule``), so the same cases
compare the emulator with NumPy here and with the H100 on the device machine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np


@dataclass
class Case:
    name: str
    source: str
    kernel: str
    inputs: Callable  # rng -> list of arrays / numpy scalars (arrays become device buffers)
    outputs: list[int]  # indices of arrays to copy back
    reference: Callable  # list of host inputs -> list of expected outputs
    grid: tuple = (1, 1)
    block: tuple = (128, 1, 1)
    shared: int = 0
    exact: bool = True
    rtol: float = 1e-5
    constants: dict = field(default_factory=dict)  # symbol -> array (copied before launch)
    gpu_kernel: str | None = None  # PyCUDA name when it differs (a mangled template instance)
    gpu_suffix: str = ""  # source added for nvcc (an explicit template instantiation)


def run_case(case: Case, engine, host: list | None = None) -> tuple[list, list]:
    """Launch ``case`` on ``engine`` (with inputs ``host``, else generated); return
    ``(outputs, expected)``."""
    if host is None:
        host = case.inputs(np.random.default_rng(7))
    if getattr(engine, "is_gpu", False):
        # plain kernels get C linkage (PyCUDA's default); a template needs its mangled name
        mod = engine.SourceModule(case.source + case.gpu_suffix, no_extern_c=bool(case.gpu_suffix))
        kernel = case.gpu_kernel or case.kernel
    else:
        mod = engine.SourceModule(case.source, no_extern_c=True)
        kernel = case.kernel
    for name, value in case.constants.items():
        ptr, _ = mod.get_global(name)
        engine.memcpy_htod(ptr, value)
    dev = [engine.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    mod.get_function(kernel)(*dev, grid=case.grid, block=case.block, shared=case.shared)
    outs = []
    for i in case.outputs:
        out = np.empty_like(host[i])
        engine.memcpy_dtoh(out, dev[i])
        outs.append(out)
    return outs, case.reference([a.copy() if isinstance(a, np.ndarray) else a for a in host])


def pycuda_engine():
    """PyCUDA arranged like ``cudakit.emu`` (only on a machine with a GPU)."""
    import pycuda.autoinit  # noqa: F401
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule

    return SimpleNamespace(SourceModule=SourceModule, to_device=drv.to_device,
                           memcpy_htod=drv.memcpy_htod, memcpy_dtoh=drv.memcpy_dtoh, is_gpu=True)


def f32(rng, n):
    return rng.random(n, dtype=np.float32)


# -- references -----------------------------------------------------------------------------

def _blocks(x, size):
    n = -(-x.size // size) * size
    return np.pad(x.astype(np.float64), (0, n - x.size)).reshape(-1, size)


def _int_ops(a, b):
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    q = np.trunc(a64 / b64).astype(np.int64)
    r = a64 - q * b64
    wrap = lambda v: v.astype(np.int64).astype(np.uint64).astype(np.uint32).view(np.int32)
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    return [np.stack([
        wrap(q), wrap(r), wrap(a64 * b64), wrap(a64 + b64 * 1000003),
        wrap(a64 >> (b64 & 31)), wrap(ua.astype(np.int64) >> (ub & 31).astype(np.int64)),
        (ua // np.maximum(ub, 1)).view(np.int32), (ua % np.maximum(ub, 1)).view(np.int32),
        wrap(a64.astype(np.int8)), wrap(a64.astype(np.uint16)),
        wrap(np.int64(1) * (a < 0) + 2 * (ua < ub) + 4 * ((a & 7) == 3)),
        wrap((a.astype(np.float32) / 3).astype(np.int32)),
    ], axis=1)]


def _collatz(start):
    out = []
    for v in start.tolist():
        steps = 0
        while v != 1 and steps < 500:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            steps += 1
        out.append(steps)
    return np.array(out, np.int32)


def _scan_blocks(x, size):
    return np.cumsum(x.reshape(-1, size), axis=1).reshape(-1).astype(x.dtype)


def _stencil(u):
    out = u.copy()
    out[1:-1, 1:-1] = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                       - 4 * u[1:-1, 1:-1]) * np.float32(0.25) + u[1:-1, 1:-1]
    return out


def _atomics(x):
    vals = x.astype(np.int64)
    return [np.array([vals.sum(), vals.max(), vals.min(), np.bitwise_or.reduce(x),
                      np.bitwise_xor.reduce(x), np.bitwise_and.reduce(x | ~np.int32(255)),
                      x.size, 0], np.int32)]


CASES = [
    Case("vector_add_partial_block",
         """__global__ void add(const float* a, const float* b, float* c, int n) {
             int i = blockIdx.x * blockDim.x + threadIdx.x;
             if (i < n) c[i] = a[i] + b[i];
         }""", "add",
         lambda r: [f32(r, 1000), f32(r, 1000), np.zeros(1000, np.float32), np.int32(1000)],
         [2], lambda h: [h[0] + h[1]], grid=(10, 1), block=(100, 1, 1)),
    Case("saxpy_grid_stride",
         """__global__ void saxpy(float a, const float* x, float* y, int n) {
             for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
                  i += blockDim.x * gridDim.x)
                 y[i] = a * x[i] + y[i];
         }""", "saxpy",
         lambda r: [np.float32(2.5), f32(r, 5000), f32(r, 5000), np.int32(5000)],
         [2], lambda h: [np.float32(2.5) * h[1] + h[2]], grid=(3, 1), block=(96, 1, 1),
         exact=False),  # nvcc (and the emulator) fuse a * x + y into one FMA
    Case("shared_tree_reduction",
         """__global__ void reduce(const float* in, float* out, int n) {
             extern __shared__ float s[];
             unsigned int tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
             s[tid] = i < n ? in[i] : 0.0f;
             __syncthreads();
             for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) {
                 if (tid < k) s[tid] += s[tid + k];
                 __syncthreads();
             }
             if (tid == 0) out[blockIdx.x] = s[0];
         }""", "reduce",
         lambda r: [f32(r, 3000), np.zeros(12, np.float32), np.int32(3000)],
         [1], lambda h: [_blocks(h[0], 256).sum(axis=1).astype(np.float32)],
         grid=(12, 1), block=(256, 1, 1), shared=1024, exact=False),
    Case("warp_shuffle_reduction_atomic",
         """__device__ float warp_sum(float v) {
             for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
             return v;
         }
         __global__ void total(const float* x, float* out, int n) {
             float v = 0.0f;
             for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
                  i += blockDim.x * gridDim.x) v += x[i];
             v = warp_sum(v);
             if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
         }""", "total",
         lambda r: [f32(r, 10000), np.zeros(1, np.float32), np.int32(10000)],
         [1], lambda h: [np.array([h[0].astype(np.float64).sum()], np.float32)],
         grid=(4, 1), block=(256, 1, 1), exact=False, rtol=1e-4),
    Case("histogram_shared_atomics",
         """#define BINS 64
         __global__ void histo(const unsigned char* data, unsigned int* bins, int n) {
             __shared__ unsigned int h[BINS];
             for (int b = threadIdx.x; b < BINS; b += blockDim.x) h[b] = 0;
             __syncthreads();
             for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
                  i += blockDim.x * gridDim.x)
                 atomicAdd(&h[data[i] % BINS], 1u);
             __syncthreads();
             for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&bins[b], h[b]);
         }""", "histo",
         lambda r: [r.integers(0, 256, 20000, dtype=np.uint8), np.zeros(64, np.uint32),
                    np.int32(20000)],
         [1], lambda h: [np.bincount(h[0] % 64, minlength=64).astype(np.uint32)],
         grid=(5, 1), block=(192, 1, 1)),
    Case("inclusive_scan_hillis_steele",
         """__global__ void scan(const int* in, int* out) {
             __shared__ int buf[2][256];
             int t = threadIdx.x, base = blockIdx.x * blockDim.x;
             int src = 0;
             buf[0][t] = in[base + t];
             __syncthreads();
             for (int d = 1; d < blockDim.x; d <<= 1) {
                 int v = buf[src][t];
                 if (t >= d) v += buf[src][t - d];
                 buf[1 - src][t] = v;
                 src = 1 - src;
                 __syncthreads();
             }
             out[base + t] = buf[src][t];
         }""", "scan",
         lambda r: [r.integers(-1000, 1000, 1024, dtype=np.int32), np.zeros(1024, np.int32)],
         [1], lambda h: [_scan_blocks(h[0], 256)], grid=(4, 1), block=(256, 1, 1)),
    Case("exclusive_scan_blelloch",
         """__global__ void bscan(const unsigned int* in, unsigned int* out, int n) {
             extern __shared__ unsigned int tmp[];
             int t = threadIdx.x;
             tmp[2 * t] = in[2 * t];
             tmp[2 * t + 1] = in[2 * t + 1];
             int offset = 1;
             for (int d = n >> 1; d > 0; d >>= 1) {
                 __syncthreads();
                 if (t < d) {
                     int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
                     tmp[bi] += tmp[ai];
                 }
                 offset *= 2;
             }
             if (t == 0) tmp[n - 1] = 0;
             for (int d = 1; d < n; d *= 2) {
                 offset >>= 1;
                 __syncthreads();
                 if (t < d) {
                     int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
                     unsigned int v = tmp[ai];
                     tmp[ai] = tmp[bi];
                     tmp[bi] += v;
                 }
             }
             __syncthreads();
             out[2 * t] = tmp[2 * t];
             out[2 * t + 1] = tmp[2 * t + 1];
         }""", "bscan",
         lambda r: [r.integers(0, 2**31, 512, dtype=np.uint32), np.zeros(512, np.uint32),
                    np.int32(512)],
         [1], lambda h: [np.concatenate([[0], np.cumsum(h[0], dtype=np.uint32)[:-1]])
                         .astype(np.uint32)],
         grid=(1, 1), block=(256, 1, 1), shared=2048),
    Case("convolution_constant_memory",
         """#define R 3
         __constant__ float taps[2 * R + 1];
         __global__ void conv(const float* x, float* y, int n) {
             int i = blockIdx.x * blockDim.x + threadIdx.x;
             if (i >= n) return;
             float acc = 0.0f;
             #pragma unroll
             for (int k = -R; k <= R; ++k) {
                 int j = min(max(i + k, 0), n - 1);
                 acc += taps[k + R] * x[j];
             }
             y[i] = acc;
         }""", "conv",
         lambda r: [f32(r, 700), np.zeros(700, np.float32), np.int32(700)],
         [1], lambda h: [sum(np.float32(w) * h[0][np.clip(np.arange(700) + k, 0, 699)]
                             for k, w in zip(range(-3, 4), [1, 2, 3, 4, 3, 2, 1], strict=True))
                         .astype(np.float32)],
         grid=(6, 1), block=(128, 1, 1), exact=False,
         constants={"taps": np.array([1, 2, 3, 4, 3, 2, 1], np.float32)}),
    Case("stencil_2d_shared_halo",
         """#define B 16
         __global__ void heat(const float* u, float* v, int nx, int ny) {
             __shared__ float t[B + 2][B + 2];
             int x = blockIdx.x * B + threadIdx.x, y = blockIdx.y * B + threadIdx.y;
             int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
             bool in = x < nx && y < ny;
             if (in) t[ly][lx] = u[y * nx + x];
             if (in && threadIdx.x == 0 && x > 0) t[ly][0] = u[y * nx + x - 1];
             if (in && threadIdx.x == B - 1 && x < nx - 1) t[ly][B + 1] = u[y * nx + x + 1];
             if (in && threadIdx.y == 0 && y > 0) t[0][lx] = u[(y - 1) * nx + x];
             if (in && threadIdx.y == B - 1 && y < ny - 1) t[B + 1][lx] = u[(y + 1) * nx + x];
             __syncthreads();
             if (!in) return;
             if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
                 v[y * nx + x] = t[ly][lx];
                 return;
             }
             float lap = t[ly - 1][lx] + t[ly + 1][lx] + t[ly][lx - 1] + t[ly][lx + 1]
                         - 4.0f * t[ly][lx];
             v[y * nx + x] = lap * 0.25f + t[ly][lx];
         }""", "heat",
         lambda r: [f32(r, 40 * 37).reshape(37, 40), np.zeros((37, 40), np.float32),
                    np.int32(40), np.int32(37)],
         [1], lambda h: [_stencil(h[0])], grid=(3, 3), block=(16, 16, 1), exact=False),
    Case("transpose_padded_tile",
         """#define TILE 32
         __global__ void transpose(const int* in, int* out, int w, int h) {
             __shared__ int tile[TILE][TILE + 1];
             int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
             for (int j = 0; j < TILE; j += blockDim.y)
                 if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
             __syncthreads();
             x = blockIdx.y * TILE + threadIdx.x;
             y = blockIdx.x * TILE + threadIdx.y;
             for (int j = 0; j < TILE; j += blockDim.y)
                 if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
         }""", "transpose",
         lambda r: [r.integers(-9999, 9999, (45, 70), dtype=np.int32),
                    np.zeros((70, 45), np.int32), np.int32(70), np.int32(45)],
         [1], lambda h: [h[0].T.copy()], grid=(3, 2), block=(32, 8, 1)),
    Case("tiled_matmul",
         """#define T 16
         __global__ void mm(const float* A, const float* B, float* C, int n) {
             __shared__ float As[T][T], Bs[T][T];
             int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
             float acc = 0.0f;
             for (int k0 = 0; k0 < n; k0 += T) {
                 As[threadIdx.y][threadIdx.x] = (r < n && k0 + threadIdx.x < n)
                                                ? A[r * n + k0 + threadIdx.x] : 0.0f;
                 Bs[threadIdx.y][threadIdx.x] = (c < n && k0 + threadIdx.y < n)
                                                ? B[(k0 + threadIdx.y) * n + c] : 0.0f;
                 __syncthreads();
                 for (int k = 0; k < T; ++k)
                     acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
                 __syncthreads();
             }
             if (r < n && c < n) C[r * n + c] = acc;
         }""", "mm",
         lambda r: [f32(r, 40 * 40).reshape(40, 40), f32(r, 40 * 40).reshape(40, 40),
                    np.zeros((40, 40), np.float32), np.int32(40)],
         [2], lambda h: [(h[0].astype(np.float64) @ h[1]).astype(np.float32)],
         grid=(3, 3), block=(16, 16, 1), exact=False),
    Case("integer_corner_cases",
         """__global__ void ints(const int* a, const int* b, int* out, int n) {
             int i = blockIdx.x * blockDim.x + threadIdx.x;
             if (i >= n) return;
             int x = a[i], y = b[i];
             unsigned int ux = x, uy = y;
             int* o = out + 12 * i;
             o[0] = x / y; o[1] = x % y; o[2] = x * y; o[3] = x + y * 1000003;
             o[4] = x >> (y & 31); o[5] = (int)(ux >> (uy & 31));
             o[6] = (int)(ux / (uy ? uy : 1u)); o[7] = (int)(ux % (uy ? uy : 1u));
             o[8] = (char)x; o[9] = (unsigned short)x;
             o[10] = (x < 0) + 2 * (ux < uy) + 4 * ((x & 7) == 3);
             o[11] = (int)((float)x / 3.0f);
         }""", "ints",
         lambda r: [np.r_[r.integers(-2**31, 2**31, 250, dtype=np.int64),
                          [-2**31, 2**31 - 1, -1, 7, -7, 0]].astype(np.int32),
                    np.r_[r.integers(1, 2**31, 250, dtype=np.int64) * r.choice([-1, 1], 250),
                          [3, -2, 5, -2, 2, 9]].astype(np.int32),
                    np.zeros(256 * 12, np.int32), np.int32(256)],
         [2], lambda h: [_int_ops(h[0], h[1])[0].reshape(-1)],
         grid=(2, 1), block=(128, 1, 1)),
    Case("divergent_loops_collatz",
         """__global__ void collatz(const unsigned int* start, int* steps, int n) {
             int i = blockIdx.x * blockDim.x + threadIdx.x;
             if (i >= n) return;
             unsigned int v = start[i];
             int s = 0;
             while (v != 1) {
                 if (s >= 500) break;
                 if (v % 2 == 0) { v /= 2; s++; continue; }
                 v = 3 * v + 1;
                 ++s;
             }
             steps[i] = s;
         }""", "collatz",
         lambda r: [r.integers(1, 10000, 300, dtype=np.uint32), np.zeros(300, np.int32),
                    np.int32(300)],
         [1], lambda h: [_collatz(h[0])], grid=(3, 1), block=(128, 1, 1)),
    Case("bit_intrinsics",
         """__global__ void bits(const unsigned int* x, int* out) {
             int i = threadIdx.x;
             unsigned int v = x[i];
             out[4 * i] = __popc(v); out[4 * i + 1] = __clz(v);
             out[4 * i + 2] = __ffs(v); out[4 * i + 3] = (int)__brev(v);
         }""", "bits",
         lambda r: [np.r_[r.integers(0, 2**32, 61, dtype=np.uint64), [0, 1, 2**31]]
                    .astype(np.uint32), np.zeros(256, np.int32)],
         [1], lambda h: [np.stack([
             np.array([bin(v).count("1") for v in h[0].tolist()]),
             np.array([32 - v.bit_length() for v in h[0].tolist()]),
             np.array([(v & -v).bit_length() for v in h[0].tolist()]),
             np.array([int(f"{v:032b}"[::-1], 2) for v in h[0].tolist()], np.uint32)
             .view(np.int32)], 1).astype(np.int32).reshape(-1)],
         grid=(1, 1), block=(64, 1, 1)),
    Case("warp_vote_and_shuffles",
         """__global__ void votes(const int* x, unsigned int* out) {
             int t = threadIdx.x;
             int v = x[t];
             unsigned int* o = out + 5 * t;
             o[0] = __ballot_sync(0xffffffffu, v > 0);
             o[1] = __any_sync(0xffffffffu, v > 900) + 2 * __all_sync(0xffffffffu, v > -1001);
             o[2] = __shfl_sync(0xffffffffu, v, (t * 7) & 31);
             o[3] = __shfl_xor_sync(0xffffffffu, v, 5);
             o[4] = __shfl_up_sync(0xffffffffu, v, 3, 16);
         }""", "votes",
         lambda r: [r.integers(-1000, 1000, 64, dtype=np.int32), np.zeros(320, np.uint32)],
         [1], lambda h: [_votes(h[0])], grid=(1, 1), block=(64, 1, 1)),
    Case("atomic_family",
         """__global__ void atoms(const int* x, int* r, int n) {
             int i = blockIdx.x * blockDim.x + threadIdx.x;
             if (i >= n) return;
             atomicAdd(&r[0], x[i]); atomicMax(&r[1], x[i]); atomicMin(&r[2], x[i]);
             atomicOr(&r[3], x[i]); atomicXor(&r[4], x[i]); atomicAnd(&r[5], x[i] | ~255);
             atomicInc((unsigned int*)&r[6], 0xffffffffu);
             int old = atomicExch(&r[7], 0);
             if (old != 0) atomicSub(&r[7], 1);
         }""", "atoms",
         lambda r: [r.integers(-5000, 5000, 900, dtype=np.int32),
                    np.array([0, -2**31, 2**31 - 1, 0, 0, -1, 0, 0], np.int32), np.int32(900)],
         [1], lambda h: _atomics(h[0]), grid=(4, 1), block=(256, 1, 1)),
    Case("math_functions_float",
         """__global__ void maths(const float* x, float* out, int n) {
             int i = blockIdx.x * blockDim.x + threadIdx.x;
             if (i >= n) return;
             float v = x[i];
             float* o = out + 8 * i;
             o[0] = sqrtf(v); o[1] = expf(-v); o[2] = logf(v + 1.0f); o[3] = sinf(v) + cosf(v);
             o[4] = powf(v, 1.5f); o[5] = rsqrtf(v + 1.0f);
             o[6] = fmaxf(v, 0.5f) + floorf(3.0f * v);
             o[7] = tanhf(v) + fabsf(v - 0.5f);
         }""", "maths",
         lambda r: [f32(r, 200), np.zeros(1600, np.float32), np.int32(200)],
         [1], lambda h: [np.stack([
             np.sqrt(h[0]), np.exp(-h[0]), np.log(h[0] + 1), np.sin(h[0]) + np.cos(h[0]),
             h[0] ** 1.5, 1 / np.sqrt(h[0] + 1), np.maximum(h[0], 0.5) + np.floor(3 * h[0]),
             np.tanh(h[0]) + np.abs(h[0] - 0.5)], 1).astype(np.float32).reshape(-1)],
         grid=(2, 1), block=(128, 1, 1), exact=False, rtol=2e-6),
    Case("grid_3d_indexing",
         """__global__ void idx3(int* out, int nx, int ny, int nz) {
             int x = blockIdx.x * blockDim.x + threadIdx.x;
             int y = blockIdx.y * blockDim.y + threadIdx.y;
             int z = blockIdx.z * blockDim.z + threadIdx.z;
             if (x < nx && y < ny && z < nz)
                 out[(z * ny + y) * nx + x] = x + 100 * y + 10000 * z
                                              + 1000000 * (threadIdx.x % 32);
         }""", "idx3",
         lambda r: [np.zeros((5, 9, 11), np.int32), np.int32(11), np.int32(9), np.int32(5)],
         [0], lambda h: [np.fromfunction(lambda z, y, x: x + 100 * y + 10000 * z
                                         + 1000000 * ((x % 4) % 32), (5, 9, 11),
                                         dtype=np.int64).astype(np.int32)],
         grid=(3, 2, 3), block=(4, 5, 2)),
    Case("templates_recursion_switch",
         """template <int N> __device__ int scaled(int v) { return v * N; }
         __device__ int fact(int k) { return k <= 1 ? 1 : k * fact(k - 1); }
         template <int N> __global__ void misc(const int* x, int* out) {
             int t = threadIdx.x, v = x[t], r;
             switch (v & 3) {
                 case 0: r = scaled<N>(v); break;
                 case 1: r = fact(v % 7);
                 case 2: r = -v; break;
                 default: r = 42;
             }
             out[t] = r;
         }""", "misc<3>",
         lambda r: [r.integers(0, 1000, 96, dtype=np.int32), np.zeros(96, np.int32)],
         [1], lambda h: [np.array([_misc(v) for v in h[0].tolist()], np.int32)],
         grid=(1, 1), block=(96, 1, 1), gpu_kernel="_Z4miscILi3EEvPKiPi",
         gpu_suffix="\ntemplate __global__ void misc<3>(const int*, int*);\n"),
]


def _misc(v):
    k = v & 3
    if k == 0:
        return 3 * v
    if k in (1, 2):
        return -v
    return 42


def _votes(x):
    out = np.zeros((64, 5), np.uint32)
    for w in range(2):
        v = x[32 * w: 32 * w + 32]
        ballot = sum(1 << i for i in range(32) if v[i] > 0)
        anyall = int((v > 900).any()) + 2 * int((v > -1001).all())
        for lane in range(32):
            o = out[32 * w + lane]
            o[0] = ballot
            o[1] = anyall
            o[2] = np.int32(v[(lane * 7) & 31]).view(np.uint32)
            o[3] = np.int32(v[lane ^ 5]).view(np.uint32)
            src = lane - 3 if lane % 16 >= 3 else lane
            o[4] = np.int32(v[src]).view(np.uint32)
    return out.reshape(-1)
