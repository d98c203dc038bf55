"""``cudakit course``: make or update an nbgrader course from ``solutions/``.

    cudakit course ~/cuda101 --course-id cuda101 [--solutions solutions] [--exchange DIR]

Then, in the course folder, nbgrader's own commands: ``nbgrader generate_assignment
01_first_kernel``, ``nbgrader release_assignment 01_first_kernel``, ... (deploy/INSTRUCTORS.md).

>>> import argparse
>>> commands = argparse.ArgumentParser().add_subparsers(dest="command")
>>> add_parser(commands).parse_args(["c", "--course-id", "x"]).course_id
'x'
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(commands) -> argparse.ArgumentParser:
    """Add the ``course`` subcommand to the ``cudakit`` parser's subparsers."""
    from ..grading.grader import default_solutions

    course = commands.add_parser(
        "course", help="make or update an nbgrader course from the solution notebooks",
        description="Write COURSE_DIR/source/<exercise>/<exercise>.ipynb for every solution "
                    "notebook and COURSE_DIR/nbgrader_config.py (course id, exchange, cudakit's "
                    "nbgrader steps). Safe to run again: it never touches grades or submissions.")
    course.add_argument("course_dir", metavar="COURSE_DIR", type=Path)
    course.add_argument("--course-id", required=True, help="nbgrader's course id, e.g. cuda101")
    course.add_argument("--solutions", type=Path, default=default_solutions(), metavar="DIR",
                        help="folder of solution notebooks (default: %(default)s)")
    course.add_argument("--exchange", type=Path, metavar="DIR",
                        help="nbgrader's exchange folder (default: /srv/nbgrader/exchange)")
    course.add_argument("--only", nargs="+", metavar="NAME",
                        help="only these exercises (file names without .ipynb)")
    return course


def run(args) -> int:
    """Carry out ``cudakit course``; prints what changed."""
    from ..errors import CudakitError
    from .build import build_course

    try:
        report = build_course(args.solutions, args.course_dir, args.course_id,
                              exchange=args.exchange, only=args.only)
    except (CudakitError, ValueError, OSError) as error:
        print(f"cudakit course: {error}", file=sys.stderr)
        return 1
    for name in report.written:
        print(f"source/{name}: written")
    for name in report.unchanged:
        print(f"source/{name}: unchanged")
    print(f"nbgrader_config.py: {report.config}")
    return 0
