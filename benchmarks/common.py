"""Helpers shared by the benchmark scripts.

Kernels live once, in the labs' ``%%cuda`` cells; benchmarks build them from there,
one module per cell as ``%%cuda`` does, so the measured code is the taught code. Times
are medians of CUDA-event measurements after a warm-up (CuPy on the device machine).

>>> markdown_table(["kernel", "GB/s"], [["copy", 2900.0]])
'| kernel | GB/s |\\n|---|---|\\n| copy | 2900.0 |'
"""

from __future__ import annotations

import csv
import functools
import gzip
import os
import platform
import re
import subprocess
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def open_text(path: Path):
    """``path`` opened for reading text, through gzip when its name ends in ``.gz`` (the
    fixtures' recordings and Nsight Compute CSVs are stored either way)."""
    return gzip.open(path, "rt") if Path(path).suffix == ".gz" else open(path)


def ncu_number(text: str) -> float | None:
    """A value of Nsight Compute's CSV as a number (it writes thousands with commas), or None
    for text (``"-"``, units, names).

    >>> ncu_number("1,081,344"), ncu_number("-")
    (1081344.0, None)
    """
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


#: Nsight Compute's units, as multiples of the base units (bytes, nanoseconds)
NCU_UNITS = {"Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9,
             "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6}


def ncu_launches(text: str) -> list[dict[str, float | None]]:
    """Nsight Compute's ``--csv`` metrics (one row per launch and metric) as one dict per
    launch, in launch order: each metric in bytes or nanoseconds whatever unit ncu chose
    (``--print-units base`` or not), None where it printed no number (``n/a``).

    >>> ncu_launches('"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\\n'
    ...              '"0","k","dram__bytes_read.sum","Mbyte","1.5"')
    [{'dram__bytes_read.sum': 1500000.0}]
    """
    lines = [line for line in text.splitlines() if line.startswith('"')]
    launches: dict[int, dict[str, float | None]] = {}
    for row in csv.DictReader(lines):
        value = ncu_number(row["Metric Value"])
        if value is not None:
            value *= NCU_UNITS.get(row.get("Metric Unit", ""), 1.0)
        launches.setdefault(int(row["ID"]), {})[row["Metric Name"]] = value
    return [launches[k] for k in sorted(launches)]


def emit_json(result, out: Path | None = None) -> None:
    """``result`` as indented JSON: into the file ``out``, or printed."""
    import json

    text = json.dumps(result, indent=1) + "\n"
    if out:
        Path(out).write_text(text)
    else:
        print(text)


def back_to_back_ms(launch: Callable[[], object], batch: int = 10, warmup: int = 3,
                    repeat: int = 20) -> float:
    """The median time of one ``launch()`` among ``batch`` back to back, by
    ``cudakit.benchmark`` (CUDA events around each batch): for probes whose kernels
    ``cudakit.load`` built."""
    import cudakit

    def run():
        for _ in range(batch):
            launch()
    return cudakit.benchmark(run, warmup=warmup, repeat=repeat).median / batch


def cell_sources(notebook: str | Path) -> list[tuple[str, tuple[str, ...]]]:
    """Each ``%%cuda`` cell of a lab as (body, nvcc options), in order.

    ``%%cuda`` compiles every cell as its own module, so the benchmarks do the same.
    """
    from cudakit.magic import parse_line

    path = Path(notebook) if Path(notebook).is_absolute() else ROOT / "labs" / notebook
    import nbformat  # here: the GPU machine has no nbformat, and scripts there use the rest

    nb = nbformat.read(path, as_version=4)
    cells = []
    for cell in nb.cells:
        first, _, body = cell.source.partition("\n")
        if cell.cell_type == "code" and first.startswith("%%cuda"):
            cells.append((body, parse_line(first[len("%%cuda"):])[1]))
    return cells


def build_source(body: str, options=(), names=None) -> dict:
    """Compile one ``%%cuda`` cell body with nvcc for this GPU; CuPy functions by name.

    The body is wrapped in ``extern "C"`` so that its kernels keep their plain names;
    ``names`` limits which kernels are returned (all by default).
    """
    import cupy as cp

    from cudakit.signature import parse_kernels

    major, minor = cp.cuda.Device().compute_capability
    with tempfile.TemporaryDirectory() as tmp:
        cu, cubin = Path(tmp) / "cell.cu", Path(tmp) / "cell.cubin"
        cu.write_text('extern "C" {\n' + body + "\n}\n")
        cmd = ["nvcc", "-cubin", f"-arch=sm_{major}{minor}", "-O3", "-lineinfo",
               "-Xptxas", "-v", *options, "-o", str(cubin), str(cu)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"nvcc failed:\n{done.stderr}")
        if os.environ.get("CUDAKIT_BENCH_VERBOSE"):
            print(done.stderr)
        module = cp.RawModule(path=str(cubin))
        return {name: module.get_function(name) for name in parse_kernels(body)
                if names is None or name in names}


def cell_defining(notebook: str, kernel: str) -> tuple[str, tuple[str, ...]]:
    """The ``%%cuda`` cell (body, options) of a lab that defines ``kernel``."""
    from cudakit.signature import parse_kernels

    for body, options in cell_sources(notebook):
        if kernel in parse_kernels(body):
            return body, options
    raise RuntimeError(f"{notebook} defines no kernel named {kernel}")


def build_kernels(notebook: str, names: list[str]) -> dict:
    """Compile every ``%%cuda`` cell of a lab that defines one of ``names``; functions by name."""
    from cudakit.signature import parse_kernels

    found = {}
    for body, options in cell_sources(notebook):
        if set(parse_kernels(body)) & set(names):
            found.update(build_source(body, options, names))
    missing = sorted(set(names) - set(found))
    if missing:
        raise RuntimeError(f"{notebook} defines no kernel named {', '.join(missing)}")
    return found


_WAIT_SOURCE = r"""extern "C" __global__ void bench_wait(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"""


@functools.cache
def _wait_kernel():
    import cupy as cp

    return cp.RawKernel(_WAIT_SOURCE, "bench_wait")


def time_ms(fn: Callable[[], object], warmup: int = 3, repeat: int = 30) -> float:
    """Median time of ``fn()`` in milliseconds, measured with CUDA events around each call.

    Each timed call gets a head start, as in ``cudakit.benchmark``: a kernel that waits on the
    GPU's clock (twice the host time ``fn`` took in the warm-up) is queued before the start
    event, so ``fn``'s launches are already queued when the clock starts and the samples
    measure the GPU's work, not Python's time to issue it.
    """
    import cupy as cp

    issue = []
    for _ in range(warmup):
        t0 = time.perf_counter()
        fn()
        issue.append(time.perf_counter() - t0)
    lead_ns = min(2e9 * min(issue, default=1e-4) + 20e3, 20e6)
    cp.cuda.Device().synchronize()
    samples = []
    for _ in range(repeat):
        _wait_kernel()((1,), (1,), (np.uint64(lead_ns),))
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(samples))


