"""Bind the kernels of a CUDA source to the engine of this process (what ``%%cuda`` does).

``load`` compiles with nvcc (cached), then wraps each kernel in a typed
:class:`~cudakit.kernel.Kernel` over the GPU engine (PyCUDA) or the CPU emulator.
It sits above both engines, so neither engine imports it.

>>> import cudakit
>>> kernels = cudakit.load("__global__ void twice(float *x) { x[threadIdx.x] *= 2; }")
>>> sorted(kernels)
['twice']
"""

from __future__ import annotations

from .backend import backend_name
from .compiler import DEFAULT_ARCH, KernelInfo, normalize_arch
from .compiler import compile as nvcc_compile
from .errors import CompileError
from .kernel import Kernel
from .signature import parse_kernels


def load(source: str, options=(), arch=None, name: str | None = None) -> dict[str, Kernel]:
    """Compile ``source`` and bind every kernel to the current engine (what ``%%cuda`` does).

    On the emulator, nvcc is still used for the resource report when present; without
    nvcc the parameter lists come from the source alone.
    """
    engine = backend_name()
    options = tuple(options.split()) if isinstance(options, str) else tuple(options)
    if engine == "gpu":
        from .gpu import SourceModule

        module = SourceModule(source, options, no_extern_c=True, arch=arch, name=name)
        return {k: module.get_function(k) for k in module.compiled.kernels}
    from . import emu

    try:
        kernels = nvcc_compile(source, options, arch=arch, name=name).kernels
    except CompileError as exc:
        if "was not found" not in str(exc):
            raise
        kernels = _kernels_from_source(source, arch)
    module = emu.SourceModule(source, options=list(options), no_extern_c=True)
    return {
        k.name: Kernel(k, module.get_function(k.name), "emu", source, options)
        for k in kernels.values()
    }


def _kernels_from_source(source: str, arch) -> dict[str, KernelInfo]:
    target = normalize_arch(arch) if arch else DEFAULT_ARCH
    return {
        name: KernelInfo(name=name, mangled=name, arch=target, params=params)
        for name, params in parse_kernels(source).items()
    }
