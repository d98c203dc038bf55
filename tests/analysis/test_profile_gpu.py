"""cudakit.profile on a real GPU must read back the counters stored from the H100 suite run."""

from __future__ import annotations

import pytest
from suite import CASES, SOURCE_PATH

from cudakit.analysis import profile
from cudakit.analysis.report import NCU_METRICS

SOURCE = SOURCE_PATH.read_text()


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["load_offset1_f32", "transpose_tiled", "shared_f4_stride2",
                                  "reduce_interleaved"])
def test_profile_matches_the_stored_measurement(name, measured):
    case = CASES[name]
    report = profile(SOURCE, case.kernel, grid=case.grid, block=case.block, args=case.args())
    want = measured["cases"][name]["metrics"]
    assert {k: report.metrics[k] for k in NCU_METRICS} == {k: want[k] for k in NCU_METRICS}
    assert report.origin == "Nsight Compute" and report.by_line
