"""The state of a batch of blocks executing together, and its memory accesses.

Lanes are laid out block after block; each block is padded to whole warps, so
``lanes.reshape(-1, 32)`` gives real warps. Every statement runs for all lanes
at once under the active ``mask``.

The memory functions here do memcheck (bounds, alignment), feed racecheck and
the trace, and gather or scatter the active lanes' values.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import BarrierError, KernelTimeout, MemcheckError, RaceError, UnsupportedError
from ..i18n.messages import _
from .memory import HEAP, HEAP_BASE, LOCAL_BASE, SHARED_BASE, WINDOW, describe
from .trace import AccessBatch
from .values import zero

WARP = 32


@dataclass
class Site:
    """A static source location (memory access, loop, barrier...)."""

    id: int
    line: int
    column: int
    text: str


class OpCounter:
    """Counts warp operations: each operation times the warps with an active lane.

    >>> import numpy as np
    >>> c = OpCounter()
    >>> c.add(3, np.r_[np.ones(40, bool), np.zeros(24, bool)])
    >>> c.ops
    6
    """

    def __init__(self):
        self.ops = 0

    def add(self, ops: int, mask: np.ndarray) -> None:
        if ops:
            self.ops += ops * int(mask.reshape(-1, WARP).any(axis=1).sum())


@dataclass
class SharedSymbol:
    name: str
    offset: int
    size: int


class LoopCtx:
    """The break and continue masks of the loop (or switch) being executed."""

    __slots__ = ("kind", "brk", "cont")

    def __init__(self, kind):
        self.kind = kind
        self.brk = None
        self.cont = None


MAX_DEPTH = 48  # device-function calls


class Batch:
    """Blocks ``first .. first + count - 1`` of one launch, executing in lockstep."""

    def __init__(self, kernel, grid, block, first: int, count: int, shared_bytes: int,
                 race: bool, trace, deadline: float, counter: OpCounter | None = None):
        bx, by, bz = block
        gx, gy, _ = grid
        tpb = bx * by * bz
        self.kernel = kernel
        self.tpb = tpb
        self.wpb = -(-tpb // WARP)
        self.pad = self.wpb * WARP
        self.nb = count
        self.size = n = count * self.pad
        lane = np.arange(n)
        self.all_lanes = lane
        self.dense = tpb == self.pad  # no padding lanes
        self.tib = (lane % self.pad).astype(np.int32)  # thread index within block
        self.blk = lane // self.pad  # block index within the batch
        self.valid = self.tib < tpb
        self.warp_key = (lane // WARP).astype(np.int32)
        gid = first + self.blk
        t = np.minimum(self.tib, tpb - 1)
        self.tx = (t % bx).astype(np.uint32)
        self.ty = (t // bx % by).astype(np.uint32)
        self.tz = (t // (bx * by)).astype(np.uint32)
        self.bx = (gid % gx).astype(np.uint32)
        self.by = (gid // gx % gy).astype(np.uint32)
        self.bz = (gid // (gx * gy)).astype(np.uint32)
        self.block_dim = tuple(np.uint32(v) for v in block)
        self.grid_dim = tuple(np.uint32(v) for v in grid)
        self.shared_bytes = shared_bytes
        self.stride = -(-shared_bytes // 16) * 16  # bytes between blocks' shared memory
        self.shared = np.zeros(count * self.stride + 16, np.uint8)
        self.blk_off = self.blk * self.stride  # each lane's block's shared memory start
        self.local_bytes = 0
        self.local = np.zeros((n, 0), np.uint8)
        self.local_sp = 0
        self.exited = np.zeros(n, bool)
        self.race = None
        if race and shared_bytes:
            from .racecheck import RaceTracker

            self.race = RaceTracker(count, self.stride, self.wpb)
        self.trace = trace
        self.counter = counter
        self.deadline = deadline
        self.frame: list = []
        self.frame_base = 0
        self.dyn_offset = 0
        self.loops: list = []
        self.line = 0  # user's line of the statement running (for internal errors)
        self.rets: list = [None]
        self.mask = self.valid
        self.any = bool(self.valid.any())
        self.full = True

    # -- masks -----------------------------------------------------------------------
    def set_mask(self, mask: np.ndarray) -> None:
        """Make ``mask`` the active lanes."""
        self.mask = mask
        self.any = bool(mask.any())
        self.full = self.any and not (self.valid & ~mask).any()

    @staticmethod
    def clock() -> int:
        """``clock64()``: a nanosecond counter of the host (emulated, not GPU cycles)."""
        return time.perf_counter_ns()

    def check_time(self, site: Site) -> None:
        if time.perf_counter() > self.deadline:
            raise KernelTimeout(
                f"kernel '{self.kernel.name}' did not finish within its time limit; it was "
                f"still looping at line {site.line} ({site.text}). A loop whose exit depends "
                f"on another block or thread may never end; raise the limit with "
                f"timeout=<seconds> if the kernel is only slow."
            )

    def under(self, mask: np.ndarray, thunk):
        """Evaluate ``thunk()`` with ``mask`` as the active lanes, then restore them."""
        saved = (self.mask, self.any, self.full)
        self.set_mask(mask)
        try:
            return thunk()
        finally:
            self.mask, self.any, self.full = saved

    def call(self, fn, vals: list, site: Site):
        """Run the compiled device function ``fn`` for the active lanes; its return value."""
        if len(self.rets) > MAX_DEPTH:
            raise UnsupportedError(
                f"recursion deeper than {MAX_DEPTH} calls in '{fn.name}' at line {site.line}; "
                f"the emulator (like a GPU's small stack) cannot go that deep."
            )
        saved = (self.frame, self.mask, self.any, self.full, self.frame_base, self.local_sp)
        self.frame = [None] * fn.nslots
        self.frame[: len(vals)] = vals
        if fn.frame_bytes:
            self.frame_base = self.reserve_local(fn.frame_bytes)
        self.rets.append(None)
        try:
            fn.body(self)
            ret = self.rets[-1]
        finally:
            self.rets.pop()
            (self.frame, self.mask, self.any, self.full, self.frame_base,
             self.local_sp) = saved
        return zero(fn.ret) if ret is None else ret

    # -- naming lanes ----------------------------------------------------------------
    def who(self, lane: int) -> str:
        return (f"block ({self.bx[lane]},{self.by[lane]},{self.bz[lane]}) "
                f"thread ({self.tx[lane]},{self.ty[lane]},{self.tz[lane]})")

    def thread_name(self, lane: int, tid: int) -> str:
        """Name thread ``tid`` of the block of ``lane``."""
        if tid < 0:
            return "several threads"
        other = lane - int(self.tib[lane]) + tid
        return f"thread ({self.tx[other]},{self.ty[other]},{self.tz[other]})"

    # -- barriers --------------------------------------------------------------------
    def syncthreads(self, site: Site) -> None:
        """``__syncthreads()``: every live thread of a block that reaches it must reach it."""
        m = self.mask.reshape(self.nb, self.pad)
        live = (self.valid & ~self.exited).reshape(self.nb, self.pad)
        missing = m.any(axis=1)[:, None] & live & ~m
        if missing.any():
            b, t = np.argwhere(missing)[0]
            here = int(np.argmax(m[b])) + b * self.pad
            gone = b * self.pad + t
            raise BarrierError(_(
                "__syncthreads() at line {line} of kernel '{kernel}' was "
                "reached by {who} but not by {other} "
                "of the same block (divergent barrier: on a GPU this hangs or corrupts "
                "data). Move the barrier out of the branch or loop that only some threads "
                "take. [lane {lane}]"
            ).format(line=site.line, kernel=self.kernel.name, who=self.who(here),
                     other=self.thread_name(here, int(t)), lane=gone))
        if self.race is not None:
            self.race.barrier()

    def syncwarp(self) -> None:
        if self.race is not None:
            self.race.syncwarp(self.warp_key[self.mask])

    # -- local memory ----------------------------------------------------------------
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

    # -- memory access ---------------------------------------------------------------
    def _segments(self, addr, lanes, size: int, align: int, site: Site, op: str,
                  known: str | None = None):
        """Split the active lanes' addresses by space; check bounds and alignment.

        Yields ``(space, flat_buffer, byte_offsets, lane_indices, raw_addresses)``.
        ``known``: the space of a declared array whose bounds were already checked.
        """
        if not (isinstance(addr, np.ndarray) and addr.ndim):
            a = np.full(lanes.size, addr, np.uint64)
        elif lanes is self.all_lanes:
            a = addr
        else:
            a = addr[lanes]
        a = a.astype(np.uint64, copy=False)
        if a.size == 0:
            return
        if known in ("shared", "local"):  # the compiler proved the space and the bounds
            yield self._window(known, a, lanes, size, site, op, checked=False)
            return
        bad = (a & np.uint64(align - 1)) != 0
        if bad.any():
            k = int(np.argmax(bad))
            self._fault(site, op, size, lanes[k], int(a[k]), "misaligned")
        lo, hi = int(a.min()), int(a.max())
        if lo >= HEAP_BASE:
            self._check_heap(a, lanes, size, site, op, lo, hi)
            yield "global", HEAP.arena, (a - np.uint64(HEAP_BASE)).astype(np.int64), lanes, a
            return
        for space, base in (("shared", SHARED_BASE), ("local", LOCAL_BASE)):
            if lo >= base and hi < base + WINDOW:
                yield self._window(space, a, lanes, size, site, op, checked=True)
                return
        spaces = np.full(a.size, 3)
        for code, (start, end) in enumerate(((HEAP_BASE, 2**64), (SHARED_BASE, SHARED_BASE +
                                             WINDOW), (LOCAL_BASE, LOCAL_BASE + WINDOW))):
            spaces[(a >= np.uint64(start)) & (a < np.uint64(min(end, 2**64 - 1)))] = code
        if (spaces == 3).any():
            k = int(np.argmax(spaces == 3))
            self._fault(site, op, size, lanes[k], int(a[k]), "out of bounds")
        for s in range(3):
            sel = spaces == s
            if sel.any():
                yield from self._segments(addr, lanes[sel], size, align, site, op)

    def _window(self, space, a, lanes, size, site, op, checked):
        """A shared or local access as (space, storage, byte indices, lanes, offsets).

        With ``checked``, an offset past the block's shared bytes or the thread's local
        stack is a memcheck fault.
        """
        base, limit = (
            (SHARED_BASE, self.shared_bytes) if space == "shared" else (LOCAL_BASE, self.local_sp)
        )
        off = (a - np.uint64(base)).astype(np.int64)
        if checked:
            over = off + size > limit
            if over.any():
                k = int(np.argmax(over))
                self._fault(site, op, size, lanes[k], int(a[k]), "out of bounds")
        if space == "shared":
            return "shared", self.shared, self.blk_off[lanes] + off, lanes, off
        return "local", self.local.reshape(-1), lanes * self.local_bytes + off, lanes, off

    def _check_heap(self, a, lanes, size, site, op, lo, hi):
        alloc = HEAP.bounds(lo, hi + size)
        if alloc is not None:
            return
        ok = HEAP.in_bounds(a, size)  # lanes may use different buffers (p = c ? a : b)
        if not ok.all():
            k = int(np.argmin(ok))
            self._fault(site, op, size, lanes[k], int(a[k]), "out of bounds")

    def _fault(self, site: Site, op: str, size: int, lane, address: int, what: str):
        lane = int(lane)
        verb = {"ld": _("read"), "st": _("write"), "atom": _("atomic")}[op]
        if address >= HEAP_BASE - WINDOW:
            near = HEAP.nearest(address)
            where = self._relative(address, near.base, near.size, describe(near)) if near \
                else _("no device allocation is live")
        elif SHARED_BASE <= address < SHARED_BASE + WINDOW:
            off = address - SHARED_BASE
            syms = self.shared_layout()
            if syms:
                s = min(syms, key=lambda s: min(abs(off - s.offset), abs(off - s.offset - s.size)))
                where = self._relative(off, s.offset, s.size,
                                       _("shared array '{name}'").format(name=s.name))
            else:
                where = _("the kernel uses no shared memory")
            where += _(" (block has {bytes} bytes of shared memory)").format(
                bytes=self.shared_bytes)
        elif LOCAL_BASE <= address < LOCAL_BASE + WINDOW:
            where = _("local memory offset {offset} (frame of {frame} bytes)").format(
                offset=address - LOCAL_BASE, frame=self.local_sp)
        else:
            where = _("not a device address (null or uninitialised pointer?)")
        hint = (_("Addresses of a {size}-byte access must be multiples of {size}.")
                if what == "misaligned" else
                _("Guard the access with a bounds check (e.g. if (i < n)) or fix the index."))
        raise MemcheckError(_(
            "memcheck: {what} {verb} of {size} bytes in kernel '{kernel}' at line "
            "{line} ({text}) by {who}: address {address}, {where}. {hint}"
        ).format(what=_("misaligned") if what == "misaligned" else _("out of bounds"),
                 verb=verb, size=size, kernel=self.kernel.name, line=site.line,
                 text=site.text, who=self.who(lane), address=f"{address:#x}", where=where,
                 hint=hint.format(size=size)))

    def shared_layout(self) -> list[SharedSymbol]:
        """The kernel's shared arrays with the dynamic (extern) ones placed for this launch."""
        dynamic = self.shared_bytes - self.dyn_offset
        return [SharedSymbol(s.name, self.dyn_offset, dynamic) if s.offset < 0 else s
                for s in self.kernel.shared_symbols]

    @staticmethod
    def _relative(addr: int, base: int, size: int, name: str) -> str:
        if addr < base:
            return _("{bytes} bytes before {name}").format(bytes=base - addr, name=name)
        if addr >= base + size:
            return _("{bytes} bytes after the end of {name}").format(
                bytes=addr - (base + size), name=name)
        return _("inside {name}").format(name=name)

    def _record(self, space, site, op, size, lanes, raw):
        if space == "shared" and self.race is not None:
            if lanes is self.all_lanes:
                where, tids, warps = self.blk_off + raw, self.tib, self.warp_key
            else:
                where, tids, warps = self.blk_off[lanes] + raw, self.tib[lanes], \
                    self.warp_key[lanes]
            hz = self.race.access(where, tids, warps, size, op, site.id)
            if hz:
                self._race_error(site, hz, lanes, raw)
        if self.trace is not None:
            self._trace(space, site, op, size, lanes, raw)

    def _race_error(self, site, hazard, lanes, raw):
        kind, k, other, other_site, other_warp = hazard
        lane = int(lanes[k])
        first = self.kernel.sites[other_site]
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
            warp_note = " " + _("The threads are in one warp, whose lanes are not in lockstep "
                                "since Volta (compute-sanitizer reports this as a 'Warp Level "
                                "Programming' hazard).")
        raise RaceError(_(
            "racecheck: {kind} hazard on {what} in kernel '{kernel}', "
            "{block}: {other} {earlier} it at line {line1} ({text1}), then {me} {later} it at "
            "line {line2} ({text2}), with no barrier between.{warp_note} Put "
            "__syncthreads() between the two accesses (or __syncwarp() within a warp); "
            "racecheck=False turns this check off."
        ).format(kind=kind, what=what, kernel=self.kernel.name,
                 block=self.who(lane).split(" thread")[0], other=self.thread_name(lane, other),
                 earlier=earlier, line1=first.line, text1=first.text, me=me,
                 later=later, line2=site.line, text2=site.text, warp_note=warp_note))

    def _trace(self, space, site, op, size, lanes, raw):
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
            self.kernel.name, site.line, site.column, site.id, space, op, size,
            block.astype(np.int64), (warps % self.wpb).astype(np.int64), mask, address))

    def check_array(self, addr, base, total: int, size: int, name: str, site: Site, op: str):
        """memcheck of an index into the declared array ``name`` (``total`` bytes)."""
        if not (isinstance(addr, np.ndarray) and addr.ndim):  # uniform: plain integers
            if 0 <= int(addr) - int(base) <= total - size:
                return
            lanes = self.active_lanes()
            addr = np.full(self.size, addr, np.uint64)
        else:
            lanes = self.active_lanes()
        a = addr[lanes] if lanes is not self.all_lanes else addr
        off = (np.asarray(a, np.uint64) - np.uint64(base)).astype(np.int64)
        if np.size(off) == 0 or (np.min(off) >= 0 and np.max(off) + size <= total):
            return
        bad = (off < 0) | (off + size > total)
        if np.any(bad):
            k = int(np.argmax(bad)) if np.ndim(bad) else 0
            lane = int(lanes[k])
            o = int(off[k]) if np.ndim(off) else int(off)
            verb = _("read") if op == "ld" else _("write")
            raise MemcheckError(_(
                "memcheck: out of bounds {verb} of {size} bytes in kernel '{kernel}' "
                "at line {line} ({text}) by {who}: element {element} "
                "of array '{array}', which has {elements} elements (byte offset {offset}). "
                "Fix the index or the array size."
            ).format(verb=verb, size=size, kernel=self.kernel.name, line=site.line,
                     text=site.text, who=self.who(lane), element=o // size, array=name,
                     elements=total // size, offset=o))

    def active_lanes(self) -> np.ndarray:
        """Indices of the active lanes (``all_lanes`` itself when every lane is active)."""
        if self.full and self.dense:
            return self.all_lanes
        return np.flatnonzero(self.mask)

    def _local_column(self, addr, dtype, count: int):
        """Per-lane view of local memory at one uniform offset (the common case of local
        arrays indexed by loop counters), or ``None``."""
        if isinstance(addr, np.ndarray) and addr.ndim or self.trace is not None:
            return None
        off = int(addr) - LOCAL_BASE
        return self.local[:, off:off + dtype.itemsize * count].view(dtype)

    def load(self, addr, dtype: np.dtype, count: int, align: int, site: Site, known=None):
        """Load ``count`` consecutive elements of ``dtype`` per active lane."""
        if known == "local":
            column = self._local_column(addr, dtype, count)
            if column is not None:
                return [column[:, c].copy() for c in range(count)]
        lanes = self.active_lanes()
        size = dtype.itemsize * count
        out = None
        for space, buf, off, ln, raw in self._segments(addr, lanes, size, align, site, "ld",
                                                       known):
            self._record(space, site, "ld", size, ln, raw)
            view = buf.view(dtype)
            base = off // dtype.itemsize
            if ln is self.all_lanes:
                out = [view[base + c] for c in range(count)]
                continue
            if out is None:
                out = [np.zeros(self.size, dtype) for _ in range(count)]
            for c in range(count):
                out[c][ln] = view[base + c]
        return out if out is not None else [np.zeros(self.size, dtype) for _ in range(count)]

    def store(self, addr, values, dtype: np.dtype, align: int, site: Site, known=None) -> None:
        """Store per active lane the component ``values`` (list) of ``dtype``."""
        if known == "local":
            column = self._local_column(addr, dtype, len(values))
            if column is not None:
                every = self.full and self.dense
                for c, v in enumerate(values):
                    if every:
                        column[:, c] = v
                    else:
                        column[self.mask, c] = v[self.mask] if np.ndim(v) else v
                return
        lanes = self.active_lanes()
        size = dtype.itemsize * len(values)
        for space, buf, off, ln, raw in self._segments(addr, lanes, size, align, site, "st",
                                                       known):
            self._record(space, site, "st", size, ln, raw)
            view = buf.view(dtype)
            base = off // dtype.itemsize
            whole = ln is self.all_lanes
            for c, v in enumerate(values):
                view[base + c] = v if whole or not (isinstance(v, np.ndarray) and v.ndim) \
                    else v[ln]

    def atomic_targets(self, addr, dtype: np.dtype, site: Site):
        """Checked ``(view, element_index, lanes)`` groups for an atomic operation."""
        lanes = self.active_lanes()
        size = dtype.itemsize
        for space, buf, off, ln, raw in self._segments(addr, lanes, size, size, site, "atom"):
            self._record(space, site, "atom", size, ln, raw)
            yield buf.view(dtype), off // size, ln
