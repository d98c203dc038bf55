"""How fast DRAM reads and writes when the blocks running together touch short extents far
apart: a transpose writes each tile row's 128 bytes into a different row of its output,
while a copy's neighbouring blocks write one row's bytes side by side.

256 MiB are seen as 8192 rows of 32 KiB, ``PITCH`` bytes apart. Thread ``g`` handles words
``g + j T`` (``j`` < 4, ``T`` threads in all); word ``e`` of that order lies in extent
``k = e / W`` of ``W`` words (``EXTENT`` bytes), at row ``k mod rows``, column ``k / rows``:
consecutive extents go down the rows, so the blocks resident together touch thousands of
rows, one extent each. An extent of a whole row is a plain stream. Four kernels per extent: ``read``
(loads only), ``write`` (stores only), ``copy_w`` (reads streamed, writes placed so) and
``copy_r`` (reads placed so, writes streamed); two pitches, 32 KiB and 32 KiB + 128 B (no
power of two), to tell a channel conflict of the pitch from the extent's own cost.

Then ``S`` streams: 128-byte chunk ``c`` of a warp's accesses in issue order (its ``j``-th
access, ``c = 4 warp + j``) goes to stream ``c mod S`` at position ``c / S``, the streams
``256 MiB / S`` apart: one stream is a plain copy's order, 8192 streams a transpose's. Read
(``streams_read``) and written (``streams_write``); and written with each thread's four
words a quarter of the buffer apart (``quarters_write``: the addresses ``write`` gives a
whole-row extent, four streams).

    python -m benchmarks.dram_extent_probe --record OUT.json   # on the GPU
    python -m benchmarks.dram_extent_probe                     # here: the stored times

Written by hand: a microbenchmark.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.common import back_to_back_ms, gpu_line, open_text, probe_main

STORED = Path(__file__).parent / "fixtures" / "h200_dram_extent_probe.json"
BYTES = 256 << 20
PITCHES = (32768, 32768 + 128)
EXTENTS = tuple(32 << i for i in range(11))  # 32 B ... 32 KiB
KINDS = ("read", "write", "copy_w", "copy_r")
STREAMS = tuple(1 << i for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 13, 16))
STREAM_KINDS = ("streams_read", "streams_write", "quarters_write")
ROWS = 8192  # rows of 32 KiB
ROW_SHIFT = 13
SOURCE = r"""
__device__ __forceinline__ long long placed(long long e, int shift, int pitch)
{   // word e of extent order -> word of the buffer (shifts only: a division would make the
    // kernel issue-bound and hide what DRAM does)
    long long k = e >> shift, o = e & ((1LL << shift) - 1);
    return (k & (ROWS - 1)) * pitch + ((k >> ROW_SHIFT) << shift) + o;
}
#define KERNEL(name) extern "C" __global__ void name(const float *__restrict__ in, \
    float *__restrict__ out, int shift, int pitch)
#define THREAD long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
#define SETUP THREAD long long threads = (long long)gridDim.x * blockDim.x;

KERNEL(read)
{
    SETUP
    float s = 0.0f;
    #pragma unroll
    for (int j = 0; j < 4; j++) s += in[placed(g + j * threads, shift, pitch)];
    if (s == 1234.5f) out[0] = s;  // never: keeps the loads
}
KERNEL(write)
{
    SETUP
    #pragma unroll
    for (int j = 0; j < 4; j++) out[placed(g + j * threads, shift, pitch)] = 1.0f;
}
KERNEL(copy_w)
{
    SETUP
    float v[4];
    #pragma unroll
    for (int j = 0; j < 4; j++) v[j] = in[g + j * threads];
    #pragma unroll
    for (int j = 0; j < 4; j++) out[placed(g + j * threads, shift, pitch)] = v[j];
}
KERNEL(copy_r)
{
    SETUP
    float v[4];
    #pragma unroll
    for (int j = 0; j < 4; j++) v[j] = in[placed(g + j * threads, shift, pitch)];
    #pragma unroll
    for (int j = 0; j < 4; j++) out[g + j * threads] = v[j];
}
__device__ __forceinline__ long long streamed(long long t, int sshift, int rshift)
{   // word t of issue order (32 lanes a chunk) -> word of the buffer
    long long c = t >> 5, lane = t & 31;
    return ((c & ((1LL << sshift) - 1)) << rshift) + ((c >> sshift) << 5) + lane;
}
#define WARP_ORDER(j) ((((g >> 5) * 4 + (j)) << 5) + (g & 31))

