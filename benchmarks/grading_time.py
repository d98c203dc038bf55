"""Seconds to grade one notebook with this tree's grader against an older tree's, interleaved.

    python -m benchmarks.grading_time --old /path/to/old/tree [NOTEBOOK ...] [--repeat 3]

For each notebook and repeat, grades it once with each tree's ``cudakit.grading.grade`` (the
function ``cudakit grade`` calls), each in a fresh Python process with that tree first on
``PYTHONPATH``, on the emulator, alternating the trees so both see the same machine load. Prints
the median seconds of the ``grade`` call per notebook and tree and their ratio (the goal of
issue 13: the sandboxed grader within 1.5x of the grader before it). Without ``--old``, only
this tree is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["solutions/01_first_kernel.ipynb", "exercises/01_first_kernel.ipynb",
           "solutions/05_occupancy_choice.ipynb", "solutions/09_streams_overlap.ipynb",
           "solutions/10_stencil_halo.ipynb"]
CHILD = """
import json, sys, time
from cudakit.grading import grade
start = time.perf_counter()
result = grade(sys.argv[1], solutions=sys.argv[2], backend="emu")
print(json.dumps([time.perf_counter() - start, result.score, result.max_score]))
"""


def once(tree: Path, notebook: Path, solutions: Path) -> tuple[float, float, float]:
    """Seconds of one ``grade`` call with ``tree``'s cudakit, and the score it gave."""
    env = {**os.environ, "PYTHONPATH": str(tree)}  # and cwd=tree: no other tree shadows it
    run = subprocess.run([sys.executable, "-c", CHILD, str(notebook), str(solutions)],
                         env=env, cwd=tree, capture_output=True, text=True, check=True,
                         timeout=600)
    return tuple(json.loads(run.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", default=DEFAULT)
    parser.add_argument("--old", type=Path, help="the tree of the grader to compare with")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    trees = {"new": ROOT} | ({"old": args.old.resolve()} if args.old else {})
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start; "
          + ", ".join(f"{k} = {v}" for k, v in trees.items()))
    print("| notebook | score | " + " | ".join(f"{k} median s" for k in trees)
          + (" | new / old |" if args.old else " |"))
    print("|---|---|" + "---|" * (len(trees) + bool(args.old)))
    totals = dict.fromkeys(trees, 0.0)
    for name in args.notebooks:
        samples: dict[str, list[float]] = {k: [] for k in trees}
        scores = set()
        for _ in range(args.repeat):
            for key, tree in trees.items():
                seconds, score, most = once(tree, ROOT / name, ROOT / "solutions")
                samples[key].append(seconds)
                scores.add(f"{score:g}/{most:g}")
        medians = {k: statistics.median(v) for k, v in samples.items()}
        for key in trees:
            totals[key] += medians[key]
        row = f"| {name} | {', '.join(sorted(scores))} | " + " | ".join(
            f"{medians[k]:.2f}" for k in trees)
        print(row + (f" | {medians['new'] / medians['old']:.2f} |" if args.old else " |"),
              flush=True)
    row = "| all | | " + " | ".join(f"{totals[k]:.2f}" for k in trees)
    print(row + (f" | {totals['new'] / totals['old']:.2f} |" if args.old else " |"))


if __name__ == "__main__":
    main()
