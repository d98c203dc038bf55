"""How long ``cudakit.predict`` takes per full-size launch of the labs, on this (CPU) machine.

Goal (issue 19): under 5 seconds per launch at the labs' full sizes on the 2-core CI machine.
The seconds printed are CPU time of the prediction (compile, sampled emulation, model), not
GPU time; the predicted milliseconds are the model's H100 figure, unchecked here
(``benchmarks/model.py`` compares them with the H100's measurements). The first rows are
launches written here, the last (:data:`RECORDED`) launches of the H100 recording replayed::

    python -m benchmarks.predict_speed
"""

from __future__ import annotations

import time

import numpy as np

import cudakit

from .common import cell_defining, markdown_table


def _launches():
    n = 1 << 26  # lab 10: 2^26 ints
    ints = np.ones(n, np.int32)
    partial = np.zeros(n // 256, np.int32)
    yield "10_reduction.ipynb", "reduce0", (n // 256,), (256,), [ints, partial, np.uint32(n)], \
        1024
    yield "10_reduction.ipynb", "reduce3", (n // 512,), (256,), [ints, partial, np.uint32(n)], \
        1024
    yield "10_reduction.ipynb", "reduce6", (132 * 8,), (256,), [ints, partial, np.uint32(n)], 0
    side = 4096  # lab 11
    a, b = np.ones((side, side), np.float32), np.zeros((side, side), np.float32)
    for name in ("transpose_naive", "transpose_padded"):
        yield "11_transpose.ipynb", name, (side // 32, side // 32), (32, 8), \
            [a, b, np.int32(side), np.int32(side)], 0
    c = np.zeros((side, side), np.float32)  # lab 12
    yield "12_matmul.ipynb", "matmul_tiled", (side // 32, side // 32), (32, 32), \
        [a, a, c, np.int32(side), np.int32(side), np.int32(side)], 0
    yield "12_matmul.ipynb", "matmul_regtile", (side // 128, side // 128), (256,), \
        [a, a, c, np.int32(side), np.int32(side), np.int32(side)], 0
    yield "21_stencil.ipynb", "heat2d", (side // 32, side // 8), (32, 8), \
        [a, b, np.int32(side), np.int32(side), np.float32(0.6), np.float32(0.1)], 0
    bodies = 1 << 16  # lab 20
    body = np.ones((bodies, 4), np.float32)
    yield "20_nbody.ipynb", "nbody_tiled", (bodies // 256,), (256,), \
        [body, np.zeros_like(body), np.int32(bodies), np.float32(1e-4)], 16 * 256


#: recorded H100 launches (``benchmarks/ncu_probe.py`` selectors) that took longest to predict
#: in session 15's full run (``benchmarks/model.py`` reports each launch's seconds): a one-block
#: grid-stride loop, the occupancy sweep's longest loops, lab 12's 240 kB kernel (compiled and
#: decoded first), a 2 GiB stencil step replayed on zero-filled buffers
RECORDED = ("00_hello_cuda:saxpy:1x1x1", "01_occupancy:scale1:660x1x1",
            "12_matmul:sgemm_async:32x32x1", "22_out_of_core:heat2d_rows:512x4096x1")


def recorded_rows() -> list[list[str]]:
    """The :data:`RECORDED` launches replayed as ``benchmarks/model.py`` replays them."""
    from cudakit.predict.replay import Replay

    from .ncu_probe import lab_launch

    rows = []
    for selector in RECORDED:
        op, sources = lab_launch(selector)
        start = time.perf_counter()
        p = Replay("H100").op(op, sources, {})
        seconds = time.perf_counter() - start
        rows.append([selector, f"{tuple(op['grid'])}", f"{tuple(op['block'])}",
                     f"{seconds:.2f}", f"{p.counts['blocks_sampled']}/{p.counts['blocks_total']}",
                     f"{p.ms:.3f}", p.explanation])
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    rows = []
    for notebook, name, grid, block, args, shared in _launches():
        body, _ = cell_defining(notebook, name)  # these kernels take no nvcc options
        start = time.perf_counter()
        p = cudakit.predict(body, name, grid=grid, block=block, args=args, shared=shared)
        seconds = time.perf_counter() - start
        rows.append([name, f"{grid}", f"{block}", f"{seconds:.2f}",
                     f"{p.counts['blocks_sampled']}/{p.counts['blocks_total']}",
                     f"{p.ms:.3f}", p.explanation])
        print(rows[-1], flush=True)
    rows += recorded_rows()
    print(markdown_table(["kernel", "grid", "block", "CPU s", "blocks emulated",
                          "predicted H100 ms", "why"], rows))


if __name__ == "__main__":
    main()
