"""Performance facts of the devices the model knows: bandwidths, latencies, pipe rates.

Each device has two files in ``devices/``: ``architecture.json`` (what does not change with a
measurement: compute capability, schedulers, L1 size) and a figures file (``h100.json``...)
with one entry per figure, ``{"value": v, "source": "..."}`` or ``{"value": v, "method":
"..."}``; a plain number is accepted too. The figures file has the format that
``benchmarks/microbench.py`` writes, so the H100's measured figures replace the datasheet
ones by copying that file over ``devices/h100.json``.

Hand-written: these are the model's own inputs, read from JSON with the standard library.

>>> d = load("H100")
>>> d.sm_count, d.compute_capability
(132, '9.0')
>>> d.source["l2_bytes"].startswith("datasheet")
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from ..errors import ArgumentError

FIGURES = ("sm_count", "clock_ghz", "dram_read_gbs", "dram_write_gbs", "dram_copy_gbs",
           "l2_read_gbs", "l2_bytes", "l1_read_bytes_per_clk_per_sm",
           "shared_bytes_per_clk_per_sm", "dram_latency_cycles", "l2_latency_cycles",
           "l1_latency_cycles", "shared_latency_cycles", "fp32_fma", "fp64_fma", "int32_add",
           "imad", "sfu", "shfl", "global_atomic_same_address_per_s",
           "global_atomic_distinct_per_s", "shared_atomic_per_clk_per_sm", "launch_overhead_us",
           "kernel_min_us", "barrier_cycles", "h2d_pinned_gbs", "d2h_pinned_gbs",
           "h2d_pageable_gbs", "d2h_pageable_gbs", "copy_latency_us")


@dataclass(frozen=True)
class Device:
    """One device's figures (attributes named as in :data:`FIGURES`) and their sources."""

    key: str
    name: str
    compute_capability: str
    issue_per_clk_per_sm: float
    l1_bytes_per_sm: int
    figures: dict
    source: dict = field(default_factory=dict)

    def __getattr__(self, name: str):
        figures = self.__dict__.get("figures", {})
        if name in figures:
            return figures[name]
        raise AttributeError(name)

    @property
    def clock_hz(self) -> float:
        return self.clock_ghz * 1e9


def _value(entry, key: str, path: str):
    if isinstance(entry, dict):
        if "value" not in entry:
            raise ValueError(f"{path}: entry {key!r} has no 'value'")
        return entry["value"], str(entry.get("source") or entry.get("method") or "")
    return entry, ""


def read_figures(text: str, path: str = "figures") -> tuple[dict, dict]:
    """``(values, sources)`` from a figures JSON (the microbenchmarks' format)."""
    data = json.loads(text)
    if isinstance(data.get("figures"), dict):
        data = data["figures"]
    missing = [k for k in FIGURES if k not in data]
    if missing:
        raise ValueError(f"{path} lacks {', '.join(missing)}")
    values, sources = {}, {}
    for k in FIGURES:
        v, s = _value(data[k], k, path)
        values[k], sources[k] = float(v), s
    values["sm_count"] = int(values["sm_count"])
    values["l2_bytes"] = int(values["l2_bytes"])
    return values, sources


@cache
def _architectures() -> dict:
    return json.loads(resources.files(__package__).joinpath("devices/architecture.json")
                      .read_text())


def known() -> list[str]:
    """Names of the devices the model knows."""
    return list(_architectures())


@cache
def load(name: str = "H100") -> Device:
    """The device called ``name`` (case-insensitive: ``"H100"``, ``"A100"``, ``"C1060"``)."""
    archs = _architectures()
    key = next((k for k in archs if k.lower() == str(name).lower()), None)
    if key is None:
        raise ArgumentError(f"unknown device {name!r}; known devices: {', '.join(archs)}")
    a = archs[key]
    path = f"devices/{a['figures']}"
    values, sources = read_figures(resources.files(__package__).joinpath(path).read_text(),
                                   path)
    return Device(key, a["name"], a["compute_capability"], float(a["issue_per_clk_per_sm"]),
                  int(a["l1_bytes_per_sm"]), values, sources)
