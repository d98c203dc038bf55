"""Helpers for the emulator tests: compile a source and launch one of its kernels."""

from __future__ import annotations

import numpy as np
import pytest

from cudakit import emu


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def build(source: str, options=()):
    """An emulator module of ``source`` (plain C++, as %%cuda cells write it)."""
    return emu.SourceModule(source, options=list(options), no_extern_c=True)
