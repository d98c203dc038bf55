"""Emulated device memory: the global/constant heap and the address windows.

One 64-bit address space, as on the GPU with generic addressing:

* ``HEAP_BASE`` and up: global allocations and ``__constant__``/``__device__`` symbols,
  256-byte aligned like ``cudaMalloc``;
* ``SHARED_BASE`` + offset: the calling thread's block's shared memory;
* ``LOCAL_BASE`` + offset: the calling thread's local memory (local arrays).

>>> heap = Heap()
>>> a = heap.alloc(100)
>>> heap.write(a, bytes(range(8)))
>>> bytes(heap.read(a + 2, 3))
b'\\x02\\x03\\x04'
>>> b = heap.alloc(1000); heap.free(a); heap.free(b); heap.alloc(4000) == a
True
"""

from __future__ import annotations

import bisect
import mmap
import sys
from dataclasses import dataclass

import numpy as np

from ..errors import MemcheckError
from ..i18n.messages import _

WINDOW = 1 << 40
LOCAL_BASE = 1 << 40
SHARED_BASE = 2 << 40
HEAP_BASE = 0x7F00_0000_0000
ALIGN = 256


#: Linux gives back zero pages for a private anonymous mapping's range after
#: ``madvise(MADV_DONTNEED)``; elsewhere that advice need not zero, so ranges are written
_RELEASE = sys.platform.startswith("linux") and hasattr(mmap, "MADV_DONTNEED")


def _zeroed_arena(size: int) -> np.ndarray:
    """``size`` zero bytes, as pages the system maps on first touch (an anonymous mapping on
    Linux, so that :func:`_zero` can hand pages back)."""
    if not _RELEASE:
        return np.zeros(size, np.uint8)
    return np.frombuffer(mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS),
                         np.uint8)


def _mapping(arena: np.ndarray) -> mmap.mmap | None:
    """The anonymous mapping under an arena of :func:`_zeroed_arena`, or None."""
    owner = getattr(arena.base, "obj", arena.base)  # np.frombuffer keeps a memoryview
    return owner if _RELEASE and isinstance(owner, mmap.mmap) else None


