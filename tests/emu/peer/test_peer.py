"""Kernels from NVIDIA's cuda-samples, unchanged, on the emulator against NumPy, and (once
recorded with ``record_h100.py`` on the device) against the H100's outputs."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from cudakit import emu

from .cases import CASES, KERNELS, run

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "h100_peer.npz"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_peer_kernel_matches_numpy(case):
    outs, host = run(case, emu)
    case.check(outs, host)


def test_suite_is_large_and_sourced():
    kernels = {re.split(r"[<(]", c.kernel)[0] for c in CASES}
    assert len(kernels) >= 40
    for path in KERNELS.glob("*.cu"):
        head = path.read_text().splitlines()[:3]
        assert "github.com/NVIDIA/cuda-samples" in head[0] and "lines" in head[1]
    assert "Redistribution" in (KERNELS / "LICENSE-cuda-samples").read_text()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_peer_kernel_reproduces_the_h100(case):
    if not FIXTURE.exists():
        pytest.skip("no H100 recording yet: run tests/emu/peer/record_h100.py on the device")
    rec = np.load(FIXTURE)
    names = sorted((k for k in rec.files if k.startswith(case.name + "/in")),
                   key=lambda k: int(k.rsplit("in", 1)[1]))
    host = [rec[k][()] if rec[k].ndim == 0 else rec[k] for k in names]
    outs, _ = run(case, emu, host)
    for i, got in enumerate(outs):
        if i in case.vary:
            continue
        gpu = rec[f"{case.name}/out{i}"]
        if case.rtol:
            np.testing.assert_allclose(got, gpu, rtol=case.rtol, atol=case.rtol)
        else:
            np.testing.assert_array_equal(got, gpu)
