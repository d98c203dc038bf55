"""Performance facts of the devices the model knows: bandwidths, latencies, pipe rates.

Each device has two files in ``devices/``: ``architecture.json`` (what does not change with a
measurement: compute capability, schedulers, L1 size) and a figures file (``h100.json``...)
with one entry per figure, ``{"value": v, "source": "..."}``. The output of
``benchmarks/microbench.py`` is read as it is: copied to ``devices/h100.measured.json``, its
figures replace the datasheet ones (a figure it failed to measure keeps the datasheet value);
copied over ``devices/h100.json`` it must hold every figure.

Hand-written: these are the model's own inputs, read from JSON with the standard library.

>>> d = load("H100")
>>> d.sm_count, d.compute_capability
(132, '9.0')
>>> d.source["l2_bytes"].split(":")[0] in ("datasheet", "measured")
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
           "kernel_min_us", "launch_issue_us", "barrier_cycles", "h2d_pinned_gbs", "d2h_pinned_gbs",
           "h2d_pageable_gbs", "d2h_pageable_gbs", "copy_latency_us")
#: figures a device may lack (the model leaves out the term they price until measured, or
#: falls back to a simpler one: ``copy_curves`` to latency + bytes / rate)
OPTIONAL = ("block_launch_per_s", "copy_issue_us", "launch_issue_per_arg_us",
            "pcie_duplex_gbs", "partial_store_sectors_per_s", "partial_store_lines_per_s",
            "constant_replays_per_clk_per_sm",
            "atomic_same_word_float_s", "atomic_same_word_int_s", "atomic_line_requests_per_s",
            "atomic_request_s", "atomic_sector_step_s",
            "tpc_paired_blocks", "load_departure_cycles", "partial_store_dram_sectors_per_s",
            "mma_f16_per_clk_per_sm", "mma_tf32_per_clk_per_sm", "mma_f64_per_clk_per_sm",
            "mma_i8_per_clk_per_sm", "mma_f16_clock_ghz", "mma_tf32_clock_ghz",
            "mma_f64_clock_ghz", "mma_i8_clock_ghz", "bulk_copy_cycles_per_sm")
#: tables a device may have (``benchmarks/microbench.py``): ``copy_curves``, per copy kind
#: (``h2d_pinned``, ``d2h_pinned``, ``h2d_pageable``, ``d2h_pageable``, ``d2d``) the measured
#: microseconds against bytes; ``d2d_unaligned_us``, the microseconds a device-to-device copy
#: whose size is not a multiple of 16 bytes takes beyond the ``d2d`` curve, against bytes;
#: ``dram_loaded_latency``, DRAM latency against bandwidth drawn
CURVES = ("h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable", "d2d")


def _is_curve(xs, ys) -> bool:
    """Two lists of equal length, two or more positive numbers each, ``xs`` ascending."""
    return (isinstance(xs, list) and isinstance(ys, list) and len(xs) == len(ys) >= 2
            and all(isinstance(v, int | float) and v > 0 for v in xs + ys)
            and all(a < b for a, b in zip(xs, xs[1:], strict=False)))


def read_curves(entry, path: str) -> dict[str, tuple[tuple[int, ...], tuple[float, ...]]]:
    """``copy_curves`` checked: per kind, ascending sizes (at least two) and their times.

    >>> read_curves({"d2d": {"bytes": [256, 1024], "us": [5.0, 5.5]}}, "x")
    {'d2d': ((256, 1024), (5.0, 5.5))}
    """
    if isinstance(entry, dict) and "value" in entry:
        entry = entry["value"]
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: copy_curves must be an object of curves, got {entry!r}")
    curves = {}
    for name, curve in entry.items():
        if name not in CURVES:
            raise ValueError(f"{path}: copy_curves has an unknown kind {name!r} "
                             f"(known: {', '.join(CURVES)})")
        sizes, us = (curve.get("bytes"), curve.get("us")) if isinstance(curve, dict) else (0, 0)
        if not _is_curve(sizes, us):
            raise ValueError(f"{path}: copy_curves[{name!r}] needs 'bytes' (ascending) and "
                             "'us' (positive), two or more of each, of equal length")
        curves[name] = (tuple(int(v) for v in sizes), tuple(float(v) for v in us))
    return curves


#: measured tables of two columns (x ascending): their name, and the names of their columns
TABLES = {"dram_loaded_latency": ("gbs", "cycles"), "fetch_alone_curve": ("bytes", "cycles"),
          "fetch_paired_curve": ("bytes", "cycles")}


def read_table(entry, path: str, name: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """One of :data:`TABLES` checked: its x (ascending) and y columns, two or more points:
    ``dram_loaded_latency``, the DRAM latency in cycles against bandwidth drawn (GB/s);
    ``fetch_alone_curve`` and ``fetch_paired_curve``, a warp's cycles per instruction
    against the bytes of loop code on a TPC (``benchmarks/fetch_probe.py``).

    >>> read_table({"gbs": [100, 2000], "cycles": [700, 900]}, "x", "dram_loaded_latency")
    ((100.0, 2000.0), (700.0, 900.0))
    """
    if isinstance(entry, dict) and "value" in entry:
        entry = entry["value"]
    xs, ys = TABLES[name]
    x, y = (entry.get(xs), entry.get(ys)) if isinstance(entry, dict) else (0, 0)
    if not _is_curve(x, y):
        raise ValueError(f"{path}: {name} needs {xs!r} (ascending) and {ys!r} (positive), two "
                         "or more of each, of equal length")
    return tuple(float(v) for v in x), tuple(float(v) for v in y)


#: the shares of written bytes of the three kernels ``benchmarks/l2_reuse.py`` measures
RELAUNCH_SHARES = (0.0, 0.5, 1.0)


def read_relaunch(entry, path: str):
    """``l2_relaunch`` checked: ``(x, shares, read_miss, write_back)``, where ``x`` is the
    bytes a launch touches over the L2's size (ascending), ``shares`` the kernels' shares of
    written bytes (:data:`RELAUNCH_SHARES`), and per share a row of read misses and one of
    write-backs (fractions of the bytes read and written), one value per ``x``.

    >>> read_relaunch({"footprint_l2": [0.1, 1.0], "read_miss": [[0, 1]] * 3,
    ...                "write_back": [[0, 1]] * 3}, "x")[0]
    (0.1, 1.0)
    """
    if isinstance(entry, dict) and "value" in entry:
        entry = entry["value"]
    x = entry.get("footprint_l2") if isinstance(entry, dict) else None
    rows = [entry.get(k) for k in ("read_miss", "write_back")] if isinstance(entry, dict) \
        else [None, None]
    ok = isinstance(x, list) and len(x) >= 2 and all(a < b for a, b in zip(x, x[1:], strict=False))
    ok = ok and all(isinstance(r, list) and len(r) == len(RELAUNCH_SHARES) and all(
        isinstance(row, list) and len(row) == len(x)
        and all(isinstance(v, int | float) and 0 <= v <= 1 for v in row) for row in r)
        for r in rows)
    if not ok:
        raise ValueError(f"{path}: l2_relaunch needs 'footprint_l2' (ascending) and, for each "
                         f"of the written shares {RELAUNCH_SHARES}, a row of 'read_miss' and "
                         "of 'write_back' (fractions, one per footprint)")
    return (tuple(float(v) for v in x), RELAUNCH_SHARES,
            *(tuple(tuple(float(v) for v in row) for row in r) for r in rows))


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


ALIASES = {"int32_imad": "imad"}  # names benchmarks/microbench.py uses for FIGURES


def _value(entry, key: str, path: str):
    if isinstance(entry, dict):
        if "value" not in entry:
            raise ValueError(f"{path}: entry {key!r} has no 'value'")
        return entry["value"], str(entry.get("source") or entry.get("method") or "")
    return entry, ""


def read_figures(text: str, path: str = "figures", complete: bool = True) -> tuple[dict, dict]:
    """``(values, sources)`` from a figures JSON.

    Two formats: one entry per figure (``{"value": v, "source" or "method": "..."}``), or the
    output of ``benchmarks/microbench.py`` (plain numbers, a ``methods`` table, a ``header``
    naming the engine; figures measured on the emulator are refused). ``complete``: every
    figure of :data:`FIGURES` must be there (a file that overrides another may hold some).
    """
    data = json.loads(text)
    if isinstance(data.get("figures"), dict):
        data = data["figures"]
    if (data.get("header") or {}).get("engine") == "emu":
        raise ValueError(f"{path} was measured on the emulator: host times, not GPU figures")
    methods = data.get("methods") if isinstance(data.get("methods"), dict) else {}
    data = {ALIASES.get(k, k): v for k, v in data.items()}
    methods = {ALIASES.get(k, k): v for k, v in methods.items()}
    values, sources = {}, {}
    for k in FIGURES + OPTIONAL:
        if data.get(k) is None:
            continue
        v, src = _value(data[k], k, path)
        values[k], sources[k] = float(v), src or f"measured: {methods.get(k, path)}"
    if data.get("copy_curves") is not None:
        values["copy_curves"] = read_curves(data["copy_curves"], path)
        sources["copy_curves"] = f"measured: {methods.get('copy_curves', path)}"
    if data.get("d2d_unaligned_us") is not None:
        values["d2d_unaligned_us"] = read_curves({"d2d": data["d2d_unaligned_us"]},
                                                 f"{path}: d2d_unaligned_us")["d2d"]
        sources["d2d_unaligned_us"] = f"measured: {methods.get('d2d_unaligned_us', path)}"
    if data.get("l2_relaunch") is not None:
        values["l2_relaunch"] = read_relaunch(data["l2_relaunch"], path)
        sources["l2_relaunch"] = data["l2_relaunch"].get("source", path)
    for name in TABLES:
        if data.get(name) is not None:
            entry = data[name]
            values[name] = read_table(entry, path, name)
            sources[name] = (isinstance(entry, dict) and entry.get("source")) or \
                f"measured: {methods.get(name, path)}"
    missing = [k for k in FIGURES if k not in values]
    if complete and missing:
        raise ValueError(f"{path} lacks {', '.join(missing)}")
    for k in ("sm_count", "l2_bytes"):
        if k in values:
            values[k] = int(values[k])
    return values, sources


def figures_in(folder, name: str) -> tuple[dict, dict]:
    """The figures of file ``name`` in ``folder``, overridden by ``<name>.measured.json``
    (``benchmarks/microbench.py``'s output) where that exists."""
    values, sources = read_figures(folder.joinpath(name).read_text(), name)
    measured = folder.joinpath(name.replace(".json", ".measured.json"))
    if measured.is_file():
        more, more_sources = read_figures(measured.read_text(), measured.name, complete=False)
        values.update(more)
        sources.update(more_sources)
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
    values, sources = figures_in(resources.files(__package__).joinpath("devices"),
                                 a["figures"])
    return Device(key, a["name"], a["compute_capability"], float(a["issue_per_clk_per_sm"]),
                  int(a["l1_bytes_per_sm"]), values, sources)
