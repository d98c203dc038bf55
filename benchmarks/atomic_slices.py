"""Where float ``atomicAdd`` on a few hot lines waits: 2^24 threads add to L lines (2, 8
or 32) whose starts lie a stride apart (128 B to 64 kB), each lane to a random line and to
its first word or to a random one of its 32 words. Recorded on an H200 in session 33: the
times depend on the lanes a request carries and on which lines share an L2 slice (32 lines
packed took 1.43 ms, 2 kB apart 0.46 ms, 64 kB apart 1.07 ms). With ``atomic_spread``'s
patterns, these are what ``benchmarks/atomic_fit.py`` fits the model's request costs to.

    python -m benchmarks.atomic_slices --record benchmarks/fixtures/h200_atomic_slices.json  # GPU
    python -m benchmarks.atomic_slices                                           # the table

Timed with CuPy events: 3 warm-up launches, then the median of 7.
Written by hand: a question about the L2's atomic units, which no library asks.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.common import probe_main

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "h200_atomic_slices.json"
N = 1 << 24
LINES = (2, 8, 32)
STRIDES = (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 65536)
SOURCE = r"""
extern "C" __global__ void add_float(const int *key, float *sums, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&sums[key[i]], 1.0f);
}
"""


def keys(lines: int, stride: int, words: int, rng: np.random.Generator,
         threads: int = N) -> np.ndarray:
    """Each thread's word: a random line's first word, or a random one of its ``words``."""
    key = rng.integers(0, lines, threads) * (stride // 4)
    return (key + (rng.integers(0, words, threads) if words > 1 else 0)).astype(np.int32)


def record(path: Path) -> None:
    import cupy

    add = cupy.RawModule(code=SOURCE).get_function("add_float")
    rng = np.random.default_rng(3)
    out = {}
    for lines in LINES:
        for stride in STRIDES:
            for words in (1, 32):
                key = cupy.asarray(keys(lines, stride, words, rng))
                sums = cupy.zeros(lines * stride // 4 + 64, cupy.float32)

                def launch(key=key, sums=sums):
                    add((N // 256,), (256,), (key, sums, np.int32(N)))
                for _ in range(3):
                    launch()
                start, end = cupy.cuda.Event(), cupy.cuda.Event()
                times = []
                for _ in range(7):
                    start.record()
                    launch()
                    end.record()
                    end.synchronize()
                    times.append(cupy.cuda.get_elapsed_time(start, end))
                out[f"{lines} lines x{stride} {words} words"] = float(np.median(times))
    path.write_text(json.dumps(out, indent=1) + "\n")


def show() -> None:
    """The stored times, a row per line count and word spread, a column per stride."""
    stored = json.loads(FIXTURE.read_text())
    print("| lines, words | " + " | ".join(f"{s} B" for s in STRIDES) + " |")
    print("|---" * (len(STRIDES) + 1) + "|")
    for lines in LINES:
        for words in (1, 32):
            row = [stored[f"{lines} lines x{s} {words} words"] for s in STRIDES]
            print(f"| {lines}, {words} | " + " | ".join(f"{ms:.2f}" for ms in row) + " |")


def main(argv: list[str] | None = None) -> None:
    probe_main(argv, __doc__, record, show)


if __name__ == "__main__":
    main()
