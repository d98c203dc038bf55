"""The PyCUDA-shaped host API of the emulator (``pycuda.driver`` and ``pycuda.compiler``).

Copies and launches run synchronously on the CPU; streams only order work
(which is already in order). Event times are host times of the emulation,
never GPU times.

>>> import numpy as np
>>> a = np.arange(4, dtype=np.float32)
>>> d = to_device(a)
>>> mod = SourceModule("__global__ void twice(float* x) { x[threadIdx.x] *= 2; }",
...                    no_extern_c=True)
>>> mod.get_function("twice")(d, grid=(1, 1), block=(4, 1, 1))
>>> from_device_like(d, a)
array([0., 2., 4., 6.], dtype=float32)
"""

from __future__ import annotations

import contextlib
import time

import numpy as np

from ..errors import LaunchError, UnsupportedError
from ..i18n.messages import _
from .device_heap import DEVICE_HEAP
from .launch import DEVICE, Kernel, launch
from .memory import HEAP
from .module import Program


class DeviceAllocation:
    """A block of emulated device memory; ``int(ptr)`` is its device address."""

    def __init__(self, nbytes: int):
        self.nbytes = int(nbytes)
        self._address = HEAP.alloc(self.nbytes)
        self._freed = False

    def __int__(self) -> int:
        return self._address

    __index__ = __int__

    def free(self) -> None:
        """Release the memory now (PyCUDA also frees when the object is collected)."""
        if not self._freed:
            self._freed = True
            HEAP.free(self._address)

    def __del__(self):
        with contextlib.suppress(Exception):
            self.free()

    def __repr__(self) -> str:
        return f"<emulated DeviceAllocation {self.nbytes} bytes at {self._address:#x}>"


def mem_alloc(nbytes: int) -> DeviceAllocation:
    """Allocate ``nbytes`` of device memory."""
    return DeviceAllocation(nbytes)


def mem_alloc_like(ary: np.ndarray) -> DeviceAllocation:
    return DeviceAllocation(ary.nbytes)


PITCH_ALIGN = 512


