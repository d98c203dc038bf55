"""``cudakit.analyze``: run one launch on the CPU emulator and count its memory traffic.

>>> src = '''
... __global__ void copy(const float *a, float *b) {
...     int i = blockIdx.x * blockDim.x + threadIdx.x;
...     b[i] = a[2 * i];
... }'''
>>> from dataclasses import dataclass

import numpy as np
>>> r = analyze(src, "copy", grid=(2,), block=(64,),  # doctest: +SKIP
...             args=[np.ones(256, np.float32), np.zeros(128, np.float32)])
>>> r.metrics["global_load_sectors_per_request"]  # doctest: +SKIP
8.0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from .report import Report, from_trace


def source_of(source_or_module) -> str:
    """The CUDA C++ text of a source string, a compiled module or a ``%%cuda`` kernel."""
    if isinstance(source_or_module, str):
        return source_or_module
    for owner in (source_or_module, getattr(source_or_module, "info", None)):
        text = getattr(owner, "source", None)
        if isinstance(text, str):
            return text
    raise ArgumentError(
        f"analyze() needs CUDA C++ source text or a module made from it, "
        f"got {type(source_or_module).__name__}")


def _dims(value, what: str) -> tuple[int, int, int]:
    dims = (value,) if isinstance(value, int | np.integer) else tuple(value)
    if not 1 <= len(dims) <= 3 or any(int(d) < 1 for d in dims):
        raise ArgumentError(f"{what} must be 1 to 3 positive integers, got {value!r}")
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))


@dataclass(frozen=True)
class Pointer:
    """A pointer argument ``offset_bytes`` into ``array`` (the array is one device buffer).

    ``args=[a, Pointer(a, 4 * 1024)]`` passes ``d_a`` and ``d_a + 1024`` floats.
    """

    array: np.ndarray
    offset_bytes: int = 0


def _copy_nonzero(emu, buffer, array: np.ndarray, chunk: int = 1 << 24) -> None:
    """Copy ``array`` into the new (zeroed) ``buffer``, leaving out its all-zero chunks: a
    full-size launch predicted on zero-filled gigabyte buffers (``cudakit.predict`` replaying
    a recording) would otherwise spend seconds writing zeros over zeros."""
    raw = array.reshape(-1).view(np.uint8)
    for start in range(0, raw.size, chunk):
        part = raw[start:start + chunk]
        if part.any():
            emu.memcpy_htod(int(buffer) + start, part)


def device_args(emu, args, caller: str = "analyze()") -> tuple[list, list]:
    """Launch arguments and the device buffers made for them.

    Each NumPy array (also inside a :class:`Pointer`) is copied to one buffer; the same array
    object passed twice is the same buffer (an in-place kernel). NumPy scalars pass by value.
    """
    out, buffers, made = [], [], {}
    for i, value in enumerate(args):
        offset = 0
        if isinstance(value, Pointer):
            offset = int(value.offset_bytes)
            value = value.array
            if not isinstance(value, np.ndarray) or not 0 <= offset <= value.nbytes:
                raise ArgumentError(
                    f"argument {i} of {caller}: Pointer needs a NumPy array and an offset "
                    f"within its {getattr(value, 'nbytes', 0)} bytes, got offset {offset}")
        if isinstance(value, np.ndarray):
            buffer = made.get(id(value))
            if buffer is None:
                buffer = made[id(value)] = emu.mem_alloc(max(value.nbytes, 1))
                _copy_nonzero(emu, buffer, np.ascontiguousarray(value))
                buffers.append(buffer)
            out.append(np.uint64(int(buffer) + offset) if offset else buffer)
        elif isinstance(value, np.generic):
            out.append(value)
        else:
            raise ArgumentError(
                f"argument {i} of {caller} is a {type(value).__name__}: pass NumPy arrays "
                "(copied to device buffers), Pointer(array, offset_bytes) and NumPy scalars "
                "such as np.int32(n)")
    return out, buffers


def analyze(source_or_module, kernel_name: str, *, grid, block, args=(),
            shared: int = 0) -> Report:
    """Run ``kernel_name`` once on the emulator and report its coalescing and bank conflicts.

    NumPy arrays in ``args`` become device buffers, NumPy scalars pass by value. The report's
    ``metrics`` use Nsight Compute's names (the H100's counting rules), ``by_line`` lists every
    access worst first.
    """
    from .. import emu

    source = source_of(source_or_module)
    grid, block = _dims(grid, "grid"), _dims(block, "block")
    module = emu.SourceModule(source, no_extern_c=True)
    function = module.get_function(kernel_name)  # LaunchError naming the kernels there
    trace = emu.Trace()
    function(*device_args(emu, args)[0], grid=grid, block=block, shared=shared, trace=trace,
             racecheck=False)
    return from_trace(trace, source, kernel=kernel_name, grid=grid)
