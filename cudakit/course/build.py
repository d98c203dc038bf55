"""Turn ``solutions/`` into an nbgrader course folder.

Each solution notebook becomes one assignment named after it:
``solutions/01_first_kernel.ipynb`` -> ``<course>/source/01_first_kernel/01_first_kernel.ipynb``.
The course gets an ``nbgrader_config.py`` naming the course id, the exchange and
the cudakit steps (``cudakit.course.preprocessors.configure``). Running it again
updates changed source notebooks and adds new ones; it never touches the gradebook or
submissions, and keeps a config file that differs from its own (it says so).

>>> import tempfile
>>> from cudakit.grading.exercise import answer_cell, graded_cell
>>> with tempfile.TemporaryDirectory() as d:
...     src = Path(d, "solutions"); src.mkdir()
...     nbformat.write(nbformat.v4.new_notebook(cells=[
...         answer_cell("### BEGIN SOLUTION\\nx = 1\\n### END SOLUTION", "a"),
...         graded_cell("assert x == 1", "t", points=1)]), src / "ex.ipynb")
...     report = build_course(src, Path(d, "course"), "cuda101")
...     names = sorted(str(p.relative_to(d)) for p in Path(d, "course").rglob("*.*"))
>>> names
['course/nbgrader_config.py', 'course/source/ex/ex.ipynb']
>>> report.written, report.unchanged
(['ex'], [])
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..errors import ExerciseFormatError
from ..grading.exercise import check_notebook

CONFIG_NAME = "nbgrader_config.py"
CONFIG_MARK = "# written by `cudakit course`"
KEPT = "kept: it differs from what would be written (remove it to have it rewritten)"
COURSE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # nbgrader's exchange uses it in paths


@dataclass
class BuildReport:
    """What ``build_course`` did, by assignment name."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    config: str = "written"  # "written", "unchanged" or KEPT


def config_text(course_id: str, root: Path, exchange: Path | None) -> str:
    """The course's ``nbgrader_config.py``.

    >>> print(config_text("cuda101", Path("/home/t/cuda101"), None).splitlines()[-1])
    configure(c)
    """
    lines = [
        f"{CONFIG_MARK}; edit freely: a file that differs is never overwritten",
        "from cudakit.course.preprocessors import configure",
        "",
        "c = get_config()  # noqa: F821 - provided by nbgrader",
        f"c.CourseDirectory.course_id = {course_id!r}",
        f"c.CourseDirectory.root = {str(root)!r}",
    ]
    if exchange is not None:
        lines.append(f"c.Exchange.root = {str(exchange)!r}")
    lines += [
        "# cudakit's skeletons in generate_assignment, the cudakit grader in autograde",
        "# (backend, time limits: c.CudakitGrade.backend = 'emu', .cell_timeout, .timeout)",
        "configure(c)",
    ]
    return "\n".join(lines) + "\n"


def _write_config(path: Path, text: str) -> str:
    if path.is_file():
        return "unchanged" if path.read_text() == text else KEPT
    path.write_text(text)
    return "written"


def build_course(solutions: Path, course: Path, course_id: str, *,
                 exchange: Path | None = None, only: list[str] | None = None) -> BuildReport:
    """Write ``course/source/<assignment>/<assignment>.ipynb`` for each solution notebook
    (or those named in ``only``) and ``course/nbgrader_config.py``; see the module docstring."""
    if not COURSE_ID.match(course_id):
        raise ValueError(f"course id {course_id!r}: use letters, digits, '.', '_' and '-' only")
    notebooks = sorted(Path(solutions).glob("*.ipynb"))
    if only:
        missing = sorted(set(only) - {p.stem for p in notebooks})
        if missing:
            raise ExerciseFormatError(f"no solution notebook in {solutions} for: {missing}")
        notebooks = [p for p in notebooks if p.stem in only]
    if not notebooks:
        raise ExerciseFormatError(f"{solutions}: no solution notebooks (*.ipynb)")
    course = Path(course).resolve()
    report = BuildReport()
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        check_notebook(nb, str(path))
        target = course / "source" / path.stem / path.name
        text = nbformat.writes(nb) + "\n"
        if target.is_file() and target.read_text() == text:
            report.unchanged.append(path.stem)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        report.written.append(path.stem)
    exchange = Path(exchange).resolve() if exchange else None
    report.config = _write_config(course / CONFIG_NAME, config_text(course_id, course, exchange))
    return report
