"""The student version of a solution notebook: regions, hidden tests, metadata, errors."""

from __future__ import annotations

import nbformat
import pytest

from cudakit.grading import ExerciseFormatError, answer_cell, graded_cell, make_student
from cudakit.grading.exercise import check_notebook, graded_tests, locked_cell
from cudakit.grading.regions import skeleton

CUDA = """%%cuda
__global__ void scale(float *x, float a, int n) {
    // BEGIN SOLUTION
    // TODO: one thread per element
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // SKELETON: int i = 0;
    if (i < n) x[i] *= a;
    // END SOLUTION
}
__global__ void copy(float *y, const float *x, int n) {
  // BEGIN SOLUTION
  int i = threadIdx.x;
  if (i < n) y[i] = x[i];
  // END SOLUTION
}"""


def test_cuda_region_keeps_todo_and_skeleton_lines():
    assert skeleton(CUDA) == """%%cuda
__global__ void scale(float *x, float a, int n) {
    // TODO: one thread per element
    int i = 0;
}
__global__ void copy(float *y, const float *x, int n) {
  // YOUR CODE HERE
}"""


def test_python_region_gets_nbgraders_stub_indented():
    src = "def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n"
    assert skeleton(src) == "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()"


def _notebook():
    return nbformat.v4.new_notebook(cells=[
        locked_cell("Scale an array.", "intro", markdown=True),
        answer_cell(CUDA, "kernels"),
        answer_cell("A sentence.", "why", markdown=True),
        graded_cell("assert True\n### BEGIN HIDDEN TESTS\nassert 1 + 1 == 2\n"
                  "### END HIDDEN TESTS\nprint('ok')", "test_scale", points=3),
    ])


def test_student_version_clears_answers_hidden_tests_and_outputs():
    nb = _notebook()
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", text="ok\n")]
    nb.cells[3].execution_count = 4
    student = make_student(nb)
    assert "blockIdx" not in student.cells[1].source
    assert student.cells[2].source == "YOUR ANSWER HERE"
    assert student.cells[3].source == "assert True\nprint('ok')"
    assert student.cells[3].outputs == [] and student.cells[3].execution_count is None
    assert student.cells[3].metadata["editable"] is False
    assert student.cells[3].metadata["nbgrader"]["points"] == 3
    assert "1 + 1" in nb.cells[3].source  # the solution notebook is untouched
    assert graded_tests(student) == graded_tests(nb)


@pytest.mark.parametrize("source, message", [
    ("### BEGIN SOLUTION\nx = 1\n", "never closed"),
    ("x = 1\n### END SOLUTION", "without"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "inside a region"),
    ("x = 1", "needs a"),
])
def test_broken_solution_markers_are_named(source, message):
    nb = nbformat.v4.new_notebook(cells=[answer_cell(source, "ans")])
    with pytest.raises(ExerciseFormatError, match=message):
        make_student(nb)


@pytest.mark.parametrize("cells, message", [
    ([graded_cell("pass", "t", points=0)], "points > 0"),
    ([graded_cell("pass", "t", points=1), graded_cell("pass", "t", points=1)], "used twice"),
    ([nbformat.v4.new_code_cell("### BEGIN SOLUTION\nx=1\n### END SOLUTION")], "not an answer"),
    ([graded_cell("### BEGIN HIDDEN TESTS\npass", "t", points=1)], "never closed"),
])
def test_bad_metadata_is_named(cells, message):
    with pytest.raises(ExerciseFormatError, match=message):
        check_notebook(nbformat.v4.new_notebook(cells=cells))
