"""Typical mistakes, each applied to a solution, lose the points of the test aimed at them.

Graded on the emulator, whose memcheck and racecheck see what a GPU run often hides (on the
H100, 8 of these mistakes passed: out-of-bounds reads of zeroed memory, races that timing hid).
Not listed: dropping the barrier between the histogram's shared atomics and the reads that
publish them, which neither the emulator (its racecheck leaves atomics out and its blocks run
in lockstep) nor the H100 run noticed.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from cudakit.grading import grade
from cudakit.grading.exercise import grade_id

ROOT = Path(__file__).resolve().parents[2]

# (notebook, answer cell, text in the solution, replacement, the test that must lose its points)
MISTAKES = [
    ("01_first_kernel", "add_arrays", "if (i < n)", "if (i <= n)", "test_kernel_sizes"),
    ("01_first_kernel", "add_arrays", "if (i < n) {", "{", "test_kernel_sizes"),
    ("01_first_kernel", "gpu_add", "(n + BLOCK - 1) // BLOCK", "n // BLOCK", "test_gpu_add"),
    ("02_pitch_2d", "add_matrices", "k = y * pitch + x", "k = y * width + x",
     "test_awkward_shapes"),
    ("02_pitch_2d", "add_matrices", "x < width && y < height", "x < width", "test_awkward_shapes"),
    ("03_shared_memory", "reverse_groups", "__syncthreads();", "", "test_full_groups"),
    ("03_shared_memory", "reverse_groups", "= tile[m - 1 - t]", "= tile[blockDim.x - 1 - t]",
     "test_partial_groups"),
    ("04_race_fix", "histogram", "atomicAdd(&local[data[i] % BINS], 1);",
     "local[data[i] % BINS] += 1;", "test_histogram"),
    ("05_occupancy_choice", "blocks_per_sm", "(warps + warps % 2)", "warps",
     "test_blocks_per_sm"),
    ("06_reduction_step", "block_sums", "        __syncthreads();\n    }", "    }",
     "test_block_sums"),
    ("06_reduction_step", "block_sums", "if (i < n) {", "{", "test_sizes_and_total"),
    ("07_transpose_tiles", "transpose", "= tile[threadIdx.x][threadIdx.y]",
     "= tile[threadIdx.y][threadIdx.x]", "test_transpose"),
    ("07_transpose_tiles", "transpose", "x < rows && y < cols", "x < cols && y < rows",
     "test_awkward_shapes"),
    ("08_tiled_matmul", "matmul", "        __syncthreads();\n    }", "    }", "test_matmul"),
    ("08_tiled_matmul", "matmul", "sb[j][threadIdx.x]", "sb[threadIdx.x][j]", "test_matmul"),
    ("08_tiled_matmul", "matmul", "row < m && ka < k", "row < m", "test_awkward_sizes"),
    ("09_streams_overlap", "scale_in_streams", "stream = cuda.Stream()",
     "stream = streams[0] if streams else cuda.Stream()", "test_streams"),
    ("10_stencil_halo", "smooth", "s[0] = in[i - 1];", "", "test_smooth"),
    ("11_nbody_tile", "forces", "        __syncthreads();\n    }", "    }", "test_forces"),
    ("11_nbody_tile", "forces", "int count = min((int)blockDim.x, n - start);",
     "int count = blockDim.x;", "test_forces_sizes"),
]


def _mutant(tmp_path, notebook, cell_id, old, new):
    nb = nbformat.read(ROOT / "solutions" / f"{notebook}.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if grade_id(c) == cell_id]
    assert cell.source.count(old) == 1, f"{old!r} should occur once in {notebook}:{cell_id}"
    cell.source = cell.source.replace(old, new)
    path = tmp_path / f"{notebook}.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("notebook, cell_id, old, new, target", MISTAKES,
                         ids=[f"mistake{i:02d}" for i in range(len(MISTAKES))])
def test_mistake_loses_the_targeted_points(tmp_path, notebook, cell_id, old, new, target):
    result = grade(_mutant(tmp_path, notebook, cell_id, old, new), solutions=ROOT / "solutions",
                   backend="emu")
    scores = {t.name: t for t in result.tests}
    assert scores[target].score == 0.0, scores[target]
    assert scores[target].feedback != "passed"
