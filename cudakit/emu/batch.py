"""A batch of thread blocks in flight: lane identities, shared and local memory, and every
memory access with memcheck, racecheck and the trace.

Lanes are laid out block after block, each block padded to whole warps, so
``lane // 32`` is a warp of the batch. An active set of lanes is either ``ALL``
(``slice(None)``) or a sorted array of lane numbers.

>>> b = Batch("k", grid=(2, 1, 1), block=(40, 1, 1), first=0, count=2, shared_bytes=0,
...           race=False, trace=None, deadline=0.0)
>>> b.size, b.who(64 + 3)
(128, 'block (1,0,0) thread (3,0,0)')
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

from ..errors import MemcheckError, RaceError
from ..i18n.messages import _
from .memory import HEAP, HEAP_BASE, LOCAL_BASE, SHARED_BASE, WINDOW, describe
from .racecheck import RaceTracker
from .trace import AccessBatch

WARP = 32
ALL = slice(None)
RESERVED = 1024  # an H100's reserved shared memory per block (%reserved_smem_offset_*)


@dataclass
class Site:
    """A static memory instruction at the user's ``line``/``column``."""

    id: int
    line: int
    column: int
    text: str


@dataclass
class SharedSymbol:
    name: str
    offset: int
    size: int


class Batch:
    """Blocks ``first .. first + count - 1`` of one launch (``first`` may instead be a tuple
    of ``count`` block numbers: a sample of the grid)."""

    def __init__(self, kernel_name: str, grid, block, first: int, count: int, shared_bytes: int,
                 race: bool, trace, deadline: float, counter=None,
                 sites: list | None = None, shared_symbols=(), dyn_offset: int = 0,
                 reserved: int = 0, on_timeout=None, clock=time.perf_counter):
        self.kernel = kernel_name
        self.__dict__.update(_layout(tuple(grid), tuple(block), first, count))
        n = self.size
        self.block_dim = tuple(np.uint32(v) for v in block)
        self.grid_dim = tuple(np.uint32(v) for v in grid)
        self.shared_bytes = shared_bytes
        self.stride = -(-shared_bytes // 16) * 16 + reserved
        self.shared_limit = self.stride if reserved else shared_bytes
        self.shared = np.zeros(count * self.stride + 16, np.uint8)
        self.blk_off = self.blk * self.stride
        self.local_bytes = 0
        self.local = np.zeros((n, 0), np.uint8)
        self.local_sp = 0
        self.race = RaceTracker(count, self.stride, self.wpb) if race and shared_bytes else None
        self.trace = trace
        self._whole = None  # the trace's block, warp and mask arrays when every lane acts
        self.counter = counter
        self.deadline = deadline
        self.clock = clock  # what the deadline is read against (seconds, or work: predict)
        # called with the running frame when the deadline passes: True if it moved the
        # deadline on (cudakit.predict skips the rest of a long loop), else the kernel stops
        self.on_timeout = on_timeout
        self.grid_workspace = 0  # the grid barrier's address in a cooperative launch
        self.sites = sites or []
        self.shared_symbols = list(shared_symbols)
        self.dyn_offset = dyn_offset
        self.line = 0
        self.phases = 0  # asynchronous-barrier phases completed (emu.mbarrier)

    # -- lanes -------------------------------------------------------------------------
    def index(self, L) -> np.ndarray:
        """The lane numbers of the active set ``L``."""
        return self.lanes if isinstance(L, slice) else L

    def who(self, lane: int) -> str:
        return (f"block ({self.bx[lane]},{self.by[lane]},{self.bz[lane]}) "
                f"thread ({self.tx[lane]},{self.ty[lane]},{self.tz[lane]})")

    def thread_name(self, lane: int, tid: int) -> str:
        """Name thread ``tid`` of the block of ``lane``."""
        if tid < 0:
            return _("several threads")
        other = lane - int(self.tib[lane]) + tid
        return f"thread ({self.tx[other]},{self.ty[other]},{self.tz[other]})"

    # -- local memory ------------------------------------------------------------------
    def reserve_local(self, nbytes: int) -> int:
        """Reserve ``nbytes`` of per-thread local memory; return its offset."""
        off = self.local_sp
        self.local_sp += -(-nbytes // 16) * 16
        if self.local_sp > self.local_bytes:
            grown = np.zeros((self.size, max(self.local_sp, 2 * self.local_bytes)), np.uint8)
            grown[:, : self.local_bytes] = self.local
            self.local = grown
            self.local_bytes = grown.shape[1]
        return off

    # -- memory ------------------------------------------------------------------------
    def _segments(self, a: np.ndarray, lanes: np.ndarray, size: int, site: Site, op: str,
                  space: str):
        """Split the lanes' addresses by space, check bounds and alignment.

        Yields ``(space, flat storage, byte index, lanes, address for the trace)``.
        """
        if a.size == 0:
            return
        bad = (a & np.uint64(min(size, 16) - 1)) != 0
        if bad.any():
            k = int(np.argmax(bad))
            self._fault(site, op, size, lanes[k], self._generic(int(a[k]), space), "misaligned")
        if space in ("shared", "local"):
            yield self._window(space, a, lanes, size, site, op)
            return
        lo, hi = int(a.min()), int(a.max())
        if space in ("global", "const") or lo >= HEAP_BASE:
            self._check_heap(a, lanes, size, site, op, lo, hi)
            yield "global" if space != "const" else "constant", HEAP.arena, \
                (a - np.uint64(HEAP_BASE)).astype(np.int64), lanes, a
            return
        for sp, base in (("shared", SHARED_BASE), ("local", LOCAL_BASE)):
            if lo >= base and hi < base + WINDOW:
                yield self._window(sp, a - np.uint64(base), lanes, size, site, op)
                return
        code = np.full(a.size, 3)
        code[a >= np.uint64(HEAP_BASE)] = 0
        code[(a >= np.uint64(SHARED_BASE)) & (a < np.uint64(SHARED_BASE + WINDOW))] = 1
        code[(a >= np.uint64(LOCAL_BASE)) & (a < np.uint64(LOCAL_BASE + WINDOW))] = 2
        if (code == 3).any():
            k = int(np.argmax(code == 3))
            self._fault(site, op, size, lanes[k], int(a[k]), "out of bounds")
        for c in range(3):
            sel = code == c
            if sel.any():
                yield from self._segments(a[sel], lanes[sel], size, site, op, "generic")

    @staticmethod
    def _generic(address: int, space: str) -> int:
        return address + {"shared": SHARED_BASE, "local": LOCAL_BASE}.get(space, 0)

    def _window(self, space, off, lanes, size, site, op):
        limit = self.shared_limit if space == "shared" else self.local_sp
        if limit < size or int(off.max()) > limit - size:
            over = off > np.uint64(max(limit - size, 0))
            k = int(np.argmax(over)) if over.any() else 0
            self._fault(site, op, size, lanes[k], self._generic(int(off[k]), space),
                        "out of bounds")
        o = off.astype(np.int64)
        full = lanes is self.lanes
        if space == "shared":
            return "shared", self.shared, (self.blk_off if full else self.blk_off[lanes]) + o, \
                lanes, off
        return "local", self.local.reshape(-1), lanes.astype(np.int64) * self.local_bytes + o, \
            lanes, off

    def _check_heap(self, a, lanes, size, site, op, lo, hi):
        if HEAP.bounds(lo, hi + size) is not None:
            return
        ok = HEAP.in_bounds(a, size)
        if not ok.all():
            k = int(np.argmin(ok))
            self._fault(site, op, size, lanes[k], int(a[k]), "out of bounds")

    def _fault(self, site: Site, op: str, size: int, lane, address: int, what: str):
        lane = int(lane)
        verb = {"ld": _("read"), "st": _("write"), "atom": _("atomic")}[op]
        if address >= HEAP_BASE - WINDOW:
            near = HEAP.nearest(address)
            where = _relative(address, near.base, near.size, describe(near)) if near \
                else _("no device allocation is live")
        elif SHARED_BASE <= address < SHARED_BASE + WINDOW:
            off = address - SHARED_BASE
            syms = self.shared_layout()
            if syms:
                s = min(syms, key=lambda s: min(abs(off - s.offset), abs(off - s.offset - s.size)))
                where = _relative(off, s.offset, s.size,
                                  _("shared array '{name}'").format(name=s.name))
                if s.size > 0 and (off - s.offset) % size == 0:
                    where = _("element {element} of array '{array}', which has {elements} "
                              "elements ({where})").format(element=(off - s.offset) // size,
                                                          array=s.name, elements=s.size // size,
                                                          where=where)
            else:
                where = _("the kernel uses no shared memory")
            where += _(" (block has {bytes} bytes of shared memory)").format(
                bytes=self.shared_bytes)
        elif LOCAL_BASE <= address < LOCAL_BASE + WINDOW:
            where = _("local memory offset {offset} (frame of {frame} bytes)").format(
                offset=address - LOCAL_BASE, frame=self.local_sp)
        else:
            where = _("not a device address (null or uninitialised pointer?)")
        hint = (_("Addresses of a {size}-byte access must be multiples of {align}.").format(
                    size=size, align=min(size, 16))
                if what == "misaligned" else
                _("Guard the access with a bounds check (e.g. if (i < n)) or fix the index."))
        raise MemcheckError(
            _("memcheck: {what} {verb} of {size} bytes in kernel '{kernel}' at line {line} "
              "({text}) by {who}: address {address}, {where}. {hint}").format(
                what={"misaligned": _("misaligned"), "out of bounds": _("out of bounds")}[what],
                verb=verb, size=size, kernel=self.kernel, line=site.line,
                text=site.text, who=self.who(lane), address=f"{address:#x}", where=where,
                hint=hint)
        )

    def shared_layout(self) -> list[SharedSymbol]:
        """Shared arrays, the dynamic one sized for this launch."""
        dynamic = self.shared_bytes - self.dyn_offset
        return [SharedSymbol(s.name, self.dyn_offset, dynamic) if s.size < 0 else s
                for s in self.shared_symbols]

    def _record(self, space, site, op, size, lanes, raw, where=None, floating=False):
        """Feed racecheck (``where``: the accesses' byte indices in ``self.shared``) and the
        trace (``floating``: an atomic on floating-point values)."""
        if space == "shared" and self.race is not None:
            if self.shared_limit > self.shared_bytes:  # cooperative groups' own words: not
                user = raw < np.uint64(self.shared_bytes)  # the user's data, not checked
                if not user.all():
                    lanes, raw, where = lanes[user], raw[user], where[user]
            if lanes is self.lanes:
                hz = self.race.access(where, self.tib, self.warp_key, size, op, site.id)
            else:
                hz = self.race.access(where, self.tib[lanes], self.warp_key[lanes], size, op,
                                      site.id)
            if hz:
                self._race_error(site, hz, lanes, raw)
        if self.trace is not None:
            self._trace(space, site, op, size, lanes, raw, floating)

    def _race_error(self, site, hazard, lanes, raw):
        kind, k, other, other_site, other_warp = hazard
        lane = int(lanes[k])
        first = self.sites[other_site]
        earlier, later = {"read-after-write": (_("wrote"), _("read")),
                          "write-after-read": (_("read"), _("wrote")),
                          "write-after-write": (_("wrote"), _("wrote"))}[kind]
        off = int(raw[k])
        names = [s.name for s in self.shared_layout() if s.offset <= off < s.offset + s.size]
        what = (_("shared byte {offset} (in '{array}')").format(offset=off, array=names[0])
                if names else _("shared byte {offset}").format(offset=off))
        me = f"thread ({self.tx[lane]},{self.ty[lane]},{self.tz[lane]})"
        warp_note = ""
        if other_warp == int(self.warp_key[lane]):
            warp_note = _(" The threads are in one warp, whose lanes are not in lockstep since "
                          "Volta (compute-sanitizer reports this as a 'Warp Level Programming' "
                          "hazard).")
        raise RaceError(
            _("racecheck: {kind} hazard on {what} in kernel '{kernel}', {block}: {other} "
              "{earlier} it at line {line1} ({text1}), then {me} {later} it at line {line2} "
              "({text2}), with no barrier between.{warp_note} Put __syncthreads() between the "
              "two accesses (or __syncwarp() within a warp); racecheck=False turns this check "
              "off.").format(
                kind=kind, what=what, kernel=self.kernel, block=self.who(lane).split(' thread')[0],
                other=self.thread_name(lane, other), earlier=earlier, line1=first.line,
                text1=first.text, me=me, later=later, line2=site.line, text2=site.text,
                warp_note=warp_note)
        )

    def _trace(self, space, site, op, size, lanes, raw, floating=False):
        if lanes.size == self.size:  # every lane of the batch: no regrouping needed
            if self._whole is None:
                nw = self.size // WARP
                first = np.arange(nw) * WARP
                block = np.stack([self.bx[first], self.by[first], self.bz[first]], axis=1)
                self._whole = (block.astype(np.int64), np.arange(nw) % self.wpb,
                               np.ones((nw, WARP), bool))
            block, warp, mask = self._whole
            self.trace.add(AccessBatch(
                self.kernel, site.line, site.column, site.id, space, op, size, block, warp,
                mask, np.array(raw, np.uint64).reshape(-1, WARP),  # a copy: registers change
                floating))
            return
        else:
            w = self.warp_key[lanes]
            warps, inv = np.unique(w, return_inverse=True)
            mask = np.zeros((warps.size, WARP), bool)
            address = np.zeros((warps.size, WARP), np.uint64)
            ln = lanes % WARP
            mask[inv, ln] = True
            address[inv, ln] = raw
        first = warps * WARP
        block = np.stack([self.bx[first], self.by[first], self.bz[first]], axis=1)
        self.trace.add(AccessBatch(
            self.kernel, site.line, site.column, site.id, space, op, size,
            block.astype(np.int64), (warps % self.wpb).astype(np.int64), mask, address, floating))

    def load(self, addr, lanes: np.ndarray, space: str, dtype, count: int, site: Site) -> list:
        """``count`` consecutive ``dtype`` elements per lane from ``addr`` (one per lane)."""
        dtype = np.dtype(dtype)
        size = dtype.itemsize * count
        a = _addresses(addr, lanes)
        out = None
        for sp, buf, off, ln, raw in self._segments(a, lanes, size, site, "ld", space):
            self._record(sp, site, "ld", size, ln, raw, off)
            view = buf.view(dtype) if buf.size % dtype.itemsize == 0 else \
                buf[: buf.size // dtype.itemsize * dtype.itemsize].view(dtype)
            base = off // dtype.itemsize
            if ln is lanes:
                return [view[base + c] for c in range(count)]
            if out is None:
                out = [np.zeros(lanes.size, dtype) for _ in range(count)]
            pos = np.searchsorted(lanes, ln)
            for c in range(count):
                out[c][pos] = view[base + c]
        return out if out is not None else [np.zeros(lanes.size, dtype) for _ in range(count)]

    def store(self, addr, lanes: np.ndarray, space: str, values: list, dtype, site: Site):
        dtype = np.dtype(dtype)
        size = dtype.itemsize * len(values)
        a = _addresses(addr, lanes)
        for sp, buf, off, ln, raw in self._segments(a, lanes, size, site, "st", space):
            self._record(sp, site, "st", size, ln, raw, off)
            view = buf.view(dtype) if buf.size % dtype.itemsize == 0 else \
                buf[: buf.size // dtype.itemsize * dtype.itemsize].view(dtype)
            base = off // dtype.itemsize
            sel = None if ln is lanes else np.searchsorted(lanes, ln)
            for c, v in enumerate(values):
                if sel is not None and np.ndim(v):
                    v = v[sel]
                view[base + c] = v

    def atomic_targets(self, addr, lanes, space, dtype, site):
        """Checked ``(view, element index, positions in lanes)`` groups for an atomic."""
        dtype = np.dtype(dtype)
        a = _addresses(addr, lanes)
        for sp, buf, off, ln, raw in self._segments(a, lanes, dtype.itemsize, site, "atom",
                                                     space):
            self._record(sp, site, "atom", dtype.itemsize, ln, raw, off, dtype.kind == "f")
            pos = np.arange(lanes.size) if ln is lanes else np.searchsorted(lanes, ln)
            yield buf.view(dtype), off // dtype.itemsize, pos


@functools.lru_cache(maxsize=16)
def _layout(grid: tuple, block: tuple, first: int, count: int) -> dict:
    """Lane identities of blocks ``first .. first + count - 1`` (cached: launches repeat)."""
    bx, by, bz = block
    gx, gy, _ = grid
    tpb = bx * by * bz
    wpb = -(-tpb // WARP)
    pad = wpb * WARP
    lane = np.arange(count * pad)
    tib = (lane % pad).astype(np.int32)
    blk = lane // pad
    gid = np.asarray(first, np.int64)[blk] if isinstance(first, tuple) else first + blk
    t = np.minimum(tib, tpb - 1)
    out = {
        "tpb": tpb, "wpb": wpb, "pad": pad, "nb": count, "size": lane.size, "lanes": lane,
        "tib": tib, "blk": blk, "valid": tib < tpb, "dense": tpb == pad,
        "warp_key": (lane // WARP).astype(np.int32), "laneid": (lane % WARP).astype(np.uint32),
        "tx": (t % bx).astype(np.uint32), "ty": (t // bx % by).astype(np.uint32),
        "tz": (t // (bx * by)).astype(np.uint32), "bx": (gid % gx).astype(np.uint32),
        "by": (gid // gx % gy).astype(np.uint32), "bz": (gid // (gx * gy)).astype(np.uint32),
    }
    for v in out.values():
        if isinstance(v, np.ndarray):
            v.flags.writeable = False
    return out


def _addresses(addr, lanes) -> np.ndarray:
    if isinstance(addr, np.ndarray) and addr.ndim:
        return addr.astype(np.uint64, copy=False)
    return np.full(lanes.size, addr, np.uint64)


def _relative(addr: int, base: int, size: int, name: str) -> str:
    if addr < base:
        return _("{bytes} bytes before {name}").format(bytes=base - addr, name=name)
    if addr >= base + size:
        return _("{bytes} bytes after the end of {name}").format(bytes=addr - (base + size),
                                                                  name=name)
    return _("inside {name}").format(name=name)
