"""Write the student notebooks of ``exercises/`` from the notebooks of ``solutions/``.

``tools/make-exercises`` runs ``main``; ``--check`` only reports notebooks that
differ from what would be written (CI fails on them).

>>> import tempfile, nbformat
>>> from cudakit.grading.exercise import answer_cell
>>> with tempfile.TemporaryDirectory() as d:
...     src, dst = Path(d, "solutions"), Path(d, "exercises")
...     src.mkdir()
...     nbformat.write(nbformat.v4.new_notebook(cells=[answer_cell(
...         "### BEGIN SOLUTION\\nx = 1\\n### END SOLUTION", "a")]), src / "ex.ipynb")
...     first, second = release(src, dst), release(src, dst)
>>> [p.name for p in first], second
(['ex.ipynb'], [])
"""

from __future__ import annotations

import argparse
from pathlib import Path

import nbformat

from .exercise import make_student


def student_text(solution: Path) -> str:
    """The student notebook of ``solution``, as the exact text written to disk."""
    nb = nbformat.read(solution, as_version=4)
    return nbformat.writes(make_student(nb, str(solution))) + "\n"


def release(solutions: Path, exercises: Path, check: bool = False) -> list[Path]:
    """Write (or with ``check``, only compare) every student notebook, and remove exercises
    whose solution is gone; returns the paths that changed (or would change)."""
    changed = []
    wanted = set()
    for solution in sorted(Path(solutions).glob("*.ipynb")):
        target = Path(exercises) / solution.name
        wanted.add(target.name)
        text = student_text(solution)
        if target.is_file() and target.read_text() == text:
            continue
        changed.append(target)
        if not check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    stale = [p for p in sorted(Path(exercises).glob("*.ipynb")) if p.name not in wanted]
    if not check:
        for path in stale:
            path.unlink()
    return changed + stale


def main(argv: list[str] | None = None) -> int:
    """Command line of ``tools/make-exercises``."""
    parser = argparse.ArgumentParser(prog="make-exercises", description=__doc__.split("\n")[0])
    parser.add_argument("--solutions", default="solutions", type=Path)
    parser.add_argument("--exercises", default="exercises", type=Path)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if exercises/ is out of date")
    args = parser.parse_args(argv)
    changed = release(args.solutions, args.exercises, check=args.check)
    for path in changed:
        print(("out of date: " if args.check else "updated: ") + str(path))
    return 1 if (args.check and changed) else 0
