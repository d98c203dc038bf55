"""tools/merge-gpu-outputs: the GPU's outputs go into the cells nbval ignores, with an
execution count (nbval refuses stored outputs of a cell it takes as never run), and nothing
is written when a checked cell prints differently on the GPU."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

import nbformat

TOOL = Path(__file__).resolve().parents[2] / "tools" / "merge-gpu-outputs"


def _tool():
    loader = importlib.machinery.SourceFileLoader("merge_gpu_outputs", str(TOOL))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _notebook(path: Path, timing: str | None, count: int | None, checked: str) -> Path:
    timed = nbformat.v4.new_code_cell("# NBVAL_IGNORE_OUTPUT\nprint(time)", execution_count=count)
    if timing is not None:
        timed.outputs = [nbformat.v4.new_output("stream", name="stdout", text=timing)]
    check = nbformat.v4.new_code_cell("print(ok)", execution_count=1)
    check.outputs = [nbformat.v4.new_output("stream", name="stdout", text=checked)]
    nbformat.write(nbformat.v4.new_notebook(cells=[check, timed]), path)
    return path


def test_gpu_outputs_fill_an_unrun_ignored_cell(tmp_path):
    tool = _tool()
    stored = _notebook(tmp_path / "stored.ipynb", None, None, "True\n")
    executed = _notebook(tmp_path / "gpu.ipynb", "3.0 ms\n", 7, "True\n")
    copied, problems = tool.merge(stored, executed, tool.sanitizers())
    assert (copied, problems) == (1, [])
    cell = nbformat.read(stored, as_version=4).cells[1]
    assert cell.outputs[0].text == "3.0 ms\n" and cell.execution_count == 7


def test_a_checked_cell_that_differs_blocks_the_merge(tmp_path):
    tool = _tool()
    stored = _notebook(tmp_path / "stored.ipynb", None, None, "True\n")
    executed = _notebook(tmp_path / "gpu.ipynb", "3.0 ms\n", 7, "False\n")
    copied, problems = tool.merge(stored, executed, tool.sanitizers())
    assert problems and "False" in problems[0]
    assert nbformat.read(stored, as_version=4).cells[1].outputs == []
