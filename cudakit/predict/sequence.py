"""The time of a sequence of operations issued from Python: the device cannot run a launch
before the host has issued it, and work on different streams overlaps where the engines allow.

A kernel's predicted time includes the fixed cost of a lone launch (``kernel_min_us``);
one queued right behind another kernel pays only what back-to-back launches cost each
(``launch_overhead_us``, both measured by ``benchmarks/microbench.py``), the GPU having
prepared it while the one before ran.

A timed region of many small launches is often bound by the host, not the GPU: each launch
costs the host ``launch_issue_us`` (cudakit's typed checks and PyCUDA's prepared call,
measured by ``benchmarks/microbench.py``; a caller may give an operation its own host time,
as the replay does with ``launch_issue_per_arg_us`` per argument), and the device starts a
launch no earlier than the host has finished issuing it. A synchronous copy makes the host
wait until the device has done it; an asynchronous one costs the host ``copy_issue_us``
where that is measured.

Streams and engines (CUDA C++ Programming Guide, "Asynchronous Concurrent Execution"): the
operations of one stream run in order; operations of different streams may overlap when they
use different engines: the SMs (kernels and device-to-device copies) and one copy engine per
PCIe direction (host to device, device to host), each engine taking its work in the order it
was issued. The legacy default stream (0) waits for everything issued before it and
everything issued after it waits for it. Two kernels of different streams are taken to run
one after another (the labs' kernels fill the GPU); the copy engines' share of PCIe when both
directions run at once is not modelled.

Events: ``("record", 0, stream, "compute", None, e)`` marks the point of ``stream`` where
event ``e`` is recorded, ``("wait", 0, stream, "compute", None, e)`` makes later work of
``stream`` wait until that point is reached (``cudaStreamWaitEvent``); neither takes an
engine, each costs the host ``copy_issue_us`` (an asynchronous call, like a copy's).

``head_start``: :func:`cudakit.benchmark` queues a waiting kernel before its start event,
twice as long as the host took to issue one call in the warm-up (at most 20 ms,
:func:`cudakit.timing.head_start`), so the host has issued most of the work before the clock
starts; raw ``cuda.Event`` regions get none.

Hand-written: no library models a host issuing work to a GPU.

>>> sequence_ms([("launch", 0.003)] * 2000)       # 2000 empty kernels, raw events
27.3414
>>> sequence_ms([("launch", 0.003)] * 2000, head_start=True)   # cudakit.benchmark
7.3414
>>> up, work, down = ("async", 1.0, 1, "htod"), ("launch", 1.0, 1), ("async", 1.0, 1, "dtoh")
>>> round(sequence_ms([up, work, down] * 4), 2)     # one stream: one after another
12.0
>>> four = [(*op[:2], s, *op[3:]) for s in (1, 2, 3, 4) for op in (up, work, down)]
>>> round(sequence_ms(four), 1)     # four streams overlap; the two directions share the link
6.5
>>> after = [up, ("record", 0, 1, "compute", None, 0), ("wait", 0, 2, "compute", None, 0),
...          ("launch", 1.0, 2)]                 # stream 2's kernel waits for stream 1's upload
>>> round(sequence_ms(after), 2)
2.0
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import ArgumentError
from ..timing import head_start as head_start_us
from .device import load

KINDS = ("launch", "async", "sync", "record", "wait")
MARKERS = ("record", "wait")  # events: no engine, no time of their own
ENGINES = ("compute", "htod", "dtoh")


def _normalise(op) -> tuple[str, float, int, str, float | None, int | None]:
    """``(kind, ms[, stream[, engine[, host_us[, event]]]])`` with the defaults filled in,
    checked."""
    if not isinstance(op, tuple | list) or not 2 <= len(op) <= 6:
        raise ArgumentError(f"an operation is (kind, ms[, stream[, engine[, host_us[, event]]]]),"
                            f" got {op!r}")
    kind, ms = op[0], op[1]
    stream = op[2] if len(op) > 2 else 0
    engine = op[3] if len(op) > 3 else "compute"
    host_us = op[4] if len(op) > 4 else None
    event = op[5] if len(op) > 5 else None
    if kind in MARKERS and (isinstance(event, bool) or not isinstance(event, int)):
        raise ArgumentError(f"a {kind!r} operation names its event by a number, got {event!r}")
    if kind not in KINDS:
        raise ArgumentError(f"operation kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if isinstance(ms, bool) or not isinstance(ms, int | float) or not ms >= 0:
        raise ArgumentError(f"an operation's time must be a non-negative number, got {ms!r}")
    if isinstance(stream, bool) or not isinstance(stream, int) or stream < 0:
        raise ArgumentError(f"a stream is a non-negative integer (0: the default), got {stream!r}")
    if engine not in ENGINES:
        raise ArgumentError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if kind == "launch" and engine != "compute":
        raise ArgumentError(f"a launch runs on the compute engine, not {engine!r}")
    if host_us is not None and (isinstance(host_us, bool) or not isinstance(host_us, int | float)
                                or not host_us >= 0):
        raise ArgumentError(f"the host's time must be a non-negative number, got {host_us!r}")
    return kind, float(ms), stream, engine, host_us, event


def _timeline(ops: list[tuple], issue_us: float, copy_issue_us: float, lead_us: float,
              duplex: float = 1.0, queued_saving_us: float = 0.0) -> tuple[float, float]:
    """(host's issue time, the device's finish time), in microseconds from the host's start;
    the device is busy until ``lead_us`` first. ``duplex``: the share of its own rate each
    copy engine keeps while the other one runs too. ``queued_saving_us``: what a kernel
    queued behind another kernel saves of a lone kernel's fixed cost (the GPU prepares it
    while the one before runs).

    An event simulation: the host issues the operations in order (a synchronous copy makes it
    wait); each engine starts the first operation of its queue once its stream's previous
    operation (and the last default-stream one before it) is done; a default-stream
    operation waits for everything issued before it.
    """
    n = len(ops)
    if n == 0:
        return 0.0, lead_us
    previous: list[int | None] = []  # the operation before it in its stream
    default_before: list[int | None] = []  # the last default-stream one issued before it
    recorded: list[int | None] = []  # a wait's event: the latest record of it before the wait
    last: dict[int, int] = {}
    last_record: dict[int, int] = {}
    last_default = None
    for i, op in enumerate(ops):
        previous.append(last.get(op[2]))
        last[op[2]] = i
        default_before.append(last_default)
        if op[2] == 0:
            last_default = i
        recorded.append(last_record.get(op[5]) if op[0] == "wait" else None)
        if op[0] == "record":
            last_record[op[5]] = i
    done = [False] * n
    first_open = 0  # every operation before it is done
    left = [op[1] * 1e3 for op in ops]
    queues = {e: [] for e in ENGINES}
    heads = dict.fromkeys(ENGINES, 0)
    running: dict[str, int | None] = dict.fromkeys(ENGINES)
    now = host = 0.0
    end = lead_us
    kernel_ended = -1.0  # when the last kernel on the SMs ended
    issued, waiting = 0, None  # waiting: the synchronous copy the host waits for
    markers: list[int] = []  # events issued and not yet reached

    def cost(i: int) -> float:
        kind, _, _, _, host_us, _ = ops[i]
        if host_us is not None:
            return host_us
        if kind == "launch":
            return issue_us
        return copy_issue_us if kind == "async" or kind in MARKERS else 0.0

    def ready(i: int) -> bool:
        if recorded[i] is not None and not done[recorded[i]]:
            return False
        if ops[i][2] == 0:
            return first_open >= i
        return all(j is None or done[j] for j in (previous[i], default_before[i]))

    def reach_markers() -> None:
        """Events whose stream has got there are done (at once: they take no time)."""
        nonlocal first_open
        moved = True
        while moved:
            moved = False
            for m in [m for m in markers if ready(m)]:
                markers.remove(m)
                done[m] = moved = True
            while first_open < n and done[first_open]:
                first_open += 1

    while True:
        reach_markers()
        for e in ENGINES:  # start what can start now
            q = queues[e]
            if running[e] is None and heads[e] < len(q) and now >= lead_us and ready(q[heads[e]]):
                running[e] = j = q[heads[e]]
                heads[e] += 1
                if ops[j][0] == "launch" and kernel_ended == now:  # queued behind a kernel
                    left[j] = max(left[j] - queued_saving_us, left[j] / 2)
        both = running["htod"] is not None and running["dtoh"] is not None
        rate = {e: duplex if both and e != "compute" else 1.0 for e in ENGINES}
        times = [now + left[j] / rate[e] for e, j in running.items() if j is not None]
        if issued < n and waiting is None:
            times.append(host + cost(issued))
        if now < lead_us:
            times.append(lead_us)
        if not times:
            break
        t = min(times)
        for e, j in running.items():
            if j is not None:
                left[j] -= (t - now) * rate[e]
                if left[j] <= 1e-6:
                    running[e], done[j], end = None, True, max(end, t)
                    if ops[j][0] == "launch":
                        kernel_ended = t
                    if waiting == j:
                        waiting, host = None, t
        while first_open < n and done[first_open]:
            first_open += 1
        now = t
        if issued < n and waiting is None and host + cost(issued) <= t:
            host = t
            if ops[issued][0] in MARKERS:
                markers.append(issued)
            else:
                queues[ops[issued][3]].append(issued)
            if ops[issued][0] == "sync":
                waiting = issued
            issued += 1
    return host, end


def sequence_ms(ops: Iterable[tuple], *, device: str = "H100", head_start: bool = False) -> float:
    """Milliseconds from the start event to the end of ``ops``, issued in order from Python.

    ``ops``: ``(kind, ms[, stream[, engine[, host_us[, event]]]])``; ``ms`` the operation's
    own device time (a prediction), ``kind`` one of ``"launch"`` (costs the host
    ``launch_issue_us``),
    ``"async"`` (an asynchronous copy: costs the host ``copy_issue_us`` where measured, else
    nothing), ``"sync"`` (a synchronous copy: the host waits for it), ``"record"`` or
    ``"wait"`` (an event recorded on, or waited for by, a stream; ``event`` its number);
    ``stream`` 0 (the
    default, legacy stream: ordered with everything) or a stream number; ``engine``
    ``"compute"`` (default), ``"htod"`` or ``"dtoh"`` (the copy engines); ``host_us`` the
    host's time to issue it, if not the default of its kind.
    ``head_start``: timed by :func:`cudakit.benchmark` (True) or by raw events (False).
    """
    ops = [_normalise(op) for op in ops]
    dev = load(device)
    issue = dev.launch_issue_us
    copy_issue = dev.figures.get("copy_issue_us", 0.0)
    both = dev.figures.get("pcie_duplex_gbs")
    duplex = min(1.0, both / (dev.h2d_pinned_gbs + dev.d2h_pinned_gbs)) if both else 1.0
    # a lone empty kernel takes kernel_min_us; back to back, one takes launch_overhead_us
    saving = max(dev.kernel_min_us - dev.launch_overhead_us, 0.0)
    lead = 0.0
    if head_start:  # the warm-up call: the host's time
        host, _ = _timeline(ops, issue, copy_issue, 0.0, duplex, saving)
        lead = head_start_us(host)
    _, end = _timeline(ops, issue, copy_issue, lead, duplex, saving)
    return round((end - lead) * 1e-3, 9)
