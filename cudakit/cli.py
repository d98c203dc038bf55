"""The ``cudakit`` command line: ``grade`` (exercise notebooks) and ``course`` (nbgrader).

    cudakit grade exercises/01_first_kernel.ipynb [more.ipynb ...] [--json]
    cudakit grade submitted/*/*.ipynb --jobs 8 --resume     # many, in parallel
    cudakit grade submitted/*/*.ipynb --slurm --gres gpu:1  # a Slurm job array

Each notebook is graded in the grader's bubblewrap sandbox (GPU when present, else
the emulator; see ``cudakit/grading/README.md``), by a pool of workers
(``cudakit.grading.batch``) or a Slurm array (``cudakit.grading.slurm``), and reported
per test; ``--json`` prints a list with one object per notebook: ``{"notebook", "score",
"max_score", "tests": [{"name", "score", "max_score", "feedback"}]}``. The exit status is 0 when
every notebook could be graded (whatever its score), 1 when one could not, 2 for a
usage error. Without bubblewrap only the visible tests run, and one line on stderr
says so.

>>> main(["grade", "--help"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

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
                       help="keep each result and the executed notebook (the judge's outputs, "
                            "each test's score) in DIR, out of the sandbox's reach")
    grade.add_argument("--no-sandbox", action="store_true",
                       help="self-check without bubblewrap: visible tests only")
    _many_arguments(grade)
    from .course.cli import add_parser as add_course

    add_course(commands)
    return parser


def _many_arguments(grade) -> None:
    """Options for grading many notebooks: workers, result files, Slurm."""
    many = grade.add_argument_group("many notebooks")
    many.add_argument("--jobs", "-j", type=int, metavar="N",
                      help="workers (per task with --slurm; default: one per GPU on a GPU "
                           "machine, else one per core)")
    many.add_argument("--results", metavar="DIR",
                      help="folder of per-notebook result files (default: ~/.cache/cudakit/"
                           "grades; with --slurm a new run folder here, on shared storage)")
    many.add_argument("--resume", action="store_true",
                      help="do not grade again what already has a result in --results")
    slurm = grade.add_argument_group("Slurm (cudakit.grading.slurm)")
    slurm.add_argument("--slurm", action="store_true",
                       help="grade as a Slurm job array (sbatch --array) and wait for it")
    slurm.add_argument("--chunk", type=int, default=20, metavar="N",
                       help="notebooks per array task (default 20)")
    slurm.add_argument("--partition", help="sbatch --partition")
    slurm.add_argument("--gres", help="sbatch --gres, e.g. gpu:1")
    slurm.add_argument("--cpus-per-task", type=int, default=1, metavar="N",
                       help="sbatch --cpus-per-task (default 1)")
    slurm.add_argument("--time", help="sbatch --time per task (default: the chunk's worst case)")
    slurm.add_argument("--max-running", type=int, metavar="N",
                       help="at most N tasks at once (sbatch --array=...%%N)")
    slurm.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                       help="one more sbatch option, e.g. --sbatch-arg=--account=course")


def _outcomes(args, options) -> list:
    """Grade on this machine or as a Slurm array; each outcome as it arrives in text mode."""
    from tqdm.auto import tqdm

    from .grading.batch import grade_many

    if args.slurm:
        import time

        from .grading.slurm import Settings, grade_on_slurm

        settings = Settings(args.chunk, args.partition, args.gres, args.cpus_per_task,
                            args.time, args.max_running, extra=tuple(args.sbatch_arg))
        folder = args.results or time.strftime("cudakit-slurm-%Y%m%d-%H%M%S")
        report = grade_on_slurm(args.notebooks, options, settings, folder=folder,
                                jobs=args.jobs, resume=args.resume)
        given = {str(Path(n).resolve()): n for n in args.notebooks}
        for outcome in report.outcomes:  # named as on the command line, as without --slurm
            outcome.result.notebook = given.get(outcome.notebook, outcome.notebook)
        for task in report.retried:
            print(f"cudakit grade: task {task.job} ended {task.state}, run again",
                  file=sys.stderr)
        print(f"cudakit grade: report in {report.folder}/report.json", file=sys.stderr)
        if not args.json:
            print("\n".join(format_text(o.result) for o in report.outcomes))
        return report.outcomes
    if args.results is None:
        from .compiler import cache_dir

        args.results = cache_dir() / "grades"

    notes = set()

    def show(outcome):
        note = outcome.result.note
        if note and note not in notes:
            notes.add(note)
            tqdm.write(f"cudakit grade: {note}", file=sys.stderr)
        if not args.json:
            tqdm.write(format_text(outcome.result))

    return grade_many(args.notebooks, options, jobs=args.jobs, results=args.results,
                      resume=args.resume, on_done=show)


def _grade(args) -> int:
    from .grading.batch import Options

    options = Options(args.solutions, args.cell_timeout, args.timeout, args.backend,
                      sandbox=False if args.no_sandbox else None, output_dir=args.output)
    try:
        outcomes = _outcomes(args, options)
    except (CudakitError, ValueError) as error:
        print(f"cudakit grade: {error}", file=sys.stderr)
        return 1
    status = 0
    for outcome in outcomes:
        if outcome.error:
            print(f"cudakit grade: {outcome.notebook}: {outcome.error}", file=sys.stderr)
            status = 1
    if args.json:
        print(json.dumps([o.result.to_dict() for o in outcomes], indent=2))
    return status


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cudakit`` console script."""
    args = _parser().parse_args(argv)
    if args.command == "course":
        from .course.cli import run as course

        return course(args)
    return _grade(args)
