"""How fast the SMs fetch a launch's instructions: loops larger than the instruction cache,
and the two SMs of one TPC running different loops.

The two SMs of a TPC share an instruction cache. On the H100's SMs it holds 32 kB of code
(``benchmarks/fetch_probe.py``): a loop of independent FFMAs ran at 1.04 cycles per
instruction up to 32 kB, and from 40 kB on at 2.4 (the other SM running the same loop or
nothing). Two SMs running two different loops share the capacity: 17.5 kB each ran at 1.9
cycles, 20 kB each at 3.9. A warp waits for its fetches as for its dependencies,
whichever is longer (a chain of dependent FFMAs, 4 cycles each, was not slowed). The model
takes these as measured curves (``fetch_alone_curve``, ``fetch_paired_curve``).

Which blocks share a TPC: every launch puts its first ``tpc_paired_blocks`` (8 on the
H100) two to a TPC, in order; up to one block per TPC (66) the rest go one to a TPC, and
from about 100 blocks on blocks 8 and 9, 10 and 11, ... share TPCs too
(``benchmarks/sgemm_blocks.py``, four grids on the H100 and an H200;
``benchmarks/fetch_probe.py --placement``, ten grids of 8-264 blocks on the H200). So in
lab 12's ``sgemm_async`` at 1000^3 blocks 6 and 7 share a TPC, one running the interior loop
and the other the edge loop (18 kB each): they took 316 k cycles where the others took
201-226 k, and the launch takes as long as they do.

For a launch of no more blocks than SMs the model looks at the first 8 blocks and, with
more blocks than TPCs, at the later pairs that hold a block of the grid's last column or row
(:func:`pairs_to_probe`); launches of several waves are not probed. In those, the blocks
of later waves start at whatever point the TPC's other blocks have reached, and warps spread
over more code than the cache holds wait for their fetches beyond their dependencies
(:func:`spread_fetch`, measured by ``benchmarks/fetch_probe.py --phases``). Which loop a block runs
is found by emulating its start (:func:`main_loops`); a loop's bytes are its PTX
instructions at the kernel's SASS bytes per PTX instruction (the PTX loops of
``sgemm_async`` are 2-3 % longer than its SASS ones, and come in another order).

Hand-written: no library models instruction fetch.

>>> from types import SimpleNamespace as NS
>>> d = NS(figures={"fetch_alone_curve": ((32768.0, 40960.0), (1.1, 2.4))})
>>> fetch_cycles(16384, d), fetch_cycles(36864, d), fetch_cycles(65536, d)
(0.0, 1.75, 2.4)
"""

from __future__ import annotations

import numpy as np

from ..emu.counts import InstructionCounter
from ..errors import CudakitError, KernelTimeout
from .work import WorkClock

#: emulation per block, at most, while finding the loop it runs (seconds of the work clock,
#: :mod:`.work`, as all times here): it stops once a loop has run twice (lab 12's
#: sgemm_async: 0.03 s), so the cap only ends a block that never loops twice
PROBE_SECONDS = 0.25
LOOK = 0.002  # seconds between looks at whether it has entered one


def fetch_cycles(loop_bytes: float, d, paired: bool = False) -> float:
    """Cycles per instruction a warp needs to fetch a loop of ``loop_bytes`` on a TPC (with
    ``paired``, the bytes of the two different loops its two SMs run): 0 below the measured
    curve's first point (the cache holds the loop), or where the device has no curve."""
    curve = d.figures.get("fetch_paired_curve" if paired else "fetch_alone_curve")
    if not curve or loop_bytes < curve[0][0]:
        return 0.0
    return float(np.interp(loop_bytes, *curve))


