"""The counting rules against the H100: hand-derived traces must give ncu's exact numbers."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic import cases

from cudakit.analysis import counting
from cudakit.analysis.report import NCU_METRICS, from_trace
from cudakit.emu.trace import AccessBatch

SYNTHETIC = cases()


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_synthetic_trace_matches_ncu(name, measured):
    report = from_trace(SYNTHETIC[name].trace)
    want = measured["cases"][name]["metrics"]
    got = {k: report.metrics[k] for k in NCU_METRICS}
    assert got == {k: want[k] for k in NCU_METRICS}


def test_synthetic_cases_cover_most_of_the_suite(measured):
    assert len(SYNTHETIC) >= 50 and set(SYNTHETIC) <= set(measured["cases"])


def _batch(address, size, mask=None, space="shared"):
    address = np.asarray(address, dtype=np.uint64).reshape(-1, 32)
    warps = address.shape[0]
    mask = np.ones((warps, 32), bool) if mask is None else np.asarray(mask).reshape(warps, 32)
    return AccessBatch("k", 1, 1, 0, space, "ld", size, np.zeros((warps, 3), int),
                       np.zeros(warps, int), mask, address)


def test_inactive_lanes_touch_nothing():
    lanes = np.arange(32)
    far = np.where(lanes < 4, lanes * 4, 1 << 20)  # lanes 4.. would be far away
    b = _batch(far, 4, lanes < 4, space="global")
    assert counting.sectors(b)[0] == 1 and counting.bytes_used(b)[0] == 16


def test_warp_without_active_lanes_makes_no_request():
    b = _batch(np.zeros(64), 4, np.zeros(64, bool), space="global")
    assert counting.requests(b).tolist() == [0, 0]
    assert counting.sectors(b).tolist() == [0, 0]
    assert counting.wavefronts(b).tolist() == [0, 0]


def test_same_word_is_broadcast_not_a_conflict():
    assert counting.wavefronts(_batch(np.zeros(32), 4))[0] == 1
    # four distinct words in bank 0, each read by eight lanes: a 4-way conflict
    assert counting.wavefronts(_batch(np.arange(32) % 4 * 128, 4))[0] == 4


def test_wide_accesses_are_served_in_half_warps():
    # 16-byte loads, two distinct addresses, one per half-warp: two wavefronts (H100: matmul)
    assert counting.wavefronts(_batch(np.arange(32) // 16 * 64, 16))[0] == 2
    # the same two addresses spread over both halves need two wavefronts per half
    assert counting.wavefronts(_batch(np.arange(32) % 2 * 64, 16))[0] == 2
    assert counting.ideal_wavefronts(_batch(np.arange(32) * 16, 16))[0] == 4
