"""Divergent control flow against gcc: random programs, each thread on its own path.

``tests/emu/fixtures/flow_programs.json`` was written by ``tests/emu/make_flow_fixture.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cudakit import emu

from .conftest import build

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "flow_programs.json").read_text())


@pytest.mark.parametrize("k", range(len(FIXTURE["programs"])))
def test_random_divergent_program_matches_gcc(k):
    device = "__device__ " + FIXTURE["programs"][k]
    src = device + """
    __global__ void run(unsigned int* out, unsigned int n) {
        unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
        if (t < n) out[t] = f(t);
    }"""
    n = FIXTURE["threads"]
    out = np.zeros(n, np.uint32)
    build(src).get_function("run")(emu.Out(out), np.uint32(n), grid=(2, 1), block=(48, 1, 1))
    assert out.tolist() == FIXTURE["results"][k]
