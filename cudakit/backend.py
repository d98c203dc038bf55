"""Which engine runs kernels: the GPU through PyCUDA, or the CPU emulator.

The choice is made once per process: ``CUDAKIT_BACKEND=gpu|emu`` wins; otherwise
the GPU is used when PyCUDA imports and a CUDA device answers.

>>> from cudakit.backend import problem_size
>>> problem_size(gpu=1 << 24, emu=1 << 12) in (1 << 24, 1 << 12)
True
"""

from __future__ import annotations

import functools
import os

from .errors import NoDeviceError

BACKENDS = ("gpu", "emu")


@functools.cache
def gpu_available() -> bool:
    """True when PyCUDA imports and at least one CUDA device is present."""
    try:
        import pycuda.driver as drv
    except Exception:
        return False
    try:
        drv.init()
        return drv.Device.count() > 0
    except Exception:
        return False


@functools.cache
def backend_name() -> str:
    """The engine of this process: ``"gpu"`` or ``"emu"``."""
    chosen = os.environ.get("CUDAKIT_BACKEND", "").strip().lower()
    if chosen and chosen not in BACKENDS:
        raise ValueError(f"CUDAKIT_BACKEND={chosen!r}: expected one of {', '.join(BACKENDS)}")
    if chosen == "gpu":
        if not gpu_available():
            raise NoDeviceError(
                "CUDAKIT_BACKEND=gpu but no CUDA device is usable here "
                "(PyCUDA missing or no driver); unset it to use the emulator."
            )
        return "gpu"
    if chosen == "emu":
        return "emu"
    return "gpu" if gpu_available() else "emu"


def device_index() -> int:
    """The CUDA device this process uses: ``CUDAKIT_DEVICE``, default 0."""
    return int(os.environ.get("CUDAKIT_DEVICE", "0"))


def gpu_compute_capability() -> tuple[int, int]:
    """``(major, minor)`` of the GPU in use, asked of the driver (no context needed)."""
    import pycuda.driver as drv

    drv.init()
    return tuple(drv.Device(device_index()).compute_capability())


def on_gpu() -> bool:
    """True when kernels run on a real GPU."""
    return backend_name() == "gpu"


def problem_size(gpu: int, emu: int) -> int:
    """Full size on the GPU engine, reduced size on the emulator."""
    return gpu if on_gpu() else emu
