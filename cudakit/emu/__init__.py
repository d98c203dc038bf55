"""CPU SIMT emulator of CUDA kernels with the PyCUDA interface.

nvcc lowers the source to PTX (the code ptxas assembles for the GPU); each PTX
instruction is decoded once into a closure over NumPy arrays, and all threads of
a launch run together, divergent paths scheduled lowest program counter first.
memcheck, racecheck, divergent barriers and endless loops become clear errors
naming the user's line. Timings measured here are emulator timings, never GPU
timings.

>>> import numpy as np
>>> from cudakit import emu
>>> mod = emu.SourceModule('''
... __global__ void add(const float* a, const float* b, float* c, int n) {
...     int i = blockIdx.x * blockDim.x + threadIdx.x;
...     if (i < n) c[i] = a[i] + b[i];
... }''', no_extern_c=True)
>>> a = np.arange(100, dtype=np.float32); c = np.zeros_like(a)
>>> mod.get_function("add")(emu.In(a), emu.In(a), emu.Out(c), np.int32(100),
...                         grid=(4, 1), block=(32, 1, 1))
>>> bool((c == 2 * a).all())
True
"""

from ..errors import (
    ArgumentError,
    BarrierError,
    KernelFaultError,
    KernelTimeout,
    LaunchError,
    MemcheckError,
    RaceError,
    UnsupportedError,
)
from . import gpuarray
from .driver import (
    Context,
    DeviceAllocation,
    Event,
    Function,
    In,
    InOut,
    Memcpy2D,
    Out,
    SourceModule,
    Stream,
    from_device,
    from_device_like,
    init,
    limit,
    mem_alloc,
    mem_alloc_like,
    mem_alloc_pitch,
    mem_get_info,
    memcpy_dtod,
    memcpy_dtod_async,
    memcpy_dtoh,
    memcpy_dtoh_async,
    memcpy_htod,
    memcpy_htod_async,
    memset_d8,
    memset_d32,
    pagelocked_empty,
    pagelocked_empty_like,
    pagelocked_zeros,
    to_device,
)
from .trace import AccessBatch, OpCounter, Trace

backend = "emu"

__all__ = [
    "AccessBatch", "ArgumentError", "BarrierError", "Context", "DeviceAllocation", "Event",
    "Function", "In", "InOut", "KernelFaultError", "KernelTimeout", "LaunchError",
    "MemcheckError", "Memcpy2D",
    "OpCounter", "Out", "RaceError", "SourceModule", "Stream", "Trace", "UnsupportedError",
    "backend",
    "from_device", "from_device_like", "gpuarray", "init", "limit", "mem_alloc", "mem_alloc_like",
    "mem_alloc_pitch", "mem_get_info", "memcpy_dtod", "memcpy_dtod_async", "memcpy_dtoh",
    "memcpy_dtoh_async", "memcpy_htod", "memcpy_htod_async", "memset_d8", "memset_d32",
    "pagelocked_empty", "pagelocked_empty_like", "pagelocked_zeros", "to_device",
]
