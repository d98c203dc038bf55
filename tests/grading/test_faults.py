"""A kernel that crashes, hangs or does not compile loses its test, with the reason, and
grading goes on with the next test (after a fresh kernel process where needed)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from cudakit.grading import grade
from cudakit.grading.exercise import grade_id

ROOT = Path(__file__).resolve().parents[2]
# Only the hidden test's launch with n = 97 (block 96) meets the fault; test_gpu_add never does.
GUARD = "int i = blockIdx.x * blockDim.x + threadIdx.x;"
FAULTS = {
    "far_out_of_bounds": (GUARD + "\n    if (n == 97) { c[i + (1 << 28)] = 1.0f; }",
                          ("out-of-bounds", "crashed the GPU context")),
    # atomics keep nvcc from deleting the loop (it removed a spin on a volatile local)
    "endless_loop": (GUARD + "\n    if (n == 97) { while (true) { atomicAdd(&c[0], 0.0f); } }",
                     ("never finished", "did not finish within the time limit")),
}


def _notebook(tmp_path, old, new):
    nb = nbformat.read(ROOT / "solutions" / "01_first_kernel.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if grade_id(c) == "add_arrays"]
    assert cell.source.count(old) == 1
    cell.source = cell.source.replace(old, new)
    path = tmp_path / "01_first_kernel.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_loses_only_its_test(tmp_path, fault):
    code, reasons = FAULTS[fault]
    result = grade(_notebook(tmp_path, GUARD, code), solutions=ROOT / "solutions",
                   cell_timeout=30)
    tests = {t.name: t for t in result.tests}
    assert tests["test_kernel"].score == tests["test_kernel"].max_score
    assert tests["test_kernel_sizes"].score == 0.0
    assert any(r in tests["test_kernel_sizes"].feedback for r in reasons), tests
    assert tests["test_gpu_add"].score == tests["test_gpu_add"].max_score, tests["test_gpu_add"]


@pytest.mark.slow
def test_compile_error_is_named_and_every_test_scores_zero(tmp_path):
    result = grade(_notebook(tmp_path, "c[i] = a[i] + b[i];", "c[i] = a[i] + ;"),
                   solutions=ROOT / "solutions")
    assert result.score == 0.0
    assert all("does not compile" in t.feedback for t in result.tests), result.tests
