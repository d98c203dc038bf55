"""The SIMT scheduler: all threads of a batch of blocks run one function, vectorised.

Every lane has a program counter (a basic block). The scheduler always runs the
lowest pending block for every lane waiting there, over all warps and blocks at
once (min-PC, or thread-frontier, scheduling): divergent lanes run their paths
one after the other and reconverge where the paths meet, as a GPU's warps do.
``bar.sync`` waits until every live thread of the block has arrived. Warps may arrive
at different ``bar.sync`` instructions (a block split by warps into producers and
consumers): as on the GPU, the barrier counts threads, not places, so warps that reach one
wait there until the rest of the block has reached one. The instruction is ``.aligned``,
though: the threads of one warp must reach it together, and a barrier that part of a warp
skips, or that threads skip to return while others wait at it, is a ``BarrierError``.
Lanes whose ``mbarrier.try_wait`` finds their phase still open are parked too, until some
asynchronous barrier completes a phase (:mod:`.mbarrier`), so that the lanes that are to
arrive get to run; when nothing else can run, their wait gives up (as the GPU's does after a
while) and their own loop decides.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..errors import BarrierError, KernelFaultError, KernelTimeout, UnsupportedError
from ..i18n.messages import _
from .batch import ALL

MAX_DEPTH = 48


class Frame:
    """One activation of a function for a set of lanes: registers, parameters, local base."""

    __slots__ = ("b", "R", "params", "local_base", "kernel_name", "dec", "depth", "program",
                 "exited", "live", "at")

    def __init__(self, b, dec, program, kernel_name: str, depth: int = 0):
        self.b = b
        self.dec = dec
        self.program = program
        self.kernel_name = kernel_name
        self.depth = depth
        self.at = 0  # the basic block about to run when the deadline last passed
        n = b.size
        sizes = [-(-n * dt.itemsize // 8) * 8 for dt in dec.scope.storage]  # 8-byte aligned
        file = np.zeros(sum(sizes), np.uint8)  # one zeroed register file, viewed per register
        self.R, off = [], 0
        for dt, size in zip(dec.scope.storage, sizes, strict=True):
            self.R.append(file[off: off + n * dt.itemsize].view(dt))
            off += size
        self.params: dict[str, np.ndarray] = {}
        self.local_base = b.reserve_local(dec.depot) if dec.depot else b.local_sp

    def param_buffer(self, name: str) -> np.ndarray:
        buf = self.params.get(name)
        if buf is None:
            var = self.dec.fn.vars.get(name) or next(
                (p for p in self.dec.fn.returns + self.dec.fn.params if p.name == name), None)
            size = var.size if var is not None else 8
            buf = self.params[name] = np.zeros((self.b.size, max(size, 8)), np.uint8)
        return buf


def _merge(parts, size: int):
    """One sorted active set from the lane sets that reached the same block."""
    if len(parts) == 1:
        return parts[0]
    mask = np.zeros(size, bool)
    for p in parts:
        mask[p] = True
    lanes = np.flatnonzero(mask)
    return ALL if lanes.size == size else lanes


def run(fr: Frame, L, entry: bool) -> None:
    """Run ``fr``'s function for lanes ``L`` until every lane has returned."""
    b = fr.b
    dec = fr.dec
    blocks = dec.blocks
    heap = [0]
    pending = {0: [L]}
    counter = b.counter
    pure_exit = dec.pure_exit
    live_total = -1
    parked = None
    if entry:
        live = np.bincount(b.blk[b.valid], minlength=b.nb)
        live_total = int(live.sum())
        parked = Parked(b.nb)
    waiting: list[tuple[int, np.ndarray]] = []  # lanes parked by mbarrier.try_wait
    seen = b.phases
    while heap or waiting:
        if waiting and (b.phases != seen or not heap):
            again = b.phases != seen  # a phase completed: test again; else give up
            for at, lanes in waiting:
                if not again:
                    blocks[at].term[2](fr, lanes, np.zeros(lanes.size, bool))
                _push(pending, heap, at if again else at + 1, lanes)
            waiting, seen = [], b.phases
        pc = heapq.heappop(heap)
        L = _merge(pending.pop(pc), b.size)
        blk = blocks[pc]
        b.line = blk.line
        if b.clock() > b.deadline:
            fr.at = pc  # where the block is (cudakit.predict stops a loop between iterations)
            if b.on_timeout is None or not b.on_timeout(fr):
                stop = KernelTimeout(_(
                    "kernel '{kernel}' did not finish within its time limit; it was still "
                    "looping at line {line}. A loop whose exit depends on another block or "
                    "thread may never end; raise the limit with timeout=<seconds> if the "
                    "kernel is only slow.").format(kernel=fr.kernel_name, line=blk.line))
                stop.frame = fr  # where it stopped (cudakit.predict extrapolates from there)
                raise stop
        if entry and not heap and not isinstance(L, slice) and L.size == live_total:
            for op, pure in zip(blk.ops, blk.pure, strict=True):
                op(fr, ALL if pure else L)  # every live lane is here: pure ops run dense
        else:
            for op in blk.ops:
                op(fr, L)
        if counter is not None:
            counter.block(b, blk, L, dec)
        term = blk.term
        kind = term[0]
        if kind == "next":
            targets = [(pc + 1, L)]
        elif kind == "bra":
            guard = term[2]
            if guard is None:
                targets = [(term[1], L)]
            else:
                p = guard(fr, L)
                if p.all():
                    targets = [(term[1], L)]
                elif not p.any():
                    targets = [(pc + 1, L)]
                else:
                    lanes = b.index(L)
                    targets = [(term[1], lanes[p]), (pc + 1, lanes[~p])]
        elif kind == "brx":
            lanes = b.index(L)
            which = np.broadcast_to(np.asarray(term[1](fr, L)), lanes.shape)
            targets = [(term[2][int(k)], lanes[which == k]) for k in np.unique(which)]
        elif kind == "ret":
            if not entry:
                continue
            if parked.lanes:
                parked.check_exit(fr, b.index(L), blocks)
            live -= np.bincount(b.blk[b.index(L)], minlength=b.nb)
            live_total = int(live.sum())
            continue
        elif kind == "bar":
            targets = _barrier(fr, L, pc, term, live if entry else None, pending, parked)
        elif kind == "wait":
            lanes = b.index(L)
            done = np.broadcast_to(term[1](fr, L), lanes.shape)
            if not done.all():
                waiting.append((pc, lanes[~done]))
            targets = []
            if done.any():
                term[2](fr, lanes[done], np.ones(int(done.sum()), bool))
                targets = [(pc + 1, lanes[done])]
        else:
            lane = int(b.index(L)[0])
            raise KernelFaultError(_("__trap() at line {line} of kernel '{kernel}' in {who}: "
                                     "the kernel aborted").format(
                line=blk.line, kernel=fr.kernel_name, who=b.who(lane)))
        for target, lanes in targets:
            if entry and target in pure_exit:
                if parked.lanes:
                    parked.check_exit(fr, b.index(lanes), blocks)
                live -= np.bincount(b.blk[b.index(lanes)], minlength=b.nb)
                live_total = int(live.sum())
                continue
            _push(pending, heap, target, lanes)
    if entry:
        parked.named.check_done(fr)


