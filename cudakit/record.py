"""Recording of timed regions: what a :func:`cudakit.benchmark` or :func:`cudakit.timer` measured.

With ``CUDAKIT_RECORD_LAUNCHES=<folder>`` in the environment, each benchmark and each
outermost timer region appends one JSON line to ``<folder>/<label>.jsonl`` (label:
``CUDAKIT_RECORD_LABEL``, default ``session``). The line holds the measurement and every
device operation issued inside the region, in order, so that a model can replay it
(``benchmarks/model.py`` compares such recordings with ``cudakit.predict``). Without the
variable nothing is written; :func:`cudakit.benchmark` still captures the work of its first
timed call (``start(..., capture=True)``) so that ``Benchmark.predicted`` can replay it.
Outside a region the launch and copy paths only test ``record.current is None``.

A file starts with one header line ``{"header": {...}}`` (engine, device, driver, CUDA,
nvcc, date); every other line is::

    {"engine": "gpu" | "emu", "label": "10_reduction", "seq": 3, "cell": 12 (IPython's
     execution count, None outside a notebook),
     "kind": "benchmark" | "timer" | "events", "clock": "events" | "host",
     "median_ms", "min_ms", "max_ms", "samples"   (benchmark) | "ms" (timer),
     "sources": {"<sha1>": "<CUDA source as compiled>"},
     "ops": [{"op": "launch", "kernel": "reduce<256>", "source": "<sha1>", "options": [...],
              "arch": "sm_90", "grid": [g, 1, 1], "block": [256, 1, 1], "shared": 0,
              "stream": 0, "args": [{"type": "const float *", "alloc": 0, "size": 4096,
                                     "offset": 0}, {"type": "int", "value": 1024}]},
             {"op": "memcpy", "direction": "htod" | "dtoh" | "dtod", "bytes": n,
              "pinned": bool | None, "async": bool, "stream": 0},
             {"op": "event", "event": 0, "stream": 1},   (an event recorded on a stream)
             {"op": "wait", "event": 0, "stream": 2}],   (a stream waits for that event)
     "ops_dropped": 0}

A benchmark records the operations of one call of its function (the first timed one; the
waiting kernel before it is left out). Pointers are given as (allocation id, allocation
size, byte offset) with ids numbered in order of first use within the region, so the same
buffer passed twice has the same id; on the GPU the allocation comes from the driver
(``cuMemGetAddressRange``), on the emulator from its heap. ``cuda.In/Out/InOut`` arguments
add their host copies around the launch and a temporary allocation. Streams are
numbered 0 (default), 1, 2, ... in order of first use. Lines made on the emulator say
``"engine": "emu"``: their times are emulator times, never GPU times. Launches through
CuPy (cuBLAS, CUB) are not seen. At most ``MAX_OPS`` operations are kept per region. Inside
a region each launch costs about 2 us more host time (the arguments are noted, the JSON
written when the region ends), which host-bound loops of launches do show.

>>> region = Region("timer")
>>> region.stream(None), region.stream(object())
(0, 1)
"""

from __future__ import annotations

import atexit
import bisect
import datetime
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

from .gpu import device_address

MAX_OPS = 20_000
current: Region | None = None  # the region whose operations are being captured now
_open: Region | None = None  # the region being measured (timers inside it record nothing)
_sequence: dict[str, int] = {}


def folder() -> Path | None:
    """The folder named by ``CUDAKIT_RECORD_LAUNCHES``, or None when not recording."""
    value = os.environ.get("CUDAKIT_RECORD_LAUNCHES")
    return Path(value) if value else None


