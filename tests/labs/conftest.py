"""Load the labs' ``%%cuda`` cells on this engine, one module per cell as the magic does."""

from __future__ import annotations

import pytest

import cudakit
from benchmarks.common import cell_sources


@pytest.fixture(scope="module")
def lab_kernels():
    """``lab_kernels("21_stencil.ipynb")`` -> {kernel name: Kernel}, loaded once per module."""
    loaded: dict[str, dict] = {}

    def load(notebook: str) -> dict:
        if notebook not in loaded:
            loaded[notebook] = {}
            for body, options in cell_sources(notebook):
                loaded[notebook].update(cudakit.load(body, options))
        return loaded[notebook]

    return load
