"""Occupancy calculator: how many blocks and warps of a kernel fit on one SM.

For compute capability 3.0 and newer the rules are those of CUDA 13's
``cuda_occupancy.h`` (``cudaOccMaxActiveBlocksPerMultiprocessor`` with the
default device state and the per-function opt-in shared memory limit); 2.x
follows the same header as CUDA 7 shipped it; 1.x follows NVIDIA's occupancy
spreadsheet as the textbook explains it in section 6-1 (registers go to whole
blocks, warps rounded up to pairs).

Every limit is computed on NumPy arrays, so a whole curve (occupancy against
block size, registers or shared memory) costs one call of :func:`sweep`.

>>> r = calculate("1.3", 480, 2, 24)        # textbook figure 6-1-14
>>> r.active_blocks_per_sm, r.active_warps_per_sm, f"{r.occupancy:.0%}"
(2, 30, '94%')
>>> calculate("sm_90", 256, 64, 0).limiter
'registers'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np

from . import arch as _arch
from .arch import ArchSpec

#: limit names in the order cuda_occupancy.h reports them
LIMITS = ("warps", "registers", "shared_memory", "blocks", "barriers")

_UNLIMITED = np.iinfo(np.int64).max
_MAX_BARRIERS = 16


@dataclass(frozen=True)
class Occupancy:
    """The answer of :func:`calculate` for one configuration.

    ``block_limits`` maps each limit in :data:`LIMITS` to the number of blocks
    it alone would allow per SM (``None``: that resource does not limit).
    ``limiter`` is the first binding limit in :data:`LIMITS` order and
    ``limiters`` all that bind.
    """

    arch: ArchSpec
    block_size: int
    registers_per_thread: int
    shared_memory_per_block: int
    active_blocks_per_sm: int
    block_limits: dict[str, int | None]
    limiters: tuple[str, ...]
    warps_per_block: int
    allocated_registers_per_block: int
    allocated_shared_memory_per_block: int
    shared_memory_per_sm: int

    @property
    def limiter(self) -> str:
        return self.limiters[0]

    @property
    def max_warps_per_sm(self) -> int:
        return self.arch.max_warps_per_sm

    @property
    def active_warps_per_sm(self) -> int:
        return self.active_blocks_per_sm * self.warps_per_block

    @property
    def active_threads_per_sm(self) -> int:
        return self.active_blocks_per_sm * self.block_size

    @property
    def occupancy(self) -> float:
        """Active warps over the SM's maximum warps, 0..1."""
        return self.active_warps_per_sm / self.max_warps_per_sm

    def __str__(self) -> str:
        limits = ", ".join(
            f"{name} {'-' if n is None else n}" for name, n in self.block_limits.items()
        )
        return (
            f"{self.arch.name}: {self.block_size} threads, {self.registers_per_thread} regs, "
            f"{self.shared_memory_per_block} B shared -> {self.active_blocks_per_sm} blocks, "
            f"{self.active_warps_per_sm}/{self.max_warps_per_sm} warps "
            f"({self.occupancy:.0%}), limited by {self.limiter} [blocks per limit: {limits}]"
        )


@dataclass(frozen=True)
class Sweep:
    """Vectorised results of :func:`sweep`: one entry per configuration."""

    arch: ArchSpec
    block_size: np.ndarray
    active_blocks_per_sm: np.ndarray
    active_warps_per_sm: np.ndarray
    occupancy: np.ndarray
    block_limits: dict[str, np.ndarray]  # unlimited entries hold UNLIMITED
    limiting: np.ndarray  # bit i set: LIMITS[i] binds
    allocated_registers_per_block: np.ndarray
    allocated_shared_memory_per_block: np.ndarray
    shared_memory_per_sm: np.ndarray


@dataclass(frozen=True)
class LaunchSuggestion:
    """Answer of :func:`max_potential_block_size`."""

    block_size: int
    blocks_per_sm: int
    min_grid_size: int | None  # blocks_per_sm * SMs; None when the SM count is unknown
    occupancy: float


UNLIMITED = int(_UNLIMITED)


# --------------------------------------------------------------------------- inputs


def kernel_info(obj: Any) -> Any | None:
    """The KernelInfo behind a compiled kernel or a ``%%cuda`` Kernel, else None."""
    info = getattr(obj, "info", obj)
    if all(hasattr(info, a) for a in ("registers", "shared_static", "arch")):
        return info
    return None


def _integer(name: str, value: Any, low: int, high: int | None, unit: str = "") -> int:
    allowed = f"{low}..{high}" if high is not None else f">= {low}"
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer{unit} in {allowed}, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} = {value} is out of range: allowed {allowed}{unit}")
    return value


