"""``malloc`` and ``free`` in device code: the device's heap, limited as on the GPU.

CUDA gives kernels a heap of its own, 8 MiB unless the host raises
``cudaLimitMallocHeapSize`` (PyCUDA: ``Context.set_limit(limit.MALLOC_HEAP_SIZE, n)``)
before launching; a ``malloc`` that does not fit returns NULL, and what a kernel
allocates lives until some kernel frees it (CUDA Programming Guide, "Dynamic Global
Memory Allocation and Operations"). Here each block is an allocation of the emulated
global memory (:mod:`.memory`), with its red zone, so memcheck names it and catches a
thread writing past its end; the heap's limit counts the bytes asked for, rounded up to
the 16-byte alignment ``malloc`` gives (``malloc(0)`` gives a block of none, which
the H200 does too). No library emulates this, hence this module.

>>> import numpy as np
>>> heap = DeviceHeap()
>>> a = heap.malloc(np.array([100, 0, 1 << 30], np.uint64), "test")
>>> bool(a[1] != 0), int(a[2])  # malloc(0) gives a block (as on an H200), too much NULL
(True, 0)
>>> heap.free(a, "test"); heap.used
0
"""

from __future__ import annotations

import numpy as np

from ..errors import KernelFaultError
from ..i18n.messages import _
from .memory import HEAP

DEFAULT_LIMIT = 8 << 20  # bytes: cudaLimitMallocHeapSize's default
ALIGN = 16


class DeviceHeap:
    """The blocks device code has allocated and not yet freed, and the heap's limit."""

    def __init__(self, limit: int = DEFAULT_LIMIT):
        self.limit = limit
        self.used = 0
        self.blocks: dict[int, int] = {}  # address -> bytes counted against the limit

    def malloc(self, sizes: np.ndarray, label: str) -> np.ndarray:
        """One block per lane of ``sizes`` bytes: their addresses, 0 where it does not fit."""
        out = np.zeros(sizes.size, np.uint64)
        for k, size in enumerate(sizes.tolist()):
            counted = max(-(-size // ALIGN), 1) * ALIGN
            if self.used + counted > self.limit:
                continue
            address = HEAP.alloc(size, label)
            self.blocks[address] = counted
            self.used += counted
            out[k] = address
        HEAP.launching()  # the kernel writes the new blocks
        return out

    def free(self, addresses: np.ndarray, where: str) -> None:
        """Give back the blocks at ``addresses`` (NULL is ignored, as by ``free``)."""
        for address in addresses.tolist():
            if address == 0:
                continue
            counted = self.blocks.pop(address, None)
            if counted is None:
                block = HEAP.find(address)
                what = _("memory the host allocated") if block is not None and \
                    block.base == address else _("no block malloc() returned, or one already "
                                                 "freed")
                raise KernelFaultError(_("free({address}) {where}: {what}").format(
                    address=f"{address:#x}", where=where, what=what))
            HEAP.free(address)
            self.used -= counted


DEVICE_HEAP = DeviceHeap()
