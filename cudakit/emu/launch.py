"""Launching a kernel on the PTX engine: check the configuration and arguments, pack the
parameter buffer, run the blocks in batches.

Blocks run in batches of up to ``LANES`` threads, in block order; one batch runs the
kernel once, vectorised over all its lanes.
"""

from __future__ import annotations

import os
import time

import numpy as np

from .. import arch, occupancy
from ..errors import ArgumentError, CudakitError, LaunchError, UnsupportedError
from ..i18n.messages import _
from .batch import ALL, RESERVED, Batch
from .memory import HEAP, HEAP_BASE
from .module import _short
from .scheduler import Frame, run

LANES = 1 << 16
SHARED_PER_BATCH = 8 << 20
DEVICE = arch.get("sm_90")
H100_SMS = 132  # the emulated device's SMs (an H100 SXM), for cooperative launches
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
        raise LaunchError(_("{what} must be a tuple of 1 to 3 integers, got {value}").format(
            what=what, value=repr(value))) from None
    if not 1 <= len(vals) <= 3:
        raise LaunchError(_("{what} must have 1 to 3 dimensions, got {value}").format(
            what=what, value=repr(value)))
    vals += [1] * (3 - len(vals))
    for v, lim, axis in zip(vals, limits, "xyz", strict=False):
        if v < 1 or v > lim:
            raise LaunchError(_("{what}.{axis} = {value} is outside 1..{limit}").format(
                what=what, axis=axis, value=v, limit=lim))
    return tuple(vals)


class Kernel:
    """One ``.entry`` of a program, ready to launch."""

    def __init__(self, program, mangled: str):
        self.program = program
        self.mangled = mangled
        self.name = _short(mangled)
        self.dec = program.decoded(mangled)
        self.params = program.params(mangled)
        self.ptx_params = self.dec.fn.params
        self.shared_static, self.shared_symbols = program.layout(self.dec)
        self.frame_bytes = self.dec.depot
        self.reserved = "%reserved_smem_offset" in (program.compiled.ptx or "")


def pack_args(kernel: Kernel, args) -> dict[str, np.ndarray]:
    """The parameter buffers of a launch, checked against the C parameter list."""
    ptx = kernel.ptx_params
    cparams = kernel.params if len(kernel.params) == len(ptx) else [None] * len(ptx)
    if len(args) != len(ptx):
        names = ", ".join(str(p) for p in kernel.params)
        raise ArgumentError(_("kernel '{kernel}' takes {count} arguments ({names}), got "
                              "{got}").format(kernel=kernel.name, count=len(ptx), names=names,
                                              got=len(args)))
    out = {}
    for i, (var, cp, a) in enumerate(zip(ptx, cparams, args, strict=True)):
        where = _("argument #{index} ('{param}') of kernel '{kernel}'").format(
            index=i, param=cp, kernel=kernel.name) if cp else \
            _("argument #{index} of kernel '{kernel}'").format(index=i, kernel=kernel.name)
        size = var.size
        if cp is not None and cp.ctype.is_pointer:
            addr = _address(a)
            if addr is None:
                raise ArgumentError(_("{where} must be a device pointer (mem_alloc, "
                                      "cuda.In/Out, a GPUArray), got {kind}").format(
                    where=where, kind=type(a).__name__))
            raw = np.uint64(addr).tobytes()
        elif cp is not None and cp.ctype.dtype is not None and not cp.ctype.dtype.names:
            t = cp.ctype.dtype
            if not isinstance(a, np.generic) or isinstance(a, np.void):
                raise ArgumentError(_(
                    "{where} got a plain Python {kind}; as with PyCUDA, pass a NumPy scalar of "
                    "the exact type, e.g. {example}").format(
                        where=where, kind=type(a).__name__, example=f"np.{t.name}({a!r})"))
            if a.dtype.itemsize != t.itemsize or (a.dtype.kind == "f") != (t.kind == "f"):
                raise ArgumentError(_("{where} got np.{got}; pass np.{wanted} (the GPU would "
                                      "reinterpret the bytes)").format(
                    where=where, got=a.dtype.name, wanted=t.name))
            raw = np.asarray(a).tobytes()
        else:
            if isinstance(a, (np.generic, np.ndarray)):
                raw = np.asarray(a).tobytes()
            else:
                addr = _address(a)
                if addr is None:
                    raise ArgumentError(_("{where}: pass a NumPy value of {size} bytes").format(
                        where=where, size=size))
                raw = np.uint64(addr).tobytes()
            if len(raw) != size:
                raise ArgumentError(_("{where} must be {size} bytes (a NumPy record or array "
                                      "built with the struct's dtype), got {got}").format(
                    where=where, size=size, got=len(raw)))
        buf = np.zeros((1, max(size, 8)), np.uint8)
        buf[0, : len(raw)] = np.frombuffer(raw, np.uint8)
        out[var.name] = buf
    return out


