"""How far an emulated block got through its loops when it was stopped: the fraction of its
work done, so that a block too long to emulate in full is extrapolated from its start.

An SGEMM block at 4096^3 or an N-body block over 2^16 bodies runs one loop for seconds of
emulation, every iteration alike. The sample stops such a block at its time budget and looks
at each loop that has run: the ``setp`` that decides its backward branch compares an
induction register (stepped by an ``add``/``sub`` in the loop) with a limit, so the registers
tell how many iterations remain. The outermost loop still running (the fewest iterations
done) gives the fraction: its iterations left cost what those done cost on average, or, when
the looks taken while the block ran show their cost growing steadily (row ``i`` of a
triangular loop costs ``i`` steps), what that trend gives (:func:`trend_rest`).
Hand-written: it reads this emulator's frames.

>>> remaining(np.array([12]), np.array([4096]), np.array([8]))
510.5
"""

from __future__ import annotations

import numpy as np

from ..emu.batch import ALL
from ..emu.decode import split_opcode


def remaining(value, limit, step, lanes=None) -> float:
    """Iterations left for an induction variable at ``value`` stepping by ``step`` to
    ``limit``: the most over ``lanes`` (a block ends with its last lane; NaN when no lane
    moves towards the limit)."""
    with np.errstate(all="ignore"):
        left = (np.asarray(limit, np.float64) - np.asarray(value, np.float64)) / \
            np.asarray(step, np.float64)
    left = np.atleast_1d(left)
    if lanes is not None and left.size > 1:
        left = left[lanes]
    left = left[np.isfinite(left)]
    return float(left.max()) if left.size else float("nan")


def _steps(body, ind) -> list[tuple[int, object]] | None:
    """How the loop whose instructions are ``body`` steps register ``ind`` per iteration:
    the ``(sign, operand)`` terms of the chain of ``add``/``sub`` that leads from ``ind``
    back to its new value (NVVM unrolls ``i += stride`` 4 times as ``t = i + stride; ...;
    i = t3 + stride``; a latch that compares the old ``i`` writes the new one with a ``mov``
    after its ``setp``: ``t = i + 1; setp i < n; mov i, t``), or None when ``ind`` is not
    stepped so."""
    steps = [(k, i) for k, i in enumerate(body) if i.opcode.split(".")[0] in ("add", "sub")
             or (i.opcode.startswith("mov") and isinstance(i.operands[1], str)
                 and i.operands[1].startswith("%"))]
    terms, reg, before = [], ind, len(body)
    for _ in range(len(steps)):
        k, step = next(((k, i) for k, i in reversed(steps) if k < before
                        and i.operands[0] == reg), (None, None))
        if step is None:
            return None
        if step.opcode.startswith("mov"):  # a copy: follow its source
            if step.operands[1] == ind:
                return terms or None
            reg, before = step.operands[1], k
            continue
        sub = step.opcode.startswith("sub")
        chained = [j for j in ((1,) if sub else (1, 2)) if step.operands[j] == ind] or \
            [j for j in ((1,) if sub else (1, 2)) if any(
                m < k and i.operands[0] == step.operands[j] for m, i in steps)]
        if not chained:
            return None
        j = chained[0]
        terms.append((-1 if sub else 1, step.operands[3 - j]))
        if step.operands[j] == ind:
            return terms
        reg, before = step.operands[j], k
    return None


def _induction(fr, body):
    """The induction of the loop whose instructions are ``body`` (last one: the branch):
    ``(register, type, values, limits, steps)``, the last three per lane, or None when its
    ``setp`` does not compare a register stepped by ``add``/``sub`` in the loop."""
    guard = (body[-1].guard or "").lstrip("!")
    setp = next((i for i in reversed(body[:-1]) if i.opcode.startswith("setp")
                 and guard in str(i.operands[0]).split("|")), None)
    if not guard or setp is None:
        return None
    t = split_opcode(setp.opcode)[2][-1]
    a, b = setp.operands[1], setp.operands[2]
    found = [(ind, limit, terms) for ind, limit in ((a, b), (b, a))
             if (terms := _steps(body, ind)) is not None]
    if not found:
        return None
    ind, limit, terms = found[0]
    read = fr.dec.scope.read

    def values(op):
        return np.asarray(read(op, t)(fr, ALL)).astype(np.float64)

    return ind, t, values(ind), values(limit), sum(sign * values(op) for sign, op in terms)


