"""Launching a compiled kernel: check the configuration and arguments, run batches of blocks.

Blocks run in batches of up to ``LANES`` threads, in block order; each batch runs
the kernel body once, vectorised over all its lanes.
"""

from __future__ import annotations

import os
import time

import numpy as np

from .. import arch
from ..errors import ArgumentError, CudakitError, LaunchError, UnsupportedError
from .compiler import Kernel
from .runtime import Batch

LANES = 1 << 16  # threads per batch of blocks
SHARED_PER_BATCH = 8 << 20  # bytes of shared memory per batch (racecheck keeps 7x that)
DEVICE = arch.get("sm_90")  # the emulated device: an H100's launch limits
DEFAULT_TIMEOUT = 10.0


def default_timeout() -> float:
    """Seconds of emulation before ``KernelTimeout`` (env ``CUDAKIT_EMU_TIMEOUT``)."""
    return float(os.environ.get("CUDAKIT_EMU_TIMEOUT", DEFAULT_TIMEOUT))


def dims3(value, what: str, limits) -> tuple[int, int, int]:
    if isinstance(value, (int, np.integer)):
        value = (int(value),)
    try:
        vals = [int(v) for v in value]
    except TypeError:
        raise LaunchError(f"{what} must be a tuple of 1 to 3 integers, got {value!r}") from None
    if not 1 <= len(vals) <= 3:
        raise LaunchError(f"{what} must have 1 to 3 dimensions, got {value!r}")
    vals += [1] * (3 - len(vals))
    for v, lim, axis in zip(vals, limits, "xyz", strict=False):
        if v < 1 or v > lim:
            raise LaunchError(f"{what}.{axis} = {v} is outside 1..{lim}")
    return tuple(vals)


def convert_args(kernel: Kernel, args) -> list:
    """Kernel argument values (uint64 addresses, typed scalars) in parameter order."""
    if len(args) != len(kernel.params):
        names = ", ".join(f"{t} {n}" for n, t in kernel.params)
        raise ArgumentError(f"kernel '{kernel.name}' takes {len(kernel.params)} arguments "
                            f"({names}), got {len(args)}")
    out = []
    for i, ((name, t), a) in enumerate(zip(kernel.params, args, strict=False)):
        where = f"argument #{i} ('{t} {name}') of kernel '{kernel.name}'"
        if t.kind == "ptr":
            addr = _address(a)
            if addr is None:
                raise ArgumentError(f"{where} must be a device pointer (mem_alloc, "
                                    f"cuda.In/Out, a GPUArray), got {type(a).__name__}")
            out.append(np.uint64(addr))
        elif t.is_arith:
            if not isinstance(a, (np.generic,)) or isinstance(a, np.void):
                raise ArgumentError(
                    f"{where} got a plain Python {type(a).__name__}; as with PyCUDA, pass a "
                    f"NumPy scalar of the exact type, e.g. np.{t.dtype.name}({a!r})")
            if a.dtype.itemsize != t.dtype.itemsize or (a.dtype.kind == "f") != (
                    t.kind == "float"):
                raise ArgumentError(f"{where} got np.{a.dtype.name}; pass np.{t.dtype.name} "
                                    f"(the GPU would reinterpret the bytes)")
            out.append(np.asarray(a).view(t.dtype)[()])
        elif t.kind in ("vec", "struct"):
            out.append(_unpack(a, t, where))
        else:
            raise ArgumentError(f"{where}: parameters of type '{t}' are not supported")
    return out


def _unpack(a, t, where: str):
    """A struct or vector argument passed as bytes (``np.void``, a record, a 1-element array)."""
    raw = np.asarray(a).tobytes() if isinstance(a, (np.void, np.ndarray)) else None
    if raw is None or len(raw) != t.size:
        got = "?" if raw is None else len(raw)
        raise ArgumentError(f"{where} must be a NumPy record or array of {t.size} bytes "
                            f"(got {got}); build it with a structured dtype")
    return _decode(raw, 0, t, where)


