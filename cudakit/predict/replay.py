"""Recorded device work (launches and copies, in :mod:`cudakit.record`'s format) replayed
through the model: the GPU time of a whole timed region.

``benchmarks/model.py`` replays the H100's recordings of the labs with it, and on the emulator
``cudakit.benchmark(...).predicted`` replays the work of one call of the timed function.
Each launch runs on zero-filled buffers of the recorded allocation sizes (one array per
allocation, so a buffer passed twice stays one buffer; pointers inside an allocation become
:class:`~cudakit.predict.api.Pointer`), or, for a call timed on the emulator, on the bytes
each allocation held when the call first used it (``data``: the recording holds no data,
so a kernel whose branches depend on it is replayed on zeros); identical operations are
predicted once.

>>> r = predict_region([{"op": "memcpy", "direction": "htod", "bytes": 1 << 30, "pinned": True,
...                      "async": False, "stream": 0}], {})
>>> round(r.ms, 1), r.why.split(":")[0]
(19.8, 'memcpy htod 1024 MiB')
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from .device import load
from .sequence import sequence_ms


def scalar(arg: dict):
    """A recorded scalar argument as the NumPy scalar of its C type."""
    from ..signature import parse_type

    dtype = parse_type(arg["type"]).dtype
    if dtype is None:
        raise ValueError(f"no NumPy type for the parameter type {arg['type']!r}")
    value = arg["value"]
    return np.array(tuple(value) if isinstance(value, list) else value, dtype=dtype)[()]


def describe(op: dict) -> str:
    """A short name of one recorded operation."""
    if op["op"] == "memcpy":
        return f"memcpy {op['direction']} {op['bytes'] / 2**20:.4g} MiB"
    return op["kernel"]


@dataclass
class RegionPrediction:
    """The predicted time of a region: its operations on the device's engines in stream
    order, none before the host has issued it
    (:func:`~cudakit.predict.sequence.sequence_ms`)."""

    ms: float
    device: str
    parts: list[tuple[str, object]] = field(default_factory=list)  # (operation, Prediction)
    streams: int = 1

    @property
    def why(self) -> str:
        """The operation that takes longest, and its explanation."""
        name, longest = max(self.parts, key=lambda part: part[1].ms)
        share = longest.ms / self.ms if self.ms else 1.0
        return f"{name}: {longest.explanation}" + (
            f" ({share:.0%} of the region)" if len(self.parts) > 1 else "")


class Replay:
    """Predicts recorded operations; identical launches and copies are predicted once.

    ``predictor``: (predict, predict_copy, Pointer), by default cudakit's own.
    """

    def __init__(self, device: str = "H100", predictor=None):
        if predictor is None:
            from .api import Pointer, predict, predict_copy

            predictor = (predict, predict_copy, Pointer)
        self.device = device
        self.predict, self.predict_copy, self.Pointer = predictor
        self.cache: dict[str, object] = {}
        self.seconds: list[tuple[str, float]] = []  # (operation, CPU s) of each prediction

    def op(self, op: dict, sources: dict[str, str], buffers: dict[int, np.ndarray]):
        """The prediction of one operation."""
        key = json.dumps([op, sources.get(op.get("source"), "")], sort_keys=True)
        if key not in self.cache:
            start = time.perf_counter()
            if op["op"] == "memcpy":
                pinned = True if op["pinned"] is None else op["pinned"]
                self.cache[key] = self.predict_copy(op["bytes"], direction=op["direction"],
                                                    pinned=pinned, device=self.device)
            else:
                source = sources[op["source"]]
                if op.get("options"):  # nvcc options change registers, so occupancy
                    source = SimpleNamespace(source=source, options=list(op["options"]))
                self.cache[key] = self.predict(
                    source, op["kernel"], grid=tuple(op["grid"]), block=tuple(op["block"]),
                    shared=op["shared"], args=self.arguments(op["args"], buffers),
                    device=self.device)
            self.seconds.append((describe(op), time.perf_counter() - start))
        return self.cache[key]

    def host_us(self, op: dict) -> float | None:
        """The host's time to issue a launch: ``launch_issue_us`` and, where measured,
        ``launch_issue_per_arg_us`` for each argument; None (the default) for a copy."""
        if op["op"] != "launch":
            return None
        d = load(self.device)
        return d.launch_issue_us + d.figures.get("launch_issue_per_arg_us", 0.0) * len(op["args"])

    def arguments(self, args: list[dict], buffers: dict[int, np.ndarray]) -> tuple:
        values = []
        for arg in args:
            if "alloc" not in arg:
                values.append(scalar(arg))
                continue
            array = buffers.get(arg["alloc"])
            size = max(arg["size"], arg["offset"] + 16)
            if array is None or array.size < size:  # zeros where no data was kept
                grown = np.zeros(size, np.uint8)
                if array is not None:
                    grown[:array.size] = array
                array = buffers[arg["alloc"]] = grown
            values.append(self.Pointer(array, arg["offset"]) if arg["offset"] else array)
        return tuple(values)

    def region(self, ops: list[dict], sources: dict[str, str], *, head_start: bool = False,
               data: dict[int, np.ndarray] | None = None) -> RegionPrediction:
        """The predicted time of a region's operations issued in order from Python
        (:func:`~cudakit.predict.sequence.sequence_ms`; ``head_start``: timed by
        ``cudakit.benchmark``; ``data``: allocations' bytes by id, else zeros)."""
        buffers = dict(data or {})  # one array per allocation of the region
        parts, sequence = [], []
        for op in ops:
            stream = int(op.get("stream") or 0)
            if op["op"] in ("event", "wait"):  # the order between streams: no time of its own
                sequence.append(("record" if op["op"] == "event" else "wait", 0.0, stream,
                                 "compute", None, int(op["event"])))
                continue
            parts.append((describe(op), self.op(op, sources, buffers)))
            sequence.append((kind(op), float(parts[-1][1].ms), stream, engine(op),
                             self.host_us(op)))
        ms = sequence_ms(sequence, device=self.device, head_start=head_start)
        streams = {op.get("stream", 0) for op in ops if op["op"] not in ("event", "wait")}
        return RegionPrediction(ms, self.device, parts, len(streams))


def kind(op: dict) -> str:
    """A recorded operation's kind for :func:`~cudakit.predict.sequence.sequence_ms`.

    An asynchronous copy from or to pageable host memory holds the host like a synchronous
    one (CUDA Runtime API, "API synchronization behavior": it is staged through a pinned
    buffer and may return only when done).
    """
    if op["op"] == "launch":
        return "launch"
    pageable = op.get("pinned") is False and op.get("direction") in ("htod", "dtoh")
    return "async" if op.get("async") and not pageable else "sync"


def engine(op: dict) -> str:
    """Where a recorded operation runs: a PCIe copy engine, or the SMs (kernels, and copies
    within device memory, which compete with kernels for DRAM)."""
    if op["op"] == "memcpy" and op.get("direction") in ("htod", "dtoh"):
        return op["direction"]
    return "compute"


def predict_region(ops: list[dict], sources: dict[str, str], device: str = "H100", *,
                   head_start: bool = False,
                   data: dict[int, np.ndarray] | None = None) -> RegionPrediction:
    """The predicted GPU time of recorded operations (see the module docstring)."""
    return Replay(device).region(ops, sources, head_start=head_start, data=data)
