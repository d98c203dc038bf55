"""CPU or GPU (lab 07, the SPRAT paper): the runtime chooser on the H100 machine.

For each of lab 07's operations (SAXPY from pageable and from pinned host memory, a tiled
matrix multiply, a sum), with the data starting and ending in host memory:

1. time the NumPy call and the GPU path (copies + kernel) on a few *calibration* sizes and fit
   a :class:`cudakit.chooser.Segments` model to each (and, for comparison, one straight line);
2. build a :class:`cudakit.chooser.Chooser` from the two models;
3. on *validation* sizes twice as dense (half of them never seen by the fit) time the CPU, the
   GPU and the chooser's call, and compare the predicted crossover with the measured one.

The kernels are lab 07's ``%%cuda`` cells, built through cudakit as ``%%cuda`` does. The JSON it
writes is what lab 07 shows on the emulator (``labs/07_h100.json``). Run on the GPU machine::

    python -m benchmarks.chooser --out results/
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from benchmarks.common import cell_sources, environment_line, markdown_table
from cudakit.chooser import Chooser, Segments, measured_crossover, time_calls
from cudakit.timing import fit_latency_bandwidth

NOTEBOOK = "07_cpu_or_gpu.ipynb"
KERNELS = ("saxpy", "matmul_tiled", "block_sums")
A = np.float32(2.5)
PARTIALS = 1024
TILE = 16


def kernels() -> dict:
    import cudakit

    found = {}
    for body, options in cell_sources(NOTEBOOK):
        found.update(cudakit.load(body, options))
    return {name: found[name] for name in KERNELS}


def operations(k: dict) -> dict:
    """name -> (make_args(param), cpu, gpu, work(param) in the models' unit, unit name)."""
    from cudakit import cuda

    rng = np.random.default_rng(7)

    def pinned(array):
        held = cuda.pagelocked_empty(array.shape, array.dtype)
        held[:] = array
        return held

    def saxpy_args(pin):
        def make(nbytes):
            n = nbytes // 4
            x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
            if pin:
                x, y = pinned(x), pinned(y)
            out = cuda.pagelocked_empty(n, np.float32) if pin else np.empty(n, np.float32)
            return x, y, out, cuda.mem_alloc(nbytes), cuda.mem_alloc(nbytes)
        return make

    def saxpy_cpu(x, y, out, d_x, d_y):
        y += A * x
        return y

    def saxpy_gpu(x, y, out, d_x, d_y):
        n = x.size
        cuda.memcpy_htod(d_x, x)
        cuda.memcpy_htod(d_y, y)
        k["saxpy"](A, d_x, d_y, n, grid=(min((n + 255) // 256, 8192), 1), block=(256, 1, 1))
        cuda.memcpy_dtoh(out, d_y)
        return out

    def matmul_args(n):
        a = pinned(rng.random((n, n), dtype=np.float32))
        b = pinned(rng.random((n, n), dtype=np.float32))
        return a, b, cuda.pagelocked_empty((n, n), np.float32), *(
            cuda.mem_alloc(a.nbytes) for _ in range(3))

    def matmul_cpu(a, b, c, d_a, d_b, d_c):
        return np.matmul(a, b, out=c)

    def matmul_gpu(a, b, c, d_a, d_b, d_c):
        n = a.shape[0]
        cuda.memcpy_htod(d_a, a)
        cuda.memcpy_htod(d_b, b)
        k["matmul_tiled"](d_a, d_b, d_c, n, grid=((n + TILE - 1) // TILE,) * 2,
                          block=(TILE, TILE, 1))
        cuda.memcpy_dtoh(c, d_c)
        return c

    def sum_args(nbytes):
        x = pinned(rng.random(nbytes // 4, dtype=np.float32))
        return x, cuda.mem_alloc(nbytes), cuda.mem_alloc(PARTIALS * 4), \
            cuda.pagelocked_empty(PARTIALS, np.float32)

    def sum_cpu(x, d_x, d_part, part):
        return float(x.sum())

    def sum_gpu(x, d_x, d_part, part):
        blocks = min((x.size + 255) // 256, PARTIALS)
        cuda.memcpy_htod(d_x, x)
        k["block_sums"](d_x, d_part, x.size, grid=(blocks, 1), block=(256, 1, 1))
        cuda.memcpy_dtoh(part, d_part)
        return float(part[:blocks].sum())

    nbytes = lambda p: float(p)  # noqa: E731
    return {
        "saxpy pageable": (saxpy_args(False), saxpy_cpu, saxpy_gpu, nbytes, "bytes per array"),
        "saxpy pinned": (saxpy_args(True), saxpy_cpu, saxpy_gpu, nbytes, "bytes per array"),
        "matmul pinned": (matmul_args, matmul_cpu, matmul_gpu, lambda n: 2.0 * n ** 3, "flop"),
        "sum pinned": (sum_args, sum_cpu, sum_gpu, nbytes, "bytes"),
    }


def _matmul_sizes(per_octave: int, top: int) -> list[int]:
    """n from 64 to 2^top, per_octave sizes per doubling, multiples of 16."""
    return [int(round(64 * 2 ** (i / per_octave) / 16)) * 16
            for i in range(per_octave * (top - 6) + 1)]


def sizes_for(name: str, quick: bool) -> tuple[list, list]:
    """(calibration params, validation params): bytes every 4x and 2x; matmul n every sqrt 2
    and 2^(1/4) (2.8x and 1.7x in flop)."""
    if name.startswith("matmul"):
        top = 11 if quick else 12
        return _matmul_sizes(2, top), _matmul_sizes(4, top)
    top = 26 if quick else 30
    return [1 << e for e in range(16, top + 1, 2)], [1 << e for e in range(16, top + 1)]


def check(ops: dict) -> None:
    """Each GPU path equals its NumPy call at a small size, before anything is timed."""
    for name, (make, cpu, gpu, _, _) in ops.items():
        args = make(96 if name.startswith("matmul") else 1 << 16)
        copies = [np.array(a) if isinstance(a, np.ndarray) else a for a in args]
        want = np.array(cpu(*copies), dtype=np.float64)   # SAXPY works in place: on copies
        got = np.array(gpu(*args), dtype=np.float64)
        err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        print(f"{name}: GPU against NumPy, relative error {err:.1e}")
        if not err < 1e-5:
            raise SystemExit(f"{name}: GPU result differs from NumPy")


def run(name: str, op, quick: bool) -> dict:
    make, cpu, gpu, work, unit = op
    cal, val = sizes_for(name, quick)
    c = time_calls({"cpu": cpu, "gpu": gpu}, make, cal)
    cal_work = [work(p) for p in cal]
    models = {side: Segments.fit(cal_work, c[side]) for side in ("cpu", "gpu")}
    lines = {side: fit_latency_bandwidth(cal_work, c[side]) for side in ("cpu", "gpu")}
    size = (lambda *args: 2.0 * args[0].shape[0] ** 3) if name.startswith("matmul") \
        else (lambda *args: float(args[0].nbytes))
    pick = Chooser(cpu, gpu, size, models["cpu"], models["gpu"],
                   (work(val[0]) / 2, work(val[-1]) * 2))
    v = time_calls({"cpu": cpu, "gpu": gpu, "chosen": pick}, make, val)
    val_work = [work(p) for p in val]
    where = [pick.side(w) for w in val_work]
    best = [min(a, b) for a, b in zip(v["cpu"], v["gpu"], strict=True)]
    line_pick = Chooser(cpu, gpu, size, lambda s: lines["cpu"][0] + s / (lines["cpu"][1] * 1e6),
                        lambda s: lines["gpu"][0] + s / (lines["gpu"][1] * 1e6),
                        (work(val[0]) / 2, work(val[-1]) * 2))
    return {
        "unit": unit, "calibration": {"params": cal, "work": cal_work, **c},
        "validation": {"params": val, "work": val_work, **v, "where": where,
                       "chosen_over_best": [ch / b for ch, b in zip(v["chosen"], best,
                                                                       strict=True)]},
        "segments": {side: {"edges": m.edges, "lines": m.lines} for side, m in models.items()},
        "line": lines,
        "predicted_crossover": pick.crossover,
        "line_predicted_crossover": line_pick.crossover,
        "measured_crossover": measured_crossover(val_work, v["cpu"], v["gpu"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    import os

    import cudakit

    cpus = os.cpu_count()
    print(environment_line(), f"· {cpus} CPUs · NumPy {np.__version__}")
    ops = operations(kernels())
    check(ops)
    report = {"env": environment_line(), "cpus": cpus, "numpy": np.__version__,
              "engine": cudakit.backend_name(), "operations": {}}
    rows = []
    for name, op in ops.items():
        r = run(name, op, opts.quick)
        report["operations"][name] = r
        pred, meas = r["predicted_crossover"], r["measured_crossover"]
        ratio = (max(pred, meas) / min(pred, meas)) if pred and meas else math.inf
        worst = max(r["validation"]["chosen_over_best"])
        rows.append([name, r["unit"], f"{pred:.3g}" if pred else "never",
                     f"{meas:.3g}" if meas else "never", f"{ratio:.2f}x",
                     f"{r['line_predicted_crossover'] or 0:.3g}", f"{100 * (worst - 1):.1f}%"])
        print(rows[-1], flush=True)
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "chooser.json").write_text(json.dumps(report, indent=1))
    print(markdown_table(["operation", "unit", "predicted crossover", "measured", "apart",
                          "one-line model", "chosen, worst over best"], rows))


if __name__ == "__main__":
    main()
