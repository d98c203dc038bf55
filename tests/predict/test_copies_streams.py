"""Copies read off measured curves, and regions whose streams overlap on the device's engines,
against values worked out by hand (``np.interp`` for the curves, timelines drawn on paper)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from cudakit import ArgumentError
from cudakit.predict import api, load, sequence_ms
from cudakit.predict.device import read_curves, read_figures
from cudakit.predict.replay import engine, kind

SIZES = [256, 4096, 65536, 1 << 20, 16 << 20]
PINNED_US = [10.0, 16.0, 18.0, 33.0, 320.0]


def with_figures(monkeypatch, **figures):
    """The H100 with some figures replaced (None: removed), as predict_copy sees it."""
    d = load("H100")
    values = {**d.figures, **figures}
    values = {k: v for k, v in values.items() if v is not None}
    changed = dataclasses.replace(d, figures=values)
    monkeypatch.setattr(api, "load", lambda device: changed)
    return changed


def test_a_copy_is_read_off_its_measured_curve(monkeypatch):
    curves = read_curves({"h2d_pinned": {"bytes": SIZES, "us": PINNED_US},
                          "d2d": {"bytes": [256, 1 << 20], "us": [6.0, 10.0]}}, "test")
    with_figures(monkeypatch, copy_curves=curves)
    for n in (4096, 100_000, 3 << 20):  # on and between measured sizes: linear
        got = api.predict_copy(n, "htod").ms
        assert got == pytest.approx(np.interp(n, SIZES, PINNED_US) / 1e3)
    assert api.predict_copy(4, "htod").ms == pytest.approx(0.010)  # below: the fixed cost
    # beyond the largest size: its last segment's rate, (320 - 33) us per 15 MiB
    rate = (320.0 - 33.0) / (15 << 20)
    assert api.predict_copy(32 << 20, "htod").ms == pytest.approx((320 + rate * (16 << 20)) / 1e3)
    assert api.predict_copy(1 << 19, "dtod").ms == pytest.approx(
        np.interp(1 << 19, [256, 1 << 20], [6.0, 10.0]) / 1e3)
    assert api.predict_copy(1 << 20, "htod").bound == "PCIe"
    # a kind without a curve: latency + bytes / rate
    d = load("H100")
    assert api.predict_copy(1 << 30, "dtoh", pinned=False).ms == pytest.approx(
        d.copy_latency_us * 1e-3 + (1 << 30) / d.d2h_pageable_gbs / 1e6)


def test_a_device_copy_of_a_size_off_16_bytes_costs_the_measured_extra(monkeypatch):
    curves = read_curves({"d2d": {"bytes": [256, 1 << 20], "us": [6.0, 10.0]}}, "test")
    with_figures(monkeypatch, copy_curves=curves,
                 d2d_unaligned_us=((1 << 10, 1 << 20), (1.0, 3.0)))
    aligned = api.predict_copy(1 << 19, "dtod")
    for extra in (1, 4, 8, 12):
        n = (1 << 19) + extra
        got = api.predict_copy(n, "dtod")
        assert got.ms == pytest.approx(
            (np.interp(n, [256, 1 << 20], [6.0, 10.0]) +
             np.interp(n, [1 << 10, 1 << 20], [1.0, 3.0])) / 1e3)
        assert "not a multiple of 16" in got.explanation
    assert "multiple" not in aligned.explanation
    # copies over PCIe do not depend on it
    assert api.predict_copy((1 << 19) + 4, "htod").ms == pytest.approx(
        api.predict_copy(1 << 19, "htod").ms, rel=1e-3)


def test_an_unaligned_device_copy_matches_the_h100_recording():
    # lab 11 copies a 4097 x 3001 float matrix (49180388 bytes, not a multiple of 16) ten
    # times with cudaMemcpy; the H100 took 0.386 ms, against 0.341 ms off the aligned curve
    from benchmarks import model

    regions, _ = model.group(model.read_lines(model.FIXTURE))
    odd = [r for r in regions if r.kernels() == "memcpy dtod x10"
           and all(op["bytes"] % 16 for op in r.ops if op["op"] == "memcpy")]
    assert odd
    for r in odd:
        copies = [op for op in r.ops if op["op"] == "memcpy"]
        predicted = sum(api.predict_copy(op["bytes"], "dtod").ms for op in copies)
        assert predicted == pytest.approx(r.measured_ms, rel=0.05)


def test_without_curves_a_copy_takes_latency_plus_bytes_over_rate(monkeypatch):
    d = with_figures(monkeypatch, copy_curves=None)
    assert api.predict_copy(1 << 30, "htod").ms == pytest.approx(
        d.copy_latency_us * 1e-3 + (1 << 30) / d.h2d_pinned_gbs / 1e6)
    assert api.predict_copy(1 << 28, "dtod").ms == pytest.approx(
        d.copy_latency_us * 1e-3 + 2 * (1 << 28) / d.dram_copy_gbs / 1e6)


def test_the_microbenchmarks_curves_are_read_and_bad_ones_named():
    out = {"header": {"engine": "gpu"}, "copy_issue_us": 2.5,
           "copy_curves": {"d2h_pageable": {"bytes": [256, 1024], "us": [9, 12]}},
           "methods": {"copy_curves": "synchronous copies"}}
    values, sources = read_figures(json.dumps(out), complete=False)
    assert values["copy_curves"] == {"d2h_pageable": ((256, 1024), (9.0, 12.0))}
    assert values["copy_issue_us"] == 2.5
    assert sources["copy_curves"] == "measured: synchronous copies"
    for bad, why in [({"h2d": {"bytes": [1, 2], "us": [1, 2]}}, "unknown kind 'h2d'"),
                     ({"d2d": {"bytes": [2, 1], "us": [1, 2]}}, "ascending"),
                     ({"d2d": {"bytes": [1], "us": [1]}}, "two or more"),
                     ({"d2d": {"bytes": [1, 2], "us": [1, -2]}}, "positive")]:
        with pytest.raises(ValueError, match=why):
            read_figures(json.dumps({**out, "copy_curves": bad}), complete=False)


@pytest.fixture(autouse=True)
def timeline_without_copy_costs(monkeypatch):
    """The H100 without the host's cost of an asynchronous call and without PCIe sharing, so
    the timelines below come out in whole milliseconds (tests that need them set them)."""
    from cudakit.predict import sequence

    d = load("H100")
    plain = dataclasses.replace(d, figures={k: v for k, v in d.figures.items()
                                            if k not in ("copy_issue_us", "pcie_duplex_gbs")})
    monkeypatch.setattr(sequence, "load", lambda device: plain)


UP, DOWN = 2.0, 3.0  # ms of one chunk's copies; its kernel takes WORK
WORK = 1.0


def pipeline(streams: int, chunks: int = 4) -> list[tuple]:
    """Each chunk: copy up, kernel, copy down, on stream 1 + chunk % streams, issued in order."""
    ops = []
    for c in range(chunks):
        s = 1 + c % streams
        ops += [("async", UP, s, "htod"), ("launch", WORK, s), ("async", DOWN, s, "dtoh")]
    return ops


def test_one_stream_runs_one_after_another():
    assert sequence_ms(pipeline(1)) == pytest.approx(4 * (UP + WORK + DOWN))


def test_streams_overlap_on_separate_engines():
    # 4 streams, depth-first issue: the upload engine takes chunk c at 2c..2c+2, the SMs at
    # 2c+2..2c+3, the download engine is busy from 3 on for 3 ms a chunk: done at 3 + 4 x 3
    assert sequence_ms(pipeline(4)) == pytest.approx(3 + 4 * DOWN)
    # 2 streams: chunk 2 reuses stream 1, so its upload waits only for the engine (free at 4)
    assert sequence_ms(pipeline(2)) == pytest.approx(3 + 4 * DOWN)
    # the busiest engine (downloads, 12 ms) bounds any number of streams from below
    assert all(sequence_ms(pipeline(s)) >= 4 * DOWN for s in (1, 2, 4))


def test_the_default_stream_waits_for_all_and_all_wait_for_it():
    ops = [("async", UP, 1, "htod"), ("launch", WORK, 0), ("async", DOWN, 2, "dtoh")]
    assert sequence_ms(ops) == pytest.approx(UP + WORK + DOWN)
    # without the default stream the launch overlaps the copies of the other streams; the
    # download starts once the host has issued it, after the launch's issue time
    ops[1] = ("launch", WORK, 3)
    assert sequence_ms(ops) == pytest.approx(load("H100").launch_issue_us / 1e3 + DOWN)


def test_recorded_copies_map_to_engines_and_pageable_async_holds_the_host():
    up = {"op": "memcpy", "direction": "htod", "bytes": 8, "pinned": True, "async": True}
    assert (kind(up), engine(up)) == ("async", "htod")
    assert kind({**up, "pinned": False}) == "sync"  # staged: the call returns when done
    assert kind({**up, "async": False}) == "sync"
    assert engine({**up, "direction": "dtod", "pinned": None}) == "compute"
    assert (kind({"op": "launch"}), engine({"op": "launch"})) == ("launch", "compute")


def test_bad_streams_and_engines_are_named():
    with pytest.raises(ArgumentError, match="stream is a non-negative integer.*-1"):
        sequence_ms([("launch", 1.0, -1)])
    with pytest.raises(ArgumentError, match="engine must be one of compute, htod, dtoh.*'pcie'"):
        sequence_ms([("async", 1.0, 1, "pcie")])
    with pytest.raises(ArgumentError, match="a launch runs on the compute engine"):
        sequence_ms([("launch", 1.0, 1, "htod")])
    with pytest.raises(ArgumentError, match=r"\(kind, ms\[, stream\[, engine\[, host_us"):
        sequence_ms([("launch",)])
    with pytest.raises(ArgumentError, match="host's time must be a non-negative number"):
        sequence_ms([("launch", 1.0, 0, "compute", -2.0)])


def test_a_launchs_own_host_time_replaces_the_default():
    # 100 short launches that each take the host 50 us: the host's time decides
    assert sequence_ms([("launch", 0.003, 0, "compute", 50.0)] * 100) == pytest.approx(
        (100 * 50 + 3) / 1e3)


def test_both_pcie_directions_at_once_share_the_link(monkeypatch):
    from cudakit.predict import sequence

    d = load("H100")
    plain = {k: v for k, v in d.figures.items() if k != "copy_issue_us"}
    half = (d.h2d_pinned_gbs + d.d2h_pinned_gbs) / 2  # each direction keeps half its rate
    changed = dataclasses.replace(d, figures={**plain, "pcie_duplex_gbs": half})
    monkeypatch.setattr(sequence, "load", lambda device: changed)
    up, down = ("async", 1.0, 1, "htod"), ("async", 2.0, 2, "dtoh")
    # together at half rate until the upload is done (at 2 ms, the download half done),
    # then the download alone at its full rate: 1 ms more
    assert sequence_ms([up, down]) == pytest.approx(3.0)
    assert sequence_ms([up, ("async", 2.0, 1, "dtoh")]) == pytest.approx(3.0)  # one stream
    # a kernel takes no share (it starts once the host has issued it)
    assert sequence_ms([up, ("launch", 2.0, 2)]) == pytest.approx(d.launch_issue_us / 1e3 + 2)
    alone = dataclasses.replace(d, figures={k: v for k, v in plain.items()
                                            if k != "pcie_duplex_gbs"})
    monkeypatch.setattr(sequence, "load", lambda device: alone)  # no figure: no share
    assert sequence_ms([up, down]) == pytest.approx(2.0)
