"""Run a sample of a launch's blocks on the emulator, with the trace and the instruction
counter on.

A full-size launch (a 2^26-element reduction, a 4096^3 SGEMM) is far too long to emulate in
full, and its blocks mostly do the same work, so the model emulates runs of consecutive
blocks spread over the grid (the first and the last, then the middle, the quarters, ...)
and scales what they did by total / sampled blocks. Runs of neighbours, rather than single
blocks, keep the sharing between neighbouring blocks (halos, tiles of one row) that the
cache model needs. Sampling stops at a thread budget or a time budget, whichever comes
first; a grid within the thread budget runs in full.

Hand-written: sampling a GPU launch by blocks is specific to this emulator.

>>> plan_runs(100, 10, runs=4)
[(0, 10), (90, 10), (40, 10), (20, 10)]
>>> plan_runs(5, 10)
[(0, 5)]
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..emu.counts import InstructionCounter
from ..emu.trace import Trace

THREADS = 32768  # threads emulated at most
SECONDS = 2.5  # emulation time after which no further run starts
RUNS = 8  # runs of consecutive blocks spread over the grid


def plan_runs(nblocks: int, per_run: int, runs: int = RUNS) -> list[tuple[int, int]]:
    """Up to ``runs`` runs of ``per_run`` consecutive blocks: first, last, then by halving."""
    if nblocks <= per_run * 2:
        return [(0, nblocks)]
    slots = max(1, nblocks // per_run)
    order = [0, slots - 1]
    step = slots - 1
    while len(order) < min(runs, slots) and step > 1:
        order += [k for k in range(step // 2, slots, step) if k not in order]
        step //= 2
    order = list(dict.fromkeys(order))[:min(runs, slots)]
    return [(min(k * per_run, nblocks - per_run), per_run) for k in order]


@dataclass
class Sample:
    """What the emulated blocks did."""

    trace: Trace
    counter: InstructionCounter
    runs: list[tuple[int, int]]
    total_blocks: int
    seconds: float

    @property
    def sampled_blocks(self) -> int:
        return sum(n for _, n in self.runs)

    @property
    def scale(self) -> float:
        """Total over sampled blocks: the factor from the sample's counts to the launch's."""
        return self.total_blocks / self.sampled_blocks


def run_sample(function, args, grid, block, shared: int, threads: int = THREADS,
               seconds: float = SECONDS) -> Sample:
    """Emulate runs of ``function``'s blocks (an emulator function) with its arguments."""
    nblocks = grid[0] * grid[1] * grid[2]
    tpb = block[0] * block[1] * block[2]
    pad = -(-tpb // 32) * 32
    budget = max(1, threads // pad)
    per_run = max(1, budget // RUNS) if nblocks > budget else nblocks
    trace, counter = Trace(), InstructionCounter()
    done = []
    start = time.perf_counter()
    for run in plan_runs(nblocks, per_run):
        if done and time.perf_counter() - start > seconds:
            break
        function(*args, grid=grid, block=block, shared=shared, trace=trace, counter=counter,
                 racecheck=False, blocks=[run])
        done.append(run)
    return Sample(trace, counter, done, nblocks, time.perf_counter() - start)
