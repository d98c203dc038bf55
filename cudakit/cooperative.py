"""Cooperative launches on the GPU (``cudaLaunchCooperativeKernel``), for ``grid.sync()``.

PyCUDA launches every kernel with ``cuLaunchKernel`` and has no cooperative launch
(its pull request #508 is not merged), and it keeps its ``CUfunction`` to itself. So
the kernel's cubin is loaded a second time into the same context through the driver
API (``ctypes`` over ``libcuda``), and launched there with
``cuLaunchCooperativeKernel``, each argument passed by address as that call wants.
The emulator's counterpart is ``cooperative=True`` of :mod:`cudakit.emu`.

>>> params = kernel_params([np.uint64(0x7F0000001000), np.int32(5), np.float32(0.5)])
>>> len(params[1]), [v.nbytes for v in params[0]]
(3, [8, 4, 4])
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from .errors import LaunchError


@functools.cache
def _libcuda():
    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuLaunchCooperativeKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + \
        [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    return lib


def _check(code: int, what: str) -> None:
    if code != 0:
        lib = _libcuda()
        name = ctypes.c_char_p()
        lib.cuGetErrorName(code, ctypes.byref(name))
        text = (name.value or b"").decode()
        hint = (": the grid is larger than the blocks that fit on the device at once"
                if text == "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE" else "")
        raise LaunchError(f"{what} failed with {text or code}{hint}")


@functools.cache
def _function(cubin: bytes, mangled: str, context: int) -> int:
    """The ``CUfunction`` of ``mangled`` in ``cubin``, loaded into the current context
    (``context`` keys the cache)."""
    lib = _libcuda()
    module = ctypes.c_void_p()
    _check(lib.cuModuleLoadData(ctypes.byref(module), cubin), "cuModuleLoadData")
    function = ctypes.c_void_p()
    _check(lib.cuModuleGetFunction(ctypes.byref(function), module, mangled.encode()),
           "cuModuleGetFunction")
    return function.value


def kernel_params(values) -> tuple[list[np.ndarray], ctypes.Array]:
    """Each argument's bytes and the array of their addresses ``cuLaunch*`` takes (the
    byte arrays must outlive the launch call)."""
    data = [np.array(v, copy=True).reshape(-1).view(np.uint8) if not isinstance(v, np.void)
            else np.frombuffer(bytes(v), np.uint8).copy() for v in values]
    return data, (ctypes.c_void_p * len(data))(*[d.ctypes.data for d in data])


def launch(cubin: bytes, mangled: str, values, grid, block, shared: int, stream) -> None:
    """Launch ``mangled`` cooperatively: ``values`` are NumPy scalars, 64-bit addresses for
    pointers."""
    lib = _libcuda()
    current = ctypes.c_void_p()
    _check(lib.cuCtxGetCurrent(ctypes.byref(current)), "cuCtxGetCurrent")
    function = _function(cubin, mangled, current.value or 0)
    data, params = kernel_params(values)  # ``data`` holds the bytes ``params`` points to
    handle = ctypes.c_void_p(int(stream.handle) if stream is not None else 0)
    _check(lib.cuLaunchCooperativeKernel(function, *grid, *block, shared, handle, params),
           "cuLaunchCooperativeKernel")
