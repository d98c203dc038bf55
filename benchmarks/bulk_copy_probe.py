"""What Hopper's bulk copies (``cp.async.bulk``, TMA without a tensor map) and ``cp.async``
with an arrive-on cost an SM: the copies ``cuda::memcpy_async`` makes with a
``cuda::barrier`` (siboehm's SGEMM kernel 12 copies its tiles 16 bytes at a time).

Each block of 128 threads runs ``ROUNDS`` rounds. In a ``bulk`` round, ``issuers`` threads
each copy ``size`` bytes from an L2-resident buffer into shared memory with one bulk copy
that completes its bytes on an ``mbarrier``, and all threads wait for the phase. In a
``word`` round, every thread copies ``WORDS`` floats with ``cp.async`` (4 bytes each), then
either arrives on an ``mbarrier`` after each copy (``cp.async.mbarrier.arrive``, as
``cuda::memcpy_async`` does) and waits for the phase (``word_arrive``), or commits them as a
group and waits for it, then ``__syncthreads()`` (``word_group``, the ``cp.async`` the model
knew). Each warp's ``clock64()`` span and SM are kept; per kind the cycles per SM per copy
(or per arrive-on) are the median over SMs of the span over the copies the SM's blocks made.

    python -m benchmarks.bulk_copy_probe --record OUT.json   # on the GPU
    python -m benchmarks.bulk_copy_probe                     # here: the stored figures

Written by hand: a microbenchmark.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.common import back_to_back_ms, gpu_line, open_text, probe_main
from benchmarks.tensor_probe import spans

STORED = Path(__file__).parent / "fixtures" / "h200_bulk_copy_probe.json"
ROUNDS = 256
WORDS = 16
SPAN = 8 << 20  # bytes of the source buffer: it stays in the L2
#: (kind, bytes per bulk copy, threads issuing one each per round)
BULK = [(f"bulk{size}x{issuers}", size, issuers)
        for size, issuers in ((16, 128), (16, 32), (16, 1), (64, 128), (256, 128),
                              (1024, 32), (4096, 8), (16384, 2))]
BLOCKS_PER_SM = (1, 4)

SOURCE = r"""
#include <cstdint>
__device__ __forceinline__ uint32_t smem(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void wait_parity(uint32_t bar, uint32_t parity) {
    asm volatile("{\n\t.reg .pred done;\nWAIT:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
                 "@!done bra WAIT;\n\t}" :: "r"(bar), "r"(parity) : "memory");
}
__device__ __forceinline__ void stamp(long long* clocks, long long start) {
    if (threadIdx.x % 32 == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        long long* row = clocks + 3 * (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32);
        row[0] = start; row[1] = clock64(); row[2] = sm;
    }
}

extern "C" __global__ void bulk(const char* src, long long* clocks, int rounds, int size,
                                int issuers, int span) {
    extern __shared__ __align__(128) char tile[];
    __shared__ alignas(8) uint64_t bar_word;
    uint32_t bar = smem(&bar_word);
    if (threadIdx.x == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(issuers));
    __syncthreads();
    long long start = clock64();
    for (int r = 0; r < rounds; ++r) {
        if (threadIdx.x < issuers) {
            long long at = ((long long)(blockIdx.x * issuers + threadIdx.x) * size
                            + (long long)r * 4096) % (span - size);
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                         :: "r"(bar), "r"(size) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                         " [%0], [%1], %2, [%3];"
                         :: "r"(smem(tile + threadIdx.x * size)), "l"(src + at), "r"(size),
                            "r"(bar) : "memory");
        }
        wait_parity(bar, r & 1);
    }
    stamp(clocks, start);
}

__device__ __forceinline__ void copy_word(const float* src, float* tile, int r, int k,
                                          int span_words) {  // cp.async of word k, round r
    long long at = ((long long)(blockIdx.x * 128 + threadIdx.x) * WORDS + k
                    + (long long)r * 1024) % span_words;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;"
                 :: "r"(smem(&tile[k * 128 + threadIdx.x])), "l"(src + at) : "memory");
}

