"""Auto-graded exercises: the student version of a solution notebook, and the grader.

>>> from cudakit.grading import make_student, grade  # doctest: +SKIP
>>> grade("exercises/01_first_kernel.ipynb").score  # doctest: +SKIP
0.0

Exercises follow nbgrader's conventions (see ``exercise``); ``cudakit grade`` is
the command line (``cudakit.cli``); test cells use ``checks``.

What grading protects: the student's file never holds the hidden tests (they are
merged in from the solution notebook in the grader's process, see ``merge``); edits to
test cells count for nothing; the student's code runs in a separate kernel process
whose working folder is an empty temporary one, and scores are decided in the
grader's process from the kernel's replies. What it does not: the kernel runs as the
same user, so code written to cheat on purpose could read files that user can read
(such as ``solutions/``) or patch the helpers the tests call. Grade untrusted
submissions in a container or as a user without access to the solutions, as with
nbgrader.
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
