"""Asynchronous barriers (``mbarrier``) and the copies that arrive on them: what
``cuda::barrier``, ``cuda::pipeline``, ``cuda::memcpy_async`` and Hopper's bulk copies (TMA
without a tensor map) compile to.

An ``mbarrier`` is a 64-bit object in shared memory. It counts the arrivals still expected
in its current phase and the bytes of transactions still expected (``expect_tx`` adds,
``complete_tx`` subtracts); when both reach zero the phase completes: its parity flips and
the arrival count starts again from the expected count (PTX ISA, "Parallel Synchronization
and Communication Instructions: mbarrier"). Its layout on the GPU is not specified; here the
word holds, from the lowest bit, the pending arrivals (21 bits), the expected arrivals (21),
the transaction bytes biased by 2^20 (21) and the phase parity (bit 63). A token returned by
``mbarrier.arrive`` carries the parity of the phase it arrived in and the arrivals then
pending.

The emulator completes every asynchronous copy when it is issued, so a copy's
``complete_tx`` (``cp.async.bulk ... mbarrier::complete_tx::bytes``) and its arrive-on
(``cp.async.mbarrier.arrive``) take effect at once; ``cp.async.mbarrier.arrive`` without
``.noinc`` adds an arrival and takes it back, and changes nothing. Racecheck takes a
completed phase as a ``__syncthreads()`` of the blocks in the batch: it then misses races
among threads a phase does not order, but reports none that it does.

Written by hand: the emulator interprets PTX, and no library executes these instructions on
NumPy arrays.

>>> word = pack(pending=4, expected=4, tx=0, phase=0)
>>> word, arrive_words(np.array([word]), np.array([4]), np.array([0]))[0]
(array([8388612], dtype=uint64), array([9223372036863164420], dtype=uint64))
"""

from __future__ import annotations

import numpy as np

from ..errors import KernelFaultError, UnsupportedError
from ..i18n.messages import _

FIELD = 21
MASK = (1 << FIELD) - 1
TX_BIAS = 1 << 20
PHASE = 63
_U = np.uint64


def pack(pending, expected, tx, phase) -> np.ndarray:
    """The word of a barrier with these fields (arrays or numbers)."""
    return (np.asarray(pending, _U) | (np.asarray(expected, _U) << _U(FIELD))
            | (np.asarray(np.asarray(tx, np.int64) + TX_BIAS, _U) << _U(2 * FIELD))
            | (np.asarray(phase, _U) << _U(PHASE)))


