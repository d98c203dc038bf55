"""llm.c's block-per-row softmax kernels at row lengths that differ in alignment, timed on the
GPU and predicted: is the model's −28…−31 % on them (held out, ``peer_times --third``) about
rows that start off a 32-byte sector (50257 floats), or about the passes themselves?

    python -m benchmarks.softmax_rows --record benchmarks/fixtures/h200_softmax_rows.json  # GPU
    python -m benchmarks.softmax_rows benchmarks/fixtures/h200_softmax_rows.json    # here

Each launch is one of llm.c's kernels (``peer_times.SOFTMAX``'s grid, block and shared
memory) on 2048 rows of ``C`` floats; ``C`` = 50257 (the vocabulary: rows start 4 bytes
apart from a sector boundary, in turn), 50264 (each row starts on a sector), 50272 (on a
128-byte line) and 50176 (a multiple of the blocks' 256 threads as well). Timed like
``peer_times.record`` (3 warm-ups, 20 samples of 10 launches between two events, the median);
without ``--record`` the stored times are set against ``cudakit.predict`` for the device the
fixture names. The H200's run (2026-11-29): ``fixtures/h200_softmax_rows.json``, and Nsight
Compute's DRAM bytes, L2 sectors and stall reasons of five of the launches, one each
(``fixtures/h200_softmax_rows.ncu.csv.gz``).
Written by hand: a study of the model on four kernels, no library times them.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np

from benchmarks import peer_times as pt

ROWS = pt.SOFTMAX_ROWS
WIDTHS = (50257, 50264, 50272, 50176)
KERNELS = ("softmax_forward_kernel2", "softmax_forward_kernel4", "softmax_forward_kernel7",
           "softmax_forward_online_kernel8")


def launches() -> list[pt.Launch]:
    """Every kernel at every row length, named ``kernel C``."""
    shapes = {k: (grid, block, shared) for k, grid, block, shared in pt.SOFTMAX}
    out = []
    for kernel in KERNELS:
        grid, block, shared = shapes[kernel]
        for c in WIDTHS:
            def inputs(r, c=c):
                return [np.zeros(ROWS * c, np.float32), pt._floats(ROWS * c, -4, 4)(r),
                        np.int32(ROWS), np.int32(c)]
            out.append(pt._llmc(f"{kernel} {c}", "softmax_forward.cu", kernel, inputs, grid,
                                (block,), shared))
    return out


def compare(path: Path) -> list[dict]:
    """The stored times against the model's, per launch, for the fixture's device."""
    import cudakit

    stored = json.loads(path.read_text())
    device = "H200" if "H200" in stored.get("device", "") else "H100"
    rows = []
    for launch in launches():
        measured = stored["launches"][launch.name]["ms"]
        source = cudakit.compile(launch.source, options=launch.options)
        p = cudakit.predict(source, launch.kernel, grid=launch.grid, block=launch.block,
                            args=launch.inputs(np.random.default_rng(5)),
                            shared=launch.shared, device=device)
        rows.append({"name": launch.name, "measured_ms": measured, "predicted_ms": p.ms,
                     "error_pct": (p.ms / measured - 1) * 100, "bound": p.bound})
        print(f"| {launch.name} | {measured:.4f} | {p.ms:.4f} | {rows[-1]['error_pct']:+.0f}% "
              f"| {p.bound} |", flush=True)
    print(f"median |error| {statistics.median(abs(r['error_pct']) for r in rows):.1f}% "
          f"({device})")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fixture", nargs="?", type=Path)
    parser.add_argument("--record", metavar="JSON", help="time the launches on this GPU")
    args = parser.parse_args(argv)
    if args.record:
        pt.record(args.record, launches=launches())
    else:
        print("| launch | measured ms | predicted ms | error | bound |\n|---|---|---|---|---|")
        compare(args.fixture)


if __name__ == "__main__":
    main()
