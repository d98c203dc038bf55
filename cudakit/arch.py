"""Hardware facts per compute capability: the single source for cudakit.

The occupancy calculator, the emulator, launch validation and device info all
read their limits from here. Values for compute capability 7.0 and newer follow
the CUDA Programming Guide's "Compute Capabilities" tables and the device model
of CUDA 13's ``cuda_occupancy.h``; 3.x to 6.x follow the same guide's older
tables; 1.x and 2.x follow the CUDA 3/4 guides, the occupancy spreadsheet and
the textbook (section 6-1 describes the Tesla C1060, compute capability 1.3).

>>> from cudakit import arch
>>> spec = arch.get("sm_90")
>>> spec.max_warps_per_sm, spec.shared_memory_per_block_optin
(64, 232448)
>>> arch.parse("1.3"), arch.get((1, 3)).register_allocation_unit
((1, 3), 512)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KB = 1024

_FAMILIES = {
    1: "Tesla",
    2: "Fermi",
    3: "Kepler",
    5: "Maxwell",
    6: "Pascal",
    7: "Volta",
    8: "Ampere",
    9: "Hopper",
    10: "Blackwell",
    11: "Blackwell",
    12: "Blackwell",
}


@dataclass(frozen=True)
class ArchSpec:
    """Per-SM and per-block limits of one compute capability.

    Register allocation: on 1.x registers go to whole blocks
    (``register_allocation_granularity == "block"``): the block's warps are first
    rounded up to ``warp_allocation_granularity`` and the block's registers to
    ``register_allocation_unit``. From 2.x on they go to warps
    (``"warp"``): each warp's registers round up to ``register_allocation_unit``,
    and the register file is split into ``register_file_partitions`` equal parts
    that each hold whole warps (Fermi rounds to twice the unit for the
    per-thread counts in ``double_unit_register_counts``); there
    ``warp_allocation_granularity`` equals the partition count, the multiple a
    block's warps are rounded up to when the hardware checks the per-block
    register limit.

    >>> get("7.5").max_threads_per_sm
    1024
    """

    compute_capability: tuple[int, int]
    max_threads_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    max_registers_per_block: int
    max_registers_per_thread: int
    register_allocation_unit: int
    register_allocation_granularity: str
    warp_allocation_granularity: int
    register_file_partitions: int
    shared_memory_per_sm: int
    shared_memory_allocation_unit: int
    shared_memory_carveouts: tuple[int, ...]
    fp32_lanes_per_sm: int
    shared_memory_per_block: int = 48 * KB
    shared_memory_per_block_optin: int = 48 * KB
    reserved_shared_memory_per_block: int = 0
    max_threads_per_block: int = 1024
    max_block_dim: tuple[int, int, int] = (1024, 1024, 64)
    max_grid_dim: tuple[int, int, int] = (2**31 - 1, 65535, 65535)
    shared_memory_banks: int = 32
    barriers_per_block_slot: int | None = None
    warp_size: int = 32
    double_unit_register_counts: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        """``"sm_90"`` style name (``"sm_100"`` for 10.0)."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"

    @property
    def version(self) -> str:
        """``"9.0"`` style name."""
        return _dotted(self.compute_capability)

    @property
    def family(self) -> str:
        """Architecture family, e.g. ``"Hopper"``."""
        major, minor = self.compute_capability
        if (major, minor) == (7, 5):
            return "Turing"
        if (major, minor) == (8, 9):
            return "Ada Lovelace"
        return _FAMILIES[major]

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size

    @property
    def max_barriers_per_sm(self) -> int | None:
        """Named barriers per SM as ``cuda_occupancy.h`` models them (9.0 and newer)."""
        if self.barriers_per_block_slot is None:
            return None
        return self.barriers_per_block_slot * self.max_blocks_per_sm

    @property
    def registers_per_partition(self) -> int:
        return self.registers_per_sm // self.register_file_partitions