class Region:
    """The device operations of one timed region, in issue order; with ``keep_data`` (on the
    emulator) also the bytes of each allocation as the region's first launch using it found
    them (:attr:`data`, by allocation id), so that a prediction replays the call on its own
    data: a kernel whose branches or loop counts depend on it (lab 09's divergence patterns)
    would take other paths on zeros."""

    def __init__(self, kind: str, keep_data: bool = False):
        self.kind = kind
        self.data: dict[int, np.ndarray] | None = {} if keep_data else None
        self.cell = _cell()
        self.ops: list[dict] = []
        self.dropped = 0
        self.sources: dict[str, str] = {}
        self._allocations: dict[int, int] = {}  # allocation base -> id
        self._pointers: dict[int, dict] = {}  # address -> its {"alloc", "size", "offset"}
        self._streams: dict[int, int] = {}
        self._bases: list[int] = []  # allocations seen, sorted by base address
        self._sizes: list[int] = []
        self._events: dict[int, int] = {}  # id(event) -> the number of its latest record
        self._event_count = 0

    def add(self, op: dict) -> None:
        if len(self.ops) < MAX_OPS:
            self.ops.append(op)
        else:
            self.dropped += 1

    def records(self) -> list[dict]:
        """The operations as JSON records (and ``sources`` filled in)."""
        return [_op(self, op) for op in self.ops]

    def stream(self, stream) -> int:
        if stream is None:
            return 0
        handle = getattr(stream, "handle", None)
        key = int(handle) if handle is not None else id(stream)
        return self._streams.setdefault(key, len(self._streams) + 1)

    def event(self, event, waited: bool = False) -> int | None:
        """The number of ``event``'s latest record in this region: a new one for each record
        (an event object recorded again is a new point in its stream); None for a wait on an
        event recorded before the region."""
        if waited:
            return self._events.get(id(event))
        self._events[id(event)] = number = self._event_count
        self._event_count += 1
        return number

    def pointer(self, address: int) -> dict:
        """``{"alloc", "size", "offset"}`` of a device address."""
        known = self._pointers.get(address)
        if known is None:
            base, size = self._range(address)
            ident = self._allocations.setdefault(base, len(self._allocations))
            known = self._pointers[address] = {"alloc": ident, "size": size,
                                               "offset": address - base}
        return known

    def _range(self, address: int) -> tuple[int, int]:
        """The allocation holding ``address``: one already seen in this region, else the
        driver's answer (a driver call per launch would slow a loop of launches down)."""
        i = bisect.bisect_right(self._bases, address) - 1
        if i >= 0 and address < self._bases[i] + self._sizes[i]:
            return self._bases[i], self._sizes[i]
        base, size = _address_range(address)
        if size:
            i = bisect.bisect_left(self._bases, base)
            self._bases.insert(i, base)
            self._sizes.insert(i, size)
        return base, size

    def temporary(self, nbytes: int) -> dict:
        """A pointer to a fresh allocation (the device copy of a ``cuda.In/Out`` argument)."""
        ident = len(self._allocations)
        self._allocations[-1 - ident] = ident
        return {"alloc": ident, "size": int(nbytes), "offset": 0}


def _engine() -> str:
    from .backend import backend_name

    return backend_name()


def _address_range(address: int) -> tuple[int, int]:
    if _engine() == "gpu":
        import pycuda.driver as drv

        try:
            base, size = drv.mem_get_address_range(address)
            return int(base), int(size)
        except drv.Error:  # not device memory the driver knows (e.g. a managed or host pointer)
            return address, 0
    from .emu.memory import HEAP

    found = HEAP.find(address)
    return (found.base, found.size) if found is not None else (address, 0)


def is_pinned(array) -> bool | None:
    """Whether a host array lives in page-locked memory (None if it is not an array)."""
    seen = array
    while seen is not None:
        if type(seen).__name__ in ("PagelockedHostAllocation", "RegisteredHostMemory"):
            return True
        seen = seen.obj if isinstance(seen, memoryview) else getattr(seen, "base", None)
    return False if hasattr(array, "nbytes") else None


