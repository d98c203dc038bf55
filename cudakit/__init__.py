"""cudakit: write, run, time and understand CUDA kernels from Jupyter.

>>> import cudakit
>>> issubclass(cudakit.CompileError, cudakit.CudakitError)
True

Heavy parts (the compiler front, the engines, the analyses) load on first use.
"""

from __future__ import annotations

import importlib

from .errors import (
    ArgumentError,
    BarrierError,
    CompileError,
    CudakitError,
    ExerciseFormatError,
    KernelFaultError,
    KernelTimeout,
    LaunchError,
    MemcheckError,
    NoDeviceError,
    RaceError,
    UnsupportedError,
)

__version__ = "0.1.0"

# public name -> module that defines it (imported lazily)
_LAZY = {
    "compile": "compiler",
    "CompiledModule": "compiler",
    "KernelInfo": "compiler",
    "Kernel": "kernel",
    "load": "binding",
    "problem_size": "backend",
    "backend_name": "backend",
    "timer": "timing",
    "benchmark": "timing",
    "bandwidth_gbs": "timing",
    "gflops": "timing",
    "fit_latency_bandwidth": "timing",
    "crossover": "timing",
    "Chooser": "chooser",
    "device_info": "device",
    "analyze": "analysis",
    "profile": "analysis",
    "sanitize": "sanitizer",
    "progress": "progressbar",
    "predict_copy": "predict",
}
_SUBMODULES = ("arch", "cuda", "occupancy", "emu", "analysis", "widgets", "grading", "predict")


def __getattr__(name: str):
    if name in _LAZY:
        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        return getattr(module, name)
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'cudakit' has no attribute {name!r}")


def load_ipython_extension(ipython) -> None:
    """``%load_ext cudakit``: register ``%%cuda`` and ``%cuda_device``."""
    from .magic import register

    register(ipython)


__all__ = [
    "ArgumentError",
    "BarrierError",
    "CompileError",
    "CudakitError",
    "ExerciseFormatError",
    "KernelFaultError",
    "KernelTimeout",
    "LaunchError",
    "MemcheckError",
    "NoDeviceError",
    "RaceError",
    "UnsupportedError",
    *_LAZY,
    *_SUBMODULES,
]
