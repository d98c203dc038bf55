"""The GPU engine: PyCUDA on a real device, one context per process.

The context is the device's primary context, so CuPy (used in the labs for cuBLAS
and CUB baselines) shares it. A kernel fault (illegal address, trap) loses the
context; it is reported once as :class:`~cudakit.errors.KernelFaultError` with what
to do, and every later call says so instead of failing obscurely.

>>> from cudakit import gpu  # doctest: +SKIP
>>> gpu.device_compute_capability()  # doctest: +SKIP
(9, 0)
"""

from __future__ import annotations

import atexit
import functools
import os

from .errors import CudakitError, KernelFaultError, NoDeviceError

_FAULT_WORDS = (
    "illegal memory access",
    "illegal address",
    "unspecified launch failure",
    "misaligned address",
    "device-side assert",
    "illegal instruction",
    "hardware stack error",
    "launch timed out",
    "an exception occurred on the device", "address space", "invalid program counter",
)
_state = {"context": None, "fault": None}


def _driver():
    try:
        import pycuda.driver as drv
    except ImportError as exc:
        raise NoDeviceError(
            "PyCUDA is not installed, so there is no GPU engine here; "
            "kernels run on the CPU emulator (CUDAKIT_BACKEND=emu)."
        ) from exc
    return drv


@functools.cache
def device():
    """The ``pycuda.driver.Device`` in use (``CUDAKIT_DEVICE``, default 0)."""
    drv = _driver()
    try:
        drv.init()
        count = drv.Device.count()
    except drv.Error as exc:
        raise NoDeviceError(f"the CUDA driver did not start: {exc}") from exc
    if count == 0:
        raise NoDeviceError("no CUDA device is present")
    return drv.Device(int(os.environ.get("CUDAKIT_DEVICE", "0")))


def context():
    """The process's CUDA context (the device's primary context), made current on first use."""
    if _state["fault"] is not None:
        raise KernelFaultError(_state["fault"])
    if _state["context"] is None:
        ctx = device().retain_primary_context()
        ctx.push()
        _state["context"] = ctx
        atexit.register(_release)
    return _state["context"]


def _release() -> None:
    ctx = _state["context"]
    if ctx is None:
        return
    _state["context"] = None
    try:
        ctx.pop()
        ctx.detach()
    except Exception:
        pass


def device_compute_capability() -> tuple[int, int]:
    return tuple(device().compute_capability())


def translate(exc: Exception, kernel: str | None = None) -> CudakitError | None:
    """A clear cudakit error for a PyCUDA fault, or None if ``exc`` is not a device fault."""
    text = str(exc)
    if not any(word in text.lower() for word in _FAULT_WORDS):
        return None
    where = f"kernel '{kernel}'" if kernel else "a kernel"
    message = (
        f"{where} faulted on the GPU ({text.strip()}). The CUDA context of this process is "
        "lost: every further GPU call will fail. Restart the notebook kernel (Kernel > Restart) "
        "and run the cells again. To find the bad access, run the launch on the emulator "
        "(CUDAKIT_BACKEND=emu, which names the line, thread and address) or under "
        "compute-sanitizer."
    )
    _state["fault"] = message
    return KernelFaultError(message)


def translating(fn, kernel: str | None = None):
    """Wrap a PyCUDA callable so device faults surface as :class:`KernelFaultError`."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if _state["fault"] is not None:
            raise KernelFaultError(_state["fault"])
        try:
            return fn(*args, **kwargs)
        except _driver().Error as exc:
            clear = translate(exc, kernel)
            if clear is None:
                raise
            raise clear from None

    return call


class SourceModule:
    """PyCUDA's ``SourceModule``, built by :func:`cudakit.compile` (cache, clear errors).

    Like PyCUDA, the source is wrapped in ``extern "C"`` unless ``no_extern_c=True``;
    ``get_function`` returns a typed :class:`cudakit.Kernel`.
    """

    def __init__(
        self,
        source: str,
        options=None,
        keep: bool = False,
        no_extern_c: bool = False,
        arch=None,
        code=None,
        cache_dir=None,
        include_dirs=(),
        name: str = "module",
    ):
        from .compiler import compile as nvcc_compile

        options = list(options or []) + [f"-I{d}" for d in include_dirs]
        self.source = source
        text = source if no_extern_c else 'extern "C" {\n#line 1\n' + source + "\n}\n"
        self.compiled = nvcc_compile(text, options, arch=arch, name=name)
        context()
        self.module = translating(_driver().module_from_buffer)(self.compiled.cubin)

    def get_function(self, name: str):
        from .kernel import Kernel, find_kernel

        info = find_kernel(self.compiled.kernels, name)
        function = translating(self.module.get_function(info.mangled), info.name)
        return Kernel(info, function, "gpu", self.source)

    def get_global(self, name: str):
        return self.module.get_global(name)


class Context:
    """``pycuda.driver.Context`` for the facade: synchronising reports device faults clearly."""

    @staticmethod
    def synchronize() -> None:
        context()
        translating(_driver().Context.synchronize)()

    @staticmethod
    def get_device():
        return device()


def __getattr__(name: str):
    """Everything else is ``pycuda.driver`` (or ``pycuda.gpuarray``), with a live context."""
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "gpuarray":
        context()
        import pycuda.gpuarray

        return pycuda.gpuarray
    drv = _driver()
    if not hasattr(drv, name):
        raise AttributeError(f"the GPU engine has no {name!r}")
    context()
    value = getattr(drv, name)
    if (
        callable(value)
        and not isinstance(value, type)
        and name.startswith(("memcpy", "from_device", "to_device", "mem_"))
    ):
        return translating(value)
    return value
