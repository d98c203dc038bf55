"""How fast one warp issues when it is (nearly) alone on its scheduler: loop bodies of 1 to
64 kB of SASS, FFMA only or an sgemm-like mix (4 LDS.128, 64 FFMA per step), 1, 2 and 4 warps
per scheduler (one block of 128 W threads per SM).

    python -m benchmarks.lone_warp out.json      # on the GPU: clock64 cycles per loop trip
    python -m benchmarks.lone_warp --predict     # here: the model, fixtures/h100_lone_warp.json
    ncu --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,\
smsp__issue_active.avg.pct_of_peak_sustained_active python -m benchmarks.lone_warp --ncu

Per warp, ``clock64`` around the loop gives cycles per trip; with one warp per scheduler that
is the issue rate (with more, the warps take turns and a warp's own span is shorter than the
launch). Also times ``cudaMemcpy`` device to device at sizes that are and are not multiples
of 16 bytes. Session 10 on the H100 (``benchmarks/README.md``): a lone warp issued FFMA in
92-97 % of the cycles up to 26 kB of loop and 42 % at 66 kB (instruction fetch), and the
LDS.128 + FFMA mix in 56-64 % (waits for its shared loads, ncu's ``short_scoreboard``), 74-78 %
with two warps. Session 12 stored a second run (``fixtures/h100_lone_warp.json``); the model
reads the mix's waits from its SASS (:mod:`cudakit.predict.sass`) and ``--predict`` compares.
Written by hand: the probe kernels are specific to this question.
"""

import json
import sys
from pathlib import Path

import numpy as np

import cudakit
from cudakit import cuda

SRC = r"""
template <int U> __device__ void ffma_body(float *out, long long *cyc, int iters) {
    float v[8]; float a = 1.0f + threadIdx.x * 1e-9f, b = 1e-7f;
    #pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = threadIdx.x + j;
    long long c0 = clock64();
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int u = 0; u < U; ++u) {
            #pragma unroll
            for (int j = 0; j < 8; ++j) v[j] = fmaf(v[j], a, b);
        }
    }
    long long c1 = clock64();
    float s = 0;
    #pragma unroll
    for (int j = 0; j < 8; ++j) s += v[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if ((threadIdx.x & 31) == 0) cyc[(blockIdx.x * blockDim.x + threadIdx.x) >> 5] = c1 - c0;
}
template <int U> __device__ void mix_body(float *out, long long *cyc, int iters) {
    __shared__ float4 sa[16][32], sb[16][32];
    for (int k = threadIdx.x; k < 16 * 32; k += blockDim.x) {
        ((float4 *)sa)[k] = make_float4(k, 1, 2, 3); ((float4 *)sb)[k] = make_float4(3, 2, 1, k);
    }
    __syncthreads();
    float acc[8][8];
    #pragma unroll
    for (int r = 0; r < 8; ++r)
        #pragma unroll
        for (int c = 0; c < 8; ++c) acc[r][c] = 0.f;
    int tx = threadIdx.x & 15, ty = (threadIdx.x >> 4) & 15;
    long long c0 = clock64();
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int u = 0; u < U; ++u) {
            int k = (i * 5 + u) & 15;
            float4 a0 = sa[k][2 * ty], a1 = sa[k][2 * ty + 1];
            float4 b0 = sb[k][2 * tx], b1 = sb[k][2 * tx + 1];
            float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
            #pragma unroll
            for (int r = 0; r < 8; ++r)
                #pragma unroll
                for (int c = 0; c < 8; ++c) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
        }
    }
    long long c1 = clock64();
    float s = 0;
    #pragma unroll
    for (int r = 0; r < 8; ++r)
        #pragma unroll
        for (int c = 0; c < 8; ++c) s += acc[r][c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if ((threadIdx.x & 31) == 0) cyc[(blockIdx.x * blockDim.x + threadIdx.x) >> 5] = c1 - c0;
}
__global__ void ffma_8(float *o, long long *c, int n) { ffma_body<8>(o, c, n); }
__global__ void ffma_32(float *o, long long *c, int n) { ffma_body<32>(o, c, n); }
__global__ void ffma_64(float *o, long long *c, int n) { ffma_body<64>(o, c, n); }
__global__ void ffma_96(float *o, long long *c, int n) { ffma_body<96>(o, c, n); }
__global__ void ffma_128(float *o, long long *c, int n) { ffma_body<128>(o, c, n); }
__global__ void ffma_192(float *o, long long *c, int n) { ffma_body<192>(o, c, n); }
__global__ void ffma_256(float *o, long long *c, int n) { ffma_body<256>(o, c, n); }
__global__ void ffma_512(float *o, long long *c, int n) { ffma_body<512>(o, c, n); }
__global__ void mix_1(float *o, long long *c, int n) { mix_body<1>(o, c, n); }
__global__ void mix_2(float *o, long long *c, int n) { mix_body<2>(o, c, n); }
__global__ void mix_4(float *o, long long *c, int n) { mix_body<4>(o, c, n); }
__global__ void mix_8(float *o, long long *c, int n) { mix_body<8>(o, c, n); }
__global__ void mix_12(float *o, long long *c, int n) { mix_body<12>(o, c, n); }
__global__ void mix_16(float *o, long long *c, int n) { mix_body<16>(o, c, n); }
__global__ void mix_24(float *o, long long *c, int n) { mix_body<24>(o, c, n); }
__global__ void mix_32(float *o, long long *c, int n) { mix_body<32>(o, c, n); }
"""

