"""A small ``pycuda.gpuarray``: device arrays with ``to_gpu``, ``empty``, ``zeros``, ``.get()``.

>>> import numpy as np
>>> g = to_gpu(np.arange(3, dtype=np.int32))
>>> g.shape, g.dtype, g.get().tolist()
((3,), dtype('int32'), [0, 1, 2])
"""

from __future__ import annotations

import numpy as np

from .driver import DeviceAllocation, memcpy_dtoh, memcpy_htod


class GPUArray:
    """An emulated device array; pass it (or ``.gpudata``) to a kernel as a pointer."""

    def __init__(self, shape, dtype, gpudata: DeviceAllocation | None = None):
        self.shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(self.shape))
        self.nbytes = self.size * self.dtype.itemsize
        self.gpudata = gpudata if gpudata is not None else DeviceAllocation(self.nbytes)

    @property
    def ptr(self) -> int:
        return int(self.gpudata)

    def get(self) -> np.ndarray:
        """Copy to a new host array."""
        out = np.empty(self.shape, self.dtype)
        memcpy_dtoh(out, self.gpudata)
        return out

    def set(self, ary) -> None:
        a = np.ascontiguousarray(ary, self.dtype)
        if a.size != self.size:
            raise ValueError(f"GPUArray.set: size {a.size} does not match {self.size}")
        memcpy_htod(self.gpudata, a)

    def fill(self, value) -> GPUArray:
        self.set(np.full(self.shape, value, self.dtype))
        return self

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<emulated GPUArray shape={self.shape} dtype={self.dtype}>"


def to_gpu(ary) -> GPUArray:
    """Copy a host array to a new device array."""
    a = np.ascontiguousarray(ary)
    g = GPUArray(a.shape, a.dtype)
    g.set(a)
    return g


def empty(shape, dtype=np.float64) -> GPUArray:
    return GPUArray(shape, dtype)


def zeros(shape, dtype=np.float64) -> GPUArray:
    return GPUArray(shape, dtype)  # device memory is allocated zeroed


def empty_like(other: GPUArray) -> GPUArray:
    return GPUArray(other.shape, other.dtype)


def zeros_like(other: GPUArray) -> GPUArray:
    return GPUArray(other.shape, other.dtype)
