"""Tensor-core kernels (``nvcuda::wmma``): their rates as measured, and GEMMs timed on an H200
against their predictions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import cudakit
from benchmarks import mma_gemm, tensor_probe, wmma_gemm
from cudakit.emu.counts import DEPENDENT
from cudakit.errors import ArgumentError

ROOT = Path(__file__).resolve().parents[2]
PROBE = json.loads((ROOT / "benchmarks/fixtures/h200_tensor_probe.json").read_text())
#: device figure -> the probe's kind that measures it
FIGURE_OF = {"mma_f16_per_clk_per_sm": "f16_f32", "mma_tf32_per_clk_per_sm": "tf32_f32",
             "mma_f64_per_clk_per_sm": "f64_f64", "mma_i8_per_clk_per_sm": "s8_s32"}


def test_the_tensor_rates_are_the_probes_measurement():
    measured = tensor_probe.figures(PROBE)
    for device in ("H100", "H200"):  # one GH100 SM: the H100 takes the H200's rates
        figures = cudakit.predict.load(device).figures
        for figure, kind in FIGURE_OF.items():
            assert figures[figure] == pytest.approx(measured[kind]["per_clk_per_sm"], abs=1e-3)
            clock = figure.replace("per_clk_per_sm", "clock_ghz")
            assert figures[clock] == pytest.approx(measured[kind]["clock_ghz"], abs=1e-3)
    # bf16 runs at the f16 rate (the figure is the lower of the two)
    assert measured["bf16_f32"]["per_clk_per_sm"] == pytest.approx(
        measured["f16_f32"]["per_clk_per_sm"], rel=0.01)


def test_a_dependent_wmma_takes_its_measured_latency():
    measured = tensor_probe.figures(PROBE)
    for figure, kind in FIGURE_OF.items():
        cls = "mma." + figure.split("_")[1]
        per_wmma = DEPENDENT[cls] * tensor_probe.sass_per_mma(kind)
        assert per_wmma == pytest.approx(measured[kind]["latency_cycles"], abs=0.3)


def test_the_probes_own_loop_is_tensor_bound_and_takes_its_measured_time():
    """The probe's kernel as launched: its rate and clock come from this run, so the
    prediction must give the run's event time back (within the launch's fixed cost)."""
    kernels = tensor_probe.source()
    sms = cudakit.predict.load("H200").sm_count
    z = np.zeros(1 << 12, np.float16)
    p = cudakit.predict(kernels, "rate_f16_f32_4", grid=(sms * 8,), block=(128,),
                        args=[z, z, np.zeros(sms * 32 * 256, np.float32),
                              np.int32(tensor_probe.TRIPS), np.zeros(3 * sms * 32, np.int64)],
                        device="H200")
    assert p.bound == "tensor cores"
    assert "tensor-core-bound" in p.explanation
    hmma = sms * 32 * tensor_probe.TRIPS * 4 * 2
    assert p.counts["warp_instructions"]["mma.f16"] == pytest.approx(hmma, rel=0.01)
    row = next(r for r in PROBE["rows"] if r["kind"] == "f16_f32" and r["blocks_per_sm"] == 8)
    assert p.ms == pytest.approx(row["ms"], rel=0.03)


@pytest.mark.parametrize("kernel", [*wmma_gemm.KERNELS, *wmma_gemm.HELD_OUT])
def test_tensor_core_gemms_timed_on_an_h200_are_predicted_within_15_percent(kernel):
    """Held out from the rates: ``benchmarks/wmma_gemm.py``'s kernels at 2048^3, timed on an
    H200 (``fixtures/h200_wmma_gemm.json``; the ``HELD_OUT`` ones, in
    ``h200_wmma_gemm_held_out.json``, were predicted before they were timed)."""
    held_out = kernel in wmma_gemm.HELD_OUT
    stored = json.loads((wmma_gemm.HELD_OUT_STORED if held_out else wmma_gemm.STORED)
                        .read_text())
    row = next(r for r in stored["rows"] if r["kernel"] == kernel and r["size"] == 2048)
    assert wmma_gemm.predicted(kernel, 2048).ms == pytest.approx(row["ms"], rel=0.15)
    if held_out:
        blind = json.loads(wmma_gemm.BLIND.read_text())["rows"]
        before = next(r for r in blind if r["kernel"] == kernel and r["size"] == 2048)
        assert before["predicted_ms"] == pytest.approx(row["ms"], rel=0.15)


@pytest.mark.parametrize("kernel", [*mma_gemm.HELD_OUT])
def test_ldmatrix_mma_sync_gemms_predicted_blind_are_within_15_percent(kernel):
    """``benchmarks/mma_gemm.py``'s hand-written PTX GEMMs at 2048^3 on an H200
    (``fixtures/h200_mma_gemm.json``), predicted before they were first timed
    (``h200_mma_gemm_blind.json``, committed before the device call)."""
    stored = json.loads(mma_gemm.HELD_OUT_STORED.read_text())["rows"]
    row = next(r for r in stored if r["kernel"] == kernel and r["size"] == 2048)
    blind = json.loads(mma_gemm.BLIND.read_text())["rows"]
    before = next(r for r in blind if r["kernel"] == kernel and r["size"] == 2048)
    assert before["predicted_ms"] == pytest.approx(row["ms"], rel=0.15)
    assert wmma_gemm.predicted(kernel, 2048, suite=mma_gemm).ms == pytest.approx(
        row["ms"], rel=0.15)


def test_a_device_without_tensor_rates_says_so():
    z = np.zeros(256, np.float16)
    with pytest.raises(ArgumentError, match="tensor instructions 'mma.f16'"):
        cudakit.predict(wmma_gemm.SOURCE, "gemm_wmma", grid=(1, 1), block=(32, 1),
                        args=[z, z, np.zeros(256, np.float32), np.int32(16), np.int32(16),
                              np.int32(16)], device="C1060")
