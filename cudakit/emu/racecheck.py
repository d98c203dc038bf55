"""racecheck: shared-memory hazards between barriers, vectorised over lanes.

For every 4-byte word (every byte once the kernel makes a 1- or 2-byte shared
access) of each block's shared memory, the tracker remembers the last writer and
the reader(s) since the last ``__syncthreads()``. An access by another thread
that conflicts with them (write-after-write, read-after-write, write-after-read)
is a hazard, because CUDA orders nothing between two barriers.

Threads of the same warp are ordered only by ``__syncwarp()``: since Volta the
lanes of a warp may run independently, so warp-synchronous code without
``__syncwarp()`` is reported too, as compute-sanitizer's racecheck does on
current GPUs. ``volatile`` does not help: it orders nothing between threads.

Atomics conflict with plain accesses by other threads, not with other atomics.
Reads are only logged; the log is folded into the reader state when a write
follows in the same barrier interval (most reads, e.g. of a loaded tile, are
never followed by one, so they cost almost nothing).

>>> import numpy as np
>>> r = RaceTracker(nblocks=1, nbytes=8, warps_per_block=1)
>>> r.access(np.array([0]), np.array([0]), np.array([0]), 4, "st", 0) is None
True
>>> r.access(np.array([0]), np.array([1]), np.array([0]), 4, "ld", 1)[0]
'read-after-write'
"""

from __future__ import annotations

import numpy as np

NONE = -1
MULTI = -2
CROSS = -3


