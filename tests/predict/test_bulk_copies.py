"""Bulk copies (``cp.async.bulk``, TMA without a tensor map): the rate the model prices them
at is the probe's measurement."""

from __future__ import annotations

import json

import pytest

import cudakit
from benchmarks import bulk_copy_probe


def test_the_bulk_copy_rate_is_the_probes_measurement():
    stored = json.loads(bulk_copy_probe.STORED.read_text())
    measured = bulk_copy_probe.figures(stored)["bulk16x128 x4"]["cycles_per_copy"]
    for device in ("H100", "H200"):  # one GH100 SM: the H100 takes the H200's rate
        figure = cudakit.predict.load(device).figures["bulk_copy_cycles_per_sm"]
        assert figure == pytest.approx(measured, abs=0.01)
    # copies up to 64 bytes cost the same: the unit takes copies, not bytes
    assert bulk_copy_probe.figures(stored)["bulk64x128 x4"]["cycles_per_copy"] == \
        pytest.approx(measured, rel=0.05)
