"""The GPU engine: PyCUDA on a real device, one context per process.

The context is the device's primary context, so CuPy (used in the labs for cuBLAS
and CUB baselines) shares it. A kernel fault (illegal address, trap) loses the
context; it is reported once as :class:`~cudakit.errors.KernelFaultError` with what
to do, and every later call says so instead of failing obscurely.

>>> from cudakit import gpu  # doctest: +SKIP
>>> gpu.device().name()  # doctest: +SKIP
'NVIDIA H100 80GB HBM3'
"""

from __future__ import annotations

import atexit
import functools

import numpy as np

from .backend import device_index
from .errors import CudakitError, KernelFaultError, LaunchError, NoDeviceError

_FAULT_WORDS = (
    "illegal memory access",
    "illegal address",
    "unspecified launch failure",
    "misaligned address",
    "device-side assert",
    "illegal instruction",
    "hardware stack error",
    "launch timed out",
    "an exception occurred on the device",
    "address space",
    "invalid program counter",
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
    return drv.Device(device_index())


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


def device_address(value) -> int:
    """The device address behind a pointer argument (allocation, gpuarray, CuPy array, int)."""
    if isinstance(value, int | np.integer):
        return int(value)
    gpudata = getattr(value, "gpudata", None)
    if gpudata is not None:
        return int(gpudata)
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface:
        return int(interface["data"][0])
    return int(value)


class Launcher:
    """Launches one PyCUDA function with arguments already checked by :class:`cudakit.Kernel`.

    The parameter types are known, so the function is prepared once (PyCUDA's ``prepare``)
    and each launch only packs the values, a fraction of the cost of a general call.
    Arguments with host copies (``cuda.In/Out/InOut``) take PyCUDA's general path.
    """

    def __init__(self, function, info, cubin: bytes | None = None):
        self.function = function
        self.info = info
        self.cubin = cubin  # for cooperative launches, which PyCUDA does not make
        self.pointers = [param.ctype.is_pointer for param in info.params]
        self.dynamic_limit = 48 * 1024
        self.prepared = self._prepare()

    def _prepare(self) -> bool:
        codes = []
        for param in self.info.params:
            dtype = param.ctype.dtype
            if param.ctype.is_pointer:
                codes.append("P")
            elif dtype is None or dtype.char not in "?bBhHiIlLqQfd":
                return False  # structs, halves or unknown types: let PyCUDA inspect them
            else:
                codes.append(dtype.char)
        self.function.prepare("".join(codes))
        return True

    def __call__(self, *values, grid, block, shared: int = 0, stream=None,
                 cooperative: bool = False, **extra):
        if extra:
            raise LaunchError(f"unknown launch keywords for the GPU: {', '.join(extra)}")
        if _state["fault"] is not None:
            raise KernelFaultError(_state["fault"])
        drv = _driver()
        self._allow_dynamic_shared(shared)
        if cooperative:
            self._cooperative(values, grid, block, shared, stream, drv)
            return
        packed = self._packed(values, drv.ArgumentHandler) if self.prepared else None
        try:
            if packed is not None:
                self.function.prepared_async_call(grid, block, stream, *packed, shared_size=shared)
            else:
                self.function(*values, grid=grid, block=block, shared=shared, stream=stream)
        except drv.Error as exc:
            raise (translate(exc, self.info.name) or exc) from None

    def _cooperative(self, values, grid, block, shared, stream, drv) -> None:
        """``cudaLaunchCooperativeKernel`` (:mod:`cudakit.cooperative`), with the host
        copies of ``cuda.In/Out/InOut`` arguments made before and after it."""
        from . import cooperative

        if self.cubin is None:
            raise LaunchError("a cooperative launch needs the kernel's cubin: build it with "
                              "cudakit's SourceModule or %%cuda")
        handlers = [v for v in values if isinstance(v, drv.ArgumentHandler)]
        for h in handlers:
            h.pre_call(stream)
        args = []
        for param, value in zip(self.info.params, values, strict=True):
            if isinstance(value, drv.ArgumentHandler):
                value = int(value.get_device_alloc())
            if param.ctype.is_pointer:
                args.append(np.uint64(device_address(value)))
            else:
                args.append(value)
        cooperative.launch(self.cubin, self.info.mangled, args, grid, block, shared, stream)
        if handlers:
            drv.Context.synchronize()
            for h in handlers:
                if hasattr(h, "post_call"):
                    h.post_call(stream)

    def _packed(self, values, handler) -> list | None:
        """The values as the prepared call takes them; None if one has a host copy (cuda.In)."""
        packed = []
        for pointer, value in zip(self.pointers, values, strict=True):
            if isinstance(value, handler):
                return None
            packed.append(device_address(value) if pointer else value)
        return packed

    def _allow_dynamic_shared(self, shared: int) -> None:
        """Opt in to more than 48 KB of dynamic shared memory, as the runtime requires."""
        if shared + self.info.shared_static <= self.dynamic_limit:
            return
        attribute = _driver().function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES
        self.function.set_attribute(attribute, shared)
        self.dynamic_limit = shared + self.info.shared_static


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
        self.source, self.options = source, tuple(options)
        text = source if no_extern_c else 'extern "C" {\n#line 1\n' + source + "\n}\n"
        self.compiled = nvcc_compile(text, options, arch=arch, name=name)
        context()
        self.module = translating(_driver().module_from_buffer)(self.compiled.cubin)

    def get_function(self, name: str):
        from .kernel import Kernel, find_kernel

        info = find_kernel(self.compiled.kernels, name)
        launcher = Launcher(self.module.get_function(info.mangled), info, self.compiled.cubin)
        return Kernel(info, launcher, "gpu", self.source, self.options)

    def get_global(self, name: str):
        return self.module.get_global(name)


@functools.cache
def _synchronize():
    return translating(_driver().Context.synchronize)


class Context:
    """``pycuda.driver.Context`` for the facade: synchronising reports device faults clearly."""

    @staticmethod
    def synchronize() -> None:
        if _state["context"] is None:
            context()
        _synchronize()()

    @staticmethod
    def get_device():
        return device()

    @staticmethod
    def set_limit(which: int, value: int) -> None:
        """``pycuda.driver.Context.set_limit`` (``limit.MALLOC_HEAP_SIZE``: the device heap)."""
        context()
        _driver().Context.set_limit(which, value)

    @staticmethod
    def get_limit(which: int) -> int:
        context()
        return _driver().Context.get_limit(which)


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