KERNEL(streams_read)
{
    THREAD
    float s = 0.0f;
    #pragma unroll
    for (int j = 0; j < 4; j++) s += in[streamed(WARP_ORDER(j), shift, pitch)];
    if (s == 1234.5f) out[0] = s;
}
KERNEL(streams_write)
{
    THREAD
    #pragma unroll
    for (int j = 0; j < 4; j++) out[streamed(WARP_ORDER(j), shift, pitch)] = 1.0f;
}
KERNEL(quarters_write)
{
    SETUP
    #pragma unroll
    for (int j = 0; j < 4; j++) out[streamed(g + j * threads, shift, pitch)] = 1.0f;
}
""".replace("ROW_SHIFT", str(ROW_SHIFT)).replace("ROWS", str(ROWS))
THREADS = BYTES // 16  # 4 words a thread


def record(out: Path) -> None:
    """Time every kind, extent and pitch on this GPU; write the medians to ``out``."""
    import cudakit
    from cudakit import cuda

    kernels = cudakit.load(SOURCE, options=["-O3"])
    words = ROWS * max(PITCHES) // 4
    a = cuda.gpuarray.zeros(words, np.float32)
    b = cuda.gpuarray.zeros(words, np.float32)
    ms: dict = {}
    for pitch in PITCHES:
        for kind in KINDS:
            for extent in EXTENTS:
                shift = (extent // 4).bit_length() - 1
                ms.setdefault(str(pitch), {}).setdefault(kind, {})[str(extent)] = \
                    back_to_back_ms(lambda kernel=kernels[kind], shift=shift, pitch=pitch: kernel(
                        a.gpudata, b.gpudata, np.int32(shift), np.int32(pitch // 4),
                        grid=(THREADS // 256,), block=(256,)))
    words_log2 = (BYTES // 4).bit_length() - 1
    for kind in STREAM_KINDS:  # (shift, pitch) carry (log2 S, log2 of a stream's words)
        for streams in STREAMS:
            shift = streams.bit_length() - 1
            ms.setdefault("streams", {}).setdefault(kind, {})[str(streams)] = \
                back_to_back_ms(lambda kernel=kernels[kind], shift=shift: kernel(
                    a.gpudata, b.gpudata, np.int32(shift), np.int32(words_log2 - shift),
                    grid=(THREADS // 256,), block=(256,)))
    ms["cudaMemcpy"] = back_to_back_ms(lambda: cuda.memcpy_dtod(b.gpudata, a.gpudata, BYTES))
    out.write_text(json.dumps({"device": gpu_line(), "bytes": BYTES, "ms": ms}, indent=1))


def show() -> None:
    with open_text(STORED) as f:
        stored = json.load(f)
    print(f"{stored['device']}: {stored['bytes'] >> 20} MiB, ms per launch "
          "(in brackets: against the whole-row extent)")
    for pitch in PITCHES:
        rows = stored["ms"][str(pitch)]
        print(f"\npitch {pitch} B\n| extent | " + " | ".join(KINDS) + " |\n" + "|---" * 5 + "|")
        for extent in EXTENTS:
            cells = [f"{rows[k][str(extent)]:.4f} "
                     f"({rows[k][str(extent)] / rows[k][str(max(EXTENTS))] - 1:+.0%})"
                     for k in KINDS]
            print(f"| {extent} | " + " | ".join(cells) + " |")
    rows = stored["ms"]["streams"]
    print("\nstreams (in brackets: against one stream)\n| streams | " + " | ".join(STREAM_KINDS)
          + " |\n" + "|---" * 4 + "|")
    for streams in STREAMS:
        cells = [f"{rows[k][str(streams)]:.4f} ({rows[k][str(streams)] / rows[k]['1'] - 1:+.0%})"
                 for k in STREAM_KINDS]
        print(f"| {streams} | " + " | ".join(cells) + " |")


def main(argv=None) -> None:
    probe_main(argv, __doc__, record, show)


if __name__ == "__main__":
    main()
