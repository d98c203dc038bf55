"""The ``cudakit`` command line; today one subcommand, ``grade``.

    cudakit grade exercises/01_first_kernel.ipynb [more.ipynb ...] [--json]

Each notebook is graded in the grader's bubblewrap sandbox (GPU when present, else
the emulator; see ``cudakit/grading/README.md``) and reported per test; ``--json``
prints a list with one object per notebook: ``{"notebook", "score", "max_score",
"tests": [{"name", "score", "max_score", "feedback"}]}``. The exit status is 0 when
every notebook could be graded (whatever its score), 1 when one could not, 2 for a
usage error. Without bubblewrap only the visible tests run, and one line on stderr
says so.

>>> main(["grade", "--help"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import json
import sys

from .errors import CudakitError


def _points(value: float) -> str:
    return f"{value:g}"


def format_text(result) -> str:
    """Human-readable report of one graded notebook.

    >>> from cudakit.grading import NotebookResult, TestResult
    >>> print(format_text(NotebookResult("ex.ipynb", [TestResult("t", 1.0, 1.0, "passed")])))
    ex.ipynb: 1 / 1 points
      [1/1] t: passed
    """
    lines = [f"{result.notebook}: {_points(result.score)} / {_points(result.max_score)} points"]
    for test in result.tests:
        lines.append(f"  [{_points(test.score)}/{_points(test.max_score)}] {test.name}: "
                     f"{test.feedback}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    from .backend import BACKENDS
    from .grading.grader import CELL_TIMEOUT, NOTEBOOK_TIMEOUT

    parser = argparse.ArgumentParser(prog="cudakit", description="cudakit command line tools")
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser(
        "grade", help="grade exercise notebooks",
        description="Run each notebook in a fresh kernel and score its test cells; hidden "
                    "tests come from the solution notebook of the same name.")
    grade.add_argument("notebooks", nargs="+", metavar="NOTEBOOK")
    grade.add_argument("--solutions", metavar="DIR",
                       help="folder of solution notebooks (default: $CUDAKIT_SOLUTIONS or "
                            "the repository's solutions/)")
    grade.add_argument("--json", action="store_true", help="print JSON for machines")
    grade.add_argument("--backend", choices=BACKENDS,
                       help="engine for the kernels (default: the GPU if present, else the "
                            "emulator; 'emu' adds memcheck and racecheck)")
    grade.add_argument("--cell-timeout", type=float, default=CELL_TIMEOUT, metavar="S",
                       help=f"seconds per cell (default {CELL_TIMEOUT:g})")
    grade.add_argument("--timeout", type=float, default=NOTEBOOK_TIMEOUT, metavar="S",
                       help=f"seconds per notebook (default {NOTEBOOK_TIMEOUT:g})")
    grade.add_argument("--output", metavar="DIR",
                       help="keep each result and executed notebook in DIR; run again after "
                            "an interruption, notebooks already recorded are not regraded")
    grade.add_argument("--no-sandbox", action="store_true",
                       help="self-check without bubblewrap: visible tests only")
    from .course.cli import add_parser as add_course

    add_course(commands)
    return parser


def _grade(args) -> int:
    from .grading import NotebookResult, grade

    results, notes, status = [], [], 0
    for notebook in args.notebooks:
        try:
            result = grade(notebook, solutions=args.solutions,
                           cell_timeout=args.cell_timeout, timeout=args.timeout,
                           backend=args.backend, output_dir=args.output,
                           sandbox=False if args.no_sandbox else None)
        except (CudakitError, OSError) as error:
            print(f"cudakit grade: {notebook}: {error}", file=sys.stderr)
            result, status = NotebookResult(notebook), 1
        results.append(result)
        if result.note and result.note not in notes:
            notes.append(result.note)
            print(f"cudakit grade: {result.note}", file=sys.stderr)
        if not args.json:
            print(format_text(result), flush=True)
    if args.json:
        print(json.dumps([r.to_dict() for r in results], indent=2))
    return status


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cudakit`` console script."""
    args = _parser().parse_args(argv)
    if args.command == "course":
        from .course.cli import run as course

        return course(args)
    return _grade(args)
