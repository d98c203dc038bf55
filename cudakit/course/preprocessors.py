"""nbgrader's own steps, with the changes a CUDA course needs.

* ``ClearCudaSolutions`` replaces nbgrader's ``ClearSolutions`` in
  ``nbgrader generate_assignment``: a solution region becomes the skeleton of
  ``cudakit.grading.regions`` (its TODO and SKELETON lines), so a ``%%cuda`` cell
  keeps a kernel that compiles instead of nbgrader's Python stub. Python regions get
  the same treatment, so nbgrader releases exactly what ``exercises/`` holds.
* ``CudakitGrade`` replaces nbgrader's ``Execute`` in ``nbgrader autograde``: the
  cudakit grader (``cudakit.grading.grade``) runs the submission against the
  assignment's source notebook, and each test cell gets an output that nbgrader's
  ``SaveAutoGrades`` turns into the same score: an error with the grader's feedback
  for zero, the points as a result for partial credit, a ``passed`` line for full marks.
  The gradebook, formgrader, ``generate_feedback`` and ``export`` then work unchanged.
* ``generate_feedback`` also runs nbgrader's ``ClearHiddenTests``, so the feedback shows the
  grader's reasons but not the hidden tests, and the exercise can be used again next term.

``configure(c)`` puts them into an nbgrader config object (``cudakit course`` writes a
``nbgrader_config.py`` that calls it).

>>> from traitlets.config import Config
>>> c = configure(Config())
>>> [p.__name__ for p in c.GenerateAssignment.preprocessors][2:4]
['LockCells', 'ClearCudaSolutions']
>>> "CudakitGrade" in [p.__name__ for p in c.Autograde.autograde_preprocessors]
True
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat
from nbgrader.converters import Autograde, GenerateAssignment, GenerateFeedback
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import (
    ClearHiddenTests,
    ClearSolutions,
    Execute,
    GetGrades,
    NbGraderPreprocessor,
)
from traitlets import Enum, Float
from traitlets.config import Config

from ..backend import BACKENDS
from ..grading.exercise import grade_id, is_test
from ..grading.grader import CELL_TIMEOUT, NOTEBOOK_TIMEOUT, NotebookResult, TestResult, grade
from ..grading.regions import has_markers, skeleton


class ClearCudaSolutions(ClearSolutions):
    """nbgrader's ``ClearSolutions`` with cudakit's skeletons for code regions."""

    def _replace_solution_region(self, cell, language: str) -> bool:
        if cell.cell_type == "code" and has_markers(cell.source):
            cell.source = skeleton(cell.source, f"cell {grade_id(cell) or '(no grade_id)'}")
            return True
        return super()._replace_solution_region(cell, language)


def score_output(test: TestResult):
    """The cell output from which nbgrader's ``determine_grade`` reads ``test``'s score.

    >>> score_output(TestResult("t", 0.0, 2.0, "wrong result")).output_type
    'error'
    >>> score_output(TestResult("t", 1.5, 2.0, "partly")).data["text/plain"]
    '1.5'
    """
    if test.score >= test.max_score:
        return nbformat.v4.new_output("stream", name="stdout", text=f"{test.feedback}\n")
    if test.score <= 0:
        return nbformat.v4.new_output("error", ename="Failed", evalue=test.feedback,
                                      traceback=[f"Failed: {test.feedback}"])
    return nbformat.v4.new_output("execute_result", data={"text/plain": f"{test.score:g}"},
                                  execution_count=None)


def record(nb, result: NotebookResult) -> None:
    """Give each test cell of ``nb`` the output of its result in ``result`` (by grade_id).

    A test cell the grader did not report (it cannot happen with the same source
    notebook) gets an error, so it never earns points by accident.
    """
    tests = {t.name: t for t in result.tests}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs = []
        if is_test(cell):
            test = tests.get(grade_id(cell)) or TestResult(
                grade_id(cell), 0.0, 1.0, "the grader did not report this test")
            cell.outputs = [score_output(test)]


class CudakitGrade(NbGraderPreprocessor):
    """Autograde with the cudakit grader instead of nbgrader's ``Execute``."""

    backend = Enum(list(BACKENDS), default_value=None, allow_none=True,
                   help="engine for the kernels: 'gpu', 'emu', or None for the GPU when "
                        "present, else the emulator").tag(config=True)
    cell_timeout = Float(CELL_TIMEOUT, help="seconds per cell").tag(config=True)
    timeout = Float(NOTEBOOK_TIMEOUT, help="seconds per notebook").tag(config=True)

    def source_notebook(self, resources) -> Path:
        """The instructor's notebook in ``source/`` that this submission answers."""
        info = resources["nbgrader"]
        coursedir = CourseDirectory(config=self.config)
        folder = coursedir.format_path(coursedir.source_directory, ".", info["assignment"])
        return Path(folder) / f"{info['notebook']}.ipynb"

    def preprocess(self, nb, resources):
        source = self.source_notebook(resources)
        with tempfile.TemporaryDirectory(prefix="cudakit-nbgrader-") as folder:
            submission = Path(folder) / source.name
            nbformat.write(nb, submission)
            result = grade(submission, source, backend=self.backend,
                           cell_timeout=self.cell_timeout, timeout=self.timeout)
        self.log.info("cudakit grade %s (%s): %g / %g", source.name,
                      resources["nbgrader"]["student"], result.score, result.max_score)
        record(nb, result)
        return nb, resources


def _replace(converter: type, trait: str, old: type, new: list[type]) -> list:
    """nbgrader's default steps of ``converter`` with ``old`` replaced by the steps ``new``."""
    steps = list(converter.class_traits()[trait].default())
    if old not in steps:
        raise ValueError(f"nbgrader's steps have no {old.__name__}: {steps}")
    return [n for step in steps for n in (new if step is old else [step])]


def configure(c: Config) -> Config:
    """Put cudakit's steps into nbgrader's config ``c`` (see the module docstring); returns it."""
    c.GenerateAssignment.preprocessors = _replace(
        GenerateAssignment, "preprocessors", ClearSolutions, [ClearCudaSolutions])
    c.Autograde.autograde_preprocessors = _replace(
        Autograde, "autograde_preprocessors", Execute, [CudakitGrade])
    c.GenerateFeedback.preprocessors = _replace(
        GenerateFeedback, "preprocessors", GetGrades, [GetGrades, ClearHiddenTests])
    return c
