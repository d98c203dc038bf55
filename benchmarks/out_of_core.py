"""Out-of-core stencil benchmark (labs/22_out_of_core.ipynb) on the GPU.

A 2D heat-equation domain larger than a chosen device-memory budget lives in pinned host
memory and is streamed through the GPU in chunks of rows on several streams; each chunk goes
up with ``depth`` halo rows on each side, advances ``depth`` steps on the device (temporal
blocking, as in the OpenACC out-of-core paper, seed 002) and comes back without its halo.
The script checks the result against the in-core run bit for bit, times the sweep over the
blocking depth, and compares with a pipeline model built from measured transfer and kernel
rates.  Run on the device machine:

    python -m benchmarks.out_of_core --out results/

>>> plan_chunks(ny=100, nx=10, depth=2, budget_bytes=3 * 2 * 24 * 10 * 4, streams=3)[:2]
[(0, 20), (20, 40)]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks.common import build_kernels, environment_line, markdown_table, time_ms
from benchmarks.stencil import C0, C1, FLOP_2D, heat2d_reference

NOTEBOOK = "22_out_of_core.ipynb"
KERNELS = ("heat2d_chunk",)
BLOCK = (32, 8)


def plan_chunks(ny: int, nx: int, depth: int, budget_bytes: int, streams: int):
    """Row ranges [r0, r1) so that every stream's two buffers of (rows + 2 depth) fit the budget."""
    rows = budget_bytes // (streams * 2 * nx * 4) - 2 * depth
    if rows < 1:
        raise ValueError(f"a budget of {budget_bytes} bytes holds no chunk of {nx}-point rows "
                         f"with {depth} halo rows on each side for {streams} streams")
    return [(r0, min(r0 + rows, ny)) for r0 in range(0, ny, rows)]


