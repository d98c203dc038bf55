"""What the emulator records: every warp-level memory access, as NumPy batches, and
a count of warp operations.

The analysis package reads these records to count requests, sectors, wavefronts
and bank conflicts exactly as the hardware does.

>>> import numpy as np
>>> t = Trace()
>>> t.add(AccessBatch("k", 3, 5, 0, "global", "ld", 4, np.zeros((1, 3), int),
...       np.zeros(1, int), np.ones((1, 32), bool), np.arange(32, dtype=np.uint64)[None] * 4))
>>> len(t.accesses), t.accesses[0].warps
(1, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SPACES = ("global", "shared", "local", "constant")
OPS = ("ld", "st", "atom")


@dataclass
class AccessBatch:
    """One memory instruction executed by ``W`` warps at once.

    ``address`` is a byte address per lane: a device address for global memory, a
    byte offset into the block's shared memory for shared memory.
    """

    kernel: str
    line: int
    column: int
    site: int
    space: str
    op: str
    size: int
    block: np.ndarray  # (W, 3) blockIdx of each warp
    warp: np.ndarray  # (W,) warp index within its block
    mask: np.ndarray  # (W, 32) lanes that perform the access
    address: np.ndarray  # (W, 32) uint64 byte addresses
    floating: bool = False  # an atomic on floating-point values (the L2 adds them slower)

    @property
    def warps(self) -> int:
        """Number of warps in this batch."""
        return int(self.mask.shape[0])


def joined(batches: list[AccessBatch], site: int = -1) -> AccessBatch:
    """The warps of ``batches`` (all of one space, op and size) as one batch, in their
    order: rules that work per warp then run once over many small batches (a grid-stride
    loop traces one batch of a block's warps per trip).

    >>> one = AccessBatch("k", 0, 0, 0, "global", "ld", 4, np.zeros((1, 3), np.int64),
    ...                   np.zeros(1, np.int64), np.ones((1, 32), bool),
    ...                   np.zeros((1, 32), np.uint64))
    >>> joined([one, one]).warps
    2
    """
    first = batches[0]
    return AccessBatch(first.kernel, 0, 0, site, first.space, first.op, first.size,
                       np.concatenate([b.block for b in batches]),
                       np.concatenate([b.warp for b in batches]),
                       np.concatenate([b.mask for b in batches]),
                       np.concatenate([b.address for b in batches]), first.floating)


@dataclass
class Trace:
    """Collects the :class:`AccessBatch` records of one or more launches, in program order."""

    accesses: list[AccessBatch] = field(default_factory=list)
    warps: int = 0  # warp accesses over all the records

    def add(self, batch: AccessBatch) -> None:
        if batch.space not in SPACES or batch.op not in OPS:
            raise ValueError(f"bad access record: space={batch.space!r} op={batch.op!r}")
        self.accesses.append(batch)
        self.warps += batch.warps

    def clear(self) -> None:
        self.accesses.clear()
        self.warps = 0


class OpCounter:
    """Counts warp operations: each executed instruction times the warps with an active lane.

    >>> c = OpCounter()
    >>> c.add(3, np.r_[np.ones(40, bool), np.zeros(24, bool)])
    >>> c.ops
    6
    """

    def __init__(self):
        self.ops = 0

    def block(self, b, blk, L, dec) -> None:
        """The scheduler's hook: basic block ``blk`` ran for lanes ``L`` of batch ``b``."""
        active = np.zeros(b.size, bool)
        active[L] = True
        self.add(blk.count, active)

    def add(self, ops: int, mask: np.ndarray) -> None:
        if ops:
            self.ops += ops * int(mask.reshape(-1, 32).any(axis=1).sum())
