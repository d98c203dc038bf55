"""On a GPU machine: the judge's sandbox sees the GPU, every solution graded in the sandbox on
the GPU gets full marks, and an illegal address loses only its test (run by
tests/grading/gpu_sandbox_run.sh on the device machine)."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

from cudakit.grading import grade, sandbox
from cudakit.grading.exercise import grade_id
from cudakit.grading.sandbox import Limits, Sandbox

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(sandbox.bwrap() is None, reason="needs bubblewrap")]


def test_the_judge_sandbox_runs_kernels_on_the_gpu():
    probe = ("from cudakit.backend import backend_name\nfrom cudakit.device import device_info\n"
             "print(backend_name()); print(device_info())")
    confined = Sandbox(Limits(), gpu=True).spawn([sys.executable, "-c", probe])
    confined.process.stdin.close()
    assert confined.process.wait(timeout=120) == 0
    confined.close()
    lines = confined.output.decode().splitlines()
    assert lines[0] == "gpu", lines


@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_solution_scores_full_marks_in_the_sandbox_on_the_gpu(path):
    result = grade(path, solutions=ROOT / "solutions", backend="gpu", sandbox=True)
    failed = [f"{t.name}: {t.feedback}" for t in result.tests if t.score != t.max_score]
    assert result.max_score > 0 and not failed, failed


def test_illegal_address_loses_only_its_test(tmp_path):
    nb = nbformat.read(ROOT / "solutions" / "01_first_kernel.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if grade_id(c) == "add_arrays"]
    guard = "int i = blockIdx.x * blockDim.x + threadIdx.x;"
    fault = "\n    if (n == 97) { c[i + (1 << 28)] = 1.0f; }"  # only in a hidden test's launch
    cell.source = cell.source.replace(guard, guard + fault)
    path = tmp_path / "01_first_kernel.ipynb"
    nbformat.write(nb, path)
    result = grade(path, solutions=ROOT / "solutions", backend="gpu", sandbox=True,
                   cell_timeout=60)
    tests = {t.name: t for t in result.tests}
    assert tests["test_kernel"].score == tests["test_kernel"].max_score, tests
    assert tests["test_kernel_sizes"].score == 0.0
    assert "crashed the GPU context" in tests["test_kernel_sizes"].feedback, tests
    assert tests["test_gpu_add"].score == tests["test_gpu_add"].max_score, tests
