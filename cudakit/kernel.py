"""Typed kernels: launch checks before anything reaches an engine.

A :class:`Kernel` knows its parameter list (from the source and nvcc's symbol) and
its resource usage (from ptxas). It converts plain Python numbers to the parameter's
C type, refuses wrong counts, wrong kinds and wrong element types with the name of
the parameter, and refuses launch shapes the architecture cannot run.

>>> from cudakit.compiler import KernelInfo
>>> from cudakit.signature import parse_kernels
>>> info = KernelInfo("scale", "scale", "sm_90", parse_kernels(
...     "__global__ void scale(float *x, float a, int n) {}")["scale"])
>>> launch_shape(info, grid=(4,), block=(256,), shared=0)
((4, 1, 1), (256, 1, 1))
"""

from __future__ import annotations

import numpy as np

from . import arch as archs
from . import record
from .compiler import KernelInfo
from .errors import ArgumentError, LaunchError
from .i18n.messages import _
from .signature import Param, convert_scalar


def find_kernel(kernels: dict[str, KernelInfo], name: str) -> KernelInfo:
    """Look a kernel up by short name (``"red<128>"``), plain name or mangled symbol."""
    if name in kernels:
        return kernels[name]
    matches = [k for k in kernels.values() if name in (k.mangled, k.name.split("<", 1)[0])]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        options = ", ".join(k.name for k in matches)
        raise LaunchError(f"'{name}' is ambiguous: the module has {options}; name one of them")
    known = ", ".join(kernels) or "none"
    raise LaunchError(f"no __global__ kernel named '{name}' in this module (kernels: {known})")


def _dims(value, what: str) -> tuple[int, int, int]:
    if isinstance(value, int | np.integer):
        value = (int(value),)
    try:
        dims = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        dims = ()
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise LaunchError(f"{what} must be 1 to 3 positive integers, got {value!r}")
    return dims + (1,) * (3 - len(dims))


def launch_shape(info: KernelInfo, *, grid, block, shared: int) -> tuple[tuple, tuple]:
    """Check a launch against the kernel's architecture; return (grid, block) as 3-tuples."""
    spec = archs.get(info.arch.rstrip("af"))
    if block is None:
        raise LaunchError(f"launch of '{info.name}' needs block=(x, y, z)")
    grid3, block3 = _dims(grid, "grid"), _dims(block, "block")
    threads = block3[0] * block3[1] * block3[2]
    where = _("launch of '{name}' on {device}").format(name=info.name, device=spec.name)
    if threads > spec.max_threads_per_block:
        raise LaunchError(_(
            "{where}: block {block} has {threads} threads; at most "
            "{limit} threads per block are allowed"
        ).format(where=where, block=block3, threads=threads, limit=spec.max_threads_per_block))
    for axis, (size, limit) in enumerate(zip(block3, spec.max_block_dim, strict=True)):
        if size > limit:
            raise LaunchError(_("{where}: block dimension {axis} = {size} exceeds {limit}")
                              .format(where=where, axis="xyz"[axis], size=size, limit=limit))
    for axis, (size, limit) in enumerate(zip(grid3, spec.max_grid_dim, strict=True)):
        if size > limit:
            raise LaunchError(_("{where}: grid dimension {axis} = {size} exceeds {limit}")
                              .format(where=where, axis="xyz"[axis], size=size, limit=limit))
    if shared < 0:
        raise LaunchError(f"{where}: shared={shared} is negative")
    total_shared = shared + info.shared_static
    if total_shared > spec.shared_memory_per_block_optin:
        raise LaunchError(_(
            "{where}: needs {total} B of shared memory per block "
            "({static} B static + {dynamic} B dynamic); the maximum is {limit} B"
        ).format(where=where, total=total_shared, static=info.shared_static, dynamic=shared,
                 limit=spec.shared_memory_per_block_optin))
    if info.registers and info.registers * threads > spec.max_registers_per_block:
        raise LaunchError(
            f"{where}: {threads} threads x {info.registers} registers = "
            f"{info.registers * threads} registers, more than the {spec.max_registers_per_block} a "
            "block may use (too many resources requested); use a smaller block, "
            "__launch_bounds__ or -maxrregcount"
        )
    return grid3, block3


def _where(param: Param) -> str:
    return _("parameter '{name}' ({ctype})").format(name=param.name, ctype=param.ctype)


