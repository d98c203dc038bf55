"""How far an emulated block got through its loops when it was stopped: the fraction of its
work done, so that a block too long to emulate in full is extrapolated from its start.

An SGEMM block at 4096^3 or an N-body block over 2^16 bodies runs one loop for seconds of
emulation, every iteration alike. The sample stops such a block at its time budget and looks
at each loop that has run: the ``setp`` that decides its backward branch compares an
induction register (stepped by an ``add``/``sub`` in the loop) with a limit, so the registers
tell how many iterations remain. The outermost loop still running (the fewest iterations
done) gives the fraction. Hand-written: it reads this emulator's frames.

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


def _loop_left(fr, body) -> float:
    """Iterations left in the loop whose instructions are ``body`` (last one: the branch)."""
    guard = (body[-1].guard or "").lstrip("!")
    setp = next((i for i in reversed(body[:-1]) if i.opcode.startswith("setp")
                 and guard in str(i.operands[0]).split("|")), None)
    if not guard or setp is None:
        return float("nan")
    t = split_opcode(setp.opcode)[2][-1]
    a, b = setp.operands[1], setp.operands[2]
    steps = [(ind, limit, next((i for i in body if i.opcode.split(".")[0] in ("add", "sub")
                                and i.operands[0] == ind and ind in i.operands[1:]), None))
             for ind, limit in ((a, b), (b, a))]
    found = [x for x in steps if x[2] is not None]
    if not found:
        return float("nan")
    ind, limit, step = found[0]
    other = step.operands[2] if step.operands[1] == ind else step.operands[1]
    sign = -1 if step.opcode.startswith("sub") else 1
    read = fr.dec.scope.read

    def values(op):
        return np.asarray(read(op, t)(fr, ALL)).astype(np.float64)

    return remaining(values(ind), values(limit), sign * values(other), fr.b.valid)


def fraction_done(fr, counter) -> float | None:
    """The fraction of the block's work done when it stopped, or None if no loop tells.

    The work is counted in instructions: those issued so far, and the iterations left of the
    outermost loop still running (the fewest iterations done) times what one of its
    iterations issued so far on average. Loops that have finished count once, as they ran.
    """
    dec = fr.dec
    starts = [blk.start for blk in dec.blocks] + [len(dec.fn.body)]
    weight = [float(blk.classes.sum()) * counter.visits.get(id(blk), 0) for blk in dec.blocks]
    best = None
    for bi, blk in enumerate(dec.blocks):
        term = blk.term
        done = counter.visits.get(id(blk), 0)
        if term[0] != "bra" or term[1] > bi or term[2] is None or not done:
            continue
        left = _loop_left(fr, dec.fn.body[starts[term[1]]:starts[bi + 1]])
        if np.isfinite(left) and left > 0 and (best is None or done < best[0]):
            best = (done, left, sum(weight[term[1]:bi + 1]) / done)
    if best is None:
        return None
    so_far = sum(weight)
    return so_far / (so_far + best[1] * best[2]) if so_far > 0 else None