class RaceTracker:
    """Access history of the shared memory of a batch of blocks."""

    def __init__(self, nblocks: int, nbytes: int, warps_per_block: int):
        self.unit = 4
        self.n = nblocks * nbytes
        self.w_tid = np.full(self.n // 4, NONE, np.int32)
        self.w_ep = np.zeros(self.n // 4, np.int32)
        self.w_site = np.zeros(self.n // 4, np.int32)
        self.r_tid = np.full(self.n // 4, NONE, np.int32)
        self.r_warp = np.zeros(self.n // 4, np.int32)
        self.r_ep = np.zeros(self.n // 4, np.int32)
        self.r_site = np.zeros(self.n // 4, np.int32)
        self.a_tid = np.full(self.n // 4, NONE, np.int32)  # atomic accessors, like readers
        self.a_warp = np.zeros(self.n // 4, np.int32)
        self.a_ep = np.zeros(self.n // 4, np.int32)
        self.a_site = np.zeros(self.n // 4, np.int32)
        self.stride = nbytes
        self.epoch = np.zeros(nblocks * warps_per_block, np.int32)
        self.wpb = warps_per_block
        self.reads: list = []
        self.written = False  # any plain write since the barrier
        self.atomics = False  # any atomic since the barrier
        self.synced = False  # any __syncwarp yet (else every epoch is 0)

    def _to_bytes(self) -> None:
        """Switch to byte granularity (a 1- or 2-byte access appeared)."""
        self._fold()
        for name in ("w_tid", "w_ep", "w_site", "r_tid", "r_warp", "r_ep", "r_site", "a_tid",
                     "a_warp", "a_ep", "a_site"):
            setattr(self, name, np.repeat(getattr(self, name), 4))
        self.unit = 1

    def barrier(self) -> None:
        """``__syncthreads()``: everything before is ordered before everything after."""
        if self.written:
            self.w_tid.fill(NONE)
        if self.atomics:
            self.a_tid.fill(NONE)
        self.r_tid.fill(NONE)
        self.reads.clear()
        self.written = self.atomics = False

    def syncwarp(self, warp_keys: np.ndarray) -> None:
        """``__syncwarp()`` by the given warps (batch-wide warp numbers)."""
        self.epoch[np.unique(warp_keys)] += 1
        self.synced = True

    def _epochs(self, warps):
        return self.epoch[warps] if self.synced else np.int32(0)

    def _cells(self, offsets, tids, warps, size):
        u = self.unit
        per = max(size // u, 1)
        first = offsets // u
        if per == 1:
            return first, tids, warps, 1
        idx = (first[:, None] + np.arange(per)).ravel()
        return idx, np.repeat(tids, per), np.repeat(warps, per), per

    def access(self, offsets, tids, warps, size: int, op: str, site: int):
        """Record one shared access (``op``: "ld", "st" or "atom"); return ``None`` or a
        hazard description ``(kind, index_of_lane, other_thread, other_site, other_warp)``.

        ``offsets``: byte offsets into the batch's shared memory (block * nbytes + offset);
        ``tids``: thread index within the block; ``warps``: batch-wide warp number (both
        int32). Atomics conflict with plain accesses of other threads, not with atomics.
        """
        if offsets.size == 0:
            return None
        if size < self.unit:
            self._to_bytes()
        if op == "ld" and not (self.written or self.atomics):
            self.reads.append((offsets, tids, warps, size, self._epochs(warps), site))
            return None
        idx, t, wk, per = self._cells(offsets, tids, warps, size)
        ep = self._epochs(wk)
        if op == "ld":
            found = self._after_writes(idx, t, wk, ep, per, "read-after-write")
            if not found:
                self.reads.append((offsets, tids, warps, size, self._epochs(warps), site))
            return found
        kind = "write-after-write"
        found = self._after_writes(idx, t, wk, ep, per, kind, plain=True, atomic=op == "st")
        if found:
            return found
        self._fold()
        found = self._unordered(self.r_tid, self.r_warp, self.r_ep, self.r_site, idx, t, wk, ep,
                                per, "write-after-read")
        if found:
            return found
        if op == "atom":
            self.atomics = True
            self._join(self.a_tid, self.a_warp, self.a_ep, self.a_site, idx, t, wk, ep, site)
            return None
        self.w_tid[idx] = t
        self.w_ep[idx] = ep
        self.w_site[idx] = site
        self.written = True
        back = self.w_tid[idx]
        return self._first(back != t, kind, back, np.full(idx.size, site), per,
                           self._writer_warps(idx, back))

    def _after_writes(self, idx, t, wk, ep, per, kind, plain=True, atomic=True):
        """A hazard with the plain writer and/or the atomic accessors of the cells, if any."""
        if plain and self.written:
            w = self.w_tid[idx]
            same_warp = self._writer_warps(idx, w) == wk
            unordered = (w >= 0) & (w != t) & (~same_warp | (self.w_ep[idx] == ep))
            found = self._first(unordered, kind, w, self.w_site[idx], per,
                                self._writer_warps(idx, w))
            if found:
                return found
        if atomic and self.atomics:
            return self._unordered(self.a_tid, self.a_warp, self.a_ep, self.a_site, idx, t, wk,
                                   ep, per, kind)
        return None

    def _unordered(self, tid, warp, epoch, sites, idx, t, wk, ep, per, kind):
        """A hazard with the threads recorded in a reader-style state (several allowed)."""
        r = tid[idx]
        bad = (r != NONE) & (r != t) & ((warp[idx] != wk) | (epoch[idx] == ep))
        return self._first(bad, kind, r, sites[idx], per, warp[idx])

    @staticmethod
    def _join(tid, warp, epoch, sites, idx, t, wk, ep, site) -> None:
        """Add threads ``t`` to a reader-style state (one thread, or MULTI once several)."""
        r = tid[idx]
        rw = warp[idx]
        single = (r == NONE) | (r == t) | ((rw == wk) & (epoch[idx] != ep))
        new_t = np.where(single, t, MULTI).astype(np.int32)
        tid[idx] = new_t
        warp[idx] = np.where(single | (rw == wk), wk, CROSS)
        epoch[idx] = ep
        sites[idx] = site
        clash = tid[idx] != new_t
        if clash.any():
            ci = idx[clash]
            tid[ci] = MULTI
            warp[ci] = np.where(warp[ci] == wk[clash], wk[clash], CROSS)

    def _fold(self) -> None:
        """Fold the logged reads into the per-cell reader state."""
        for offsets, tids, warps, size, ep, site in self.reads:
            idx, t, wk, per = self._cells(offsets, tids, warps, size)
            if per > 1 and np.ndim(ep):
                ep = np.repeat(ep, per)
            self._join(self.r_tid, self.r_warp, self.r_ep, self.r_site, idx, t, wk, ep, site)
        self.reads.clear()

    def _writer_warps(self, idx, tids):
        """Batch-wide warp numbers of threads ``tids`` of the blocks owning cells ``idx``."""
        return (idx * self.unit // self.stride) * self.wpb + tids // 32

    @staticmethod
    def _first(bad, kind, other, other_site, per, other_warp):
        """The first hazard: ``(kind, lane index, other thread or MULTI, its site, its warp
        (batch-wide; CROSS when several threads of several warps))``."""
        if not bad.any():
            return None
        k = int(np.argmax(bad))
        return kind, k // per, int(other[k]), int(other_site[k]), int(other_warp[k])
