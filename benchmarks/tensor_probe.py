"""The tensor cores' rate and latency per SM, for each input type ``wmma`` offers on sm_90.

Each warp loads one A and one B fragment and then runs ``trips`` rounds of ``ACC``
independent ``wmma::mma_sync`` on them (accumulators kept in registers), timing its loop
with ``clock64()`` and noting its SM. With all warps of the grid resident (4 blocks of 4 warps
per SM, and 8), the SM's tensor instructions per clock are its warps' ``wmma`` count x the
SASS instructions each runs as (:func:`cudakit.emu.wmma.sass_count`) / the cycles from its
first warp's start to its last one's stop (the best of the two setups), and the SM clock
while they ran is those cycles over the launch's event time; one warp with one accumulator
gives the latency of a dependent ``wmma`` (cycles per trip).

    python -m benchmarks.tensor_probe --record OUT.json   # on the GPU
    python -m benchmarks.tensor_probe                     # here: the stored figures

Written by hand: a microbenchmark.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np

from benchmarks.common import back_to_back_ms, gpu_line, open_text, probe_main

STORED = Path(__file__).parent / "fixtures" / "h200_tensor_probe.json"
TRIPS = 2048
#: name: (input type, accumulator type, M, N, K, the PTX of its wmma.mma)
KINDS = {
    "f16_f32": ("half", "float", 16, 16, 16,
                "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32"),
    "f16_f16": ("half", "half", 16, 16, 16,
                "wmma.mma.sync.aligned.row.col.m16n16k16.f16.f16"),
    "bf16_f32": ("__nv_bfloat16", "float", 16, 16, 16,
                 "wmma.mma.sync.aligned.row.col.m16n16k16.f32.bf16.bf16.f32"),
    "tf32_f32": ("wmma::precision::tf32", "float", 16, 16, 8,
                 "wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32"),
    "f64_f64": ("double", "double", 8, 8, 4,
                "wmma.mma.sync.aligned.row.col.m8n8k4.f64.f64.f64.f64"),
    "s8_s32": ("signed char", "int", 16, 16, 16,
               "wmma.mma.sync.aligned.row.col.m16n16k16.s32.s8.s8.s32"),
}
#: (blocks of 128 threads per SM, independent accumulators per warp)
SETUPS = ((4, 4), (8, 4), (0, 1))  # 0: one warp on the GPU

SOURCE = r"""
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;
template <typename T> struct Storage { typedef T type; };
template <> struct Storage<wmma::precision::tf32> { typedef float type; };