def unpack(word: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(pending, expected, tx, phase)`` of barrier words, as int64 arrays."""
    w = np.asarray(word, _U)
    field = lambda k: ((w >> _U(k * FIELD)) & _U(MASK)).astype(np.int64)  # noqa: E731
    return field(0), field(1), field(2) - TX_BIAS, (w >> _U(PHASE)).astype(np.int64)


def arrive_words(words, arrivals, tx, drop=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Barriers ``words`` after ``arrivals`` arrive and ``tx`` bytes are added to what they
    expect (``drop``: arrivals that also leave the barrier for later phases): ``(new words,
    tokens, overrun)``, ``overrun`` True where more threads arrived than were pending."""
    pending, expected, have, phase = unpack(words)
    overrun = arrivals > pending
    pending = pending - arrivals
    if drop is not None:
        expected = expected - drop
    have = have + tx
    tokens = pack(np.maximum(pending, 0), 0, 0, phase)
    return _settle(pending, expected, have, phase), tokens, overrun


def _settle(pending, expected, tx, phase) -> np.ndarray:
    """The words, with every phase whose arrivals and bytes are all in completed."""
    done = (pending <= 0) & (tx == 0)
    return pack(np.where(done, expected, np.maximum(pending, 0)), expected, tx,
                np.where(done, phase ^ 1, phase))


def completed(word, token_phase) -> np.ndarray:
    """Whether the phase of parity ``token_phase`` has completed on barriers ``word``."""
    return unpack(word)[3] != (np.asarray(token_phase, np.int64) & 1)


class Access:
    """The barriers one instruction names, grouped: each distinct barrier once."""

    def __init__(self, fr, L, address, site):
        self.b = fr.b
        self.lanes = fr.b.index(L)
        self.groups = list(fr.b.atomic_targets(address(fr, L), self.lanes, "shared",
                                               np.uint64, site))

    def update(self, per_lane, change) -> np.ndarray:
        """Apply ``change(words, sums of per_lane's arrays per barrier) -> (new words,
        per-barrier results)``; return the results per lane."""
        out = np.zeros(self.lanes.size, np.uint64)
        for view, idx, pos in self.groups:
            uniq, inv = np.unique(idx, return_inverse=True)
            sums = [np.bincount(inv, weights=v[pos], minlength=uniq.size).astype(np.int64)
                    for v in per_lane]
            before = view[uniq].copy()
            view[uniq], result = change(before, *sums)
            flipped = int((unpack(view[uniq])[3] != unpack(before)[3]).sum())
            self.b.phases += flipped
            if flipped and self.b.race is not None:
                self.b.race.barrier()  # racecheck: a completed phase orders as a barrier
            out[pos] = np.broadcast_to(np.asarray(result, np.uint64), uniq.shape)[inv]
        return out

    def words(self) -> np.ndarray:
        """Each lane's barrier word."""
        out = np.zeros(self.lanes.size, np.uint64)
        for view, idx, pos in self.groups:
            out[pos] = view[idx]
        return out


def decode(ins, scope, mods: list[str], o: list, site):
    """The closure of ``mbarrier.<mods>`` (``site``: its place, for memcheck and the
    trace)."""
    kind = next((m for m in mods if m in ("init", "inval", "arrive", "arrive_drop",
                                            "expect_tx", "complete_tx", "test_wait",
                                            "pending_count")), None)
    if kind is None:
        raise UnsupportedError(f"the PTX instruction '{ins.opcode}'")
    if kind == "pending_count":
        state, w = scope.read(o[1], "b64"), scope.write(o[0], "u32")
        return lambda fr, L: w(fr, L, (np.asarray(state(fr, L), _U) & _U(MASK)).astype(
            np.uint32))
    if kind == "test_wait":  # try_wait ends a basic block: decode's _wait
        return wait_test(ins, scope, mods, o, site)
    address, _space = scope.address(o[0] if kind in ("init", "inval", "expect_tx",
                                                      "complete_tx") else o[1])
    if kind in ("init", "inval"):
        count = scope.read(o[1], "u32") if kind == "init" else (lambda fr, L: 0)

        def init(fr, L):
            acc = Access(fr, L, address, site)
            n = np.broadcast_to(np.asarray(count(fr, L), np.int64), acc.lanes.shape)
            for view, idx, pos in acc.groups:
                view[idx] = pack(n[pos], n[pos], 0, 0)
        return init
    if kind in ("expect_tx", "complete_tx"):
        nbytes = scope.read(o[1], "u32")
        sign = 1 if kind == "expect_tx" else -1
        return lambda fr, L: transact(fr, L, address, site, sign * np.asarray(
            nbytes(fr, L), np.int64))
    # arrive, arrive.expect_tx, arrive_drop, with or without a count
    token = scope.write(o[0], "b64")
    operand = scope.read(o[2], "u32") if len(o) > 2 else None
    expect = "expect_tx" in mods
    drop = kind == "arrive_drop"

    def arrive_op(fr, L):
        lanes = fr.b.index(L)
        value = np.broadcast_to(np.asarray(operand(fr, L) if operand else 1, np.int64),
                                lanes.shape)
        count, tx = (np.ones_like(value), value) if expect else (value, np.zeros_like(value))
        token(fr, L, arrive(fr, L, address, site, count, tx, drop, ins.line))
    return arrive_op


def arrive(fr, L, address, site, count, tx, drop: bool, line: int) -> np.ndarray:
    """``count`` arrivals per lane (and ``tx`` bytes expected) on the barriers at ``address``;
    the lanes' tokens."""
    overrun = []

    def change(words, n, t):
        new, tokens, over = arrive_words(words, n, t, n if drop else None)
        overrun.append(over.any())
        return new, tokens
    acc = Access(fr, L, address, site)
    tokens = acc.update([count, tx], change)
    if any(overrun):
        raise KernelFaultError(_(
            "more threads arrived at the asynchronous barrier at line {line} of kernel "
            "'{kernel}' than it was initialised to expect (in {who}): the count given to "
            "init() must cover every arrival of a phase").format(
            line=line, kernel=fr.kernel_name, who=fr.b.who(int(acc.lanes[0]))))
    return tokens


def transact(fr, L, address, site, nbytes) -> None:
    """``nbytes`` per lane added to (negative: taken from) the bytes the barriers expect."""
    def change(words, t):
        pending, expected, tx, phase = unpack(words)
        return _settle(pending, expected, tx + t, phase), 0
    acc = Access(fr, L, address, site)
    acc.update([np.broadcast_to(nbytes, acc.lanes.shape)], change)


def wait_test(ins, scope, mods, o, site):
    """``mbarrier.test_wait`` as an op writing its predicate: done or not."""
    done = waiter(ins, scope, mods, o, site)
    w = scope.write(o[0], "pred")
    return lambda fr, L: w(fr, L, done(fr, L))


def waiter(ins, scope, mods, o, site):
    """``(frame, lanes) -> bool per lane``: whether the phase the instruction names is over."""
    address, _space = scope.address(o[1])
    parity = "parity" in mods
    state = scope.read(o[2], "u32" if parity else "b64")

    def done(fr, L):
        s = np.asarray(state(fr, L), _U)
        phase = s if parity else s >> _U(PHASE)
        return completed(Access(fr, L, address, site).words(), phase.astype(np.int64))
    return done


def copy_arrive(ins, scope, mods, o, site):
    """``cp.async.mbarrier.arrive[.noinc]``: the arrive-on of the lane's copies, all done."""
    if "noinc" not in mods:
        return None  # one arrival added, then made by the finished copies: no change
    address, _space = scope.address(o[0])

    def op(fr, L):
        ones = np.ones(fr.b.index(L).size, np.int64)
        arrive(fr, L, address, site, ones, np.zeros_like(ones), False, ins.line)
    return op


def is_bulk_copy(opcode: str) -> bool:
    """Whether ``opcode`` is a bulk copy that moves data (not its groups' commits and
    waits, nor a prefetch): each lane that runs it sends the SM's TMA unit one copy.

    >>> is_bulk_copy("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes")
    True
    """
    mods = opcode.split(".")
    return opcode.startswith("cp.async.bulk") and not {"commit_group", "wait_group",
                                                         "prefetch", "tensor"} & set(mods)


def bulk_copy(ins, scope, mods, o, site):
    """``cp.async.bulk`` without a tensor map: ``size`` bytes (a multiple of 16) from ``[src]``
    to ``[dst]``, done at once; into shared memory it completes ``size`` bytes of the
    barrier it names."""
    if "tensor" in mods:
        raise UnsupportedError(_("bulk tensor copies (TMA with a tensor map: "
                                 "'{opcode}')").format(opcode=ins.opcode))
    if "prefetch" in mods:
        return None
    spaces = [m.split("::")[0] for m in mods if m.split("::")[0] in ("global", "shared")]
    dst_space, src_space = spaces[0], spaces[1]
    dst, _d = scope.address(o[0])
    src, _s = scope.address(o[1])
    size = scope.read(o[2], "u32")
    barrier = scope.address(o[3])[0] if len(o) > 3 and "mbarrier" in "".join(mods) else None

    def op(fr, L):
        b = fr.b
        lanes = b.index(L)
        n = np.broadcast_to(np.asarray(size(fr, L), np.int64), lanes.shape)
        d = np.broadcast_to(np.asarray(dst(fr, L), np.uint64), lanes.shape)
        s = np.broadcast_to(np.asarray(src(fr, L), np.uint64), lanes.shape)
        for off in range(0, int(n.max(initial=0)), 16):
            m = n > off
            vals = b.load(s[m] + _U(off), lanes[m], src_space, np.uint32, 4, site)
            b.store(d[m] + _U(off), lanes[m], dst_space, vals, np.uint32, site)
        if barrier is not None:
            transact(fr, L, barrier, site, -n)
    return op