def ptx_loops(dec) -> list[tuple[int, int]]:
    """The outermost loops of a decoded PTX function: ``(first, end)`` instruction indices,
    one per backward branch, nested and overlapping ones joined."""
    starts = [blk.start for blk in dec.blocks] + [len(dec.fn.body)]
    spans: list[list[int]] = []
    for first, end in sorted((starts[blk.term[1]], starts[k + 1])
                             for k, blk in enumerate(dec.blocks)
                             if blk.term[0] == "bra" and blk.term[1] <= k):
        if spans and first < spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([first, end])
    return [(f, e) for f, e in spans]


def main_loops(function, args, grid, block, shared: int, indices,
               seconds: float = PROBE_SECONDS, clock: WorkClock | None = None
               ) -> list[int | None]:
    """Per block of ``indices`` (linear block numbers), the outermost loop of
    :func:`ptx_loops` in which it issued the most instructions when emulated alone until one
    of its loops has run twice (or for ``seconds`` of ``clock``, by default a new
    :class:`~.work.WorkClock`), or None (no loop, or the block failed)."""
    clock = clock or WorkClock()
    dec = function.kernel.dec
    loops = ptx_loops(dec)
    starts = [blk.start for blk in dec.blocks]
    inside = [next((k for k, (f, e) in enumerate(loops) if f <= first < e), None)
              for first in starts]
    out = []
    for index in indices:
        counter = InstructionCounter()
        clock.watch(counter)
        stop_at = clock() + seconds

        def looped(fr, counter=counter, stop_at=stop_at) -> bool:  # go on until a loop ran
            if clock() > stop_at or any(
                    counter.visits.get(id(blk), 0) >= 2
                    for blk, k in zip(dec.blocks, inside, strict=True) if k is not None):
                return False
            fr.b.deadline = clock() + LOOK
            return True

        try:
            function(*args, grid=grid, block=block, shared=shared, counter=counter,
                     racecheck=False, blocks=[(index, 1)], timeout=LOOK, on_timeout=looped,
                     clock=clock)
        except KernelTimeout:
            pass
        except CudakitError:
            out.append(None)
            continue
        shares = loop_shares(dec, counter)
        best = int(np.argmax(shares)) if loops else 0
        out.append(best if loops and shares[best] > 0 else None)
    return out


def loop_sizes(function, sass_instructions: int) -> list[float]:
    """The bytes of the kernel's outermost loops (:func:`ptx_loops`): their PTX instructions
    at 16 x ``sass_instructions`` bytes per PTX instruction of the kernel."""
    dec = function.kernel.dec
    per_ptx = 16.0 * sass_instructions / max(len(dec.fn.body), 1)
    return [(e - f) * per_ptx for f, e in ptx_loops(dec)]


def pairs_to_probe(sizes: list[float], d, grid) -> list[tuple[int, int]]:
    """The pairs of blocks (linear numbers) that share a TPC and whose loops are worth
    finding (:func:`paired_fetch`), in the order to probe them: for a launch of no more
    blocks than SMs, the first ``tpc_paired_blocks`` two by two and, when there are more
    blocks than TPCs, every later pair that holds a block of the grid's last column or last
    row (where tiled kernels take their edge loops). None when no two of the kernel's loops
    could overflow the cache together, or the device lacks the figures."""
    paired = int(d.figures.get("tpc_paired_blocks", 0))
    curve = d.figures.get("fetch_paired_curve")
    gx, gy, gz = grid
    blocks = gx * gy * gz
    if not paired or not curve or not 2 <= blocks <= d.sm_count or len(sizes) < 2 or \
            sum(sorted(sizes)[-2:]) < curve[0][0]:
        return []
    first = min(paired, blocks) // 2 * 2
    pairs = [(k, k + 1) for k in range(0, first, 2)]
    if blocks > d.sm_count // 2:
        def edge(k: int) -> bool:  # on the last column or row of a grid of more than one
            return gx > 1 and k % gx == gx - 1 or gy > 1 and k // gx % gy == gy - 1
        pairs += [(k, k + 1) for k in range(first, blocks - 1, 2) if edge(k) or edge(k + 1)]
    return pairs


