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


CHECKED = {  # kernel cell (line 1 is %%cuda), launch, error, source, lines marked
    "race": (
        "__global__ void racy_sum(float *a)\n{\n    __shared__ float s[64];\n"
        "    int t = threadIdx.x;\n    s[t] = a[t];\n"
        "    for (int k = 32; k > 0; k >>= 1) {\n        if (t < k) s[t] += s[t + k];\n    }\n"
        "    if (t == 0) a[0] = s[0];\n}\n",
        "racy_sum(cuda.to_device(np.ones(64, np.float32)), block=(64,), racecheck=True)",
        "RaceError", "racecheck", [6, 8],
    ),
    "barrier": (
        "__global__ void half_sync(int *a)\n{\n    if (threadIdx.x < 16) __syncthreads();\n"
        "    a[threadIdx.x] = 1;\n}\n",
        "half_sync(cuda.mem_alloc(128), block=(32,))",
        "BarrierError", "barrier check", [4],
    ),
    "timeout": (
        "__global__ void spin(volatile int *flag)\n{\n    while (flag[0] == 0) { }\n}\n",
        "spin(cuda.to_device(np.zeros(1, np.int32)), block=(1,), timeout=0.3)",
        "KernelTimeout", "time limit", [4],
    ),
}


@pytest.mark.parametrize("check", sorted(CHECKED))
def test_launch_checks_mark_the_lines_they_name(shell, published, check):
    cell, launch, error, source, lines = CHECKED[check]
    assert shell.run_cell(f"%%cuda --name {check}\n{cell}", cell_id=f"{check}-cell").success
    result = shell.run_cell(f"import numpy as np\nfrom cudakit import cuda\n{launch}")
    assert type(result.error_in_exec).__name__ == error
    [(data, metadata)] = bundles(published)
    assert [p["line"] for p in data["diagnostics"]] == lines
    assert {p["source"] for p in data["diagnostics"]} == {source}
    assert all(p["message"] == str(result.error_in_exec) for p in data["diagnostics"])
    assert metadata == {MIME_TYPE: {"cell_id": f"{check}-cell"}}
