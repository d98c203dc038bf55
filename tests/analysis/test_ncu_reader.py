"""Reading Nsight Compute's CSV pages, checked on the output stored from the H100 run."""

from __future__ import annotations

import gzip

import pytest
from suite import CASES, SOURCE_PATH

from cudakit.analysis import ncu
from cudakit.analysis.report import NCU_METRICS
from cudakit.errors import CudakitError, NoDeviceError

FIXTURES = SOURCE_PATH.parent
SOURCE = SOURCE_PATH.read_text()


@pytest.fixture(scope="module")
def by_launch():
    with gzip.open(FIXTURES / "source.csv.gz", "rt") as f:
        text = f.read()
    return ncu.read_source_csv(text, SOURCE)


def test_source_page_has_one_entry_per_launch_in_suite_order(by_launch):
    assert [kernel for kernel, _ in by_launch] == [case.kernel for case in CASES.values()]


def _launch(by_launch, name):
    """The source-page entry of suite case ``name`` (launches are in suite order)."""
    return by_launch[list(CASES).index(name)]


@pytest.mark.parametrize("name", ["transpose_tiled", "reduce_interleaved", "load_stride8_f32",
                                  "shared_f4_stride8", "branches_f32"])
def test_lines_add_up_to_the_kernel_totals(by_launch, measured, name):
    kernel, accesses = _launch(by_launch, name)
    want = measured["cases"][name]["metrics"]
    assert kernel == CASES[name].kernel
    glob = sum(a.cost for a in accesses if a.space == "global")
    shared = sum(a.cost for a in accesses if a.space == "shared")
    assert glob == (want["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
                    + want["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"])
    assert shared == (want["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
                      + want["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"])


def test_transpose_line_with_the_conflict_comes_first(by_launch, measured):
    kernel, accesses = _launch(by_launch, "transpose_tiled")
    report = ncu.measured_report(kernel, measured["cases"]["transpose_tiled"]["metrics"],
                                 accesses)
    worst = report.by_line[0]
    assert (worst.space, worst.op, worst.cost, worst.ideal) == ("shared", "ld", 4096, 128)
    assert "tile[threadIdx.x][threadIdx.y + j]" in worst.source
    assert report.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 3968
    assert report.metrics["global_load_sectors_per_request"] == 4.0
    assert report.origin == "Nsight Compute"


def test_raw_csv_values_with_thousands_separators():
    text = ('==PROF== noise\n"ID","Kernel Name","Metric Name","Metric Value"\n'
            f'"0","k_a(float*)","{NCU_METRICS[0]}","1,032"\n'
            f'"1","k_b","{NCU_METRICS[1]}","7"\n')
    assert ncu.read_raw_csv(text) == [("k_a", {NCU_METRICS[0]: 1032}), ("k_b", {NCU_METRICS[1]: 7})]


def test_missing_ncu_is_reported_clearly(monkeypatch):
    monkeypatch.setattr(ncu.shutil, "which", lambda name: None)
    monkeypatch.setattr(ncu.os, "access", lambda path, mode: False)
    with pytest.raises(NoDeviceError, match="ncu"):
        ncu.find_ncu()


def test_counter_permission_error_is_explained():
    with pytest.raises(CudakitError, match="ERR_NVGPUCTRPERM"):
        ncu._check("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission", "k")