def _address(a):
    if isinstance(a, np.ndarray):
        return None
    if hasattr(a, "gpudata"):
        return int(a.gpudata)
    if type(a).__name__ == "DeviceAllocation":
        return int(a)
    if isinstance(a, (np.uint64, np.intp, int)) and not isinstance(a, bool):
        return int(a)
    if hasattr(a, "__index__") and not isinstance(a, (np.generic, bool)):
        v = int(a)
        return v if v >= HEAP_BASE else None
    return None


def launch(kernel: Kernel, args, grid, block, shared: int = 0, racecheck: bool = True,
           timeout: float | None = None, trace=None, counter=None, blocks=None,
           on_timeout=None, clock=None, cooperative: bool = False) -> None:
    """Run ``kernel`` over ``grid`` x ``block`` threads with ``shared`` dynamic bytes.

    ``cooperative``: a cooperative launch (``cudaLaunchCooperativeKernel``), whose blocks
    may wait for each other at ``grid.sync()``: the grid must fit on the device at once
    (:func:`cooperative_limit`), and all its blocks run as one batch.

    ``blocks``: run only these runs of consecutive blocks, ``[(first, count), ...]`` in
    linear block order (``cudakit.predict`` samples a large grid so); default: all.
    ``on_timeout(frame)``: asked when ``timeout`` has passed; if it returns True it has set
    the batch's next deadline and the kernel runs on (:class:`~cudakit.emu.batch.Batch`).
    ``clock()``: what ``timeout`` and the deadlines count (default: seconds;
    ``cudakit.predict`` counts the emulator's work, so that its samples do not depend on the
    machine's load).
    """
    block = dims3(block, "block", DEVICE.max_block_dim)
    grid = dims3(grid, "grid", DEVICE.max_grid_dim)
    tpb = block[0] * block[1] * block[2]
    if tpb > DEVICE.max_threads_per_block:
        raise LaunchError(_("block {block} has {threads} threads; the limit is {limit} per "
                            "block").format(block=block, threads=tpb,
                                            limit=DEVICE.max_threads_per_block))
    shared = int(shared or 0)
    if shared < 0:
        raise LaunchError(_("shared={shared}: the dynamic shared memory size cannot be "
                            "negative").format(shared=shared))
    static = kernel.shared_static
    if static > DEVICE.shared_memory_per_block:
        raise LaunchError(_("kernel '{kernel}' declares {static} bytes of __shared__ arrays; "
                            "the limit is {limit}").format(
            kernel=kernel.name, static=static, limit=DEVICE.shared_memory_per_block))
    dyn_offset = -(-static // 16) * 16
    total = dyn_offset + shared if shared else static
    if total > DEVICE.shared_memory_per_block_optin:
        raise LaunchError(_("kernel '{kernel}' needs {total} bytes of shared memory per block; "
                            "an H100 allows at most {limit} (above 48 KB only as dynamic shared "
                            "memory)").format(kernel=kernel.name, total=total,
                                              limit=DEVICE.shared_memory_per_block_optin))
    params = pack_args(kernel, args)
    nblocks = grid[0] * grid[1] * grid[2]
    pad = -(-tpb // 32) * 32
    per_batch = max(1, min(nblocks, LANES // pad, SHARED_PER_BATCH // max(total, 1)))
    limit = default_timeout() if timeout is None else float(timeout)
    clock = clock or time.perf_counter
    deadline = clock() + limit
    program = kernel.program
    if blocks is None:
        batches = [(first, min(per_batch, nblocks - first))
                   for first in range(0, nblocks, per_batch)]
    else:
        batches = _sampled_batches(_runs(blocks, nblocks), per_batch)
    workspace = 0
    if cooperative:
        fits = cooperative_limit(kernel, tpb, total)
        if nblocks > fits or blocks is not None:
            raise LaunchError(_(
                "a cooperative launch of {blocks} blocks: at most {limit} blocks of kernel "
                "'{kernel}' ({threads} threads, {shared} bytes of shared memory each) fit on "
                "the device at once, and grid.sync() needs them all resident "
                "(cudaErrorCooperativeLaunchTooLarge)").format(
                    blocks=nblocks, limit=fits, kernel=kernel.name, threads=tpb, shared=total))
        batches = [(0, nblocks)]  # every block resident: they run as one batch
        workspace = HEAP.alloc(16, _("the grid barrier of a cooperative launch"))
    HEAP.launching()
    try:
        with np.errstate(all="ignore"):
            for first, count in batches:
                b = Batch(kernel.name, grid, block, first, count, total, racecheck, trace,
                          deadline, counter, program.sites, kernel.shared_symbols, dyn_offset,
                          RESERVED if kernel.reserved else 0, on_timeout, clock)
                b.grid_workspace = workspace
                fr = Frame(b, kernel.dec, program, kernel.name)
                fr.params.update(params)
                lanes = ALL if b.dense else np.flatnonzero(b.valid)
                _run(fr, lanes, kernel)
    finally:
        if workspace:
            HEAP.free(workspace)


def _run(fr, lanes, kernel: Kernel) -> None:
    """Run one batch; a Python error inside the emulator becomes an UnsupportedError."""
    try:
        run(fr, lanes, entry=True)
    except CudakitError:
        raise
    except RecursionError as exc:
        raise UnsupportedError(_("kernel '{kernel}' nests too deeply to emulate "
                                 "(near line {line})").format(kernel=kernel.name,
                                                             line=fr.b.line)) from exc
    except Exception as exc:  # a gap in the emulator, not the user's fault
        raise UnsupportedError(_(
            "the emulator failed on line {line} of kernel '{kernel}' ({error}). Please "
            "report it; it runs on a GPU.").format(
                line=fr.b.line, kernel=kernel.name, error=f"{type(exc).__name__}: {exc}")
        ) from exc


def cooperative_limit(kernel: Kernel, threads: int, shared: int) -> int:
    """The blocks of ``kernel`` that fit on the emulated H100 at once: its 132 SMs times the
    blocks one SM holds (:func:`cudakit.occupancy.calculate` with ptxas's registers)."""
    info = next(k for k in kernel.program.compiled.kernels.values()
                if k.mangled == kernel.mangled)
    extra = max(shared - info.shared_static, 0)
    return occupancy.calculate(info, threads, dynamic_shared_memory=extra).active_blocks_per_sm \
        * H100_SMS


def _runs(blocks, nblocks: int) -> list[tuple[int, int]]:
    """Check runs of blocks ``[(first, count), ...]`` against the grid and each other."""
    out = []
    for first, count in sorted((int(f), int(c)) for f, c in blocks):
        if first < 0 or count < 1 or first + count > nblocks:
            raise LaunchError(f"blocks {first}..{first + count - 1} are outside the grid of "
                              f"{nblocks} blocks")
        if out and first < out[-1][0] + out[-1][1]:
            raise LaunchError(f"the runs of blocks overlap at block {first}")
        out.append((first, count))
    return out


def _sampled_batches(runs, per_batch: int) -> list:
    """Batches ``(first, count)`` of the chosen blocks; ``first`` is a tuple of block numbers
    where a batch joins several runs (so that they run vectorised together)."""
    ids = [b for first, count in runs for b in range(first, first + count)]
    out = []
    for k in range(0, len(ids), per_batch):
        chunk = ids[k:k + per_batch]
        contiguous = chunk[-1] - chunk[0] == len(chunk) - 1
        out.append((chunk[0], len(chunk)) if contiguous else (tuple(chunk), len(chunk)))
    return out
