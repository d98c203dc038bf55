"""The diagnostics bundle that lets JupyterLab mark a %%cuda cell's lines."""

from __future__ import annotations

import numpy as np
import pytest
from IPython.core.displaypub import CapturingDisplayPublisher

from cudakit.diagnostics import MIME_TYPE


@pytest.fixture
def published(shell):
    """The display bundles a cell publishes (the shell's publisher swapped for a recorder)."""
    saved = shell.display_pub
    shell.display_pub = CapturingDisplayPublisher()
    yield shell.display_pub.outputs
    shell.display_pub = saved


def bundles(outputs) -> list[tuple[dict, dict]]:
    return [(o["data"][MIME_TYPE], o["metadata"]) for o in outputs if MIME_TYPE in o["data"]]


def test_compile_error_bundle_points_at_the_cells_line_and_column(shell, published):
    cell = "__global__ void k(float *x) {\n    x[threadIdx.x] = two;\n}\n"
    result = shell.run_cell(f"%%cuda --name broken\n{cell}", cell_id="cell-a")
    assert result.error_in_exec is not None
    [(data, metadata)] = bundles(published)
    assert data["error"] == "CompileError" and "kernel" not in data
    [problem] = data["diagnostics"]
    # line 1 is the %%cuda line; "two" starts at column 22 of "    x[threadIdx.x] = two;"
    assert (problem["line"], problem["column"]) == (3, 22)
    assert problem["message"] == 'identifier "two" is undefined'
    assert (problem["severity"], problem["source"]) == ("error", "nvcc")
    assert metadata == {}  # the running cell itself


def test_memcheck_error_of_a_launch_names_the_kernels_cell(shell, published, monkeypatch):
    cell = (
        "__global__ void fill_past(float *a, int n)\n{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    a[i] = 1.0f;\n}\n"
    )
    assert shell.run_cell(f"%%cuda --name past\n{cell}", cell_id="cuda-cell").success
    shell.user_ns["np"] = np
    launch = (
        "from cudakit import cuda\n"
        "d = cuda.mem_alloc(4 * 40)\n"
        "fill_past(d, 40, grid=(1,), block=(64,))\n"
    )
    result = shell.run_cell(launch, cell_id="launch-cell")
    assert type(result.error_in_exec).__name__ == "MemcheckError"
    [(data, metadata)] = bundles(published)
    assert data["kernel"] == "fill_past" and data["error"] == "MemcheckError"
    [problem] = data["diagnostics"]
    assert problem["line"] == 5 and problem["source"] == "memcheck"  # a[i] = 1.0f;
    assert "out of bounds write" in problem["message"]
    assert metadata == {MIME_TYPE: {"cell_id": "cuda-cell"}}


def test_errors_without_cell_lines_publish_nothing(shell, published):
    cell = "%%cuda --name fine\n__global__ void fine(int *a) { a[0] = 1; }\n"
    assert shell.run_cell(cell).success
    result = shell.run_cell("fine(1.5, grid=(1,), block=(1,))")  # an argument error: no line
    assert type(result.error_in_exec).__name__ == "ArgumentError"
    assert bundles(published) == []
