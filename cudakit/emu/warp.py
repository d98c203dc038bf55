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

from ..errors import UnsupportedError
from ..i18n.messages import _
from .batch import ALL


def _groups(lanes: np.ndarray, mask=None):
    """Group starts in the sorted ``lanes`` and each lane's group number: a group is a warp,
    or with per-lane member ``mask``s, the lanes of a warp that name the same mask.
    Returns ``(order, starts, group)`` with lanes sorted by group."""
    w = (lanes >> 5).astype(np.int64)
    if mask is not None and np.ndim(mask) and np.unique(mask).size > 1:
        key = (w << 32) | np.asarray(mask).astype(np.int64) & 0xFFFFFFFF
        order = np.argsort(key, kind="stable")
        k = key[order]
    else:
        order, k = None, w
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if k.size else np.zeros(0, int)
    counts = np.diff(np.r_[starts, k.size])
    group = np.repeat(np.arange(starts.size), counts)
    if order is not None:
        inv = np.empty_like(group)
        inv[order] = group
        return order, starts, inv
    return None, starts, group


def _per_group(uf, values, order, starts, group):
    v = values if order is None else values[order]
    return uf.reduceat(v, starts)[group]


def vote(fr, L, mode: str, pred, mask=None):
    lanes = fr.b.index(L)
    pred = np.broadcast_to(np.asarray(pred, bool), lanes.shape)
    order, starts, group = _groups(lanes, mask)
    if not lanes.size:
        return pred
    if mode == "ballot":
        bits = pred.astype(np.uint32) << (lanes & 31).astype(np.uint32)
        return _per_group(np.add, bits, order, starts, group).astype(np.uint32)
    if mode == "all":
        return _per_group(np.logical_and, pred, order, starts, group)
    if mode == "any":
        return _per_group(np.logical_or, pred, order, starts, group)
    allv = _per_group(np.logical_and, pred, order, starts, group)
    anyv = _per_group(np.logical_or, pred, order, starts, group)
    return allv | ~anyv


def shfl(fr, L, mode: str, a, b, c, mask, line: int):
    """``shfl.sync``: each lane reads register ``a`` of lane ``j`` of its warp."""
    lanes = fr.b.index(L)
    c = np.asarray(c).astype(np.int64)
    if c.ndim and c.size and (c != c[0]).any():
        order, starts, group = _groups(lanes)
        if (_per_group(np.minimum, c, order, starts, group) != c).any():
            raise UnsupportedError(_("a shuffle whose width differs between the lanes of a "
                                     "warp (line {line} of kernel '{kernel}')").format(
                line=line, kernel=fr.kernel_name))
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


def match_sync(fr, L, mode: str, values, mask=None):
    lanes = fr.b.index(L)
    values = np.broadcast_to(values, lanes.shape)
    warp = lanes >> 5
    m = np.broadcast_to(np.asarray(mask if mask is not None else 0).astype(np.int64),
                        lanes.shape)
    order = np.lexsort((values, m, warp))
    w, v, mm = warp[order], values[order], m[order]
    new = np.r_[True, (w[1:] != w[:-1]) | (v[1:] != v[:-1]) | (mm[1:] != mm[:-1])]
    starts = np.flatnonzero(new)
    gid = np.cumsum(new) - 1
    bits = np.uint32(1) << (lanes[order] & 31).astype(np.uint32)
    masks = np.add.reduceat(bits, starts).astype(np.uint32)
    out = np.empty(lanes.size, np.uint32)
    out[order] = masks[gid]
    if mode == "any":
        return out, np.ones(lanes.size, bool)
    ballot = vote(fr, L, "ballot", np.ones(lanes.size, bool), mask)
    same = out == ballot
    return np.where(same, ballot, 0).astype(np.uint32), same


def redux(fr, L, kind: str, values, mask=None):
    lanes = fr.b.index(L)
    values = np.broadcast_to(values, lanes.shape)
    order, starts, group = _groups(lanes, mask)
    uf = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    return _per_group(uf, values, order, starts, group).astype(values.dtype)


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
