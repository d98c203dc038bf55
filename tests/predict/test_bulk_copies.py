"""Bulk copies (``cp.async.bulk``, TMA without a tensor map): the rate the model prices them
at is the probe's measurement; and the sixth held-out batch's launches whose misses led to
this session's rules (siboehm's SGEMM kernel 12, which copies its tiles 16 bytes at a time
with them, beside kernel 10, the same tiling without; tspeterkim's minimal flash attention)
are predicted as the H200 timed them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cudakit
from benchmarks import bulk_copy_probe, peer_times

ROOT = Path(__file__).resolve().parents[2]


def test_the_bulk_copy_rate_is_the_probes_measurement():
    stored = json.loads(bulk_copy_probe.STORED.read_text())
    measured = bulk_copy_probe.figures(stored)["bulk16x128 x4"]["cycles_per_copy"]
    for device in ("H100", "H200"):  # one GH100 SM: the H100 takes the H200's rate
        figure = cudakit.predict.load(device).figures["bulk_copy_cycles_per_sm"]
        assert figure == pytest.approx(measured, abs=0.01)
    # copies up to 64 bytes cost the same: the unit takes copies, not bytes
    assert bulk_copy_probe.figures(stored)["bulk64x128 x4"]["cycles_per_copy"] == \
        pytest.approx(measured, rel=0.05)


@pytest.mark.parametrize("name", ["sgemm 10 warp tiles", "sgemm 12 cuda::barrier",
                                  "flash forward_kernel N=256"])
def test_the_sixth_batchs_misses_within_15_percent_of_the_h200(name):
    stored = json.loads(peer_times.SIXTH_FIXTURE.read_text())["launches"][name]
    launch = next(launch for launch in peer_times.SIXTH if launch.name == name)
    p, _ = peer_times._predict(launch, "H200")
    assert p.ms == pytest.approx(stored["ms"], rel=0.15)