def _check_array(name: str, values: np.ndarray, low: int, high: int | None) -> None:
    bad = values < low
    if high is not None:
        bad |= values > high
    if bad.any():
        allowed = f"{low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} = {int(values[bad][0])} is out of range: allowed {allowed}")


def _as_int_array(name: str, values: Any) -> np.ndarray:
    array = np.asarray(values)
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold integers, got dtype {array.dtype}")
    return array.astype(np.int64)


def _check_carveout(spec: ArchSpec, carveout: int | None) -> int | None:
    if carveout is None:
        return None
    if spec.compute_capability[0] < 7:
        raise ValueError(
            f"shared_memory_carveout applies from compute capability 7.0 on, "
            f"not to {spec.version}; leave it None"
        )
    return _integer("shared_memory_carveout", carveout, 0, 100, " (percent)")


# --------------------------------------------------------------------------- rules


def _round_up(x: np.ndarray, unit: int | np.ndarray) -> np.ndarray:
    return -(-x // unit) * unit


def _align_to_carveout(spec: ArchSpec, size: np.ndarray) -> np.ndarray:
    """Smallest shared-memory carveout that holds ``size`` bytes."""
    carveouts = np.asarray(spec.shared_memory_carveouts, dtype=np.int64)
    index = np.searchsorted(carveouts, size, side="left")
    return carveouts[np.minimum(index, len(carveouts) - 1)]


def _register_limit(spec: ArchSpec, warps: np.ndarray, regs: np.ndarray):
    """(blocks allowed by registers, registers allocated per block)."""
    if spec.register_allocation_granularity == "block":
        warps_allocated = _round_up(warps, spec.warp_allocation_granularity)
        per_block = _round_up(regs * spec.warp_size * warps_allocated,
                              spec.register_allocation_unit)
        blocks = np.where(per_block > 0, spec.registers_per_sm // np.maximum(per_block, 1),
                          _UNLIMITED)
        blocks = np.where(per_block > spec.max_registers_per_block, 0, blocks)
        return blocks, per_block

    unit = np.where(np.isin(regs, spec.double_unit_register_counts),
                    2 * spec.register_allocation_unit, spec.register_allocation_unit)
    per_warp = _round_up(regs * spec.warp_size, unit)

    def fitting(partitions: int) -> np.ndarray:
        assumed = per_warp * _round_up(warps, partitions)
        warps_per_partition = (spec.registers_per_sm // partitions) // np.maximum(per_warp, 1)
        blocks = np.where(per_warp > 0, warps_per_partition * partitions // warps, _UNLIMITED)
        too_big = (assumed > spec.max_registers_per_block) | (
            per_warp * warps > spec.max_registers_per_block)
        return np.where(too_big, 0, blocks)

    blocks = fitting(spec.register_file_partitions)
    if spec.compute_capability == (6, 0):
        # The header refuses on GP100 what would not fit on GP10x (4 partitions).
        blocks = np.where(fitting(4) == 0, 0, blocks)
    return blocks, per_warp * warps


def _shared_memory_limit(spec: ArchSpec, smem: np.ndarray, carveout: int | None):
    """(blocks allowed by shared memory, bytes allocated per block, bytes per SM used)."""
    major = spec.compute_capability[0]
    reserved = spec.reserved_shared_memory_per_block
    allocated = _round_up(smem + reserved, spec.shared_memory_allocation_unit)
    if major >= 7:
        per_block_limit = spec.shared_memory_per_block_optin + reserved
        preferred = spec.shared_memory_per_sm if carveout is None else _align_to_carveout(
            spec, np.int64(carveout * spec.shared_memory_per_sm // 100))
        per_sm = np.where(preferred >= allocated, preferred, _align_to_carveout(spec, allocated))
    else:
        per_block_limit = spec.shared_memory_per_block
        per_sm = np.full_like(allocated, spec.shared_memory_per_sm)
    blocks = np.where(allocated > 0, per_sm // np.maximum(allocated, 1), _UNLIMITED)
    blocks = np.where(allocated > per_block_limit, 0, blocks)
    return blocks, allocated, per_sm


def sweep(
    compute_capability: str | tuple[int, int] | ArchSpec,
    block_size: Any,
    registers_per_thread: Any,
    shared_memory_per_block: Any,
    *,
    shared_memory_carveout: int | None = None,
    barriers: Any = 1,
) -> Sweep:
    """:func:`calculate` for arrays of configurations (NumPy broadcasting).

    >>> s = sweep("9.0", [128, 256, 1024], 32, 0)
    >>> s.active_blocks_per_sm.tolist(), s.occupancy.tolist()
    ([16, 8, 2], [1.0, 1.0, 1.0])
    """
    spec = _arch.get(compute_capability)
    carveout = _check_carveout(spec, shared_memory_carveout)
    block, regs, smem, bars = np.broadcast_arrays(
        _as_int_array("block_size", block_size),
        _as_int_array("registers_per_thread", registers_per_thread),
        _as_int_array("shared_memory_per_block", shared_memory_per_block),
        _as_int_array("barriers", barriers),
    )
    _check_array("block_size", block, 1, spec.max_threads_per_block)
    _check_array("registers_per_thread", regs, 0, spec.max_registers_per_thread)
    _check_array("shared_memory_per_block", smem, 0, None)
    _check_array("barriers", bars, 0, _MAX_BARRIERS)

    warps = -(-block // spec.warp_size)
    by_regs, regs_allocated = _register_limit(spec, warps, regs)
    by_smem, smem_allocated, smem_per_sm = _shared_memory_limit(spec, smem, carveout)
    by_warps = spec.max_warps_per_sm // warps
    by_blocks = np.full_like(block, spec.max_blocks_per_sm)
    active = np.minimum.reduce([by_warps, by_regs, by_smem, by_blocks])
    if spec.barriers_per_block_slot is not None:
        available = spec.barriers_per_block_slot * spec.max_blocks_per_sm
        by_barriers = np.where(bars > 0, available // np.maximum(bars, 1), _UNLIMITED)
        active = np.minimum(active, by_barriers)
    else:
        by_barriers = np.full_like(block, _UNLIMITED)

    limits = dict(zip(LIMITS, (by_warps, by_regs, by_smem, by_blocks, by_barriers),
                      strict=True))
    limiting = sum((limits[name] == active).astype(np.int64) << i
                   for i, name in enumerate(LIMITS))
    return Sweep(
        arch=spec,
        block_size=block,
        active_blocks_per_sm=active,
        active_warps_per_sm=active * warps,
        occupancy=active * warps / spec.max_warps_per_sm,
        block_limits=limits,
        limiting=limiting,
        allocated_registers_per_block=regs_allocated,
        allocated_shared_memory_per_block=smem_allocated,
        shared_memory_per_sm=np.broadcast_to(smem_per_sm, block.shape),
    )


# --------------------------------------------------------------------------- public API


def _resolve(
    compute_capability: Any,
    registers_per_thread: int | None,
    shared_memory_per_block: int | None,
    dynamic_shared_memory: int,
    barriers: int | None,
) -> tuple[ArchSpec, int, int, int]:
    info = kernel_info(compute_capability)
    if info is not None:
        spec = _arch.get(info.arch)
        if registers_per_thread is None:
            registers_per_thread = info.registers
        if shared_memory_per_block is None:
            shared_memory_per_block = info.shared_static
        if barriers is None:
            barriers = getattr(info, "barriers", 1)
    else:
        spec = _arch.get(compute_capability)
        if registers_per_thread is None or shared_memory_per_block is None:
            raise ValueError(
                "registers_per_thread and shared_memory_per_block are required unless a "
                "compiled kernel is passed in place of compute_capability"
            )
    regs = _integer("registers_per_thread", registers_per_thread, 0,
                    spec.max_registers_per_thread)
    smem = _integer("shared_memory_per_block", shared_memory_per_block, 0, None, " bytes")
    smem += _integer("dynamic_shared_memory", dynamic_shared_memory, 0, None, " bytes")
    bars = _integer("barriers", 1 if barriers is None else barriers, 0, _MAX_BARRIERS)
    return spec, regs, smem, bars


def calculate(
    compute_capability: Any,
    block_size: int,
    registers_per_thread: int | None = None,
    shared_memory_per_block: int | None = None,
    *,
    shared_memory_carveout: int | None = None,
    dynamic_shared_memory: int = 0,
    barriers: int | None = None,
) -> Occupancy:
    """Active blocks and warps per SM of one launch configuration.

    ``compute_capability`` is ``"9.0"``, ``(9, 0)``, ``"sm_90"``, or a compiled
    kernel (``cudakit.compile(...).kernels[name]`` or a ``%%cuda`` Kernel): then
    its architecture, registers and static shared memory come from ptxas
    (explicit arguments override them). ``shared_memory_per_block`` is static
    plus dynamic bytes; ``dynamic_shared_memory`` is added to it (handy with a
    kernel, whose static bytes are already known).
    ``shared_memory_carveout`` is the preferred shared-memory share of the
    unified L1 in percent (7.0 and newer; None: the driver's default).
    ``barriers`` is the count of named barriers per block (default 1, as a
    kernel with ``__syncthreads()``); it limits from 9.0 on.

    >>> r = calculate("sm_90", 1024, 33, 0)
    >>> r.active_blocks_per_sm, r.limiter, r.block_limits["registers"]
    (1, 'registers', 1)
    >>> calculate("8.6", 128, 32, 200_000).block_limits["shared_memory"]
    0
    """
    spec, regs, smem, bars = _resolve(compute_capability, registers_per_thread,
                                      shared_memory_per_block, dynamic_shared_memory, barriers)
    block = _integer("block_size", block_size, 1, spec.max_threads_per_block, " threads")
    s = sweep(spec, block, regs, smem, shared_memory_carveout=shared_memory_carveout,
              barriers=bars)
    limits = {name: (None if int(v) == UNLIMITED else int(v))
              for name, v in s.block_limits.items()}
    bits = int(s.limiting)
    return Occupancy(
        arch=spec,
        block_size=block,
        registers_per_thread=regs,
        shared_memory_per_block=smem,
        active_blocks_per_sm=int(s.active_blocks_per_sm),
        block_limits=limits,
        limiters=tuple(name for i, name in enumerate(LIMITS) if bits >> i & 1),
        warps_per_block=-(-block // spec.warp_size),
        allocated_registers_per_block=int(s.allocated_registers_per_block),
        allocated_shared_memory_per_block=int(s.allocated_shared_memory_per_block),
        shared_memory_per_sm=int(s.shared_memory_per_sm),
    )


def _present_sm_count(spec: ArchSpec) -> int | None:
    """SMs of the GPU in use if it has ``spec``'s compute capability, else None."""
    from .backend import on_gpu

    try:
        if not on_gpu():
            return None
        from .device import device_info

        info = device_info()
    except Exception:  # no usable GPU: the count stays unknown
        return None
    return info.multiprocessors if tuple(info.compute_capability) == spec.compute_capability \
        else None


def max_potential_block_size(
    compute_capability: Any,
    registers_per_thread: int | None = None,
    shared_memory_per_block: int | Callable[[int], int] | None = None,
    *,
    max_block_size: int | None = None,
    sm_count: int | None = None,
    shared_memory_carveout: int | None = None,
    barriers: int | None = None,
) -> LaunchSuggestion:
    """The block size with the most resident threads per SM, as
    ``cudaOccupancyMaxPotentialBlockSize`` picks it.

    ``shared_memory_per_block`` may be a function of the block size giving the
    dynamic bytes (as ``cudaOccupancyMaxPotentialBlockSizeVariableSMem``); with
    a compiled kernel the kernel's static shared memory is added to it.
    Block sizes are tried from the largest down in steps of a warp; ties keep the
    larger block. ``min_grid_size`` is ``blocks_per_sm * sm_count``; without
    ``sm_count`` the present GPU's SM count is used when it has this compute
    capability (as the CUDA runtime does), else it is None.

    >>> s = max_potential_block_size("9.0", 40, lambda b: 8 * b)
    >>> s.block_size, s.blocks_per_sm
    (768, 2)
    """
    has_kernel = kernel_info(compute_capability) is not None
    dynamic = shared_memory_per_block if callable(shared_memory_per_block) else None
    fixed = None if dynamic is not None else shared_memory_per_block
    if fixed is None and not has_kernel:
        fixed = 0
    spec, regs, base, bars = _resolve(compute_capability, registers_per_thread, fixed, 0,
                                      barriers)
    limit = spec.max_threads_per_block
    if max_block_size is not None:
        limit = min(limit, _integer("max_block_size", max_block_size, 1, None, " threads"))
    if sm_count is not None:
        sm_count = _integer("sm_count", sm_count, 1, None)
    else:
        sm_count = _present_sm_count(spec)
    aligned = np.arange(_round_up(np.int64(limit), spec.warp_size), 0, -spec.warp_size)
    blocks = np.minimum(aligned, limit)
    smem = np.full_like(blocks, base)
    if dynamic is not None:
        smem = smem + np.array([_integer("shared_memory_per_block(block_size)", dynamic(int(b)),
                                         0, None, " bytes") for b in blocks], dtype=np.int64)
    s = sweep(spec, blocks, regs, smem, shared_memory_carveout=shared_memory_carveout,
              barriers=bars)
    threads = s.active_blocks_per_sm * blocks
    best = int(np.argmax(threads))  # first maximum = largest block size
    if threads[best] == 0:
        return LaunchSuggestion(0, 0, 0 if sm_count else None, 0.0)
    per_sm = int(s.active_blocks_per_sm[best])
    return LaunchSuggestion(
        block_size=int(blocks[best]),
        blocks_per_sm=per_sm,
        min_grid_size=None if sm_count is None else per_sm * sm_count,
        occupancy=float(s.occupancy[best]),
    )