def start(kind: str, *, capture: bool = False) -> Region | None:
    """Open a region to measure, or None inside another region or when not recording.

    ``capture``: open it even without ``CUDAKIT_RECORD_LAUNCHES`` (nothing is written then):
    on the emulator :func:`cudakit.benchmark` keeps its operations to predict their GPU time.
    """
    global _open
    if _open is not None and _open.kind == "events":
        event_waited(None)  # a region of raw events ends where a timer or benchmark begins
    if _open is not None or (folder() is None and not capture):
        return None
    flush()
    _open = Region(kind, keep_data=capture and _engine() == "emu")
    return _open


def abandon(region: Region | None) -> None:
    """Close ``region`` without writing (its measurement failed)."""
    global _open, current
    if region is not None and _open is region:
        _open = current = None


def finish(region: Region | None, **measured) -> None:
    """Close ``region`` and append its line with the ``measured`` figures."""
    if region is None or _open is not region:
        return
    abandon(region)
    if folder() is not None:
        _quietly(_write, region, measured)


# Regions timed with raw events (``start.record(); ...; stop.synchronize();
# stop.time_since(start)``, as in labs 06, 08 and 22): a region opens when an event is
# recorded on the default stream outside any region, captures until an event is waited for
# or timed, and is measured by the longest time taken from its first event. It is written
# when the next region opens, or at exit; one whose first event is never timed is dropped.
_pending: Region | None = None


def opening(stream) -> bool:
    """Whether an event recorded on ``stream`` now opens a raw-event region."""
    return _open is None and stream is None and folder() is not None


def region_opened(event) -> None:
    """``event`` (recorded on the default stream outside any region) opens a raw-event region;
    :meth:`Event.record` has written the previous one before recording it."""
    global _open, current
    _open = current = Region("events")
    _open.first_event, _open.ms = event, None


def event_marked(event, stream) -> None:
    """An event recorded on a stream inside a capturing region: a point another stream may
    wait for. (One on the legacy default stream is a point everything passes anyway.)"""
    if current is not None and stream is not None:
        current.add({"op": "event", "event": current.event(event),
                     "stream": current.stream(stream)})


def stream_waits(stream, event) -> None:
    """``stream.wait_for_event(event)`` inside a capturing region."""
    if current is not None:
        number = current.event(event, waited=True)
        if number is not None:
            current.add({"op": "wait", "event": number, "stream": current.stream(stream)})


def event_waited(event) -> None:
    global _open, current, _pending
    if _open is not None and _open.kind == "events":
        _pending, _open, current = _open, None, None


def event_timed(start_event, end_event, ms: float) -> None:
    event_waited(end_event)
    if _pending is not None and start_event is _pending.first_event:
        _pending.ms = max(_pending.ms or 0.0, float(ms))


def flush() -> None:
    """Write the pending raw-event region, if it was timed."""
    global _pending
    region, _pending = _pending, None
    if region is not None and region.ms is not None:
        _quietly(_write, region, {"clock": "events", "ms": region.ms})


def _quietly(hook, *args, **kwargs) -> None:
    """Run a recording hook; a failure there is reported once and never stops the program."""
    try:
        hook(*args, **kwargs)
    except Exception as exc:
        _report(hook.__name__.strip("_"), exc)


def _report(what: str, exc: Exception) -> None:
    """Say once on stderr that recording failed somewhere; the program goes on."""
    global _hook_failed
    if not _hook_failed:
        _hook_failed = True
        print(f"cudakit.record: recording a {what} failed ({exc!r}); the program goes on",
              file=sys.stderr)


_hook_failed = False


def recording_event(base: type) -> type:
    """The engine's ``Event`` class, with record/synchronize/time calls seen by the recorder
    (``base`` itself if it cannot be subclassed: then raw-event regions are not recorded)."""
    try:
        return _event_subclass(base)
    except TypeError as exc:
        print(f"cudakit.record: no raw-event regions ({exc})", file=sys.stderr)
        return base


