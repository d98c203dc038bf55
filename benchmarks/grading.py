"""Notebooks graded per minute by one worker and by many, on one machine (issue 17).

    python -m benchmarks.grading                          # emulator, 1 and all cores
    python -m benchmarks.grading --backend gpu --workers 1,4,16

The class: every solution and every untouched exercise (22 notebooks), copied into student
folders as often as the run needs, so every measurement grades the same mix. Each count of
workers grades a fresh copy (no result is reused) through ``cudakit.grading.batch``, pool
start-up included; every result is checked (solutions full marks, exercises zero). The CPU
seconds per notebook (this process and every finished descendant: workers, kernels, nvcc)
show whether more workers cost more work; on a machine shared with other jobs, the wall-clock
ratio says more about the neighbours than about the pool.

Goal: rate(N workers) >= 0.8 x N x rate(1 worker). Printed too: the time for 5,500
notebooks (500 participants x 11 exercises) on 1 to 32 such machines, from the best rate.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import resource
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, markdown_table
from cudakit.grading.batch import Options, cores, default_jobs, grade_many

SOURCES = sorted((ROOT / "solutions").glob("*.ipynb")) + sorted(
    (ROOT / "exercises").glob("*.ipynb"))
COURSE_ROUND = 5500


def make_class(folder: Path, copies: int) -> list[str]:
    """``copies`` x the 22 notebooks, one student folder per copy."""
    paths = []
    for copy in range(copies):
        student = folder / f"student{copy:03d}"
        for source in SOURCES:
            kind = student / source.parent.name
            kind.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, kind / source.name)
            paths.append(str(kind / source.name))
    return paths


def check(outcomes) -> None:
    for outcome in outcomes:
        result = outcome.result
        expected = result.max_score if "/solutions/" in outcome.notebook else 0.0
        if outcome.error or not result.tests or result.score != expected:
            raise SystemExit(f"wrong grade for {outcome.notebook}: {outcome.error or result}")


def _cpu_seconds() -> float:
    """CPU time of this process and of every finished descendant (workers, kernels, nvcc)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(workers: int, options: Options) -> tuple[int, float, float]:
    """Grade enough copies to keep ``workers`` busy; (notebooks, seconds, CPU seconds)."""
    copies = max(1, math.ceil(workers / 2))
    with tempfile.TemporaryDirectory(prefix="cudakit-bench-") as folder:
        paths = make_class(Path(folder), copies)
        start, cpu = time.perf_counter(), _cpu_seconds()
        outcomes = grade_many(paths, options, jobs=workers, results=Path(folder) / "results",
                              progress=False)
        seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    check(outcomes)
    return len(paths), seconds, cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("emu", "gpu"), default="emu")
    parser.add_argument("--workers", help="comma-separated worker counts (default: 1 and "
                                          "the default of cudakit grade here)")
    args = parser.parse_args(argv)
    options = Options(solutions=str(ROOT / "solutions"), backend=args.backend)
    counts = ([int(w) for w in args.workers.split(",")] if args.workers
              else sorted({1, default_jobs(args.backend)}))
    if counts[0] != 1:
        counts.insert(0, 1)
    print(f"{platform.node()}: {cores()} cores, backend {args.backend}, "
          f"load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    rows, single = [], None
    for workers in counts:
        notebooks, seconds, cpu = measure(workers, options)
        rate = notebooks / seconds * 60
        single = single or rate
        ratio = rate / (workers * single)
        rows.append([workers, notebooks, f"{seconds:.1f}", f"{rate:.1f}", f"{rate / single:.2f}",
                     f"{ratio:.2f}", "met" if workers == 1 or ratio >= 0.8 else "missed",
                     f"{cpu / notebooks:.1f}"])
        print(f"{workers} workers: {notebooks} notebooks in {seconds:.1f} s = {rate:.1f}/min",
              flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at the end\n")
    print(markdown_table(["workers", "notebooks", "s", "notebooks/min", "speed-up",
                          "speed-up / workers (goal >= 0.8)", "goal", "CPU s per notebook"],
                         rows))
    best = max(float(r[3]) for r in rows)
    workers = rows[[float(r[3]) for r in rows].index(best)][0]
    print(f"\n{COURSE_ROUND} notebooks at {best:.1f}/min per machine ({workers} workers):")
    print(markdown_table(["machines", "minutes"],
                         [[m, f"{COURSE_ROUND / (best * m):.0f}"] for m in (1, 4, 16, 32)]))


if __name__ == "__main__":
    main()