def _zero(arena: np.ndarray, start: int, stop: int) -> None:
    """Zero ``arena[start:stop]``: its whole pages handed back to the system where
    :func:`_zeroed_arena` made it so (a freed gigabyte buffer costs nothing to clear, and no
    memory until written again), the rest written."""
    page = mmap.PAGESIZE
    first, last = -(-start // page) * page, stop // page * page
    mapping = _mapping(arena)
    if mapping is None or last - first < 16 * page:
        arena[start:stop] = 0
        return
    arena[start:first] = 0
    mapping.madvise(mmap.MADV_DONTNEED, first, last - first)
    arena[last:stop] = 0


@dataclass
class Allocation:
    base: int
    size: int
    label: str
    space: str  # "global" or "constant"


class Heap:
    """Global and constant memory of the emulated device (one per process)."""

    def __init__(self):
        self.arena = _zeroed_arena(1 << 20)
        self._views: dict = {}
        self._top = 0
        self._written = 0  # arena bytes from here on have never been written: still zero
        self._bases: list[int] = []
        self._allocs: list[Allocation] = []
        self._free: dict[int, int] = {}  # offset -> size of each free range below _top
        self._count = 0

    # -- allocation ------------------------------------------------------------------
    def alloc(self, nbytes: int, label: str | None = None, space: str = "global") -> int:
        """Allocate ``nbytes`` (zeroed); return the device address."""
        nbytes = int(nbytes)
        if nbytes < 0:
            raise ValueError(f"cannot allocate {nbytes} bytes")
        rounded = _reserved(nbytes)
        self._count += 1
        label = label or _("allocation #{number}").format(number=self._count)
        fits = [(size, off) for off, size in self._free.items() if size >= rounded]
        if fits:  # best fit; the rest of the range stays free
            size, off = min(fits)
            del self._free[off]
            if size > rounded:
                self._free[off + rounded] = size - rounded
        else:
            off = self._top
            self._top += rounded
            self._grow(self._top)
        _zero(self.arena, off, max(min(off + rounded, self._written), off))  # what was written
        base = HEAP_BASE + off
        i = bisect.bisect(self._bases, base)
        self._bases.insert(i, base)
        self._allocs.insert(i, Allocation(base, nbytes, label, space))
        return base

    def free(self, address: int) -> None:
        """Release the allocation that starts at ``address``."""
        i = bisect.bisect_left(self._bases, address)
        if i == len(self._bases) or self._bases[i] != address:
            raise MemcheckError(_("free of {address}: not the start of a live allocation").format(
                address=f"{address:#x}"))
        a = self._allocs.pop(i)
        self._bases.pop(i)
        self._release(a.base - HEAP_BASE, _reserved(a.size))

    def _release(self, off: int, size: int) -> None:
        """Return a range to the free list, merged with free neighbours and the top."""
        ends = {o + s: o for o, s in self._free.items()}
        if off in ends:  # merge with the free range just below
            below = ends[off]
            size += self._free.pop(below)
            off = below
        if off + size in self._free:  # and the one just above
            size += self._free.pop(off + size)
        if off + size == self._top:
            self._top = off
            if _RELEASE and self._written > off:  # give the pages above the top back now:
                _zero(self.arena, off, self._written)  # a later growth need not copy them
                self._written = off
        else:
            self._free[off] = size

    def _grow(self, need: int) -> None:
        if need <= self.arena.size:
            return
        size = self.arena.size
        while size < need:
            size *= 2
        arena = _zeroed_arena(size)  # the system's zero pages until written
        arena[:self._written] = self.arena[:self._written]
        self.arena = arena
        self._views.clear()

    def view(self, dtype) -> np.ndarray:
        """The arena seen as an array of ``dtype`` (cached until the arena grows)."""
        dt = np.dtype(dtype)
        v = self._views.get(dt)
        if v is None:
            v = self._views[dt] = self.arena.view(dt)
        return v

    # -- lookup ----------------------------------------------------------------------
    def find(self, address: int) -> Allocation | None:
        """The live allocation containing ``address``, or ``None``."""
        i = bisect.bisect(self._bases, address) - 1
        if i >= 0:
            a = self._allocs[i]
            if address < a.base + max(a.size, 1):
                return a
        return None

    def nearest(self, address: int) -> Allocation | None:
        """The live allocation closest to ``address``."""
        if not self._allocs:
            return None
        i = bisect.bisect(self._bases, address)
        near = self._allocs[max(i - 1, 0): i + 1]
        return min(near, key=lambda a: min(abs(address - a.base),
                                           abs(address - (a.base + a.size))))

    def bounds(self, lo: int, hi_end: int) -> Allocation | None:
        """The allocation holding the whole byte range ``[lo, hi_end)``, or ``None``."""
        a = self.find(lo)
        if a is not None and hi_end <= a.base + a.size:
            return a
        return None

    def in_bounds(self, addr: np.ndarray, size: int) -> np.ndarray:
        """Per address: True when ``[addr, addr + size)`` lies inside one allocation."""
        bases = np.array(self._bases, dtype=np.uint64)
        if bases.size == 0:
            return np.zeros(addr.shape, bool)
        ends = np.array([a.base + a.size for a in self._allocs], dtype=np.uint64)
        i = np.searchsorted(bases, addr, side="right") - 1
        ok = i >= 0
        ic = np.maximum(i, 0)
        return ok & (addr >= bases[ic]) & (addr + np.uint64(size) <= ends[ic])

    # -- host copies -----------------------------------------------------------------
    def _check_range(self, address: int, nbytes: int, what: str) -> int:
        if nbytes == 0:
            return int(address) - HEAP_BASE
        if self.bounds(int(address), int(address) + nbytes) is None:
            near = self.nearest(int(address))
            where = _("; nearest is {name}").format(name=describe(near)) if near else ""
            raise MemcheckError(_(
                "{what}: {nbytes} bytes at {address} are not inside one live device "
                "allocation{where}. Check the pointer and the byte count.").format(
                    what=what, nbytes=nbytes, address=f"{int(address):#x}", where=where)
            )
        return int(address) - HEAP_BASE

    def write(self, address: int, data) -> None:
        """Copy host bytes (bytes or a NumPy array) to device ``address``."""
        raw = np.frombuffer(memoryview(np.ascontiguousarray(data)).cast("B"), np.uint8)
        off = self._check_range(address, raw.size, _("copy to device"))
        self.arena[off:off + raw.size] = raw
        self._written = max(self._written, off + raw.size)

    def launching(self) -> None:
        """A kernel is about to run: it may write any live allocation."""
        self._written = max(self._written, self._top)

    def read(self, address: int, nbytes: int) -> np.ndarray:
        """A copy of ``nbytes`` device bytes at ``address``."""
        off = self._check_range(address, nbytes, _("copy from device"))
        return self.arena[off:off + nbytes].copy()


def _reserved(nbytes: int) -> int:
    """Bytes set aside for an allocation: rounded up to ``ALIGN``, plus an unallocated red
    zone of ``ALIGN`` bytes, so that reading just past one buffer never lands in the next."""
    return -(-max(nbytes, 1) // ALIGN) * ALIGN + ALIGN


def describe(a: Allocation) -> str:
    return _("{label} ({size} bytes at {base})").format(label=a.label, size=a.size,
                                                       base=f"{a.base:#x}")


HEAP = Heap()
