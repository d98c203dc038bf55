"""``cudakit.analyze``: run one launch on the CPU emulator and count its memory traffic.

>>> src = '''
... __global__ void copy(const float *a, float *b) {
...     int i = blockIdx.x * blockDim.x + threadIdx.x;
...     b[i] = a[2 * i];
... }'''
>>> import numpy as np
>>> r = analyze(src, "copy", grid=(2,), block=(64,),  # doctest: +SKIP
...             args=[np.ones(256, np.float32), np.zeros(128, np.float32)])
>>> r.metrics["global_load_sectors_per_request"]  # doctest: +SKIP
8.0
"""

from __future__ import annotations

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


def _device_args(emu, args) -> list:
    out = []
    for i, value in enumerate(args):
        if isinstance(value, np.ndarray):
            buffer = emu.mem_alloc(max(value.nbytes, 1))
            emu.memcpy_htod(buffer, np.ascontiguousarray(value))
            out.append(buffer)
        elif isinstance(value, np.generic):
            out.append(value)
        else:
            raise ArgumentError(
                f"argument {i} of analyze() is a {type(value).__name__}: pass NumPy arrays "
                "(copied to device buffers) and NumPy scalars such as np.int32(n)")
    return out


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
    function(*_device_args(emu, args), grid=grid, block=block, shared=shared, trace=trace,
             racecheck=False)
    return from_trace(trace, source, kernel=kernel_name, grid=grid)
