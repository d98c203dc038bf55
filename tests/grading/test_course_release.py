"""exercises/ is exactly what the generator makes from solutions/, and its kernels compile."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from cudakit.grading import graded_tests
from cudakit.grading.exercise import is_answer
from cudakit.grading.regions import is_cuda
from cudakit.grading.release import release

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


def test_exercises_are_generated_from_solutions():
    stale = release(ROOT / "solutions", ROOT / "exercises", check=True)
    assert stale == [], f"run tools/make-exercises: {[p.name for p in stale]} differ"


def test_every_exercise_has_hidden_tests_and_points():
    assert len(SOLUTIONS) >= 11
    for path in SOLUTIONS:
        nb = nbformat.read(path, as_version=4)
        tests = graded_tests(nb)
        assert tests and all(t.points > 0 for t in tests), path.name
        assert any("BEGIN HIDDEN TESTS" in c.source for c in nb.cells), path.name


def _student_cuda_cells():
    for path in sorted((ROOT / "exercises").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if is_answer(cell) and is_cuda(cell.source):
                yield pytest.param(cell.source, id=f"{path.stem}:{cell.metadata.nbgrader.grade_id}")


@pytest.mark.skipif(shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists(),
                    reason="needs nvcc")
@pytest.mark.parametrize("source", list(_student_cuda_cells()))
def test_student_skeleton_compiles(source):
    from cudakit.compiler import compile as nvcc_compile
    from cudakit.magic import parse_line

    line, _, body = source.partition("\n")
    _, options = parse_line(line.removeprefix("%%cuda"))
    assert nvcc_compile(body, options).kernels
