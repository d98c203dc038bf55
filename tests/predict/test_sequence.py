"""``cudakit.predict.sequence_ms``: a region of operations issued from Python, against
timelines worked out by hand (host clock: issue_us per launch; device: one after another)."""

from __future__ import annotations

import pytest

from cudakit import ArgumentError
from cudakit.predict import load, sequence_ms
from cudakit.timing import MAX_HEAD_START_US

ISSUE = load("H100").launch_issue_us  # microseconds the host needs per launch
# what a kernel queued behind another saves of a lone kernel's fixed cost (microseconds)
QUEUED = load("H100").kernel_min_us - load("H100").launch_overhead_us


def test_short_launches_wait_for_the_host():
    # each 3-us launch is done before the host has issued the next: n issues, then the last
    assert ISSUE > 3
    assert sequence_ms([("launch", 0.003)] * 100) == pytest.approx((100 * ISSUE + 3) / 1e3)


def test_long_launches_queue_on_the_device():
    # 1-ms launches: the host is ahead after the first issue; the device runs them back to
    # back, each after the first with the fixed cost of a queued launch, not a lone one's
    assert 0 < QUEUED < 3
    assert sequence_ms([("launch", 1.0)] * 5) == pytest.approx(5.0 + (ISSUE - 4 * QUEUED) / 1e3)


def test_benchmark_head_start_hides_the_host():
    # cudakit.benchmark's waiting kernel lasts 2 x (the host's issue time) + 20 us, so by the
    # time the clock starts every launch is queued: the device's sum alone
    expected = (3 + 99 * (3 - QUEUED)) / 1e3  # the first alone, 99 queued behind it
    assert sequence_ms([("launch", 0.003)] * 100, head_start=True) == pytest.approx(expected)


def test_head_start_is_capped():
    # 2000 launches take the host longer than twice the 20-ms cap allows: the last ones
    # still wait for the host, so the clock sees n x issue + the last launch - the cap
    n = 2000
    assert 2 * n * ISSUE + 20 > MAX_HEAD_START_US and n * ISSUE > MAX_HEAD_START_US
    expected = (n * ISSUE + 3 - MAX_HEAD_START_US) / 1e3
    assert sequence_ms([("launch", 0.003)] * n, head_start=True) == pytest.approx(expected)


def test_a_synchronous_copy_makes_the_host_wait():
    # the copy runs at once (1 ms) and the host waits for it; only then is the launch issued
    got = sequence_ms([("sync", 1.0), ("launch", 0.002)])
    assert got == pytest.approx(1.0 + (ISSUE + 2) / 1e3)
    # an asynchronous copy does not hold the host (beyond its own call, copy_issue_us where
    # measured): the launch is issued meanwhile
    copy_issue = load("H100").figures.get("copy_issue_us", 0.0)
    assert sequence_ms([("async", 1.0), ("launch", 0.002)]) == pytest.approx(
        1.002 + copy_issue / 1e3)


def test_bad_operations_are_named():
    with pytest.raises(ArgumentError, match="kind must be one of launch, async, sync.*'kernel'"):
        sequence_ms([("kernel", 1.0)])
    with pytest.raises(ArgumentError, match="non-negative number.*-1"):
        sequence_ms([("launch", -1.0)])


def test_a_stream_that_waits_for_an_event_starts_after_that_point():
    # with a head start (the host issues everything before the clock starts): a 1-ms kernel on
    # stream 1 and a 1-ms upload on stream 2 overlap; waiting for an event recorded after the
    # kernel, the upload follows it; an event recorded again is waited for at its latest point
    # (within 2 us: a kernel queued behind another saves part of its fixed cost)
    k1, k2, up2 = ("launch", 1.0, 1), ("launch", 1.0, 2), ("async", 1.0, 2, "htod")
    mark, wait = ("record", 0, 1, "compute", None, 7), ("wait", 0, 2, "compute", None, 7)
    k3 = ("launch", 2.0, 1)

    def ms(ops):
        return sequence_ms(ops, head_start=True)

    assert ms([k1, k2, up2]) == pytest.approx(3.0, abs=0.002)  # the upload follows k2 in its stream
    assert ms([k1, up2]) == pytest.approx(1.0, abs=0.002)
    assert ms([k1, mark, wait, up2]) == pytest.approx(2.0, abs=0.002)
    assert ms([k1, mark, k3, up2]) == pytest.approx(3.0, abs=0.002)
    assert ms([k1, mark, k3, mark, wait, up2]) == pytest.approx(4.0, abs=0.002)  # after k3, not k1
    unknown = ("wait", 0, 2, "compute", None, 3)  # an event never recorded: no wait
    assert ms([k1, unknown, up2]) == pytest.approx(1.0, abs=0.002)
    with pytest.raises(ArgumentError, match="'wait' operation names its event by a number"):
        sequence_ms([("wait", 0, 2)])
