"""Dependent chains that a warp alone on its scheduler runs at ptxas's stall counts: a check
of the model's own path (``cudakit.predict.model.own_path``) on kernels not used to make it.

    python -m benchmarks.stall_chains OUT.json        # on the GPU: clock64 cycles per trip
    python -m benchmarks.stall_chains --predict       # here: the model against the fixture

Each kernel runs one loop of 8 dependent operations of one kind per trip (FADD, FMUL and
FADD kept apart, IADD, IMAD, MUFU sine, DFMA, shuffle), or two such chains side by side, with
one block of 128 threads per SM (one warp per scheduler). ``clock64`` around the loop gives
each warp's cycles per trip. ``--predict`` prints the model's cycles per trip with the stall
counts (``sass.read_stalls``) and without them. Written by hand: the probe kernels are
specific to this question.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

import cudakit

SRC = r"""
__device__ float value(float a) { return a; }
__device__ float value(float2 a) { return a.x + a.y; }
__device__ float value(int a) { return (float)a; }
__device__ float value(double a) { return (float)a; }

template <class T, class Step>
__device__ void chain(float *o, long long *c, int iters, T a, Step step)
{
    long long c0 = clock64();
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) a = step(a);
    }
    long long c1 = clock64();
    o[blockIdx.x * blockDim.x + threadIdx.x] = value(a);
    if ((threadIdx.x & 31) == 0) c[(blockIdx.x * blockDim.x + threadIdx.x) >> 5] = c1 - c0;
}

struct FAdd { float b; __device__ float operator()(float a) const { return a + b; } };
struct FAddTwo {
    float b;
    __device__ float2 operator()(float2 a) const { return make_float2(a.x + b, a.y + b); }
};
struct FMulFAdd {
    float b;
    __device__ float operator()(float a) const { return __fadd_rn(__fmul_rn(a, b), 0.5f); }
};
struct IAdd { int y; __device__ int operator()(int x) const { return (x + y) ^ 3; } };
struct IMad { int y; __device__ int operator()(int x) const { return x * y + 7; } };
struct Sin { __device__ float operator()(float a) const { return __sinf(a); } };
struct DFma { double e; __device__ double operator()(double d) const { return fma(d, e, 0.25); } };
struct Shfl {
    __device__ float operator()(float a) const { return __shfl_xor_sync(0xffffffffu, a, 1) + 1.0f; }
};

__global__ void fadd_chain(float *o, long long *c, int iters, float b)
{ chain(o, c, iters, (float)threadIdx.x, FAdd{b}); }
__global__ void fadd_two(float *o, long long *c, int iters, float b)
{ chain(o, c, iters, make_float2(threadIdx.x, threadIdx.x + 1.0f), FAddTwo{b}); }
__global__ void fmul_fadd(float *o, long long *c, int iters, float b)
{ chain(o, c, iters, (float)threadIdx.x, FMulFAdd{b}); }
__global__ void iadd_chain(float *o, long long *c, int iters, float b)
{ chain(o, c, iters, (int)threadIdx.x, IAdd{(int)b}); }
__global__ void imad_chain(float *o, long long *c, int iters, float b)
{ chain(o, c, iters, (int)threadIdx.x, IMad{(int)b + 2}); }
__global__ void sin_chain(float *o, long long *c, int iters, float b)
{ chain(o, c, iters, threadIdx.x * b, Sin{}); }
__global__ void dfma_chain(float *o, long long *c, int iters, float b)
{ chain(o, c, iters, (double)threadIdx.x, DFma{(double)b}); }
__global__ void shfl_chain(float *o, long long *c, int iters, float b)
{ chain(o, c, iters, threadIdx.x * b, Shfl{}); }
"""

KERNELS = ("fadd_chain", "fadd_two", "fmul_fadd", "iadd_chain", "imad_chain", "sin_chain",
           "dfma_chain", "shfl_chain")
FIXTURE = Path(__file__).parent / "fixtures" / "h100_stall_chains.json"
ITERS = 1 << 14
THREADS = 128  # one warp per scheduler


def main(out: str) -> None:
    from cudakit import cuda

    k = cudakit.load(SRC, options=["-O3"])
    sms = cudakit.device_info().multiprocessors
    rows = []
    for name in KERNELS:
        o = cuda.mem_alloc(4 * sms * THREADS)
        cyc = cuda.mem_alloc(8 * sms * THREADS // 32)
        k[name](o, cyc, np.int32(ITERS), np.float32(1.0001), grid=(sms,), block=(THREADS,))
        cuda.Context.synchronize()
        cycles = cuda.from_device(cyc, (sms * THREADS // 32,), np.int64)
        rows.append({"kernel": name, "cycles_per_trip": float(np.median(cycles)) / ITERS})
        print(json.dumps(rows[-1]), flush=True)
    Path(out).write_text(json.dumps({
        "header": {"device": cudakit.device_info().name,
                   "how": "python -m benchmarks.stall_chains OUT.json"},
        "chains": rows}, indent=1) + "\n")


def predict() -> str:
    """The model's cycles per trip, with and without the stall counts, against the fixture."""
    from unittest import mock

    from cudakit.predict import api

    from .common import predicted_cycles_per_trip  # (nbformat: not on the GPU machine)

    measured = json.loads(FIXTURE.read_text())["chains"]
    module = cudakit.compile(SRC, options=["-O3"])
    rows = ["| kernel | measured cycles per trip | predicted | error | without stall counts |"
            " error |", "|---|---|---|---|---|---|"]
    sms = 132
    args = [np.zeros(sms * THREADS, np.float32), np.zeros(sms * THREADS // 32, np.int64),
            np.int32(ITERS), np.float32(1.0001)]

    def cycles(name: str) -> float:
        return predicted_cycles_per_trip(module, name, THREADS, args, ITERS, sms)[0]

    for run in measured:
        with_stalls = cycles(run["kernel"])
        with mock.patch.object(api, "stall_cycles", lambda *a: None):
            without = cycles(run["kernel"])
        m = run["cycles_per_trip"]
        rows.append(f"| {run['kernel']} | {m:.1f} | {with_stalls:.1f} | "
                    f"{(with_stalls / m - 1) * 100:+.0f}% | {without:.1f} | "
                    f"{(without / m - 1) * 100:+.0f}% |")
    return "\n".join(rows)


if __name__ == "__main__":
    if "--predict" in sys.argv:
        print(predict())
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        raise SystemExit(__doc__)
