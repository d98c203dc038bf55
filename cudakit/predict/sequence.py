"""The time of a sequence of operations issued from Python: the device cannot run a launch
before the host has issued it.

A timed region of many small launches is often bound by the host, not the GPU: each launch
costs the host ``launch_issue_us`` (cudakit's typed checks and PyCUDA's prepared call,
measured by ``benchmarks/microbench.py``), and the device starts a launch no earlier than the
host has finished issuing it. A synchronous copy makes the host wait until the device has
done it. This is a two-clock timeline (host, device); the device's clock runs from the start
event to the end of the last operation.

``head_start``: :func:`cudakit.benchmark` queues a waiting kernel before its start event,
twice as long as the host took to issue one call in the warm-up (at most 20 ms,
:func:`cudakit.timing.head_start`), so the host has issued most of the work before the clock
starts; raw ``cuda.Event`` regions get none.

Hand-written: no library models a host issuing work to a GPU.

>>> sequence_ms([("launch", 0.003)] * 2000)       # 2000 empty kernels, raw events
28.5644
>>> sequence_ms([("launch", 0.003)] * 2000, head_start=True)   # cudakit.benchmark
8.5644
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import ArgumentError
from ..timing import head_start as head_start_us
from .device import load

KINDS = ("launch", "async", "sync")


def _timeline(ops: list[tuple[str, float]], issue_us: float, lead_us: float) -> tuple[float, float]:
    """(host's issue time, the device's finish time), in microseconds from the host's start;
    the device is busy until ``lead_us`` first."""
    host, device = 0.0, lead_us
    for kind, ms in ops:
        if kind == "launch":
            host += issue_us
            device = max(device, host) + ms * 1e3
        elif kind == "async":  # no measured host cost: only ordered on the device
            device = max(device, host) + ms * 1e3
        else:  # a synchronous copy: the host waits for it
            device = max(device, host) + ms * 1e3
            host = device
    return host, device


def sequence_ms(ops: Iterable[tuple[str, float]], *, device: str = "H100",
                head_start: bool = False) -> float:
    """Milliseconds from the start event to the end of ``ops``, issued in order from Python.

    ``ops``: ``(kind, ms)`` pairs, ``ms`` the operation's own device time (a prediction) and
    ``kind`` one of ``"launch"`` (costs the host ``launch_issue_us``), ``"async"`` (an
    asynchronous copy; its host cost is not measured, so taken as none) or ``"sync"`` (a
    synchronous copy: the host waits for it). Operations run one after another on the
    device (overlap across streams is not modelled). ``head_start``: timed by
    :func:`cudakit.benchmark` (True) or by raw events (False).
    """
    ops = list(ops)
    for kind, ms in ops:
        if kind not in KINDS:
            raise ArgumentError(f"operation kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if not ms >= 0:
            raise ArgumentError(f"an operation's time must be a non-negative number, got {ms!r}")
    issue = load(device).launch_issue_us
    lead = 0.0
    if head_start:
        host, _ = _timeline(ops, issue, 0.0)  # the warm-up call: how long the host issues
        lead = head_start_us(host)
    _, end = _timeline(ops, issue, lead)
    return round((end - lead) * 1e-3, 9)
