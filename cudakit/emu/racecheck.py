"""racecheck: shared-memory hazards between barriers, per byte, vectorised.

For every byte of every block's shared memory the tracker remembers the last
writer and the reader(s) since the last ``__syncthreads()``. An access by another
thread that conflicts with them (write-after-write, read-after-write,
write-after-read) is a hazard, because CUDA orders nothing between two barriers.

Threads of the same warp are ordered only by ``__syncwarp()``: since Volta the
lanes of a warp may run independently, so warp-synchronous code without
``__syncwarp()`` is reported too, as compute-sanitizer's racecheck does on
current GPUs. ``volatile`` does not help: it orders nothing between threads.

>>> import numpy as np
>>> r = RaceTracker(nblocks=1, nbytes=8, warps_per_block=1)
>>> r.access(np.array([0]), np.array([0]), np.array([0]), 4, True, 0) is None
True
>>> r.access(np.array([0]), np.array([1]), np.array([0]), 4, False, 1)[0]
'read-after-write'
"""

from __future__ import annotations

import numpy as np

NONE = -1
MULTI = -2
CROSS = -3


class RaceTracker:
    """Per-byte access history of the shared memory of a batch of blocks."""

    def __init__(self, nblocks: int, nbytes: int, warps_per_block: int):
        n = nblocks * nbytes
        self.nbytes = nbytes
        self.w_tid = np.full(n, NONE, np.int32)
        self.w_warp = np.zeros(n, np.int32)
        self.w_ep = np.zeros(n, np.int32)
        self.w_site = np.zeros(n, np.int32)
        self.r_tid = np.full(n, NONE, np.int32)
        self.r_warp = np.zeros(n, np.int32)
        self.r_ep = np.zeros(n, np.int32)
        self.r_site = np.zeros(n, np.int32)
        self.epoch = np.zeros(nblocks * warps_per_block, np.int32)
        self.warps_per_block = warps_per_block

    def barrier(self) -> None:
        """``__syncthreads()``: everything before is ordered before everything after."""
        self.w_tid.fill(NONE)
        self.r_tid.fill(NONE)

    def syncwarp(self, warp_keys: np.ndarray) -> None:
        """``__syncwarp()`` by the given warps (batch-wide warp numbers)."""
        self.epoch[np.unique(warp_keys)] += 1

    def access(self, offsets, tids, warps, size: int, write: bool, site: int):
        """Record one shared access; return ``None`` or a hazard description.

        ``offsets``: byte offsets into the batch's shared memory (block * nbytes + offset);
        ``tids``: thread index within the block; ``warps``: batch-wide warp number.
        The description is ``(kind, index_of_lane, other_thread, other_site)``.
        """
        if offsets.size == 0:
            return None
        idx = (offsets[:, None] + np.arange(size)).ravel()
        t = np.repeat(tids.astype(np.int32), size)
        wk = np.repeat(warps.astype(np.int32), size)
        ep = self.epoch[wk]
        w = self.w_tid[idx]
        unordered_w = (w >= 0) & (w != t) & ((self.w_warp[idx] != wk) | (self.w_ep[idx] == ep))
        if write:
            r = self.r_tid[idx]
            rw = self.r_warp[idx]
            unordered_r = (r != NONE) & (r != t) & ((rw != wk) | (self.r_ep[idx] == ep))
            found = self._first(unordered_w, "write-after-write", w, self.w_site[idx], size)
            found = found or self._first(unordered_r, "write-after-read", r, self.r_site[idx],
                                         size)
            if found:
                return found
            self.w_tid[idx] = t
            self.w_warp[idx] = wk
            self.w_ep[idx] = ep
            self.w_site[idx] = site
            back = self.w_tid[idx]
            return self._first(back != t, "write-after-write", back, np.full(idx.size, site),
                               size)
        found = self._first(unordered_w, "read-after-write", w, self.w_site[idx], size)
        if found:
            return found
        r = self.r_tid[idx]
        rw = self.r_warp[idx]
        single = (r == NONE) | (r == t) | ((rw == wk) & (self.r_ep[idx] != ep))
        new_t = np.where(single, t, MULTI).astype(np.int32)
        new_w = np.where(single | (rw == wk), wk, CROSS).astype(np.int32)
        self.r_tid[idx] = new_t
        self.r_warp[idx] = new_w
        self.r_ep[idx] = ep
        self.r_site[idx] = site
        clash = self.r_tid[idx] != new_t
        if clash.any():
            same = self.r_warp[idx] == wk
            ci = idx[clash]
            self.r_tid[ci] = MULTI
            self.r_warp[ci] = np.where(same[clash], wk[clash], CROSS)
        return None

    @staticmethod
    def _first(bad, kind, other, other_site, size):
        if not bad.any():
            return None
        k = int(np.argmax(bad))
        return kind, k // size, int(other[k]), int(other_site[k])
