"""Auto-graded exercises: the student version of a solution notebook, and the grader.

>>> from cudakit.grading import make_student, grade  # doctest: +SKIP
>>> grade("exercises/01_first_kernel.ipynb").score  # doctest: +SKIP
0.0

Exercises follow nbgrader's conventions (see ``exercise``); ``cudakit grade`` is
the command line (``cudakit.cli``).
"""

from __future__ import annotations

from .errors import ExerciseFormatError
from .exercise import (
    answer_cell,
    check_notebook,
    graded_cell,
    graded_tests,
    locked_cell,
    make_student,
)
from .grader import NotebookResult, TestResult, grade

__all__ = [
    "ExerciseFormatError",
    "NotebookResult",
    "TestResult",
    "answer_cell",
    "check_notebook",
    "grade",
    "locked_cell",
    "make_student",
    "graded_cell",
    "graded_tests",
]
