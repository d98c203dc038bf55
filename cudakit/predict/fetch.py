"""How fast the SMs fetch a launch's instructions: loops larger than the instruction cache,
and the two SMs of one TPC running different loops.

The two SMs of a TPC share an instruction cache. On the H100's SMs it holds 32 kB of code
(``benchmarks/fetch_probe.py``): a loop of independent FFMAs ran at 1.04 cycles per
instruction up to 32 kB, and from 40 kB on at 2.4 (the other SM running the same loop or
nothing). Two SMs running two different loops share the capacity: 17.5 kB each ran at 1.9
cycles, 20 kB each at 3.9. A warp waits for its fetches as for its dependencies,
whichever is longer (a chain of dependent FFMAs, 4 cycles each, was not slowed). The model
takes these as measured curves (``fetch_alone_curve``, ``fetch_paired_curve``).

Which blocks share a TPC: a launch of no more blocks than SMs puts its first
``tpc_paired_blocks`` (8 on the H100) two to a TPC, in order, and the rest one to a TPC
(``benchmarks/sgemm_blocks.py``, four grids on the H100 and an H200). So in lab 12's
``sgemm_async`` at 1000^3 blocks 6 and 7 share a TPC, one running the interior loop and the
other the edge loop (18 kB each): they took 316 k cycles where the others took 201-226 k,
and the launch takes as long as they do. Which loop a block runs is found by emulating the
start of each of those blocks (:func:`main_loops`); a loop's bytes are its PTX instructions
at the kernel's SASS bytes per PTX instruction (the PTX loops of ``sgemm_async`` are 2-3 %
longer than its SASS ones, and come in another order).

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

PROBE_SECONDS = 0.05  # emulation per block while finding the loop it runs


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
               seconds: float = PROBE_SECONDS) -> list[int | None]:
    """Per block of ``indices`` (linear block numbers), the outermost loop of
    :func:`ptx_loops` in which it issued the most instructions in its first ``seconds`` of
    emulation alone, or None (no loop, or the block failed)."""
    dec = function.kernel.dec
    loops = ptx_loops(dec)
    starts = [blk.start for blk in dec.blocks]
    out = []
    for index in indices:
        counter = InstructionCounter()
        try:
            function(*args, grid=grid, block=block, shared=shared, counter=counter,
                     racecheck=False, blocks=[(index, 1)], timeout=seconds,
                     on_timeout=lambda fr: False)
        except KernelTimeout:
            pass
        except CudakitError:
            out.append(None)
            continue
        issued = [0.0] * len(loops)
        for blk, first in zip(dec.blocks, starts, strict=True):
            runs = counter.visits.get(id(blk), 0)
            for k, (f, e) in enumerate(loops):
                if f <= first < e:
                    issued[k] += runs * float(blk.classes.sum())
        best = int(np.argmax(issued)) if loops else 0
        out.append(best if loops and issued[best] > 0 else None)
    return out


def loop_sizes(function, sass_instructions: int) -> list[float]:
    """The bytes of the kernel's outermost loops (:func:`ptx_loops`): their PTX instructions
    at 16 x ``sass_instructions`` bytes per PTX instruction of the kernel."""
    dec = function.kernel.dec
    per_ptx = 16.0 * sass_instructions / max(len(dec.fn.body), 1)
    return [(e - f) * per_ptx for f, e in ptx_loops(dec)]


def pairs_to_probe(sizes: list[float], d, blocks: int) -> list[int]:
    """The blocks whose loops decide whether two SMs of a TPC fetch two different loops
    (:func:`paired_fetch`): the first ``tpc_paired_blocks`` of a launch of no more blocks
    than SMs, an even number; none when no two of the kernel's loops could overflow the
    cache together (or the device lacks the figures)."""
    paired = int(d.figures.get("tpc_paired_blocks", 0))
    curve = d.figures.get("fetch_paired_curve")
    if not paired or not curve or not 2 <= blocks <= d.sm_count or len(sizes) < 2 or \
            sum(sorted(sizes)[-2:]) < curve[0][0]:
        return []
    return list(range(min(paired, blocks) // 2 * 2))


def paired_fetch(function, args, grid, block, shared: int, d, sizes: list[float],
                 indices: list[int], seconds: float = 8 * PROBE_SECONDS) -> float:
    """Cycles per instruction a warp of the slowest TPC needs to fetch its loop, when blocks
    ``indices`` (:func:`pairs_to_probe`) share TPCs two by two in order and two of them run
    different loops (``sizes``, :func:`loop_sizes`) too large together for the instruction
    cache; 0 when none do. Emulates the start of each of those blocks (``seconds`` in all):
    run it after the sample, whose counts the blocks' writes would disturb."""
    if not indices:
        return 0.0
    loops = main_loops(function, args, grid, block, shared, indices,
                       seconds=seconds / len(indices))
    worst = 0.0
    for a, b in zip(loops[::2], loops[1::2], strict=True):
        if a is not None and b is not None and a != b:
            worst = max(worst, fetch_cycles(sizes[a] + sizes[b], d, paired=True))
    return worst
