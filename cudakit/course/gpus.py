"""The GPUs (or MIG instances) of a course machine, shared out among single-user servers.

``discover()`` reads ``nvidia-smi -L``: each GPU is one unit, except a GPU with MIG
instances, whose instances are the units (a MIG-enabled GPU is not usable as a
whole). ``GpuPool`` hands a unit to each server that starts, always the one with
the fewest servers on it and the earliest in order among those, which is round
robin while servers only start; a stopped server's unit becomes free again.
Units are named by UUID in ``CUDA_VISIBLE_DEVICES``, since CUDA's device order can
differ from nvidia-smi's. The hub's own ``CUDA_VISIBLE_DEVICES`` (indices or
UUIDs) limits the pool, so staff can keep a GPU out of the course.

nvidia-smi's listing is parsed by hand because NVML's Python bindings would add a
dependency to the hub for two regular expressions.

>>> units = parse_listing('''GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-aaa)
...   MIG 3g.20gb     Device  0: (UUID: MIG-bbb)
...   MIG 3g.20gb     Device  1: (UUID: MIG-ccc)
... GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-ddd)''')
>>> [u.uuid for u in units]
['MIG-bbb', 'MIG-ccc', 'GPU-ddd']
>>> pool = GpuPool(units)
>>> [pool.acquire(user).uuid for user in ("ann", "bob", "cho", "dan")]
['MIG-bbb', 'MIG-ccc', 'GPU-ddd', 'MIG-bbb']
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

GPU_LINE = re.compile(r"^GPU (?P<index>\d+): (?P<name>.+?) \(UUID: (?P<uuid>GPU-[0-9a-fA-F-]+)\)")
MIG_LINE = re.compile(r"^\s+MIG (?P<profile>\S+)\s+Device\s+(?P<index>\d+): "
                      r"\(UUID: (?P<uuid>MIG-[0-9a-fA-F/-]+)\)")


@dataclass(frozen=True)
class Unit:
    """One device a server can be given: a whole GPU or one MIG instance of it."""

    gpu: int  # nvidia-smi's index of the (parent) GPU
    uuid: str  # "GPU-..." or "MIG-...": the value for CUDA_VISIBLE_DEVICES
    name: str  # "NVIDIA H100 80GB HBM3" or "NVIDIA A100-SXM4-40GB MIG 3g.20gb"

    @property
    def mig(self) -> bool:
        return self.uuid.startswith("MIG-")


def parse_listing(text: str) -> list[Unit]:
    """The units in the output of ``nvidia-smi -L`` (see the module docstring)."""
    gpus: list[tuple[Unit, list[Unit]]] = []
    for line in text.splitlines():
        if match := GPU_LINE.match(line):
            gpus.append((Unit(int(match["index"]), match["uuid"], match["name"]), []))
        elif (match := MIG_LINE.match(line)) and gpus:
            gpu = gpus[-1][0]
            gpus[-1][1].append(Unit(gpu.gpu, match["uuid"], f"{gpu.name} MIG {match['profile']}"))
    return [unit for gpu, migs in gpus for unit in (migs or [gpu])]


def restrict(units: list[Unit], visible: str | None) -> list[Unit]:
    """The units allowed by a ``CUDA_VISIBLE_DEVICES`` value (None or "" allows all).

    >>> units = [Unit(0, "GPU-a", "x"), Unit(1, "MIG-b", "y"), Unit(2, "GPU-c", "z")]
    >>> [u.uuid for u in restrict(units, "0,2")], [u.uuid for u in restrict(units, "MIG-b")]
    (['GPU-a', 'GPU-c'], ['MIG-b'])
    """
    if not visible:
        return list(units)
    wanted = {item.strip() for item in visible.split(",") if item.strip()}
    return [u for u in units if str(u.gpu) in wanted or u.uuid in wanted]


def discover(nvidia_smi: str = "nvidia-smi", visible: str | None = None) -> list[Unit]:
    """The units of this machine; an empty list when nvidia-smi is missing or fails."""
    try:
        listing = subprocess.run([nvidia_smi, "-L"], capture_output=True, text=True,
                                 timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return restrict(parse_listing(listing), visible)


class GpuPool:
    """Which server holds which unit: ``acquire`` as a server starts, ``release`` as it stops."""

    def __init__(self, units: list[Unit]):
        self.units = list(units)
        self.holders: dict[str, Unit] = {}

    def load(self, unit: Unit) -> int:
        """How many servers hold ``unit`` now."""
        return sum(held == unit for held in self.holders.values())

    def acquire(self, server: str) -> Unit | None:
        """The unit for ``server`` (the one it holds already, if any); None without units."""
        if server in self.holders:
            return self.holders[server]
        if not self.units:
            return None
        unit = min(self.units, key=self.load)  # min keeps the earliest of equal loads
        self.holders[server] = unit
        return unit

    def release(self, server: str) -> None:
        """Free ``server``'s unit (nothing happens for a server without one)."""
        self.holders.pop(server, None)