def _event_subclass(base: type) -> type:
    class Event(base):
        __doc__ = base.__doc__

        def record(self, stream=None):
            opens = opening(stream)
            if opens:  # write the previous region before the clock starts, not inside the
                _quietly(flush)  # window this event opens
            base.record(self) if stream is None else base.record(self, stream)
            _quietly(event_marked, self, stream)
            if opens:
                _quietly(region_opened, self)
            return self

        def synchronize(self):
            base.synchronize(self)
            _quietly(event_waited, self)
            return self

        def time_since(self, start):
            ms = base.time_since(self, start)
            _quietly(event_timed, start, self, ms)
            return ms

        def time_till(self, end):
            ms = base.time_till(self, end)
            _quietly(event_timed, self, end, ms)
            return ms

    atexit.register(flush)
    return Event


def recording_stream(base: type) -> type:
    """The engine's ``Stream`` class, with ``wait_for_event`` seen by the recorder (``base``
    itself if it cannot be subclassed)."""
    try:
        class Stream(base):
            __doc__ = base.__doc__

            def wait_for_event(self, event, *args):
                base.wait_for_event(self, event, *args)
                _quietly(stream_waits, self, event)

    except TypeError as exc:
        print(f"cudakit.record: stream waits are not recorded ({exc})", file=sys.stderr)
        return base
    return Stream


def _write(region: Region, measured: dict) -> None:
    out = folder()
    if out is None:
        return
    label = os.environ.get("CUDAKIT_RECORD_LABEL") or "session"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{label}.jsonl"
    lines = []
    if not path.exists():
        lines.append(json.dumps({"header": {"label": label, **header()}}))
    _sequence[label] = _sequence.get(label, 0) + 1
    line = {"engine": _engine(), "label": label, "seq": _sequence[label], "cell": region.cell,
            "kind": region.kind}
    line.update(measured)
    ops = region.records()
    line.update(sources=region.sources, ops=ops, ops_dropped=region.dropped)
    lines.append(json.dumps(line))
    with path.open("a") as f:
        f.write("\n".join(lines) + "\n")


def _cell() -> int | None:
    """The execution count of the notebook cell running now (None outside IPython)."""
    shell = sys.modules.get("IPython")
    shell = shell.get_ipython() if shell is not None else None
    return getattr(shell, "execution_count", None)