def mem_alloc_pitch(width: int, height: int, access_size: int):
    """``(allocation, pitch)``: rows of ``width`` bytes padded to a multiple of 512."""
    if access_size not in (4, 8, 16):
        raise LaunchError(f"mem_alloc_pitch: access_size must be 4, 8 or 16, got {access_size}")
    pitch = -(-int(width) // PITCH_ALIGN) * PITCH_ALIGN
    return DeviceAllocation(pitch * int(height)), pitch


def mem_get_info() -> tuple[int, int]:
    """``(free, total)`` bytes of the emulated device (an 80 GB H100's total)."""
    total = 80 * 1024**3
    return total - HEAP._top, total


def _host_bytes(ary) -> np.ndarray:
    a = np.asarray(ary)
    if not a.flags.c_contiguous:
        raise LaunchError("host array must be C-contiguous for a copy")
    return a


def memcpy_htod(dest, src) -> None:
    """Copy the host array ``src`` to device address ``dest``."""
    HEAP.write(int(dest), _host_bytes(src))


def memcpy_dtoh(dest: np.ndarray, src) -> None:
    """Copy ``dest.nbytes`` bytes from device address ``src`` into host array ``dest``."""
    d = _host_bytes(dest)
    raw = HEAP.read(int(src), d.nbytes)
    d.reshape(-1).view(np.uint8)[:] = raw


def memcpy_dtod(dest, src, size: int) -> None:
    """Copy ``size`` bytes between device addresses."""
    HEAP.write(int(dest), HEAP.read(int(src), int(size)))


def memcpy_htod_async(dest, src, stream=None) -> None:
    memcpy_htod(dest, src)


def memcpy_dtoh_async(dest, src, stream=None) -> None:
    memcpy_dtoh(dest, src)


def memcpy_dtod_async(dest, src, size, stream=None) -> None:
    memcpy_dtod(dest, src, size)


def memset_d8(dest, data: int, count: int) -> None:
    HEAP.write(int(dest), np.full(int(count), data, np.uint8))


def memset_d32(dest, data: int, count: int) -> None:
    HEAP.write(int(dest), np.full(int(count), data, np.uint32))


def to_device(ary) -> DeviceAllocation:
    """Allocate and copy a host array to the device."""
    a = np.ascontiguousarray(ary)
    d = DeviceAllocation(a.nbytes)
    memcpy_htod(d, a)
    return d


def from_device(ptr, shape, dtype, order="C") -> np.ndarray:
    out = np.empty(shape, dtype, order=order)
    memcpy_dtoh(out, ptr)
    return out


def from_device_like(ptr, other: np.ndarray) -> np.ndarray:
    return from_device(ptr, other.shape, other.dtype)


class PagelockedHostAllocation(bytearray):
    """The buffer behind a "page-locked" array (ordinary memory: the emulator needs no
    pinning); named as PyCUDA's, so that recordings (:mod:`cudakit.record`) see it pinned."""


def pagelocked_empty(shape, dtype, order="C", mem_flags=0) -> np.ndarray:
    """Host memory (zeroed, ordinary memory here: the emulator needs no pinning)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    flat = np.frombuffer(PagelockedHostAllocation(count * dtype.itemsize), dtype)
    return flat.reshape(shape, order=order)


def pagelocked_zeros(shape, dtype, order="C", mem_flags=0) -> np.ndarray:
    return pagelocked_empty(shape, dtype, order=order)


def pagelocked_empty_like(ary, mem_flags=0) -> np.ndarray:
    return pagelocked_empty(ary.shape, ary.dtype)


class ArgumentHandler:
    """Wraps a host array passed to a kernel (``In``, ``Out``, ``InOut``)."""

    copy_in = copy_out = False

    def __init__(self, array: np.ndarray):
        self.array = array
        self.dev = None

    def before(self):
        self.dev = DeviceAllocation(self.array.nbytes)
        if self.copy_in:
            memcpy_htod(self.dev, self.array)
        return self.dev

    def after(self):
        if self.copy_out:
            memcpy_dtoh(self.array, self.dev)
        self.dev.free()


class In(ArgumentHandler):
    copy_in = True


class Out(ArgumentHandler):
    copy_out = True


class InOut(ArgumentHandler):
    copy_in = copy_out = True


class Stream:
    """A stream; the emulator runs everything in issue order at once."""

    def __init__(self, flags=0):
        self.handle = id(self)

    def synchronize(self) -> None:
        pass

    def is_done(self) -> bool:
        return True

    def wait_for_event(self, event) -> None:
        """Work issued later waits for ``event`` (it always has: everything runs in order)."""


class Event:
    """Host-clock event: its times measure the emulator, not a GPU."""

    def __init__(self, flags=0):
        self.t = None

    def record(self, stream=None) -> Event:
        self.t = time.perf_counter()
        return self

    def synchronize(self) -> Event:
        return self

    def query(self) -> bool:
        return True

    def time_since(self, start: Event) -> float:
        """Milliseconds from ``start`` to this event (emulated time)."""
        if self.t is None or start.t is None:
            raise LaunchError("Event.time_since: both events must be recorded first")
        return (self.t - start.t) * 1e3

    def time_till(self, end: Event) -> float:
        """Milliseconds from this event to ``end`` (emulated time)."""
        return end.time_since(self)

    def __repr__(self) -> str:
        return "<emulated Event (CPU emulator time, not GPU time)>"


class limit:  # noqa: N801 -- named as pycuda.driver.limit
    """The context limits :meth:`Context.set_limit` takes, as ``pycuda.driver.limit``."""

    STACK_SIZE = 0
    PRINTF_FIFO_SIZE = 1
    MALLOC_HEAP_SIZE = 2


class Context:
    _limits = {limit.STACK_SIZE: 1024, limit.PRINTF_FIFO_SIZE: 1 << 20}

    @staticmethod
    def synchronize() -> None:
        pass

    @staticmethod
    def set_limit(which: int, value: int) -> None:
        """Set a context limit; ``limit.MALLOC_HEAP_SIZE`` bounds device code's ``malloc``.

        >>> Context.set_limit(limit.MALLOC_HEAP_SIZE, 64 << 20)
        >>> Context.get_limit(limit.MALLOC_HEAP_SIZE) >> 20
        64
        >>> Context.set_limit(limit.MALLOC_HEAP_SIZE, 8 << 20)
        """
        if int(value) < 0 or which not in (*Context._limits, limit.MALLOC_HEAP_SIZE):
            raise LaunchError(f"Context.set_limit({which!r}, {value!r}): not a limit and a "
                              "size in bytes")
        if which == limit.MALLOC_HEAP_SIZE:
            DEVICE_HEAP.limit = int(value)
        else:
            Context._limits[which] = int(value)

    @staticmethod
    def get_limit(which: int) -> int:
        """A context limit (``limit.MALLOC_HEAP_SIZE``: the device heap's bytes)."""
        if which == limit.MALLOC_HEAP_SIZE:
            return DEVICE_HEAP.limit
        if which not in Context._limits:
            raise LaunchError(f"Context.get_limit({which!r}): not a limit")
        return Context._limits[which]


def init(flags=0) -> None:
    pass


class Memcpy2D:
    """Pitched 2D copy, as ``pycuda.driver.Memcpy2D``."""

    def __init__(self):
        self.src_x_in_bytes = self.src_y = self.dst_x_in_bytes = self.dst_y = 0
        self.src_pitch = self.dst_pitch = 0
        self.width_in_bytes = self.height = 0
        self._src = self._dst = None

    def set_src_host(self, ary):
        self._src = ("host", np.ascontiguousarray(ary).reshape(-1).view(np.uint8))

    def set_src_device(self, ptr):
        self._src = ("device", int(ptr))

    def set_dst_host(self, ary):
        if not ary.flags.c_contiguous:
            raise LaunchError("Memcpy2D destination array must be C-contiguous")
        self._dst = ("host", ary.reshape(-1).view(np.uint8))

    def set_dst_device(self, ptr):
        self._dst = ("device", int(ptr))

    def __call__(self, aligned: bool = False, stream=None) -> None:
        if self._src is None or self._dst is None:
            raise LaunchError("Memcpy2D: set a source and a destination first")
        w = int(self.width_in_bytes)
        if w > self.src_pitch or w > self.dst_pitch:
            raise LaunchError(f"Memcpy2D: width_in_bytes={w} exceeds a pitch "
                              f"(src {self.src_pitch}, dst {self.dst_pitch})")
        for row in range(int(self.height)):
            s = self.src_x_in_bytes + (self.src_y + row) * self.src_pitch
            d = self.dst_x_in_bytes + (self.dst_y + row) * self.dst_pitch
            kind, src = self._src
            data = src[s:s + w] if kind == "host" else HEAP.read(src + s, w)
            kind, dst = self._dst
            if kind == "host":
                dst[d:d + w] = data
            else:
                HEAP.write(dst + d, data)


class Function:
    """A kernel of a SourceModule; call it like a PyCUDA function."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.name = kernel.name

    def __call__(self, *args, grid=(1, 1), block=None, shared=0, stream=None,
                 time_kernel=False, texrefs=(), racecheck=True, timeout=None, trace=None,
                 counter=None, blocks=None, on_timeout=None, clock=None, cooperative=False):
        if block is None:
            raise LaunchError(f"launch of '{self.name}' needs block=(x, y, z)")
        if texrefs:
            raise UnsupportedError(_("the emulator has no texture references; read the array "
                                     "through a pointer instead"))
        handlers = [a for a in args if isinstance(a, ArgumentHandler)]
        real = [a.before() if isinstance(a, ArgumentHandler) else a for a in args]
        start = time.perf_counter()
        try:
            launch(self.kernel, real, grid, block, shared, racecheck, timeout, trace, counter,
                   blocks, on_timeout, clock, cooperative)
        finally:
            for h in handlers:
                if h.dev is not None:
                    h.after()
        if time_kernel:
            return time.perf_counter() - start
        return None

    @property
    def shared_size_bytes(self) -> int:
        """Static ``__shared__`` bytes per block (PyCUDA's attribute of the same name)."""
        return self.kernel.shared_static

    @property
    def local_size_bytes(self) -> int:
        """Local-memory bytes per thread in the kernel's own frame (its PTX depot)."""
        return self.kernel.frame_bytes

    @property
    def max_threads_per_block(self) -> int:
        return DEVICE.max_threads_per_block

    def __repr__(self) -> str:
        return f"<emulated Function '{self.name}'>"


class SourceModule:
    """CUDA C++ source compiled for the emulator (same signature as PyCUDA's).

    nvcc compiles the source to PTX for sm_90 (compile errors show nvcc's messages at the
    user's lines); kernels are decoded when first asked for.
    """

    def __init__(self, source: str, nvcc="nvcc", options=None, keep=False,
                 no_extern_c=False, arch=None, code=None, cache_dir=None, include_dirs=()):
        opts = list(options or ()) + [f"-I{d}" for d in include_dirs]
        self.program = Program(source, opts)
        self._functions: dict[str, Function] = {}

    def get_function(self, name: str) -> Function:
        """The kernel ``name`` (also ``"name<256>"`` for a template, or a mangled name)."""
        f = self._functions.get(name)
        if f is None:
            f = self._functions[name] = Function(Kernel(self.program,
                                                        self.program.entry(name).name))
        return f

    def get_global(self, name: str) -> tuple[int, int]:
        """``(device address, size in bytes)`` of a ``__device__``/``__constant__`` symbol."""
        symbols = self.program.symbols
        if name not in symbols:
            known = ", ".join(n for n in symbols if not n.startswith(("_Z", "$", "__unnamed")))
            raise LaunchError(f"no __device__ or __constant__ symbol '{name}' (symbols: "
                              f"{known or 'none'})")
        return symbols[name]