template <typename T, typename C, int M, int N, int K, int ACC>
__device__ __forceinline__ void rate(const typename Storage<T>::type *a,
                                     const typename Storage<T>::type *b, C *out, int trips,
                                     long long *cycles)
{
    wmma::fragment<wmma::matrix_a, M, N, K, T, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, M, N, K, T, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, M, N, K, C> acc[ACC];
    wmma::load_matrix_sync(fa, a, K);
    wmma::load_matrix_sync(fb, b, K);
#pragma unroll
    for (int i = 0; i < ACC; ++i) wmma::fill_fragment(acc[i], C(0));
    __syncwarp();
    long long start = clock64();
#pragma unroll 1
    for (int s = 0; s < trips; ++s) {
#pragma unroll
        for (int i = 0; i < ACC; ++i) wmma::mma_sync(acc[i], fa, fb, acc[i]);
    }
    __syncwarp();
    long long stop = clock64();
    for (int i = 1; i < ACC; ++i)
        for (int e = 0; e < acc[0].num_elements; ++e) acc[0].x[e] += acc[i].x[e];
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    wmma::store_matrix_sync(out + warp * M * N, acc[0], N, wmma::mem_row_major);
    unsigned sm;
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    if (threadIdx.x % 32 == 0) {
        cycles[3 * warp] = start;
        cycles[3 * warp + 1] = stop;
        cycles[3 * warp + 2] = sm;
    }
}
"""


def _name(kind: str, acc: int) -> str:
    return f"rate_{kind}_{acc}"


def source() -> str:
    """:data:`SOURCE` and one kernel per kind and accumulator count."""
    kernels = []
    for kind, (t, c, m, n, k, _) in KINDS.items():
        for acc in sorted({a for _, a in SETUPS}):
            kernels.append(
                f"__global__ void {_name(kind, acc)}(const Storage<{t}>::type *a, "
                f"const Storage<{t}>::type *b, {c} *out, int trips, long long *cycles)\n"
                f"{{ rate<{t}, {c}, {m}, {n}, {k}, {acc}>(a, b, out, trips, cycles); }}\n")
    return SOURCE + "".join(kernels)


def sass_per_mma(kind: str) -> int:
    """SASS tensor instructions one ``wmma.mma`` of ``kind`` runs as."""
    from cudakit.emu.wmma import sass_count

    return sass_count(KINDS[kind][-1])[1]


def record(out: Path) -> None:
    """Time every kind and setup on this GPU and write the rows to ``out``."""
    import cudakit
    from cudakit import cuda

    kernels = cudakit.load(source(), options=["-O3"])
    sms = cudakit.device_info().multiprocessors
    a = cuda.gpuarray.zeros(1 << 12, np.float64)  # zeros: no overflow in any type
    rows = []
    for kind in KINDS:
        for per_sm, acc in SETUPS:
            blocks, threads = (sms * per_sm, 128) if per_sm else (1, 32)
            warps = blocks * threads // 32
            out_buf = cuda.gpuarray.zeros(warps * 256 * 2, np.float64)
            cycles = cuda.gpuarray.zeros(3 * warps, np.int64)
            kernel = kernels[_name(kind, acc)]

            def launch(kernel=kernel, out_buf=out_buf, cycles=cycles, blocks=blocks,
                       threads=threads):
                kernel(a.gpudata, a.gpudata, out_buf.gpudata, np.int32(TRIPS), cycles,
                       grid=(blocks,), block=(threads,))
            ms = back_to_back_ms(launch, batch=1, warmup=3, repeat=10)
            rows.append({"kind": kind, "blocks_per_sm": per_sm, "accumulators": acc,
                         "warps": warps, "ms": ms, **spans(cycles.get().reshape(-1, 3))})
    out.write_text(json.dumps({"device": gpu_line(), "sms": sms, "trips": TRIPS,
                               "rows": rows}, indent=1))


def spans(clocks: np.ndarray) -> dict[str, float]:
    """From each warp's (start, stop, SM): the median over SMs of the cycles from the first
    warp's start to the last one's stop on the SM, and the median warp's own cycles."""
    per_sm = [clocks[clocks[:, 2] == sm] for sm in np.unique(clocks[:, 2])]
    return {"sm_cycles_median": float(statistics.median(
                int(c[:, 1].max() - c[:, 0].min()) for c in per_sm)),
            "warp_cycles_median": float(statistics.median((clocks[:, 1] - clocks[:, 0])
                                                          .tolist())),
            "warps_per_sm_max": max(len(c) for c in per_sm)}


def figures(stored: dict) -> dict[str, dict[str, float]]:
    """Per kind: SASS tensor instructions per clock per SM (the best of the resident setups),
    the SM clock while they ran (that setup's cycles over its event time, GHz) and the cycles
    of one dependent ``wmma.mma``."""
    out: dict[str, dict[str, float]] = {}
    for row in stored["rows"]:
        f = out.setdefault(row["kind"], {"per_clk_per_sm": 0.0, "clock_ghz": 0.0,
                                         "latency_cycles": 0.0})
        mmas = stored["trips"] * row["accumulators"]
        if row["blocks_per_sm"]:
            rate = row["warps_per_sm_max"] * mmas * sass_per_mma(row["kind"]) / \
                row["sm_cycles_median"]
            if rate > f["per_clk_per_sm"]:
                f["per_clk_per_sm"] = rate
                f["clock_ghz"] = row["sm_cycles_median"] / (row["ms"] * 1e-3) / 1e9
        else:
            f["latency_cycles"] = row["warp_cycles_median"] / mmas
    return out


def show() -> None:
    """The stored run's figures as a table."""
    with open_text(STORED) as f:
        stored = json.load(f)
    print(f"{stored['device']}: SASS tensor instructions per clock per SM, and the cycles of "
          "one dependent wmma::mma_sync")
    print("| kind | per clock per SM | SM clock (GHz) | dependent wmma (cycles) |")
    print("|---|---|---|---|")
    for kind, f in figures(stored).items():
        print(f"| {kind} | {f['per_clk_per_sm']:.3f} | {f['clock_ghz']:.2f} | "
              f"{f['latency_cycles']:.1f} |")


def main(argv=None) -> None:
    probe_main(argv, __doc__, record, show)


if __name__ == "__main__":
    main()
