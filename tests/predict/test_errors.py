"""Bad input to ``cudakit.predict`` and ``predict_copy`` gets the clear errors of analyze and
the emulator's launch, naming what was wrong."""

from __future__ import annotations

import json

import numpy as np
import pytest

import cudakit
from cudakit import ArgumentError, LaunchError
from cudakit.predict import Pointer
from cudakit.predict.device import FIGURES, figures_in, read_figures

from .conftest import SOURCE

ARGS = [np.zeros(64, np.float32), np.zeros(64, np.float32), np.int32(64)]


def test_unknown_device_lists_the_known_ones():
    with pytest.raises(ArgumentError, match="unknown device 'V100'.*H100, H200, A100, C1060"):
        cudakit.predict(SOURCE, "copy", grid=(1,), block=(64,), args=ARGS, device="V100")


def test_wrong_argument_count_names_the_kernel_and_its_parameters():
    with pytest.raises(ArgumentError, match="copy.*3 arguments"):
        cudakit.predict(SOURCE, "copy", grid=(1,), block=(64,), args=ARGS[:2])


def test_bad_launch_shapes():
    with pytest.raises(LaunchError, match="block.x = 2048 is outside 1..1024"):
        cudakit.predict(SOURCE, "copy", grid=(1,), block=(2048,), args=ARGS)
    with pytest.raises(ArgumentError, match="grid must be 1 to 3 positive integers"):
        cudakit.predict(SOURCE, "copy", grid=(0,), block=(64,), args=ARGS)


def test_unknown_kernel_and_missing_name():
    with pytest.raises(LaunchError, match="no kernel named 'cpy'.*copy"):
        cudakit.predict(SOURCE, "cpy", grid=(1,), block=(64,), args=ARGS)
    with pytest.raises(LaunchError, match="name one"):
        cudakit.predict(SOURCE, grid=(1,), block=(64,), args=ARGS)


def test_arguments_that_are_not_arrays_pointers_or_scalars():
    with pytest.raises(ArgumentError, match="argument 0 of predict\\(\\) is a list"):
        cudakit.predict(SOURCE, "copy", grid=(1,), block=(64,), args=[[0.0] * 64, *ARGS[1:]])
    with pytest.raises(ArgumentError, match="offset within its 256 bytes"):
        cudakit.predict(SOURCE, "copy", grid=(1,), block=(64,),
                        args=[Pointer(ARGS[0], 512), *ARGS[1:]])


def test_a_block_too_large_for_the_textbook_gpu():
    with pytest.raises(LaunchError, match="cannot run on the C1060"):
        cudakit.predict(SOURCE, "copy", grid=(1,), block=(1024,), device="C1060",
                        args=[np.zeros(1024, np.float32)] * 2 + [np.int32(1024)])


def test_copy_arguments():
    with pytest.raises(ArgumentError, match="direction must be"):
        cudakit.predict_copy(1024, "sideways")
    with pytest.raises(ArgumentError, match="non-negative integer"):
        cudakit.predict_copy(-1)


def test_the_microbenchmarks_output_is_read_as_it_is():
    # benchmarks/microbench.py: plain numbers, a methods table, a header, int32_imad for imad
    out = {"header": {"engine": "gpu"}, **{k: 2.0 for k in FIGURES if k != "imad"},
           "int32_imad": 3.0, "launch_issue_us": 9.0, "methods": {"imad": "x", "int32_imad":
                                                                   "chains of IMAD"},
           "errors": {}, "seconds": {}}
    values, sources = read_figures(json.dumps(out))
    assert values["imad"] == 3.0 and sources["imad"] == "measured: chains of IMAD"
    out["dram_read_gbs"] = None  # its benchmark failed
    with pytest.raises(ValueError, match="lacks dram_read_gbs"):
        read_figures(json.dumps(out))
    values, _ = read_figures(json.dumps(out), complete=False)
    assert "dram_read_gbs" not in values and values["sm_count"] == 2
    out["header"]["engine"] = "emu"
    with pytest.raises(ValueError, match="emulator"):
        read_figures(json.dumps(out), complete=False)


def test_measured_figures_override_the_datasheet_ones(tmp_path):
    sheet = {k: {"value": 1.0, "source": "datasheet: x"} for k in FIGURES}
    (tmp_path / "gpu.json").write_text(json.dumps(sheet))
    measured = {"header": {"engine": "gpu"}, "dram_read_gbs": 2900.0, "sfu": None,
                "methods": {"dram_read_gbs": "grid-stride float4 sum"}}
    (tmp_path / "gpu.measured.json").write_text(json.dumps(measured))
    values, sources = figures_in(tmp_path, "gpu.json")
    assert values["dram_read_gbs"] == 2900.0 and values["sfu"] == 1.0
    assert sources["dram_read_gbs"] == "measured: grid-stride float4 sum"
    assert sources["sfu"] == "datasheet: x"


def test_figures_in_the_microbenchmarks_format_and_missing_ones():
    measured = {k: {"value": 1.5, "method": f"measured {k}"} for k in FIGURES}
    values, sources = read_figures(json.dumps(measured))
    assert values["dram_read_gbs"] == 1.5 and sources["shfl"] == "measured shfl"
    del measured["l2_bytes"]
    with pytest.raises(ValueError, match="lacks l2_bytes"):
        read_figures(json.dumps(measured))


def test_every_figure_of_every_device_says_where_it_comes_from():
    for name in cudakit.predict.known():
        d = cudakit.predict.load(name)
        assert all(d.source[k].split(":")[0] in ("datasheet", "published", "measured",
                                                  "estimate") for k in FIGURES), name
