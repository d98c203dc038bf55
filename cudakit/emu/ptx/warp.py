"""Warp-wide operations over the active lanes: shuffles, votes, match, redux, and atomics
applied in lane order.

The active lanes of an instruction are sorted, so a warp's lanes are contiguous and
one ``reduceat`` per warp serves votes and reductions.

>>> import numpy as np
>>> view = np.zeros(2, np.int32)
>>> atomic_op("add", view, np.array([0, 0, 1]), [np.array([5, 6, 7], np.int32)], np.int32).tolist()
[0, 5, 0]
>>> view.tolist()
[11, 7]
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError
from .state import ALL


def _groups(lanes: np.ndarray):
    """Warp starts in the sorted ``lanes`` and each lane's group number."""
    w = lanes >> 5
    starts = np.flatnonzero(np.r_[True, w[1:] != w[:-1]]) if w.size else np.zeros(0, int)
    counts = np.diff(np.r_[starts, w.size])
    return starts, np.repeat(np.arange(starts.size), counts)


def vote(fr, L, mode: str, pred):
    lanes = fr.b.index(L)
    pred = np.broadcast_to(np.asarray(pred, bool), lanes.shape)
    starts, inv = _groups(lanes)
    if mode == "ballot":
        bits = pred.astype(np.uint32) << (lanes & 31).astype(np.uint32)
        return np.add.reduceat(bits, starts)[inv].astype(np.uint32) if lanes.size else bits
    if mode == "all":
        return np.logical_and.reduceat(pred, starts)[inv]
    if mode == "any":
        return np.logical_or.reduceat(pred, starts)[inv]
    allv = np.logical_and.reduceat(pred, starts)[inv]
    anyv = np.logical_or.reduceat(pred, starts)[inv]
    return allv | ~anyv


def shfl(fr, L, mode: str, a, b, c, mask, line: int):
    """``shfl.sync``: each lane reads register ``a`` of lane ``j`` of its warp."""
    lanes = fr.b.index(L)
    c = np.asarray(c).astype(np.int64)
    if c.ndim and c.size and (c != c[0]).any():
        starts, inv = _groups(lanes)
        first = c[starts][inv]
        if (c != first).any():
            raise UnsupportedError(f"a shuffle whose width differs between the lanes of a "
                                   f"warp (line {line} of kernel '{fr.kernel_name}')")
    lane = (lanes & 31).astype(np.int64)
    bval = np.asarray(b).astype(np.int64) & 31
    cval = c & 31
    seg = (c >> 8) & 31
    max_lane = (lane & seg) | (cval & ~seg)
    min_lane = lane & seg
    if mode == "up":
        j = lane - bval
        ok = j >= max_lane
    elif mode == "down":
        j = lane + bval
        ok = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bval
        ok = j <= max_lane
    else:
        j = min_lane | (bval & ~seg)
        ok = j <= max_lane
    j = np.where(ok, j, lane)
    full = a(fr, ALL)
    if np.ndim(full) == 0:
        return np.broadcast_to(full, lanes.shape), np.broadcast_to(ok, lanes.shape)
    return full[lanes - lane + j], np.broadcast_to(ok, lanes.shape)


def match_sync(fr, L, mode: str, values):
    lanes = fr.b.index(L)
    values = np.broadcast_to(values, lanes.shape)
    warp = lanes >> 5
    order = np.lexsort((values, warp))
    w, v = warp[order], values[order]
    new = np.r_[True, (w[1:] != w[:-1]) | (v[1:] != v[:-1])]
    starts = np.flatnonzero(new)
    gid = np.cumsum(new) - 1
    bits = np.uint32(1) << (lanes[order] & 31).astype(np.uint32)
    masks = np.add.reduceat(bits, starts).astype(np.uint32)
    out = np.empty(lanes.size, np.uint32)
    out[order] = masks[gid]
    if mode == "any":
        return out, np.ones(lanes.size, bool)
    ballot = vote(fr, L, "ballot", np.ones(lanes.size, bool))
    same = out == ballot
    return np.where(same, ballot, 0).astype(np.uint32), same


def redux(fr, L, kind: str, values):
    lanes = fr.b.index(L)
    values = np.broadcast_to(values, lanes.shape)
    starts, inv = _groups(lanes)
    uf = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    return uf.reduceat(values, starts)[inv].astype(values.dtype)


_SIMPLE = {
    "add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
    "or": np.bitwise_or, "xor": np.bitwise_xor,
}


def atomic_op(op: str, view: np.ndarray, idx: np.ndarray, args: list, dt) -> np.ndarray:
    """Apply atomic ``op`` lane after lane (lane order); return each lane's old value."""
    dt = np.dtype(dt)
    if op == "add" and idx.size:
        order = np.argsort(idx, kind="stable")
        si = idx[order]
        v = np.asarray(args[0])[order].astype(dt)
        starts = np.flatnonzero(np.r_[True, si[1:] != si[:-1]])
        counts = np.diff(np.r_[starts, si.size])
        if dt.kind == "f":  # rounded lane after lane, as the GPU's serialised atomics
            old_sorted = np.empty(si.size, dt)
            cur = view[si[starts]].copy()
            small = counts <= 32
            for k in range(int(counts[small].max()) if small.any() else 0):
                g = np.flatnonzero(small & (counts > k))
                sel = starts[g] + k
                old_sorted[sel] = cur[g]
                cur[g] = (cur[g] + v[sel]).astype(dt)
            for g in np.flatnonzero(~small):  # long runs: one sequential cumsum each
                s0, n = starts[g], counts[g]
                run = np.cumsum(np.r_[cur[g:g + 1], v[s0:s0 + n]].astype(dt), dtype=dt)
                old_sorted[s0:s0 + n] = run[:-1]
                cur[g] = run[-1]
            view[si[starts]] = cur
            old = np.empty(idx.size, dt)
            old[order] = old_sorted
            return old
        csum = np.cumsum(v, dtype=dt)
        before = np.repeat(csum[starts] - v[starts], counts)
        excl = (csum - v - before).astype(dt)
        cur = view[si]
        old_sorted = (cur + excl).astype(dt)
        last = starts + counts - 1
        view[si[last]] = (cur[last] + excl[last] + v[last]).astype(dt)
        old = np.empty(idx.size, dt)
        old[order] = old_sorted
        return old
    old = np.empty(idx.size, dt)
    pending = np.arange(idx.size)
    while pending.size:
        _, first = np.unique(idx[pending], return_index=True)
        now = pending[first]
        i = idx[now]
        cur = view[i].copy()
        old[now] = cur
        a = [np.asarray(x)[now].astype(dt) for x in args]
        if op in _SIMPLE:
            new = _SIMPLE[op](cur, a[0])
        elif op == "exch":
            new = a[0]
        elif op == "cas":
            new = np.where(cur == a[0], a[1], cur)
        elif op == "inc":
            new = np.where(cur >= a[0], 0, cur + 1)
        elif op == "dec":
            new = np.where((cur == 0) | (cur > a[0]), a[0], cur - 1)
        else:
            raise UnsupportedError(f"the atomic operation '{op}'")
        view[i] = np.asarray(new).astype(dt)
        pending = np.setdiff1d(pending, now, assume_unique=True)
    return old
