"""Seconds to grade one notebook, notebook by notebook (wall clock, median of repeats).

    python -m benchmarks.grading_time [NOTEBOOK ...] [--repeat 3] [--solutions DIR]

Grades each notebook with ``cudakit.grading.grade`` (the function ``cudakit grade`` calls) on
the emulator and prints the median seconds per notebook. The goal (issue 13): grading in the
sandbox takes at most 1.5x the time of the grader before the sandbox. To measure the older
grader, run this file with that tree first on ``PYTHONPATH`` (it imports nothing else from
``benchmarks``):

    PYTHONPATH=/path/to/old/tree python benchmarks/grading_time.py --solutions solutions
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["solutions/01_first_kernel.ipynb", "exercises/01_first_kernel.ipynb",
           "solutions/05_occupancy_choice.ipynb", "solutions/09_streams_overlap.ipynb",
           "solutions/10_stencil_halo.ipynb"]


def seconds(notebook: Path, solutions: Path, repeat: int) -> tuple[list[float], float, float]:
    """Wall seconds of each of ``repeat`` gradings of ``notebook``, and its score."""
    from cudakit.grading import grade

    samples, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = grade(notebook, solutions=solutions, backend="emu")
        samples.append(time.perf_counter() - start)
    return samples, result.score, result.max_score


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--solutions", type=Path, default=ROOT / "solutions")
    args = parser.parse_args(argv)
    import cudakit

    print(f"cudakit from {Path(cudakit.__file__).parent}")
    print("| notebook | score | median s | samples s |")
    print("|---|---|---|---|")
    total = 0.0
    for name in args.notebooks:
        path = Path(name) if Path(name).is_absolute() else ROOT / name
        samples, score, most = seconds(path, args.solutions, args.repeat)
        total += statistics.median(samples)
        print(f"| {name} | {score:g}/{most:g} | {statistics.median(samples):.1f} | "
              + ", ".join(f"{s:.1f}" for s in samples) + " |", flush=True)
    print(f"| all | | {total:.1f} | |")


if __name__ == "__main__":
    main()