def _decode(raw: bytes, off: int, t, where: str):
    if t.kind == "vec":
        return tuple(np.frombuffer(raw, t.base.dtype, t.dims[0], off))
    if t.kind == "struct":
        return tuple(_decode(raw, off + o, ft, where) for _, ft, o in t.fields)
    if t.kind in ("int", "float", "bool"):
        return np.frombuffer(raw, t.dtype, 1, off)[0]
    if t.kind == "ptr":
        return np.frombuffer(raw, np.uint64, 1, off)[0]
    raise ArgumentError(f"{where}: members of type '{t}' cannot be passed by value here")


def _address(a):
    from .driver import DeviceAllocation

    if isinstance(a, DeviceAllocation):
        return int(a)
    if hasattr(a, "gpudata"):
        return int(a.gpudata)
    if isinstance(a, (np.uint64, np.intp, int)) and not isinstance(a, bool):
        return int(a)
    return None


def launch(kernel: Kernel, args, grid, block, shared: int = 0, racecheck: bool = True,
           timeout: float | None = None, trace=None, counter=None) -> None:
    """Run ``kernel`` over ``grid`` x ``block`` threads with ``shared`` dynamic bytes."""
    block = dims3(block, "block", DEVICE.max_block_dim)
    grid = dims3(grid, "grid", DEVICE.max_grid_dim)
    tpb = block[0] * block[1] * block[2]
    if tpb > DEVICE.max_threads_per_block:
        raise LaunchError(f"block {block} has {tpb} threads; the limit is "
                          f"{DEVICE.max_threads_per_block} per block")
    shared = int(shared or 0)
    if shared < 0:
        raise LaunchError(f"shared={shared}: the dynamic shared memory size cannot be negative")
    if kernel.shared_static > DEVICE.shared_memory_per_block:
        raise LaunchError(f"kernel '{kernel.name}' declares {kernel.shared_static} bytes of "
                          f"__shared__ arrays; the limit is {DEVICE.shared_memory_per_block}")
    dyn_offset = -(-kernel.shared_static // 16) * 16
    total = dyn_offset + shared if shared else kernel.shared_static
    if total > DEVICE.shared_memory_per_block_optin:
        raise LaunchError(f"kernel '{kernel.name}' needs {total} bytes of shared memory per "
                          f"block; an H100 allows at most {DEVICE.shared_memory_per_block_optin}"
                          f" (above 48 KB only as dynamic shared memory)")
    values = convert_args(kernel, args)
    nblocks = grid[0] * grid[1] * grid[2]
    pad = -(-tpb // 32) * 32
    per_batch = max(1, min(nblocks, LANES // pad, SHARED_PER_BATCH // max(total, 1)))
    limit = default_timeout() if timeout is None else float(timeout)
    deadline = time.perf_counter() + limit
    with np.errstate(all="ignore"):
        for first in range(0, nblocks, per_batch):
            count = min(per_batch, nblocks - first)
            b = Batch(kernel, grid, block, first, count, total, racecheck, trace, deadline,
                      counter)
            b.dyn_offset = dyn_offset
            b.frame = [None] * kernel.nslots
            b.frame[: len(values)] = values
            b.frame_base = b.reserve_local(kernel.frame_bytes) if kernel.frame_bytes else 0
            try:
                kernel.body(b)
            except CudakitError:
                raise
            except RecursionError as exc:
                raise UnsupportedError(f"kernel '{kernel.name}' nests too deeply to emulate "
                                       f"(near line {b.line})") from exc
            except Exception as exc:  # a gap in the emulator, not the user's fault
                raise UnsupportedError(
                    f"the emulator failed on line {b.line} of kernel '{kernel.name}' "
                    f"({type(exc).__name__}: {exc}); this construct is probably outside the "
                    f"supported subset. Please report it; it runs on a GPU.") from exc
