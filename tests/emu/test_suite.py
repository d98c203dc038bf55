"""The kernel suite on the emulator against NumPy, and on the H100 against the emulator."""

from __future__ import annotations

import numpy as np
import pytest

from cudakit import emu

from .suite import CASES, pycuda_engine, run_case


def assert_same(case, got, expected):
    for g, e in zip(got, expected, strict=True):
        assert g.shape == np.shape(e) or g.size == np.size(e)
        if case.exact:
            np.testing.assert_array_equal(g.reshape(-1), np.asarray(e).reshape(-1))
        else:
            np.testing.assert_allclose(g.reshape(-1), np.asarray(e).reshape(-1),
                                       rtol=case.rtol, atol=case.rtol)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_emulator_matches_numpy(case):
    got, expected = run_case(case, emu)
    assert_same(case, got, expected)


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_emulator_matches_h100(case):
    gpu, _ = run_case(case, pycuda_engine())
    mine, _ = run_case(case, emu)
    for g, m in zip(gpu, mine, strict=True):
        if case.exact:
            np.testing.assert_array_equal(m, g)
        else:
            np.testing.assert_allclose(m, g, rtol=case.rtol, atol=case.rtol)
