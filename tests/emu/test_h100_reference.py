"""The emulator against references measured on the H100 (tests/emu/fixtures, tests/emu/gpu)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cudakit import emu

HERE = Path(__file__).parent
RACE_SOURCE = (HERE / "gpu" / "warp_race.cu").read_text()
RACE_LOG = (HERE / "fixtures" / "h100_racecheck.log").read_text()


def test_fixture_shows_what_compute_sanitizer_reports():
    """tests/emu/gpu/racecheck.sh on the H100: hazards in the volatile warp reduction only."""
    first_run = RACE_LOG.split("=== compute-sanitizer --tool racecheck --racecheck-report")[0]
    assert "Race reported between Read access at reduce_volatile" in first_run
    assert "reduce_syncwarp(" not in RACE_LOG
    assert "(Warp Level Programming) Potential RAW hazard" in RACE_LOG


def test_emulator_reports_the_same_warp_level_hazard():
    mod = emu.SourceModule(RACE_SOURCE, no_extern_c=True)
    data = emu.to_device(np.ones(64, np.float32))
    out = emu.mem_alloc(8)
    with pytest.raises(emu.RaceError, match="read-after-write.*thread \\(16,0,0\\) wrote"):
        mod.get_function("reduce_volatile")(data, out, block=(64, 1, 1))
    mod.get_function("reduce_syncwarp")(data, out, block=(64, 1, 1))
    # the warp sums s[0..7] only (k = 32, 16, 8): 8 lanes of 8 values each
    assert emu.from_device(out, (2,), np.float32)[1] == 8