def _push(pending: dict, heap: list, target: int, lanes) -> None:
    """Lanes ``lanes`` are to run block ``target``."""
    if target in pending:
        pending[target].append(lanes)
    else:
        pending[target] = [lanes]
        heapq.heappush(heap, target)


class Parked:
    """Warps waiting at a barrier for the rest of their block, which is elsewhere; and
    those waiting at a barrier for part of it (:class:`Named`)."""

    def __init__(self, nb: int):
        self.lanes: list[tuple[int, np.ndarray]] = []  # (barrier's block, lanes)
        self.count = np.zeros(nb, np.int64)  # threads waiting, per block of the batch
        self.named = Named()

    def park(self, b, pc: int, lanes: np.ndarray) -> None:
        self.lanes.append((pc, lanes))
        self.count += np.bincount(b.blk[lanes], minlength=b.nb)

    def check_exit(self, fr, lanes: np.ndarray, blocks) -> None:
        """Threads ``lanes`` return: an error if their block has warps waiting at a barrier,
        which those threads skipped (``if (t < 128) __syncthreads();``: sm_90 lets it
        pass and synccheck says nothing, but CUDA C++ leaves it undefined)."""
        b = fr.b
        waiting = self.count[b.blk[lanes]] > 0
        if not waiting.any():
            return
        gone = int(lanes[np.argmax(waiting)])
        for pc, parked in self.lanes:
            mine = parked[b.blk[parked] == b.blk[gone]]
            if mine.size:
                raise _divergent(fr, blocks[pc].term[4], int(mine[0]), gone)

    def release(self, b, live: np.ndarray, here: np.ndarray) -> list:
        """The waiting warps of every block whose live threads have all arrived (``here``:
        per block, those arriving now), each going on after its own barrier."""
        arrived = self.count + here
        done = (self.count > 0) & (arrived >= live)
        if not done.any():
            return []
        out, keep = [], []
        for pc, lanes in self.lanes:
            go = done[b.blk[lanes]]
            if go.any():
                out.append((pc + 1, lanes[go]))
            if not go.all():
                keep.append((pc, lanes[~go]))
        self.lanes = keep
        self.count[done] = 0
        if b.race is not None:
            b.race.barrier()
        return out