class OutOfCore:
    """The streamed solver: pinned host domain, per-stream device buffers, k steps per trip."""

    def __init__(self, kernel, nx: int, ny: int, budget_bytes: int, streams: int = 3):
        import cupy as cp

        self.kernel, self.nx, self.ny = kernel, nx, ny
        self.budget, self.nstreams = budget_bytes, streams
        self.streams = [cp.cuda.Stream(non_blocking=True) for _ in range(streams)]
        cap = budget_bytes // (streams * 2 * 4)
        self.buffers = [(cp.empty(cap, np.float32), cp.empty(cap, np.float32))
                        for _ in range(streams)]

    def step_chunk(self, u, v, rows: int, row0: int, stream) -> None:
        grid = (-(-self.nx // BLOCK[0]), -(-rows // BLOCK[1]))
        with stream:
            self.kernel(grid, BLOCK, (u, v, np.int32(self.nx), np.int32(rows), np.int32(row0),
                                      np.int32(self.ny), np.float32(C0), np.float32(C1)))

    def run(self, src, dst, steps: int, depth: int, events: list | None = None):
        """Advance the pinned host array ``src`` by ``steps``; returns the array holding it."""
        import cupy as cp

        nx, ny = self.nx, self.ny
        done = 0
        while done < steps:
            k = min(depth, steps - done)
            for c, (r0, r1) in enumerate(plan_chunks(ny, nx, k, self.budget, self.nstreams)):
                stream = self.streams[c % self.nstreams]
                u, v = self.buffers[c % self.nstreams]
                lo, hi = max(r0 - k, 0), min(r1 + k, ny)
                marks = [cp.cuda.Event() for _ in range(4)]
                marks[0].record(stream)
                u[: (hi - lo) * nx].set(src[lo:hi].ravel(), stream=stream)
                marks[1].record(stream)
                for _ in range(k):
                    self.step_chunk(u, v, hi - lo, lo, stream)
                    u, v = v, u
                marks[2].record(stream)
                core = u[(r0 - lo) * nx:(r1 - lo) * nx].reshape(r1 - r0, nx)
                core.get(stream=stream, out=dst[r0:r1], blocking=False)
                marks[3].record(stream)
                if events is not None:
                    events.append((c % self.nstreams, c, marks))
            cp.cuda.Device().synchronize()
            src, dst = dst, src
            done += k
        return src


def pinned_copy_gbs(nbytes: int) -> tuple[float, float]:
    """Host-to-device and device-to-host GB/s for one pinned copy of ``nbytes``."""
    import cupy as cp
    import cupyx

    host = cupyx.empty_pinned(nbytes // 4, np.float32)
    host[:] = 1.0
    dev = cp.empty(nbytes // 4, np.float32)
    up = time_ms(lambda: dev.set(host), repeat=5)
    down = time_ms(lambda: dev.get(out=host), repeat=5)
    return nbytes / up / 1e6, nbytes / down / 1e6


def model_ms(nx, ny, steps, depth, budget, streams, h2d, d2h, point_ns) -> float:
    """Pipeline model: per trip, fill + drain of one chunk, then the slowest stage per chunk."""
    total, done = 0.0, 0
    while done < steps:
        k = min(depth, steps - done)
        stages = []
        for r0, r1 in plan_chunks(ny, nx, k, budget, streams):
            rows = min(r1 + k, ny) - max(r0 - k, 0)
            stages.append((rows * nx * 4 / h2d / 1e6, k * rows * nx * point_ns / 1e6,
                           (r1 - r0) * nx * 4 / d2h / 1e6))
        total += sum(stages[0]) + sum(max(s) for s in stages[1:])
        done += k
    return total


def in_core(kernel, start: np.ndarray, steps: int) -> tuple[float, float, np.ndarray]:
    """The same kernel on the whole domain held on the device: (ms per step, total ms, result)."""
    import cupy as cp

    ny, nx = start.shape
    grid = (-(-nx // BLOCK[0]), -(-ny // BLOCK[1]))
    bufs = [cp.asarray(start), cp.asarray(start)]

    def step(u, v):
        kernel(grid, BLOCK, (u, v, np.int32(nx), np.int32(ny), np.int32(0), np.int32(ny),
                             np.float32(C0), np.float32(C1)))

    step_ms = time_ms(lambda: step(bufs[1], bufs[0]))
    bufs = [cp.asarray(start), cp.asarray(start)]
    t0, t1 = cp.cuda.Event(), cp.cuda.Event()
    t0.record()
    for s in range(steps):
        step(bufs[s % 2], bufs[1 - s % 2])
    t1.record()
    t1.synchronize()
    return step_ms, cp.cuda.get_elapsed_time(t0, t1), bufs[steps % 2].get()


def main() -> None:
    import cupy as cp
    import cupyx

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--nx", type=int, default=16384)
    parser.add_argument("--ny", type=int, default=16384)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--budget-mb", type=int, default=256)
    parser.add_argument("--streams", type=int, default=3)
    opts = parser.parse_args()
    kernel = build_kernels(NOTEBOOK, list(KERNELS))["heat2d_chunk"]
    rng = np.random.default_rng(22)
    print(environment_line())

    # small domain against NumPy, several depths and budgets that force many chunks
    ny, nx, steps = 301, 257, 9
    u0 = rng.random((ny, nx), dtype=np.float32)
    ref = heat2d_reference(u0, C0, C1, steps)
    for depth, budget in ((1, 3 * 2 * 40 * nx * 4), (4, 3 * 2 * 60 * nx * 4), (9, 2 ** 22)):
        src, dst = cupyx.empty_pinned((ny, nx), np.float32), cupyx.empty_pinned((ny, nx),
                                                                                 np.float32)
        src[:] = u0
        got = OutOfCore(kernel, nx, ny, budget).run(src, dst, steps, depth)
        err = np.abs(got - ref).max() / np.abs(ref).max()
        print(f"small domain {ny}x{nx}, depth {depth}: max rel. error vs NumPy {err:.1e}")
        if not err < 1e-5:
            raise SystemExit("out-of-core result differs from NumPy")

    nx, ny, steps = opts.nx, opts.ny, opts.steps
    budget = opts.budget_mb << 20
    domain = cupyx.empty_pinned((ny, nx), np.float32)
    spare = cupyx.empty_pinned((ny, nx), np.float32)
    domain[:] = rng.random((ny, nx), dtype=np.float32)
    start = domain.copy()
    print(f"domain {ny}x{nx} float32 = {domain.nbytes / 2**30:.2f} GiB (x2 for ping-pong), "
          f"device budget {opts.budget_mb} MiB, {opts.streams} streams, {steps} steps")

    step_ms, incore_ms, incore = in_core(kernel, start, steps)
    cp.get_default_memory_pool().free_all_blocks()

    h2d, d2h = pinned_copy_gbs(64 << 20)
    point_ns = step_ms * 1e6 / (nx * ny)
    flop = FLOP_2D * (nx - 2) * (ny - 2) * steps
    print(f"pinned copies: H2D {h2d:.1f} GB/s, D2H {d2h:.1f} GB/s; kernel {step_ms:.3f} ms/step "
          f"in core ({8 * nx * ny / step_ms / 1e6:.0f} GB/s)")
    t0, t1 = cp.cuda.Event(), cp.cuda.Event()
    rows, results, timeline = [], [], None
    solver = OutOfCore(kernel, nx, ny, budget, opts.streams)
    for depth in (1, 2, 4, 8, 16, 32, 64):
        if depth > steps:
            break
        domain[:] = start
        events = []
        t0.record()
        got = solver.run(domain, spare, steps, depth, events)
        t1.record()
        t1.synchronize()
        ms = cp.cuda.get_elapsed_time(t0, t1)
        same = bool(np.array_equal(got, incore))
        model = model_ms(nx, ny, steps, depth, budget, opts.streams, h2d, d2h, point_ns)
        chunks = len(plan_chunks(ny, nx, depth, budget, opts.streams))
        results.append({"depth": depth, "chunks": chunks, "ms": ms, "model_ms": model,
                        "gflops": flop / ms / 1e6, "matches_in_core": same})
        rows.append([depth, chunks, f"{ms:.1f}", f"{model:.1f}", f"{flop / ms / 1e6:.0f}", same])
        if depth == 8:
            timeline = [(s, c, [cp.cuda.get_elapsed_time(t0, m) for m in marks])
                        for s, c, marks in events]
    print(markdown_table(["depth k", "chunks", "ms", "model ms", "GFLOP/s", "matches in-core"],
                         rows))
    print(f"in core: {incore_ms:.1f} ms = {flop / incore_ms / 1e6:.0f} GFLOP/s")
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "out_of_core.json").write_text(json.dumps(
        {"env": environment_line(), "nx": nx, "ny": ny, "steps": steps,
         "budget_mb": opts.budget_mb, "streams": opts.streams, "h2d_gbs": h2d, "d2h_gbs": d2h,
         "step_ms": step_ms, "incore_ms": incore_ms, "results": results,
         "timeline_depth8": timeline}, indent=1))
    if not all(r["matches_in_core"] for r in results):
        raise SystemExit("out-of-core result differs from the in-core run")


if __name__ == "__main__":
    main()