def _loop_left(fr, body) -> float:
    """Iterations left in the loop whose instructions are ``body`` (last one: the branch)."""
    found = _induction(fr, body)
    if found is None:
        return float("nan")
    _, _, value, limit, step = found
    return remaining(value, limit, step, fr.b.valid)


def _weights(dec, counter) -> list[float]:
    """Per basic block, the instructions it has issued so far (its size times its runs)."""
    return [float(blk.classes.sum()) * counter.visits.get(id(blk), 0) for blk in dec.blocks]


def _running_loop(fr, counter):
    """The outermost loop still running (the fewest iterations done, some left):
    ``(iterations done, first block, last block, iterations left, instructions per
    iteration)``, or None."""
    dec = fr.dec
    starts = [blk.start for blk in dec.blocks] + [len(dec.fn.body)]
    weight = _weights(dec, counter)
    best = None
    for bi, blk in enumerate(dec.blocks):
        term = blk.term
        done = counter.visits.get(id(blk), 0)
        if term[0] != "bra" or term[1] > bi or term[2] is None or not done:
            continue
        left = _loop_left(fr, dec.fn.body[starts[term[1]]:starts[bi + 1]])
        if np.isfinite(left) and left > 0 and (best is None or done < best[0]):
            best = (done, term[1], bi, left, sum(weight[term[1]:bi + 1]) / done)
    return best


def fraction_done(fr, counter, skipped: float = 0.0, points=()) -> float | None:
    """The fraction of the block's work done when it stopped, or None if no loop tells.

    The work is counted in instructions: those issued so far, and the iterations left of the
    outermost loop still running (the fewest iterations done) times what one of its
    iterations issued so far on average, or, when ``points`` (:func:`point`, taken as the
    block ran) show its iterations growing or shrinking steadily, what the trend gives
    (:func:`trend_rest`). Loops that have finished count once, as they ran; ``skipped``: the
    instructions of loops :func:`skip_loop` cut short before. A loop around that one still
    in its first iteration (a flash-attention block stopped in its first tile of keys)
    multiplies it all by its iterations: each as long as the first.
    """
    loop = _running_loop(fr, counter)
    if loop is None:
        return None
    done, first, last, left, per_iteration = loop
    so_far = issued(fr.dec, counter)
    if so_far <= 0:
        return None
    seen = [(k, w) for f, k, w in points if f == first]
    rest = trend_rest([*seen, (done, so_far)], left)
    rest = left * per_iteration if rest is None else rest
    return so_far / ((so_far + skipped + rest) * _first_iterations(fr, counter, first, last))


def _first_iterations(fr, counter, first: int, last: int) -> float:
    """The product of the iterations of the loops around basic blocks ``first .. last``
    that have not finished an iteration yet (1.0 when there are none)."""
    dec = fr.dec
    starts = [blk.start for blk in dec.blocks] + [len(dec.fn.body)]
    times = 1.0
    for bi, blk in enumerate(dec.blocks):
        term = blk.term
        if term[0] != "bra" or term[2] is None or term[1] > first or bi < last or \
                (term[1], bi) == (first, last) or counter.visits.get(id(blk), 0) or \
                not counter.visits.get(id(dec.blocks[term[1]]), 0):
            continue
        left = _loop_left(fr, dec.fn.body[starts[term[1]]:starts[bi + 1]])
        if np.isfinite(left) and left > 1:
            times *= left
    return times


def loop_start(fr, counter) -> int | None:
    """The first basic block of the block's outermost running loop, or None."""
    loop = _running_loop(fr, counter)
    return None if loop is None else loop[1]


def point(fr, counter) -> tuple[int, int, float] | None:
    """Where a block is: the first basic block of its outermost running loop, that loop's
    iterations done, and the instructions issued so far (None outside a loop)."""
    loop = _running_loop(fr, counter)
    return None if loop is None else (loop[1], loop[0], issued(fr.dec, counter))


