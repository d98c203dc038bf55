"""Auto-graded exercises: the student version of a solution notebook, and the grader.

>>> from cudakit.grading import make_student, grade  # doctest: +SKIP
>>> grade("exercises/01_first_kernel.ipynb").score  # doctest: +SKIP
0.0

Exercises follow nbgrader's conventions (see ``exercise``); ``cudakit grade`` is
the command line (``cudakit.cli``); test cells use ``checks``.

Grading runs each submission in two bubblewrap sandboxes: the participant's Python in one,
the tests in a judge where no participant Python runs (``session``, ``judge``, ``participant``,
``served``, ``sandbox``, ``wire``; the design with a picture is in ``cudakit/grading/README.md``).
"""

from __future__ import annotations

import importlib

# public name -> module that defines it, imported on first use: the test cells' own
# ``from cudakit.grading import checks`` then stays light (nbformat takes seconds to import)
_LAZY = {
    "ExerciseFormatError": "..errors",
    "answer_cell": ".exercise",
    "check_notebook": ".exercise",
    "graded_cell": ".exercise",
    "graded_tests": ".exercise",
    "locked_cell": ".exercise",
    "make_student": ".exercise",
    "NotebookResult": ".grader",
    "TestResult": ".grader",
    "grade": ".grader",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module 'cudakit.grading' has no attribute {name!r}")