def header() -> dict:
    """Engine, device, driver, CUDA and nvcc versions, and the date (UTC)."""
    from .compiler import nvcc_version
    from .device import device_info

    info = device_info()
    head = {
        "engine": _engine(),
        "device": info.name,
        "compute_capability": list(info.compute_capability),
        "multiprocessors": info.multiprocessors,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    try:
        head["nvcc"] = nvcc_version()
    except Exception as exc:  # no nvcc: say so, the recording is still useful
        head["nvcc"] = f"unknown ({type(exc).__name__})"
    if head["engine"] == "gpu":
        import pycuda.driver as drv

        version = drv.get_driver_version()
        head["cuda_driver_api"] = f"{version // 1000}.{version % 1000 // 10}"
        proc = Path("/proc/driver/nvidia/version")
        head["driver"] = proc.read_text().splitlines()[0] if proc.exists() else "unknown"
    return head


def launch(kernel, values, grid, block, shared: int, stream) -> None:
    """Add one launch of ``kernel`` (a :class:`cudakit.Kernel`) to the current region.

    A launch that cannot be described is counted in ``ops_dropped`` (never an error)."""
    try:
        _launch(current, kernel, values, grid, block, shared, stream)
    except Exception as exc:
        current.dropped += 1
        _report("launch", exc)


_described: dict[int, tuple] = {}  # id(kernel) -> (kernel, source key, text, parameters)


def _description(kernel) -> tuple:
    """What never changes between launches of ``kernel``, worked out once."""
    known = _described.get(id(kernel))
    if known is None or known[0] is not kernel:
        text = kernel.source or ""
        params = [(str(p.ctype), p.ctype.is_pointer) for p in kernel.info.params]
        static = {"op": "launch", "kernel": kernel.info.name,
                  "source": hashlib.sha1(text.encode()).hexdigest(),
                  "options": list(kernel.options), "arch": kernel.info.arch}
        known = _described[id(kernel)] = (kernel, static, text, params)
    return known


def _launch(region: Region, kernel, values, grid, block, shared: int, stream) -> None:
    """Note the launch cheaply (it may be inside the timed window); :func:`_op` writes it out."""
    described = _description(kernel)
    args, after = [], []
    for (_, is_pointer), value in zip(described[3], values, strict=True):
        kind = type(value).__name__ if is_pointer else None
        if kind in ("In", "Out", "InOut"):
            nbytes, pinned = int(value.array.nbytes), is_pinned(value.array)
            if kind != "Out":
                region.add(_copy("htod", nbytes, pinned, False, 0))
            if kind != "In":
                after.append(_copy("dtoh", nbytes, pinned, False, 0))
            args.append(region.temporary(nbytes))
            if region.data is not None and kind != "Out":
                region.data[args[-1]["alloc"]] = np.frombuffer(value.array.tobytes(), np.uint8)
        elif is_pointer:
            address = device_address(value)
            args.append(region.pointer(address))
            _keep(region, address, args[-1])
        else:
            args.append(value)
    region.add((described, args, grid, block, shared, region.stream(stream)))
    for op in after:
        region.add(op)


def _keep(region: Region, address: int, pointer: dict) -> None:
    """With ``region.data``: the bytes of ``pointer``'s allocation, the first time the region
    uses it (the emulator's device memory is host memory: a copy, no transfer)."""
    if region.data is None or pointer["alloc"] in region.data or not pointer["size"]:
        return
    from .emu.memory import HEAP

    region.data[pointer["alloc"]] = HEAP.read(address - pointer["offset"], pointer["size"])


def _op(region: Region, op) -> dict:
    """An operation as its JSON record (launches are kept as tuples until the region ends)."""
    if isinstance(op, dict):
        return op
    (_, static, text, params), args, grid, block, shared, stream = op
    region.sources.setdefault(static["source"], text)
    described = [
        {"type": ctype, **value} if is_pointer
        else {"type": ctype, "value": value.item() if hasattr(value, "item") else value}
        for (ctype, is_pointer), value in zip(params, args, strict=True)
    ]
    return {**static, "grid": list(grid), "block": list(block), "shared": shared,
            "stream": stream, "args": described}


def _copy(direction: str, nbytes: int, pinned, is_async: bool, stream: int) -> dict:
    return {"op": "memcpy", "direction": direction, "bytes": int(nbytes), "pinned": pinned,
            "async": is_async, "stream": stream}


def recording_copy(name: str, copy):
    """Wrap the engine's ``memcpy_*`` function ``name`` so calls inside a region are recorded."""
    direction = name.split("_")[1]  # memcpy_htod(_async), memcpy_dtoh, memcpy_dtod
    is_async = name.endswith("_async")

    def call(*args, **kwargs):
        if current is not None and direction in ("htod", "dtoh", "dtod"):
            _quietly(note, *args, **kwargs)
        return copy(*args, **kwargs)

    def note(*args, **kwargs):
        if direction == "dtod":
            host, size = None, args[2] if len(args) > 2 else kwargs.get("size")
        else:
            host = args[1] if direction == "htod" else args[0]
            size = getattr(host, "nbytes", None)
        where = 3 if direction == "dtod" else 2
        stream = args[where] if len(args) > where else kwargs.get("stream")
        pinned = None if host is None else is_pinned(host)
        current.add(_copy(direction, size or 0, pinned, is_async, current.stream(stream)))

    call.__name__ = call.__qualname__ = name
    call.__doc__ = copy.__doc__
    return call
