"""Replay the suite's inputs recorded on the H100 and compare with the H100's outputs.

The fixture comes from ``python3 -m tests.emu.record_h100 tests/emu/fixtures/h100_suite.npz``
run on the device machine; until it is recorded these tests skip.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cudakit import emu

from .suite import CASES, run_case

FIXTURE = Path(__file__).parent / "fixtures" / "h100_suite.npz"


@pytest.fixture(scope="module")
def recorded():
    if not FIXTURE.exists():
        pytest.skip("no H100 recording yet: run tests/emu/record_h100.py on the device machine")
    return np.load(FIXTURE)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_emulator_reproduces_the_h100(case, recorded):
    names = sorted(k for k in recorded.files if k.startswith(case.name + "/in"))
    host = [recorded[k][()] if recorded[k].ndim == 0 else recorded[k] for k in
            sorted(names, key=lambda k: int(k.rsplit("in", 1)[1]))]
    mine, _ = run_case(case, emu, host)
    for i, m in enumerate(mine):
        gpu = recorded[f"{case.name}/out{i}"]
        if case.exact:
            np.testing.assert_array_equal(m, gpu)
        else:
            np.testing.assert_allclose(m, gpu, rtol=case.rtol, atol=case.rtol)