def batch_ms(launch: Callable[[], object], warmup: int = 3, samples: int = 10,
             batch: int = 5) -> float:
    """Median time of one ``launch()`` in milliseconds: ``samples`` CUDA-event samples, each
    of ``batch`` launches back to back (their issue overlaps the GPU's work), after
    ``warmup`` launches. For the probes that time one kernel in many variants."""
    import cupy as cp

    for _ in range(warmup):
        launch()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(samples):
        start.record()
        for _ in range(batch):
            launch()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / batch)
    return float(np.median(times))


def gpu_line() -> str:
    """``nvidia-smi``'s name and driver of the GPU: what a fixture records it was timed on."""
    return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                           "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()


def probe_row(pattern: str, measured: float, p, **extra) -> dict:
    """One row of a probe's comparison: the H100's time, the prediction ``p``, the error."""
    return {"pattern": pattern, "measured_ms": measured, "predicted_ms": p.ms,
            "error_pct": (p.ms / measured - 1) * 100, "bound": p.bound, **extra}


def probe_main(argv, doc: str, record: Callable[[Path], None], compare: Callable[[], object],
               header: str = "") -> None:
    """A probe's command line: ``--record JSON`` times it on this GPU, else ``compare``
    prints the stored times (and its predictions under the Markdown table ``header``)."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--record", metavar="JSON", help="time the patterns on this GPU")
    args = parser.parse_args(argv)
    if args.record:
        record(Path(args.record))
    else:
        if header:
            print(header)
        compare()


def relative_error(got, ref) -> float:
    """‖got − ref‖ / ‖ref‖ in float64 (NaN or infinity counts as a failure)."""
    got = np.asarray(got, dtype=np.float64)
    err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
    return err if np.isfinite(err) else float("inf")


def cuda_cells(notebook: str | Path) -> str:
    """Every ``%%cuda`` cell body of a lab, one after another (to read, not to build)."""
    return "\n".join(body for body, _ in cell_sources(notebook))


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A Markdown table with one line per row."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def environment_line() -> str:
    """Date, GPU, driver and CUDA versions, for the heading of a results table."""
    try:
        gpu = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        gpu = "no GPU"
    try:
        nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, timeout=30)
        cuda = nvcc.stdout.strip().splitlines()[-1]
    except (OSError, subprocess.SubprocessError, IndexError):
        cuda = "no nvcc"
    return f"{date.today().isoformat()} · {gpu} · {cuda} · Python {platform.python_version()}"


@functools.cache
def lab_constant(notebook: str, name: str) -> int:
    """An integer constant of a lab's ``%%cuda`` cells (``constexpr int`` or ``#define``).

    Every cell that defines it must agree, or this raises. A default that the cell lets
    ``-D`` override (``#ifndef NAME`` / ``#define NAME v`` / ``#endif``) is not a constant.

    >>> lab_constant("21_stencil.ipynb", "H2_ROWS")
    16
    """
    pattern = rf"(?:constexpr\s+int\s+(?:\w+\s*=\s*\d+\s*,\s*)*{name}\s*=|#define\s+{name})\s*(\d+)"
    guarded = rf"#ifndef\s+{name}\s*\n\s*#define\s+{name}\s+\d+\s*\n\s*#endif"
    found = {int(m.group(1)) for body, _ in cell_sources(notebook)
             for m in re.finditer(pattern, re.sub(guarded, "", body))}
    if len(found) != 1:
        raise LookupError(f"{notebook}: constant {name} defined as {sorted(found) or 'nothing'}")
    return found.pop()


def predicted_cycles_per_trip(module, kernel: str, threads: int, args: list, iters: int,
                              blocks: int = 132, shared: int = 0):
    """``(cycles, prediction)``: the H100 clock cycles per loop trip the model predicts for a
    probe timed with ``clock64`` around its loop of ``iters`` trips (``lone_warp``,
    ``stall_chains``): its time less a launch's fixed cost, at the model's clock."""
    import cudakit
    from cudakit.predict import load

    p = cudakit.predict(module, kernel, grid=(blocks,), block=(threads,), args=args,
                        shared=shared)
    seconds = (p.ms - p.breakdown.get("launch", 0.0)) * 1e-3
    return seconds * load("H100").clock_hz / iters, p