#: iterations each half of the points must span for :func:`trend_rest` to read a trend
TREND_ITERATIONS = 4
#: the change in the cost of an iteration between the two halves below which the loop's
#: iterations count as alike
TREND_CHANGE = 0.15


def trend_rest(points, left: float) -> float | None:
    """Instructions the ``left`` remaining iterations of a loop will issue, when the cost of
    an iteration changes steadily (a row ``i`` of a triangular loop costs ``i`` steps): the
    cost per iteration over the first and the second half of ``points`` (``(iterations
    done, instructions issued)`` in order, taken anywhere in an iteration), a straight line
    through the two, summed over the iterations left (and never below zero). None when the
    halves are too short to tell, or their costs differ by less than ``TREND_CHANGE``.

    >>> rows = [(k, 10 * k * k / 2) for k in range(0, 17, 2)]   # iteration k costs 10 k
    >>> round(trend_rest(rows, 16))                              # iterations 16 .. 31
    3840
    >>> trend_rest([(k, 7.0 * k) for k in range(9)], 100) is None
    True
    """
    if len(points) < 3:
        return None
    (k0, w0), (k2, w2) = points[0], points[-1]
    k1, w1 = min(points[1:-1], key=lambda p: abs(p[0] - (k0 + k2) / 2))
    if k1 - k0 < TREND_ITERATIONS or k2 - k1 < TREND_ITERATIONS:
        return None
    early, late = (w1 - w0) / (k1 - k0), (w2 - w1) / (k2 - k1)
    if early <= 0 or abs(late / early - 1) < TREND_CHANGE:
        return None
    slope = (late - early) / ((k2 - k0) / 2)
    start = early - slope * (k0 + k1) / 2  # the cost of iteration x: start + slope x
    lo, hi = float(k2), float(k2 + left)
    if slope < 0:
        hi = min(hi, max(lo, -start / slope))
    return max(0.0, start * (hi - lo) + slope * (hi * hi - lo * lo) / 2)


def issued(dec, counter) -> float:
    """The instructions function ``dec`` has issued so far (in :func:`fraction_done`'s
    units: each basic block's size times its runs)."""
    return sum(_weights(dec, counter))


def loop_done(fr, counter) -> float | None:
    """The part of its iterations that the outermost running loop has done, or None."""
    loop = _running_loop(fr, counter)
    return None if loop is None else loop[0] / (loop[0] + loop[3])


def skip_loop(fr, counter) -> float | None:
    """Cut the outermost running loop short when another loop follows it, so that the later
    loops run too: its induction register moves on, lane by lane, to its last iteration.
    Returns the instructions skipped (the iterations left but the one that now runs as the
    last, times those of one iteration), or None, touching nothing, when no loop can be cut
    so.

    A kernel that makes three passes over a long row with one thread (llm.c's softmax over
    50257 columns) runs for minutes in the emulator; stopped in its first pass, the other
    two would never be counted. A loop with nothing after it is left to
    :func:`fraction_done`: stopping there loses only what follows the loop.
    """
    loop = _running_loop(fr, counter)
    if loop is None:
        return None
    _, first, last, left, per_iteration = loop
    dec = fr.dec
    if not any(blk.term[0] == "bra" and blk.term[1] is not None and blk.term[1] <= bi
               for bi, blk in enumerate(dec.blocks) if bi > last):
        return None
    starts = [blk.start for blk in dec.blocks] + [len(dec.fn.body)]
    ind, t, value, limit, step = _induction(fr, dec.fn.body[starts[first]:starts[last + 1]])
    limit, step = np.broadcast_to(limit, value.shape), np.broadcast_to(step, value.shape)
    with np.errstate(all="ignore"):
        trips = np.ceil((limit - value) / step)
    lanes = np.flatnonzero(fr.b.valid & np.isfinite(trips) & (trips > 1))
    if not lanes.size:
        return None
    moved = value[lanes] + (trips[lanes] - 1) * step[lanes]
    dtype = np.int64 if t[0] in "sub" else np.float64
    dec.scope.write(ind, t)(fr, lanes, moved.astype(dtype))
    return (left - 1) * per_iteration