def _tesla(minor: int) -> ArchSpec:
    late = minor >= 2
    return ArchSpec(
        compute_capability=(1, minor),
        max_threads_per_sm=1024 if late else 768,
        max_blocks_per_sm=8,
        registers_per_sm=16384 if late else 8192,
        max_registers_per_block=16384 if late else 8192,
        max_registers_per_thread=128,
        register_allocation_unit=512 if late else 256,
        register_allocation_granularity="block",
        warp_allocation_granularity=2,
        register_file_partitions=1,
        shared_memory_per_sm=16 * KB,
        shared_memory_per_block=16 * KB,
        shared_memory_per_block_optin=16 * KB,
        shared_memory_allocation_unit=512,
        shared_memory_carveouts=(16 * KB,),
        fp32_lanes_per_sm=8,
        max_threads_per_block=512,
        max_block_dim=(512, 512, 64),
        max_grid_dim=(65535, 65535, 1),
        shared_memory_banks=16,
    )


def _fermi(minor: int) -> ArchSpec:
    return ArchSpec(
        compute_capability=(2, minor),
        max_threads_per_sm=1536,
        max_blocks_per_sm=8,
        registers_per_sm=32768,
        max_registers_per_block=32768,
        max_registers_per_thread=63,
        register_allocation_unit=64,
        register_allocation_granularity="warp",
        warp_allocation_granularity=2,
        register_file_partitions=2,
        shared_memory_per_sm=48 * KB,
        shared_memory_allocation_unit=128,
        shared_memory_carveouts=(16 * KB, 48 * KB),
        fp32_lanes_per_sm=32 if minor == 0 else 48,
        max_grid_dim=(65535, 65535, 65535),
        # CUDA 7's cuda_occupancy.h: for these per-thread counts Fermi rounds a
        # warp's registers to twice the allocation unit (128 instead of 64).
        double_unit_register_counts=(21, 22, 29, 30, 37, 38, 45, 46),
    )


def _modern(
    cc: tuple[int, int],
    *,
    threads: int = 2048,
    blocks: int = 32,
    regs_per_block: int = 65536,
    regs_per_sm: int = 65536,
    max_regs: int = 255,
    smem: int,
    optin: int | None = None,
    carveouts: tuple[int, ...] | None = None,
    lanes: int,
    partitions: int = 4,
    barriers: int | None = None,
) -> ArchSpec:
    major = cc[0]
    return ArchSpec(
        compute_capability=cc,
        max_threads_per_sm=threads,
        max_blocks_per_sm=blocks,
        registers_per_sm=regs_per_sm,
        max_registers_per_block=regs_per_block,
        max_registers_per_thread=max_regs,
        register_allocation_unit=256,
        register_allocation_granularity="warp",
        warp_allocation_granularity=partitions,
        register_file_partitions=partitions,
        shared_memory_per_sm=smem,
        shared_memory_per_block_optin=optin if optin is not None else 48 * KB,
        reserved_shared_memory_per_block=1 * KB if major >= 8 else 0,
        shared_memory_allocation_unit=128 if major >= 8 else 256,
        shared_memory_carveouts=carveouts if carveouts is not None else (smem,),
        fp32_lanes_per_sm=lanes,
        barriers_per_block_slot=barriers,
    )


def _carveouts(*kb: int) -> tuple[int, ...]:
    return tuple(k * KB for k in kb)


_VOLTA = _carveouts(0, 8, 16, 32, 64, 96)
_TURING = _carveouts(32, 64)
_A100 = _carveouts(0, 8, 16, 32, 64, 100, 132, 164)
_GA10X = _carveouts(0, 8, 16, 32, 64, 100)
_H100 = _carveouts(0, 8, 16, 32, 64, 100, 132, 164, 196, 228)