def loop_shares(dec, counter: InstructionCounter) -> list[float]:
    """Per outermost loop of :func:`ptx_loops`, the part of the warp instructions
    ``counter`` counted (every basic block's size times the warps that ran it) that its basic
    blocks issued."""
    loops = ptx_loops(dec)
    issued = [0.0] * len(loops)
    total = 0.0
    for blk in dec.blocks:
        n = counter.warp_visits.get(id(blk), 0) * float(blk.classes.sum())
        total += n
        k = next((k for k, (f, e) in enumerate(loops) if f <= blk.start < e), None)
        if k is not None:
            issued[k] += n
    return [n / total if total else 0.0 for n in issued]


def spread_fetch(sizes: list[float], shares: list[float], d, blocks_per_tpc: int,
                 waves: float) -> float:
    """Cycles per instruction that a warp waits for its fetches on top of its dependencies,
    in a launch of ``waves`` waves. The blocks of the first wave start together and run the
    same loop (that case is :func:`fetch_cycles` of the largest, and the warp waits for
    fetches or dependencies, whichever is longer); those of later waves start as others
    end, wherever the TPC's other blocks have got to, so its ``blocks_per_tpc`` blocks run
    loop k (of ``sizes`` bytes) with ``shares[k]`` of the time each, and the cache must hold
    on average ``sum(size_k * (1 - (1 - share_k) ** blocks_per_tpc))`` bytes. Warps spread
    over more code than the cache holds wait for each fetch beyond its one cycle *and* for
    their dependencies: on the H200, a chain of dependent FFMAs took 4.7 cycles each in
    8 kB of code, and 6.0 and 6.1 in 48 and 128 kB when the block's warps entered it at
    different points (5.0 and 5.4 when together), where the in-phase curve gives 2.4 cycles
    an instruction: 1.3 beyond its 1.1 (``benchmarks/fetch_probe.py --phases``). That excess
    over the curve's first point, over the waves after the first.

    >>> from types import SimpleNamespace as NS
    >>> d = NS(figures={"fetch_alone_curve": ((32768.0, 40960.0), (1.1, 2.4))})
    >>> round(spread_fetch([18e3, 18e3], [0.5, 0.5], d, blocks_per_tpc=6, waves=10), 3)
    0.381
    """
    curve = d.figures.get("fetch_alone_curve")
    if not sizes or not curve or waves <= 1:
        return 0.0
    together = sum(size * (1 - (1 - share) ** blocks_per_tpc)
                   for size, share in zip(sizes, shares, strict=True))
    excess = max(fetch_cycles(together, d) - curve[1][0], 0.0)
    return (1 - 1 / waves) * excess


def paired_fetch(function, args, grid, block, shared: int, d, sizes: list[float],
                 pairs: list[tuple[int, int]], seconds: float = 0.4) -> float:
    """Cycles per instruction a warp of the slowest TPC needs to fetch its loop, when the
    blocks of ``pairs`` (:func:`pairs_to_probe`) share TPCs and two of them run different
    loops (``sizes``, :func:`loop_sizes`) too large together for the instruction cache; 0
    when none do. Emulates the start of each block of the pairs in order, until it has run a
    loop twice (:func:`main_loops`), until one pair differs: always the first
    ``tpc_paired_blocks``, the later ones while ``seconds`` of emulation (:mod:`.work`) have
    not passed. Run it after the sample, whose
    counts the blocks' writes would disturb. (One such TPC is enough: in a launch of one
    wave the slowest block decides.)"""
    clock, found = WorkClock(), {}
    always = int(d.figures.get("tpc_paired_blocks", 0))
    for a, b in pairs:
        if b >= always and clock() > seconds:
            break
        for k in (a, b):
            if k not in found:
                found[k] = main_loops(function, args, grid, block, shared, [k], clock=clock)[0]
        if found[a] is not None and found[b] is not None and found[a] != found[b]:
            return fetch_cycles(sizes[found[a]] + sizes[found[b]], d, paired=True)
    return 0.0
