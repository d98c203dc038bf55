"""Shared pytest setup: GPU-marked tests skip cleanly where there is no device."""

from __future__ import annotations

import pytest

from cudakit.backend import gpu_available


def pytest_collection_modifyitems(config, items):
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device and PyCUDA (run tools/gpu-check there)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
