"""Shared pytest setup: GPU-marked tests skip cleanly where there is no device."""

from __future__ import annotations

import pytest

from cudakit.backend import gpu_available


@pytest.fixture(scope="module")
def shell():
    """An IPython shell with ``%load_ext cudakit`` done, as a notebook has it."""
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    ip = start_ipython() or get_ipython()  # one shell per process: a later module reuses it
    ip.run_line_magic("load_ext", "cudakit")
    return ip


def pytest_collection_modifyitems(config, items):
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device and PyCUDA (run tools/gpu-check there)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