FIXTURE = Path(__file__).parent / "fixtures" / "h100_lone_warp.json"
FFMA = [8, 32, 64, 96, 128, 192, 256, 512]
MIX = [1, 2, 4, 8, 12, 16, 24, 32]


def main():
    quick = "--ncu" in sys.argv  # under ncu: shorter loops, 1 and 2 warps per scheduler
    k = cudakit.load(SRC, options=["-O3"])
    sms = cudakit.device_info().multiprocessors
    res = []
    names = [f"ffma_{u}" for u in FFMA] + [f"mix_{u}" for u in MIX]
    for name in names:
        u = int(name.split("_")[1])
        body = 8 * u if name.startswith("ffma") else 68 * u
        iters = max(2, (1 << 22) // body) if not quick else max(2, (1 << 18) // body)
        for w in ([1, 2, 4] if not quick else [1, 2]):
            threads = 128 * w
            out = cuda.mem_alloc(4 * sms * threads)
            cyc = cuda.mem_alloc(8 * sms * threads // 32)
            try:
                k[name](out, cyc, iters, grid=(sms, 1), block=(threads, 1, 1))
            except cudakit.LaunchError as exc:  # too many registers for this block
                print(f"{name} W={w}: {exc}", flush=True)
                continue
            cuda.Context.synchronize()
            c = cuda.from_device(cyc, (sms * threads // 32,), np.int64)
            per_trip = float(np.median(c)) / iters
            res.append({"kernel": name, "body_src": body, "warps_per_sched": w,
                        "cycles_per_trip": per_trip, "ipc_sched_src": w * body / per_trip})
            print(json.dumps(res[-1]), flush=True)
    if not quick:
        copies = {}
        big, big2 = cuda.mem_alloc(1 << 28), cuda.mem_alloc(1 << 28)
        for n in (49180384, 49180388, 49180392, 49180396, 49180400, 67108864, 67108868,
                  67108872, 67108880, 16777216, 16777220, 268435456, 268435452):
            t = cudakit.benchmark(lambda n=n: cuda.memcpy_dtod(big2, big, n), warmup=2,
                                  repeat=20).median
            copies[n] = t
            print("dtod", n, n % 16, f"{t:.5f} ms", f"{n / t / 1e6:.1f} GB/s", flush=True)
        for off in (4, 8, 16, 64):
            for n in (49180384, 67108864):
                t = cudakit.benchmark(lambda n=n, off=off: cuda.memcpy_dtod(int(big2) + off,
                                      int(big) + off, n), warmup=2, repeat=20).median
                print("dtod offset", off, n, f"{t:.5f} ms", flush=True)
        Path(sys.argv[1]).write_text(json.dumps({"issue": res, "dtod": copies}, indent=1))


def predict() -> str:
    """Cycles per loop trip measured (the stored run of session 12) against the model's
    prediction of the same launch on the H100, as a table."""
    from .common import predicted_cycles_per_trip  # (nbformat: not on the GPU machine)

    measured = json.loads(FIXTURE.read_text())["issue"]
    module = cudakit.compile(SRC, options=["-O3"])
    rows = ["| kernel | warps per scheduler | measured cycles per trip | predicted | error "
            "| bound |",
            "|---|---|---|---|---|---|"]
    for run in measured:
        iters = max(2, (1 << 22) // run["body_src"])
        threads = 128 * run["warps_per_sched"]
        cycles, p = predicted_cycles_per_trip(
            module, run["kernel"], threads, [np.zeros(132 * threads, np.float32),
                                             np.zeros(132 * threads // 32, np.int64),
                                             np.int32(iters)], iters)
        rows.append(f"| {run['kernel']} | {run['warps_per_sched']} | {run['cycles_per_trip']:.0f} "
                    f"| {cycles:.0f} | {(cycles / run['cycles_per_trip'] - 1) * 100:+.0f}% | "
                    f"{p.bound} |")
    return "\n".join(rows)


if __name__ == "__main__":
    if "--predict" in sys.argv:
        print(predict())
    else:
        main()