def _pointer_arg(param: Param, value):
    """A pointer argument, checked; messages are built only when a check fails (per launch)."""
    if type(value) is int:
        return np.uintp(value)
    if isinstance(value, np.ndarray):
        raise ArgumentError(_(
            "{where} needs device memory, got a NumPy array: pass cuda.In(a), cuda.Out(a) or "
            "cuda.InOut(a), a gpuarray, or memory from cuda.mem_alloc"
        ).format(where=_where(param)))
    if isinstance(value, bool | float | complex | str | bytes | np.floating):
        raise ArgumentError(f"{_where(param)} is a pointer, got {type(value).__name__} {value!r}")
    if isinstance(value, np.integer):
        return np.uintp(value)
    held = getattr(value, "dtype", None)
    if held is None and isinstance(getattr(value, "array", None), np.ndarray):
        held = value.array.dtype
    expected = param.ctype.dtype if param.ctype.pointer == 1 else None
    if held is not None and expected is not None:
        held = np.dtype(held)
        same_kind = (held.kind in "iub") == (expected.kind in "iub")
        if held.itemsize != expected.itemsize or not same_kind:
            raise ArgumentError(_(
                "{where} points to {ctype} ({size} bytes each) but the "
                "array holds {held} ({held_size} bytes each); convert it, e.g. "
                "a.astype(np.{dtype})"
            ).format(where=_where(param), ctype=param.ctype.base, size=expected.itemsize,
                     held=held, held_size=held.itemsize, dtype=expected.name))
    return value


def convert_arguments(info: KernelInfo, args: tuple) -> list:
    """Check ``args`` against the kernel's parameters and convert scalars to their C types."""
    params = info.params
    if len(args) != len(params):
        wanted = ", ".join(str(p) for p in params) or "no arguments"
        detail = (
            _("missing {names}").format(names=", ".join(p.name for p in params[len(args):]))
            if len(args) < len(params)
            else _("{count} too many").format(count=len(args) - len(params))
        )
        takes = (_("'{name}' takes {count} argument ({wanted}); got {got}: {detail}")
                 if len(params) == 1 else
                 _("'{name}' takes {count} arguments ({wanted}); got {got}: {detail}"))
        raise ArgumentError(takes.format(name=info.name, count=len(params), wanted=wanted,
                                         got=len(args), detail=detail))
    return [
        _pointer_arg(p, a) if p.ctype.is_pointer else convert_scalar(p, a)
        for p, a in zip(params, args, strict=True)
    ]


def _frozen(dims):
    return dims if dims is None or isinstance(dims, int | np.integer) else tuple(dims)


class Kernel:
    """A compiled kernel bound to an engine; call it like a PyCUDA function.

    ``kernel(d_x, 2.0, n, grid=(blocks,), block=(256,), shared=0, stream=None)``
    """

    def __init__(
        self, info: KernelInfo, function, engine: str, source: str | None = None, options=()
    ):
        self.info = info
        self.function = function
        self.engine = engine
        self.source = source  # the text and nvcc options it was compiled with, so that
        self.options = tuple(options)  # analyze, profile and sanitize can build it again
        self._checked_shapes: dict = {}  # (grid, block, shared) -> 3-tuples, checked once

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def params(self) -> list[Param]:
        return self.info.params

    def __call__(self, *args, grid=(1, 1, 1), block=None, shared: int = 0, stream=None, **extra):
        grid3, block3 = self._shape(grid, block, int(shared))
        values = convert_arguments(self.info, args)
        if record.current is not None:  # inside a recorded timing region (cudakit.record)
            record.launch(self, values, grid3, block3, int(shared), stream)
        return self.function(
            *values, grid=grid3, block=block3, shared=int(shared), stream=stream, **extra
        )

    def _shape(self, grid, block, shared: int) -> tuple[tuple, tuple]:
        """:func:`launch_shape`, remembered per distinct launch configuration."""
        try:
            key = (_frozen(grid), _frozen(block), shared)
            hash(key)
        except TypeError:  # an unusual spelling: check it every time
            return launch_shape(self.info, grid=grid, block=block, shared=shared)
        shape = self._checked_shapes.get(key)
        if shape is None:
            shape = launch_shape(self.info, grid=grid, block=block, shared=shared)
            self._checked_shapes[key] = shape
        return shape

    def __repr__(self) -> str:
        return f"<Kernel {self.info.signature()} on {self.engine}: {self.info.usage()}>"