class Named:
    """Barriers for part of a block (``bar.sync 1, 64``, ``bar.arrive 1, 64``): per block and
    barrier number, the threads arrived so far and the lanes waiting. Each warp that arrives
    counts as 32 threads, as on the GPU (PTX ISA, ``bar``); when the count is reached the
    waiting lanes go on and the barrier starts over. For racecheck a named barrier orders
    everything before it (the tracker does not keep which warps took part), so a race
    across it between warps that did not take part is not reported."""

    def __init__(self):
        self.arrived: dict[tuple[int, int], int] = {}  # (block, number) -> threads
        self.waiting: dict[tuple[int, int], list] = {}  # (block, number) -> [(pc, lanes)]
        self.where: dict[tuple[int, int], tuple[int, int]] = {}  # -> (line, count)

    def arrive(self, fr, pc: int, lanes: np.ndarray, ids: np.ndarray, counts: np.ndarray,
               wait: bool, line: int) -> list:
        """Lanes ``lanes`` reach barrier ``ids`` expecting ``counts`` threads: where they and
        the lanes this completes go on."""
        b = fr.b
        if ((ids < 0) | (ids > 15)).any() or ((counts <= 0) | (counts % 32 != 0)).any():
            lane = int(lanes[np.argmax((ids > 15) | (counts <= 0) | (counts % 32 != 0))])
            raise BarrierError(_(
                "bar.sync/bar.arrive at line {line} of kernel '{kernel}' in {who}: barrier "
                "{number} with {count} threads (barriers are numbered 0 to 15, and the count "
                "is a positive multiple of 32)").format(
                    line=line, kernel=fr.kernel_name, who=b.who(lane),
                    number=int(ids[lanes == lane][0]), count=int(counts[lanes == lane][0])))
        going = []
        keys = b.blk[lanes].astype(np.int64) * 16 + ids
        for key in np.unique(keys):
            mine = keys == key
            sel, n = lanes[mine], int(counts[mine][0])
            at = (int(key) // 16, int(key) % 16)
            got = self.arrived.get(at, 0) + 32 * np.unique(b.warp_key[sel]).size
            if wait:
                self.waiting.setdefault(at, []).append((pc, sel))
                self.where[at] = (line, n)
            else:
                going.append((pc + 1, sel))
            if got >= n:
                going += [(p + 1, w) for p, w in self.waiting.pop(at, [])]
                got = 0
                if b.race is not None:
                    b.race.barrier()
            self.arrived[at] = got
        return going

    def check_done(self, fr) -> None:
        """The kernel's lanes have all finished or wait: an error if some wait at a named
        barrier that will never be complete."""
        for at, parts in self.waiting.items():
            line, n = self.where[at]
            lane = int(parts[0][1][0])
            raise BarrierError(_(
                "barrier {number} at line {line} of kernel '{kernel}' waits for {count} "
                "threads, but only {arrived} arrived (the first: {who}); the rest of the block "
                "finished or waits at another barrier (on a GPU this hangs).").format(
                    number=at[1], line=line, kernel=fr.kernel_name, count=n,
                    arrived=self.arrived.get(at, 0), who=fr.b.who(lane)))


def _barrier(fr, L, pc: int, term, live, pending, parked) -> list:
    """Where the lanes ``L`` arriving at the barrier ending block ``pc`` go on: past it, for
    blocks whose live threads are all there (or parked at another barrier); otherwise they
    park."""
    b = fr.b
    kind, dst, src, line, number, count, named, arrive = term[1:]
    lanes = b.index(L)
    if live is None:
        raise UnsupportedError(_("__syncthreads() inside a function that is not inlined "
                                 "(line {line} of kernel '{kernel}')").format(
            line=line, kernel=fr.kernel_name))
    n = np.broadcast_to(np.asarray(count(fr, L) if count is not None else b.pad), lanes.shape)
    ids = np.broadcast_to(np.asarray(number(fr, L) if number is not None else 0), lanes.shape)
    # barrier 0 for the whole block is __syncthreads(); any other is counted on its own
    named = named or bool((((n != b.tpb) & (n != b.pad)) | (ids != 0)).any())
    if named:
        if kind is not None:
            raise UnsupportedError(_("a barrier reduction (bar.red) for part of a block (line "
                                     "{line} of kernel '{kernel}')").format(
                line=line, kernel=fr.kernel_name))
        split = _split_warp(b, lanes, pending, parked)
        if split is not None:
            raise _divergent(fr, line, int(lanes[0]), split)
        return parked.named.arrive(fr, pc, lanes, ids, n, not arrive, line)
    here = np.bincount(b.blk[lanes], minlength=b.nb)
    short = (here > 0) & (here + parked.count < live)
    if short.any() or parked.lanes:
        split = _split_warp(b, lanes, pending, parked)
        apart = (here > 0) & (here < live)  # a reduction needs its block in one place
        if split is not None or (kind is not None and apart.any()):
            cta = int(b.blk[split]) if split is not None else int(np.argmax(apart))
            first = int(lanes[np.argmax(b.blk[lanes] == cta)])
            missing = split if split is not None else _waiting_elsewhere(b, cta, pending)
            raise _divergent(fr, line, first, missing)
    if kind is not None:
        p = np.broadcast_to(np.asarray(src(fr, L), bool), lanes.shape)
        per = np.bincount(b.blk[lanes], weights=p, minlength=b.nb).astype(np.int64)
        mine = per[b.blk[lanes]]
        if kind == "popc":
            dst(fr, L, mine.astype(np.uint32))
        elif kind == "and":
            dst(fr, L, mine == live[b.blk[lanes]])
        else:
            dst(fr, L, mine > 0)
    if not short.any() and not parked.lanes:
        if b.race is not None:
            b.race.barrier()
        return [(pc + 1, L)]
    wait = short[b.blk[lanes]]
    if wait.any():
        parked.park(b, pc, lanes[wait])
    going = parked.release(b, live, np.where(short, 0, here))
    if not wait.all():
        going.append((pc + 1, lanes[~wait]))
        if not going[:-1] and b.race is not None:
            b.race.barrier()
    return going


def _divergent(fr, line: int, first: int, missing: int | None) -> BarrierError:
    """The error for a barrier that lane ``first`` reached and lane ``missing`` (``None``:
    any) of its block did not."""
    b = fr.b
    other = b.thread_name(first, int(b.tib[missing])) if missing is not None \
        else _("all live threads")
    return BarrierError(_(
        "__syncthreads() at line {line} of kernel '{kernel}' was reached by {who} but "
        "not by {other} of the same block (divergent barrier: on a GPU this hangs or "
        "corrupts data). Move the barrier out of the branch or loop that only some "
        "threads take.").format(line=line, kernel=fr.kernel_name, who=b.who(first),
                                other=other))


def _split_warp(b, lanes: np.ndarray, pending, parked) -> int | None:
    """A thread of a warp arriving with ``lanes`` that is elsewhere (``None``: none is)."""
    warps = np.unique(b.warp_key[lanes])
    parts = [part for parts in pending.values() for part in parts]
    for part in parts + [waiting for _pc, waiting in parked.lanes]:
        pl = b.index(part)
        hit = pl[np.isin(b.warp_key[pl], warps)]
        if hit.size:
            return int(hit.min())
    return None


def _waiting_elsewhere(b, cta: int, pending) -> int | None:
    """The lowest thread of block ``cta`` still on its way (``None``: none is)."""
    missing = None
    for parts in pending.values():
        for part in parts:
            pl = b.index(part)
            sel = pl[b.blk[pl] == cta]
            if sel.size:
                missing = int(sel[0]) if missing is None else min(missing, int(sel[0]))
    return missing