_SPECS: dict[tuple[int, int], ArchSpec] = {
    s.compute_capability: s
    for s in [
        _tesla(0),
        _tesla(1),
        _tesla(2),
        _tesla(3),
        _fermi(0),
        _fermi(1),
        _modern((3, 0), blocks=16, max_regs=63, smem=48 * KB, lanes=192),
        _modern((3, 2), blocks=16, regs_per_block=32768, smem=48 * KB, lanes=192),
        _modern((3, 5), blocks=16, smem=48 * KB, lanes=192),
        _modern((3, 7), blocks=16, regs_per_sm=131072, smem=112 * KB, lanes=192),
        _modern((5, 0), smem=64 * KB, lanes=128),
        _modern((5, 2), smem=96 * KB, lanes=128),
        _modern((5, 3), regs_per_block=32768, smem=64 * KB, lanes=128),
        _modern((6, 0), smem=64 * KB, lanes=64, partitions=2),
        _modern((6, 1), smem=96 * KB, lanes=128),
        _modern((6, 2), regs_per_block=32768, smem=64 * KB, lanes=128),
        _modern((7, 0), smem=96 * KB, optin=96 * KB, carveouts=_VOLTA, lanes=64),
        _modern((7, 2), smem=96 * KB, optin=96 * KB, carveouts=_VOLTA, lanes=64),
        _modern((7, 5), threads=1024, blocks=16, smem=64 * KB, optin=64 * KB,
                carveouts=_TURING, lanes=64),
        _modern((8, 0), smem=164 * KB, optin=163 * KB, carveouts=_A100, lanes=64),
        _modern((8, 6), threads=1536, blocks=16, smem=100 * KB, optin=99 * KB,
                carveouts=_GA10X, lanes=128),
        _modern((8, 7), threads=1536, blocks=16, smem=164 * KB, optin=163 * KB,
                carveouts=_A100, lanes=128),
        _modern((8, 9), threads=1536, blocks=24, smem=100 * KB, optin=99 * KB,
                carveouts=_GA10X, lanes=128),
        _modern((9, 0), smem=228 * KB, optin=227 * KB, carveouts=_H100, lanes=128, barriers=2),
        _modern((10, 0), smem=228 * KB, optin=227 * KB, carveouts=_H100, lanes=128, barriers=2),
        _modern((10, 3), smem=228 * KB, optin=227 * KB, carveouts=_H100, lanes=128, barriers=2),
        _modern((11, 0), threads=1536, blocks=24, smem=228 * KB, optin=227 * KB,
                carveouts=_H100, lanes=128, barriers=1),
        _modern((12, 0), threads=1536, blocks=24, smem=100 * KB, optin=99 * KB,
                carveouts=_GA10X, lanes=128, barriers=1),
        _modern((12, 1), threads=1536, blocks=24, smem=100 * KB, optin=99 * KB,
                carveouts=_GA10X, lanes=128, barriers=1),
    ]
}

_NAME = re.compile(r"^(?:sm_|compute_)?(\d+)([af]?)$")
_DOTTED = re.compile(r"^(\d+)\.(\d)$")


def known() -> list[tuple[int, int]]:
    """Every compute capability cudakit knows, oldest first.

    >>> known()[:2], known()[-1]
    ([(1, 0), (1, 1)], (12, 1))
    """
    return sorted(_SPECS)


def _dotted(cc: tuple[int, int]) -> str:
    return f"{cc[0]}.{cc[1]}"


def _names() -> str:
    return ", ".join(_dotted(cc) for cc in known())


def parse(compute_capability: str | int | tuple[int, int]) -> tuple[int, int]:
    """Turn ``"sm_90"``, ``"sm_90a"``, ``"compute_90"``, ``"9.0"``, ``"90"``, ``90``
    or ``(9, 0)`` into ``(9, 0)``; the capability need not be known.

    >>> parse("sm_100"), parse("1.3"), parse((12, 1))
    ((10, 0), (1, 3), (12, 1))
    """
    value = compute_capability
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return (value[0], value[1])
    if isinstance(value, int) and not isinstance(value, bool) and value >= 10:
        value = str(value)
    if isinstance(value, str):
        text = value.strip().lower()
        dotted = _DOTTED.match(text)
        if dotted:
            return (int(dotted.group(1)), int(dotted.group(2)))
        named = _NAME.match(text)
        if named and len(named.group(1)) >= 2:
            digits = named.group(1)
            return (int(digits[:-1]), int(digits[-1]))
    raise ValueError(
        f"compute_capability {compute_capability!r} is not understood: write it as "
        f"'9.0', (9, 0) or 'sm_90'; known capabilities are {_names()}"
    )


def get(compute_capability: str | int | tuple[int, int] | ArchSpec) -> ArchSpec:
    """The :class:`ArchSpec` of a compute capability.

    >>> get("sm_86").max_blocks_per_sm
    16
    """
    if isinstance(compute_capability, ArchSpec):
        return compute_capability
    cc = parse(compute_capability)
    try:
        return _SPECS[cc]
    except KeyError:
        raise ValueError(
            f"compute_capability {_dotted(cc)} is unknown; known capabilities are {_names()}"
        ) from None
