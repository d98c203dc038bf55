"""Copy/kernel overlap with 1, 2, 4 and 8 streams, against the ideal ``max(copy, compute)``.

Lab 08 (textbook 6-3-3, 6-4) on a real GPU: the data set is cut into chunks; each chunk is
uploaded, processed by lab 08's ``work`` kernel and downloaded in one stream, the chunks dealt to
the streams in turn. The kernel's ``iters`` is calibrated so that the kernel alone takes about as
long as the upload alone, the case where overlap matters most. Every step is bracketed by events,
which give the per-stream timeline (Gantt chart) stored in the JSON output.

The ideal is ``max(copy, compute)`` with both parts measured over the whole data set: compute is
the kernels alone; copy is all uploads and downloads with no kernel, in several streams so that
the two directions run at once, as in the pipeline (the H100 has a copy engine for each
direction). A stricter bound, ``max(up, work, down)``, times each direction alone; it assumes an
upload runs as fast beside a download as on its own. The work-balance sweep scales the kernel
from a quarter to four times the calibrated work and reports both bounds each time.

Run on the GPU machine (PyCUDA needed)::

    python -m benchmarks.streams --out results/

>>> ideal_ms(copies=6.2, compute=5.0)
6.2
>>> per_direction_ms({"up": 4.0, "work": 5.0, "down": 3.5})
5.0
>>> x0 = np.random.default_rng(0).random(1000, dtype=np.float32)
>>> v = x0.copy()
>>> for _ in range(500):
...     v = (v * np.float32(0.999) + np.float32(0.001)).astype(np.float32)
>>> bool(np.abs(v - reference(x0, 500)).max() <= tolerance(500))
True
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from .common import cuda_cells, environment_line, markdown_table
from .transfers import Gpu

NOTEBOOK = "08_streams.ipynb"
KERNELS = ("work",)
STEPS = ("up", "work", "down")


def ideal_ms(copies: float, compute: float) -> float:
    """``max(copy, compute)``: no pipeline beats its copies alone or its kernels alone."""
    return max(copies, compute)


def per_direction_ms(alone: dict[str, float]) -> float:
    """The stricter bound: the slowest stage when upload, kernel and download each run alone."""
    return max(alone.values())


def reference(x0: np.ndarray, iters: int) -> np.ndarray:
    """Closed form of ``iters`` steps of v <- 0.999 v + 0.001, in float64."""
    return 1.0 + (x0.astype(np.float64) - 1.0) * 0.999**iters


def tolerance(iters: int) -> float:
    """Absolute error bound of the float32 recurrence: one rounding (<= 2**-23 for v < 2) a step."""
    return 2.0**-23 * (iters + 1)


class Pipeline:
    """Chunked upload -> work -> download over several streams, timed with events."""

    def __init__(self, gpu: Gpu, work, n: int, block: int = 256):
        drv = self.drv = gpu.drv
        self.gpu, self.work, self.n, self.block = gpu, work, n, block
        self.host = drv.pagelocked_empty(n, np.float32)
        self.x0 = np.random.default_rng(3).random(n, dtype=np.float32) + 0.5
        self.device = drv.mem_alloc(n * 4)
        self.iters = 1

    def run(self, n_streams: int, n_chunks: int, steps=STEPS) -> tuple[float, list]:
        drv, chunk = self.drv, self.n // n_chunks
        streams = [drv.Stream() for _ in range(n_streams)]
        self.host[:] = self.x0
        start, stop = drv.Event(), drv.Event()
        marks = []
        start.record()
        for c in range(n_chunks):
            s = streams[c % n_streams]
            part = self.host[c * chunk:(c + 1) * chunk]
            dev = int(self.device) + c * chunk * 4
            events = [drv.Event() for _ in range(len(steps) + 1)]
            events[0].record(s)
            for j, step in enumerate(steps):
                if step == "up":
                    drv.memcpy_htod_async(dev, part, s)
                elif step == "work":
                    grid = (min((chunk + self.block - 1) // self.block, 132 * 16), 1)
                    self.work(np.intp(dev), np.int32(chunk), np.int32(self.iters),
                              grid=grid, block=(self.block, 1, 1), stream=s)
                else:
                    drv.memcpy_dtoh_async(part, dev, s)
                events[j + 1].record(s)
            marks.append((c % n_streams, events))
        stop.record()
        stop.synchronize()
        spans = [(sid, step, ev[j].time_since(start), ev[j + 1].time_since(start))
                 for sid, ev in marks for j, step in enumerate(steps)]
        return stop.time_since(start), spans

    def best_of(self, repeat: int, *args, **kw) -> tuple[float, list]:
        runs = [self.run(*args, **kw) for _ in range(repeat)]
        return min(runs, key=lambda r: r[0])

    def correct(self) -> bool:
        err = np.abs(self.host - reference(self.x0, self.iters)).max()
        return bool(err <= tolerance(self.iters))

    def calibrate(self) -> None:
        """Choose iters so the kernel alone takes about as long as the upload alone."""
        up = self.best_of(3, 1, 1, steps=("up",))[0]
        self.iters = 256
        work = self.best_of(3, 1, 1, steps=("work",))[0]
        self.iters = max(1, round(256 * up / work))


BALANCE = (0.25, 0.5, 1, 2, 4)
COPY_LAYOUTS = ((4, 64), (8, 32), (8, 64))   # (streams, chunks) for the copies alone and the sweep


def measure(gpu: Gpu, work, n: int, chunk_counts=(None, 32, 64), streams=(1, 2, 4, 8)) -> dict:
    pipe = Pipeline(gpu, work, n)
    pipe.calibrate()
    alone = {step: pipe.best_of(5, 1, 1, steps=(step,))[0] for step in STEPS}
    copies = min(pipe.best_of(5, k, c, steps=("up", "down"))[0] for k, c in COPY_LAYOUTS)
    rows, timelines, ok = [], {}, True
    for chunks in chunk_counts:
        for k in streams:
            total, spans = pipe.best_of(5, k, chunks or k)
            ok &= pipe.correct()
            rows.append({"streams": k, "chunks": chunks or k, "ms": total,
                         "series": "chunks = streams" if chunks is None else f"{chunks} chunks"})
            timelines[f"{k} streams, {chunks or k} chunks"] = spans
    base, balance = pipe.iters, []
    for factor in BALANCE:
        pipe.iters = max(1, round(base * factor))
        work_ms = pipe.best_of(5, 1, 1, steps=("work",))[0]
        total = min(pipe.best_of(5, k, c)[0] for k, c in COPY_LAYOUTS)
        ok &= pipe.correct()
        balance.append({"factor": factor, "iters": pipe.iters, "work ms": work_ms, "ms": total,
                        "ideal ms": ideal_ms(copies, work_ms),
                        "per-direction ms": per_direction_ms({**alone, "work": work_ms})})
    pipe.iters = base
    return {"n": n, "iters": base, "alone ms": alone, "copies ms": copies,
            "ideal ms": ideal_ms(copies, alone["work"]),
            "per-direction ms": per_direction_ms(alone),
            "serial ms": sum(alone.values()), "runs": rows, "balance": balance, "correct": ok,
            "timelines": timelines}


def report(result: dict) -> str:
    alone, ideal, strict = result["alone ms"], result["ideal ms"], result["per-direction ms"]
    one = {r["series"]: r["ms"] for r in result["runs"] if r["streams"] == 1}
    rows = [[r["streams"], r["chunks"], f"{r['ms']:.3f}", f"{one[r['series']] / r['ms']:.2f}x",
             f"{ideal / r['ms']:.1%}", "yes" if r["ms"] <= ideal / 0.85 else "no",
             f"{strict / r['ms']:.1%}"]
            for r in result["runs"]]
    balance = [[f"x{b['factor']}", b["iters"], f"{b['work ms']:.3f}", f"{b['ms']:.3f}",
                f"{b['ideal ms'] / b['ms']:.1%}", f"{b['per-direction ms'] / b['ms']:.1%}"]
               for b in result["balance"]]
    return "\n".join([
        f"### Streams · {result['environment']}",
        f"{result['n'] * 4 // (1 << 20)} MB pinned, work iters = {result['iters']}; alone: "
        + ", ".join(f"{k} {v:.3f} ms" for k, v in alone.items())
        + f"; serial sum {result['serial ms']:.3f} ms",
        f"copies alone, both directions at once (best of {len(COPY_LAYOUTS)} layouts): "
        f"{result['copies ms']:.3f} ms; ideal max(copy, compute) {ideal:.3f} ms; "
        f"per-direction bound max(up, work, down) {strict:.3f} ms",
        f"results match the float64 reference: {result['correct']}", "",
        markdown_table(["streams", "chunks", "ms", "speed-up vs 1 stream", "ideal / measured",
                        "within 15% of ideal", "per-direction bound / measured"], rows), "",
        "Work balance (best of 4 streams x 64, 8 x 32 and 8 x 64 chunks):", "",
        markdown_table(["work", "iters", "kernels alone ms", "pipeline ms", "ideal / measured",
                        "per-direction bound / measured"], balance)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("."), help="folder for streams.json")
    parser.add_argument("--log2-elements", type=int, default=26)
    args = parser.parse_args(argv)
    gpu = Gpu()
    try:
        work = gpu.module(cuda_cells(NOTEBOOK)).get_function("work")
        result = measure(gpu, work, 1 << args.log2_elements)
    finally:
        gpu.close()
    result["environment"] = environment_line()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "streams.json").write_text(json.dumps(result))
    print(report(result))


if __name__ == "__main__":
    main()
