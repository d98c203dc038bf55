"""Exercise notebooks in nbgrader's format, and the student version made from a solution.

Cells carry nbgrader's metadata (schema 3) under ``cell.metadata.nbgrader``:

* answer cells: ``solution: true`` (code with solution regions, or a Markdown answer);
* test cells: ``grade: true, locked: true, points: N``, optionally with hidden tests;
* locked cells: ``locked: true`` (instructions and setup the student must not change).

Every answer and test cell has a unique ``grade_id``. An instructor can release
these notebooks with nbgrader itself; ``make_student`` does what nbgrader's
``ClearSolutions``, ``ClearHiddenTests``, ``ClearOutput`` and ``LockCells`` do,
except that a ``%%cuda`` region keeps a skeleton that still compiles.

>>> import nbformat
>>> nb = nbformat.v4.new_notebook(cells=[
...     answer_cell("### BEGIN SOLUTION\\nx = 2\\n### END SOLUTION", "ans"),
...     graded_cell("assert x == 2", "test_x", points=1)])
>>> [t.name for t in graded_tests(nb)], [t.points for t in graded_tests(nb)]
(['test_x'], [1.0])
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import nbformat

from ..errors import ExerciseFormatError
from .regions import HIDDEN_TESTS, TEXT_STUB, drop_regions, has_markers, skeleton

SCHEMA_VERSION = 3


@dataclass(frozen=True)
class TestInfo:
    """One graded test cell: its ``grade_id`` and its points."""

    __test__ = False  # not a pytest class

    name: str
    points: float


def meta(cell) -> dict:
    """The cell's nbgrader metadata (empty for a plain cell)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def is_answer(cell) -> bool:
    """A cell the student writes (``solution: true``)."""
    return bool(meta(cell).get("solution"))


def is_test(cell) -> bool:
    """An autograded test cell (``grade: true`` and not an answer)."""
    return bool(meta(cell).get("grade")) and not is_answer(cell)


def grade_id(cell) -> str | None:
    """The cell's ``grade_id``, or None for a cell nbgrader does not track."""
    return meta(cell).get("grade_id")


def _nbgrader(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    data = {"grade": grade, "grade_id": grade_id, "locked": locked,
            "schema_version": SCHEMA_VERSION, "solution": solution, "task": False}
    if points is not None:
        data["points"] = points
    return {"nbgrader": data}


def answer_cell(source: str, grade_id: str, markdown: bool = False):
    """A new answer cell (code, or Markdown with ``markdown=True``)."""
    make = nbformat.v4.new_markdown_cell if markdown else nbformat.v4.new_code_cell
    return make(source, metadata=_nbgrader(grade_id, solution=True))


def graded_cell(source: str, grade_id: str, points: float):
    """A new autograded test cell worth ``points``."""
    return nbformat.v4.new_code_cell(
        source, metadata=_nbgrader(grade_id, grade=True, locked=True, points=points)
    )


def locked_cell(source: str, grade_id: str, markdown: bool = False):
    """A new read-only cell (instructions or setup)."""
    make = nbformat.v4.new_markdown_cell if markdown else nbformat.v4.new_code_cell
    return make(source, metadata=_nbgrader(grade_id, locked=True))


def _where(cell, index: int) -> str:
    name = grade_id(cell)
    return f"cell {index}" + (f" ({name!r})" if name else "")


def check_notebook(nb, name: str = "notebook") -> None:
    """Raise ExerciseFormatError if ``nb`` breaks the conventions; return None if it is fine."""
    seen: set[str] = set()
    for index, cell in enumerate(nb.cells):
        where = f"{name}, {_where(cell, index)}"
        data = meta(cell)
        if data and not data.get("grade_id") and (data.get("solution") or data.get("grade")):
            raise ExerciseFormatError(f"{where}: an answer or test cell needs a grade_id")
        gid = data.get("grade_id")
        if gid in seen:
            raise ExerciseFormatError(f"{where}: grade_id {gid!r} is used twice")
        if gid:
            seen.add(gid)
        if data.get("solution") and data.get("grade"):
            raise ExerciseFormatError(
                f"{where}: manually graded answers (solution and grade) cannot be autograded"
            )
        if is_test(cell):
            points = data.get("points")
            if not isinstance(points, (int, float)) or points <= 0:
                raise ExerciseFormatError(f"{where}: a test cell needs points > 0, got {points!r}")
            drop_regions(cell.source, HIDDEN_TESTS, where)  # raises on broken markers
        if cell.cell_type == "code" and has_markers(cell.source) and not is_answer(cell):
            raise ExerciseFormatError(f"{where}: solution markers in a cell that is not an answer")


def graded_tests(nb) -> list[TestInfo]:
    """The graded tests of a notebook, in order."""
    return [TestInfo(grade_id(c), float(meta(c)["points"])) for c in nb.cells if is_test(c)]


def _student_cell(cell, where: str):
    cell = copy.deepcopy(cell)
    if is_answer(cell):
        if cell.cell_type == "markdown":
            cell.source = TEXT_STUB
        else:
            cell.source = skeleton(cell.source, where)
    elif is_test(cell):
        cell.source = drop_regions(cell.source, HIDDEN_TESTS, where)
    if meta(cell).get("locked"):
        cell.metadata["editable"] = False
        cell.metadata["deletable"] = False
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None
    return cell


def make_student(nb, name: str = "notebook"):
    """The student version of solution notebook ``nb`` (a new notebook; ``nb`` is untouched).

    >>> nb = nbformat.v4.new_notebook(cells=[
    ...     answer_cell("### BEGIN SOLUTION\\nx = 2\\n### END SOLUTION", "ans"),
    ...     graded_cell("assert x == 2\\n### BEGIN HIDDEN TESTS\\nassert x > 1\\n"
    ...               "### END HIDDEN TESTS", "t", points=1)])
    >>> [c.source for c in make_student(nb).cells]
    ['# YOUR CODE HERE\\nraise NotImplementedError()', 'assert x == 2']
    """
    check_notebook(nb, name)
    student = copy.deepcopy(nb)
    student.cells = [_student_cell(c, f"{name}, {_where(c, i)}") for i, c in enumerate(nb.cells)]
    return student

