"""What makes a launch slower than the bytes it moves: lab 11's 2-D copy and
``transpose_padded`` and a block-per-row kernel's passes, each timed on the H100 at shapes
that differ only in the row length's alignment, in the number of rows, in the order the
blocks take their tiles, or in one part of the kernel (``probes/shape.cu``: the barrier
without the transpose, the transposed addresses without the barrier, the tiles taken in
panels so that the block finishing a sector another began comes 1 to 129 blocks later, a
block-per-row kernel's passes one by one).

    python -m benchmarks.shape_probe --record benchmarks/fixtures/h100_shape_probe.json  # GPU
    python -m benchmarks.shape_probe                                                   # here
    ncu --metrics ... python -m benchmarks.shape_probe --once /tmp/x.json --only panels  # GPU

``--record`` times each launch as :func:`benchmarks.peer_times.record` does (PyCUDA, 3
warm-up launches, the median of 20 samples of 10 back-to-back launches between two events).
Without it, each launch is predicted by ``cudakit.predict`` and set against the stored time.
(Session 14 also timed llm.c's softmax kernels at the block-per-row shapes; their copies left
the tree in session 33 and the fixture keeps their times as a record.)
Written by hand: the shapes are the question, no library asks it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchmarks import peer_times
from benchmarks.peer_times import Launch

PROBES = Path(__file__).resolve().parent / "probes"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "h100_shape_probe.json"
TILE = 32

#: rows x cols of the 2-D launches: lab 11's odd shape, its aligned neighbours, and each
#: dimension odd on its own
MATRICES = ((4097, 3001), (4096, 3000), (4096, 3008), (4097, 3000), (4096, 3001),
            (4104, 3008), (8192, 8192))
#: rows x cols of the block-per-row launches: llm.c's softmax shape (2048 rows of its
#: vocabulary), the same rows aligned to
#: 32 bytes, and one and four waves of 8 resident blocks on 132 SMs
SOFTMAX = ((2048, 50257), (2048, 50264), (1056, 50264), (4224, 50264))
#: rows x cols of the launches that take their tiles in panels (``*_panels``): the output's
#: rows odd, its columns odd, neither; and the panel heights, from the 2-D grid's order (1)
#: to whole columns of tiles
PANELED = ((4097, 3000), (4096, 3001), (4096, 3000))
PANELS = (1, 2, 8, 32, 129)
#: floats of the contiguous copies (``stream_*``), written at these offsets into the output
STREAM = 1 << 26
OFFSETS = (0, 1)


def _matrix(rows: int, cols: int):
    return lambda r: [r.uniform(0, 1, rows * cols).astype(np.float32),
                      np.zeros(rows * cols, np.float32), np.int32(rows), np.int32(cols)]


def _paneled(rows: int, cols: int, panel: int):
    return lambda r: [r.uniform(0, 1, rows * cols).astype(np.float32),
                      np.zeros(rows * cols, np.float32), np.int32(rows), np.int32(cols),
                      np.int32(panel)]


def _rows(rows: int, cols: int, passes: int, write: int):
    return lambda r: [np.zeros(rows * cols, np.float32),
                      r.uniform(-4, 4, rows * cols).astype(np.float32), np.int32(cols),
                      np.int32(passes), np.int32(write)]


def launches() -> list[Launch]:
    """Every launch of the probe, in the fixture's order."""
    out = []
    for rows, cols in MATRICES:
        grid = (-(-cols // TILE), -(-rows // TILE))
        for kernel in ("copy", "transpose_padded", "copy_through_tile", "transpose_addresses"):
            out.append(Launch(f"{kernel} {rows}x{cols}", "shape.cu", kernel,
                              _matrix(rows, cols), grid, (TILE, 8), root=PROBES))
    for rows, cols in PANELED:
        tiles = -(-cols // TILE) * -(-rows // TILE)
        for kernel in ("copy_panels", "transpose_panels", "copy_through_tile_panels"):
            for panel in PANELS:
                out.append(Launch(f"{kernel} {panel} {rows}x{cols}", "shape.cu", kernel,
                                  _paneled(rows, cols, min(panel, -(-rows // TILE))),
                                  (tiles,), (TILE, 8), root=PROBES))
    for kernel, grid in (("stream_once", STREAM // 256), ("stream_grid", 132 * 8),
                         ("stream_chunks", STREAM // 4096)):
        for offset in OFFSETS:
            out.append(Launch(f"{kernel} +{offset}", "shape.cu", kernel,
                              lambda r, o=offset: [r.uniform(0, 1, STREAM).astype(np.float32),
                                                   np.zeros(STREAM + 8, np.float32),
                                                   np.int32(STREAM), np.int32(o)],
                              (grid,), (256,), root=PROBES))
    for rows, cols in SOFTMAX:
        n4 = rows * cols // 4
        out.append(Launch(f"copy_vec4 {rows}x{cols}", "shape.cu", "copy_vec4",
                          lambda r, n4=n4: [np.zeros(4 * n4, np.float32),
                                            np.zeros(4 * n4, np.float32), np.int64(n4)],
                          (-(-n4 // 256),), (256,), root=PROBES))
        for passes, write in ((1, 0), (2, 0), (2, 1), (3, 1)):
            out.append(Launch(f"row_passes {passes}{'+write' * write} {rows}x{cols}",
                              "shape.cu", "row_passes", _rows(rows, cols, passes, write),
                              (rows,), (256,), root=PROBES))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", metavar="JSON", help="time the launches on this GPU")
    parser.add_argument("--once", metavar="JSON",
                        help="launch each once, no warm-up (under a profiler: ncu)")
    parser.add_argument("--only", nargs="*", default=(), help="launches whose name has this")
    args = parser.parse_args(argv)
    chosen = [x for x in launches() if not args.only or any(o in x.name for o in args.only)]
    if args.record:
        peer_times.record(args.record, launches=chosen)
    elif args.once:
        peer_times.record(args.once, launches=chosen, warmup=0, repeat=1, batch=1)
    else:
        print("| launch | H100 ms | predicted ms | error | bound |\n|---|---|---|---|---|")
        peer_times.compare(FIXTURE, launches=chosen)


if __name__ == "__main__":
    main()