extern "C" __global__ void word_arrive(const float* src, long long* clocks, int rounds,
                                       int span_words) {
    __shared__ float tile[WORDS * 128];
    __shared__ alignas(8) uint64_t bar_word;
    uint32_t bar = smem(&bar_word);
    if (threadIdx.x == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(blockDim.x));
    __syncthreads();
    long long start = clock64();
    for (int r = 0; r < rounds; ++r) {
        for (int k = 0; k < WORDS; ++k) {
            copy_word(src, tile, r, k, span_words);
            asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];" :: "r"(bar)
                         : "memory");
        }
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
        wait_parity(bar, r & 1);
    }
    stamp(clocks, start);
}

extern "C" __global__ void word_group(const float* src, long long* clocks, int rounds,
                                      int span_words) {
    __shared__ float tile[WORDS * 128];
    long long start = clock64();
    for (int r = 0; r < rounds; ++r) {
        for (int k = 0; k < WORDS; ++k)
            copy_word(src, tile, r, k, span_words);
        asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
        __syncthreads();
    }
    stamp(clocks, start);
}
""".replace("WORDS", str(WORDS))


def record(out: Path) -> None:
    """Time every kind at each number of blocks per SM on this GPU; write the rows."""
    import cudakit
    from cudakit import cuda

    kernels = cudakit.load(SOURCE, options=["-O3"])
    sms = cudakit.device_info().multiprocessors
    src = cuda.gpuarray.zeros(SPAN // 4, np.float32)
    rows = []
    for per_sm in BLOCKS_PER_SM:
        blocks = sms * per_sm
        clocks = cuda.gpuarray.zeros(3 * blocks * 4, np.int64)
        launches = {kind: (lambda size=size, issuers=issuers, clocks=clocks, blocks=blocks:
                           kernels["bulk"](src.gpudata, clocks.gpudata, np.int32(ROUNDS),
                                           np.int32(size), np.int32(issuers), np.int32(SPAN),
                                           grid=(blocks,), block=(128,),
                                           shared=size * issuers), issuers)
                    for kind, size, issuers in BULK}
        for name in ("word_arrive", "word_group"):
            launches[name] = (lambda name=name, clocks=clocks, blocks=blocks: kernels[name](
                src.gpudata, clocks.gpudata, np.int32(ROUNDS), np.int32(SPAN // 4),
                grid=(blocks,), block=(128,)), 128 * WORDS)
        for kind, (launch, copies) in launches.items():
            ms = back_to_back_ms(launch, batch=1, warmup=3, repeat=10)
            rows.append({"kind": kind, "blocks_per_sm": per_sm, "copies_per_round": copies,
                         "ms": ms, **spans(clocks.get().reshape(-1, 3))})
    out.write_text(json.dumps({"device": gpu_line(), "sms": sms, "rounds": ROUNDS,
                               "rows": rows}, indent=1))


def figures(stored: dict) -> dict[str, dict[str, float]]:
    """Per kind and blocks per SM: cycles per SM per copy, and bytes per cycle per SM."""
    out = {}
    sizes = {kind: size for kind, size, _ in BULK}
    for row in stored["rows"]:
        copies = stored["rounds"] * row["copies_per_round"] * row["blocks_per_sm"]
        cycles = row["sm_cycles_median"] / copies
        size = sizes.get(row["kind"], 4)
        out[f"{row['kind']} x{row['blocks_per_sm']}"] = {
            "cycles_per_copy": cycles, "bytes_per_cycle": size / cycles}
    return out


def show() -> None:
    with open_text(STORED) as f:
        stored = json.load(f)
    print(f"{stored['device']}: per SM, cycles per copy and bytes per cycle")
    print("| kind, blocks per SM | cycles per copy | bytes per cycle |\n|---|---|---|")
    for kind, f in figures(stored).items():
        print(f"| {kind} | {f['cycles_per_copy']:.2f} | {f['bytes_per_cycle']:.1f} |")


def main(argv=None) -> None:
    probe_main(argv, __doc__, record, show)


if __name__ == "__main__":
    main()
