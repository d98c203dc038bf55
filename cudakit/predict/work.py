"""The clock of a prediction's sample: the emulator's work, in seconds of the machine the
budgets were set on, so that the same launch gets the same prediction on a busy machine and
an idle one.

The sample (:mod:`.sample`) stops its blocks at time budgets, and with a wall clock a
prediction depended on what else the machine did (lab 12's ``matmul_dbuf`` came out 47 %
slower beside another job). This clock counts what the emulator did instead: batches of
blocks started, basic blocks run, instructions run by group (each over all its active lanes
at once) and the lanes they went over, and memory accesses traced, each at a rate in
seconds fitted on the CI machine's kind by ``python -m benchmarks.work_clock`` (least
squares over the emulator launches of the labs' predictions). The rates misjudge a kernel
by up to about 2x (the emulator's gathers from a 256 MiB array miss the CPU's caches, which
no count shows): a budget then buys half or twice the emulation it should, always the same.
Should the emulator take far longer than its counts say (a kernel whose costs the rates
misjudge), the wall clock takes over at ``GUARD`` times the counted time, so that a
prediction still ends.

Hand-written: it reads this emulator's counters.

>>> from cudakit.emu.counts import InstructionCounter
>>> clock = WorkClock()
>>> clock.watch(InstructionCounter())
>>> clock() < 0.01
True
"""

from __future__ import annotations

import time

import numpy as np

from ..emu.counts import CLASSES

#: classes of :data:`~cudakit.emu.counts.CLASSES` whose instructions cost the emulator
#: about alike (memory instructions gather and scatter, and are traced)
GROUPS = {"alu": ("fp32", "fp64", "int", "imad", "cvt", "free", "branch"), "sfu": ("sfu",),
          "global": ("ld.global", "st.global", "atom.global", "ld.local", "st.local",
                     "ld.const"),
          "shared": ("ld.shared", "st.shared", "atom.shared"),
          "sync": ("barrier", "misc", "shfl", "mma.f16", "mma.tf32", "mma.f64", "mma.i8")}
#: seconds per count on the CI machine's kind (2 cores), from ``python -m
#: benchmarks.work_clock --calls benchmarks/fixtures/ci_work_clock_calls.json.gz``, the
#: labs' 1621 emulator launches of more than 10 ms (2026-11-29; counted over measured
#: seconds: median 1.00, 10th-90th percentile 0.62-1.36; the rates of 2026-11-28 counted
#: these launches 1.27 times too fast, median):
#: per batch of blocks started, per run of a basic block, per instruction of each group run
#: (over all its active lanes at once), per lane of any instruction, per memory access
#: traced and per warp in it
RATES = {"batches": 8.09e-3, "runs": 1.28e-5, "alu": 5.52e-6, "sfu": 0.0, "global": 3.11e-5,
         "shared": 7.45e-5, "sync": 2.37e-4, "lane_steps": 8.34e-10, "accesses": 0.0,
         "warp_accesses": 3.88e-7}
GUARD = 3.0  # the wall clock decides once it runs this many times ahead of the counts
#: the group of each class, and per class the rate of its group
_GROUP_OF = {c: g for g, classes in GROUPS.items() for c in classes}
_STEPS = np.array([RATES[_GROUP_OF[c]] for c in CLASSES])


def counts(counter, trace=None) -> dict[str, float]:
    """What the work clock reads of an :class:`~cudakit.emu.counts.InstructionCounter` and
    a trace, by the names of :data:`RATES`."""
    steps = dict.fromkeys(GROUPS, 0.0)
    for c, n in zip(CLASSES, counter.steps, strict=True):
        steps[_GROUP_OF[c]] += float(n)
    traced = (len(trace.accesses), trace.warps) if trace is not None else (0, 0)
    return {"batches": counter.batches, "runs": counter.runs, **steps,
            "lane_steps": counter.lane_steps, "accesses": traced[0], "warp_accesses": traced[1]}


def seconds(counter, trace=None) -> float:
    """The counted seconds of the work that ``counter`` (and ``trace``) saw: :func:`counts`
    times :data:`RATES`, without building the dict (the emulator reads the clock at every
    basic block it runs)."""
    out = float(counter.steps @ _STEPS) + RATES["batches"] * counter.batches + \
        RATES["runs"] * counter.runs + RATES["lane_steps"] * counter.lane_steps
    if trace is not None:
        out += RATES["accesses"] * len(trace.accesses) + RATES["warp_accesses"] * trace.warps
    return out


class WorkClock:
    """A clock for the emulator's ``clock=``: seconds of counted work since it was made,
    over the counters it watches (a sample that starts again with new counters keeps what
    the first ones counted)."""

    def __init__(self):
        self.sources: list[tuple[object, object]] = []
        self.started = time.perf_counter()

    def watch(self, counter, trace=None) -> None:
        """Count the work of ``counter`` and ``trace`` from now on, with what came before."""
        self.sources.append((counter, trace))

    def __call__(self) -> float:
        counted = sum(seconds(c, t) for c, t in self.sources)
        return max(counted, (time.perf_counter() - self.started) / GUARD)
