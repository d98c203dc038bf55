"""Run a sample of a launch's blocks on the emulator, with the trace and the instruction
counter on.

A full-size launch (a 2^26-element reduction, a 4096^3 SGEMM) is far too long to emulate in
full, and its blocks mostly do the same work, so the model emulates runs of consecutive
blocks, one in each of as many equal parts of the grid (so that each stands for as many
blocks as the others), and scales what they did by total / sampled blocks. Runs of
neighbours, rather than single blocks, keep the sharing between neighbouring blocks (halos,
tiles of one row) that the cache model needs. Sampling stops at a thread budget or a time
budget, whichever comes first (time counted by the emulator's work, :mod:`.work`, so that a
busy machine samples what an idle one does): no further launch of runs starts when one as
long as the longest so far would end past the time budget (a batch whose blocks take
different paths, as an SGEMM's interior and edge blocks, costs the emulator each path
apart), and the sample's memory trace is kept within a budget of warp accesses, which the
cache model goes through several times. A grid within the thread budget runs in full.
Where the runs' work per block differs from place to place (a Mandelbrot image), the runs
stop at half the time budget and the rest goes to single blocks, one in each of as many
equal parts of the grid, run without a trace, whose instructions then stand for the grid's.

A block that takes longer than the time budget on its own (a 4096^3 SGEMM block) is stopped
there and extrapolated from the fraction of its loops it completed (:mod:`.progress`). When
another loop follows the one it is in (a thread making three passes over a long row), that
loop is cut short at a quarter of the budget instead and the block runs on, each later loop
cut at the same part of its iterations, so that every pass is counted at one scale. A block
whose loops do not tell how far they got (a ``while`` on a value that is not a counter) runs
on a little longer, then stops: what it did is then a lower bound, and the prediction says so.

Hand-written: sampling a GPU launch by blocks is specific to this emulator.

>>> plan_runs(100, 10, runs=4)
[(9, 10), (53, 10), (37, 10), (82, 10)]
>>> plan_runs(5, 10)
[(0, 5)]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis import counting
from ..emu.counts import InstructionCounter
from ..emu.trace import Trace, joined
from ..errors import CudakitError, KernelTimeout
from .progress import fraction_done, issued, loop_done, loop_start, point, skip_loop
from .work import WorkClock

THREADS = 32768  # threads emulated at most
#: the sample's memory trace: warp accesses (rows) and the 32-byte sectors they touch (a
#: warp's coalesced float load touches 4, a scattered one 32, a broadcast one 1), at most;
#: the cache model's passes go through both and take about as long as the emulation did (a
#: grid-stride loop's blocks trace thousands of accesses each)
ROWS = 1 << 18
SECTORS = 1 << 20
SECONDS = 2.0  # emulation time that no further launch of runs may pass (as far as known)
RUNS = 8  # runs of consecutive blocks spread over the grid
#: single blocks spread over the grid whose instructions stand for the grid's, as many as the
#: time budget allows, at least the first and at most the second: a run and its neighbours
#: are one place in the grid, and eight places are too few where the blocks' work differs (a
#: Mandelbrot image's, whose blocks' work has a coefficient of variation of 2: its eight
#: runs did 0.62 of its mean work; 64, 128 and 256 single blocks 0.73, 0.99 and 0.95)
SPREAD = (64, 256)
#: the spread blocks run only where the runs' work per block differs by more than this
#: factor from place to place (a stencil's corner block does a few percent less than the
#: rest: no reason to spend time on them); the runs then take up to ``RUNS_SHARE`` of the
#: time budget, and the single blocks what the runs leave of it
UNEVEN = 1.25
RUNS_SHARE = 0.5
CHEAP = 1024  # lanes: an emulated batch this wide costs about as much as one warp
PROBE_TIMEOUT = 30.0  # counted seconds a launch of the sample's runs may take (planned: less)
CUTS = 8  # loops a long block may have cut short
#: time budgets a block whose loops are cut may take in all: past them its running loop is
#: cut where it is (lab 06's rows_block, whose lanes run rows of different lengths, waited
#: up to 8 budgets, 17.6 s, for its loops to reach the part of the first one cut)
CUT_BUDGETS = 1.6


class _LoopCutter:
    """The emulator's ``on_timeout``: cuts a long block's running loop short while a later
    loop follows (:func:`~.progress.skip_loop`), every loop at the part of its iterations
    the first had done when it was cut, so that one scale (:attr:`Sample.done`) fits them
    all; the block may take up to ``CUT_BUDGETS`` budgets in all (then a loop is cut where it
    is)."""

    CHECK = 0.05  # seconds between looks at a running loop's progress
    GLANCE = 0.002  # the shortest

    def __init__(self, counter, seconds: float, clock: WorkClock):
        self.counter, self.clock = counter, clock
        self.limit = clock() + CUT_BUDGETS * seconds
        self.skipped, self.cuts, self.functions = 0.0, 0, {}
        self.part: float | None = None  # of its iterations each loop runs before its cut
        self.last: tuple[float, float] | None = None  # time and progress at the last look

    def __call__(self, fr) -> bool:
        done = loop_done(fr, self.counter)
        if done is None or self.cuts >= CUTS:
            return False
        now = self.clock()
        if self.part is not None and done < self.part and now < self.limit:
            # look again about when the loop reaches the part (at its pace since the last
            # look), so that it does not run far past it
            last, self.last = self.last, (now, done)
            pace = (done - last[1]) / (now - last[0]) if last and done > last[1] else 0.0
            wait = (self.part - done) / pace if pace > 0 else self.CHECK
            fr.b.deadline = now + min(max(wait, self.GLANCE), self.CHECK)
            return True
        self.last = None
        return self.cut(fr, done)

    def cut(self, fr, done: float | None = None) -> bool:
        """Cut the running loop short now if a later loop follows it; False, touching
        nothing, if none does."""
        done = loop_done(fr, self.counter) if done is None else done
        work = skip_loop(fr, self.counter) if done is not None else None
        if work is None:
            return False
        self.part = done if self.part is None else self.part
        self.skipped += work
        self.cuts += 1
        self.functions[id(fr.dec)] = fr.dec
        fr.b.deadline = self.clock() + self.GLANCE  # soon: the next loop's pace
        return True

    def done(self) -> float:
        """The part of the block's work that ran: what was issued against that and what
        the cut loops would have issued."""
        so_far = sum(issued(dec, self.counter) for dec in self.functions.values())
        return so_far / (so_far + self.skipped)


class _Budget:
    """The probe block's ``on_timeout``, looked at every ``CHECK`` seconds. The block runs
    on while it is within the time budget and its trace within ``ROWS`` and ``SECTORS``; a
    loop that another loop follows is cut at an ``EARLY`` part of both (the later loops
    take as long again, each). Past the budgets, ``then`` decides (the
    :class:`_LoopCutter`, or None), else the block stops where its loops tell how far it
    got; one whose loops do not tell runs on for up to ``UNREAD`` times the budget, and
    stops there unfinished (:attr:`Sample.finished`). Each look waits for the next start of
    an iteration of the running loop (:meth:`_settling`)."""

    CHECK = 0.05
    EARLY = 0.25
    UNREAD = 1.6

    def __init__(self, trace: Trace, counter, seconds: float, clock: WorkClock, then=None):
        self.trace, self.counter, self.seconds, self.then = trace, counter, seconds, then
        self.clock, self.start = clock, clock()
        self.over = False
        self.sectors = _Sectors(trace)
        self.points: list = []  # where the block was at each look (progress.point)
        self.settling: tuple[int, float] | None = None  # (loop start, until) while running on

    def __call__(self, fr) -> bool:
        if self._settling(fr):
            fr.b.deadline = -1.0  # look again at the next basic block
            return True
        elapsed = self.clock() - self.start
        if (here := point(fr, self.counter)) is not None:
            self.points.append(here)
        cutting = self.then is not None and self.then.part is not None
        if not cutting and not self.over:
            used = max(elapsed / self.seconds, self.sectors.used())
            if used < 1:
                if used >= self.EARLY and self.then is not None and self.then.cut(fr):
                    return True
                fr.b.deadline = self.clock() + self.CHECK
                return True
            self.over = True
        if self.then is not None and self.then(fr):  # the later loops, each cut at the part
            return True
        skipped = self.then.skipped if self.then is not None else 0.0
        if fraction_done(fr, self.counter, skipped) is not None or \
                elapsed >= self.UNREAD * self.seconds:
            return False
        fr.b.deadline = self.clock() + self.CHECK
        return True

    def _settling(self, fr) -> bool:
        """Whether to run on to the next start of an iteration of the block's outermost
        running loop before looking (for up to ``CHECK`` more seconds): the looks' points
        and the stop then see whole iterations. Looked at in the middle of one, that
        iteration's part would count as done and its whole again among those left (a
        128-iteration loop of 8192 FFMAs stopped in its tenth came out 8 % long), and the
        points, taken at different places in their iterations, would show a trend that is
        not there."""
        if self.settling is None:
            start = loop_start(fr, self.counter)
            if start is None or fr.at == start:
                return False
            self.settling = (start, self.clock() + self.CHECK)
            return True
        start, until = self.settling
        if fr.at != start and self.clock() < until:
            return True
        self.settling = None
        return False


class _Sectors:
    """The warp accesses of a trace and the sectors they touch so far, counted as the
    trace grows."""

    def __init__(self, trace: Trace):
        self.trace, self.seen, self.rows, self.sectors = trace, 0, 0, 0

    def used(self) -> float:
        """The part of the trace budget (``ROWS`` and ``SECTORS``) used so far."""
        accesses = self.trace.accesses
        kinds: dict[int, list] = {}  # the new batches by access size, each size in one count
        for a in accesses[self.seen:]:
            kinds.setdefault(a.size, []).append(a)
        for batches in kinds.values():
            self.sectors += int(counting.sectors(joined(batches)).sum())
            self.rows += sum(a.warps for a in batches)
        self.seen = len(accesses)
        return max(self.rows / ROWS, self.sectors / SECTORS)


def plan_runs(nblocks: int, per_run: int, runs: int = RUNS) -> list[tuple[int, int]]:
    """Up to ``runs`` runs of ``per_run`` consecutive blocks, one in each of as many equal
    parts of the grid, in an order whose every prefix spreads over the grid (the parts'
    bit-reversed order: the first half of the runs lands in every other part).

    Each run stands for as many blocks as the others, so that total / sampled blocks scales
    the sample without bias: an edge row of the grid (a stencil's last row, which writes half
    as much) weighs in the sample what it weighs in the grid. (Runs at the first and the
    last block, then by halving, gave lab 21's ``heat2d_vec4`` its last row as a sixteenth of
    the sample where it is a 2048th of the grid: 3 % of its stores missing.) Within its part
    each run starts at the golden ratio's next multiple of the part's length: the middles of
    the parts of a power-of-two grid fall on the starts of its rows and planes (the left edge
    of an image, a 3-D stencil's boundary planes), these spread over the rows and columns.

    >>> plan_runs(100, 10, runs=4)
    [(9, 10), (53, 10), (37, 10), (82, 10)]
    """
    if nblocks <= per_run * 2:
        return [(0, nblocks)]
    count = max(1, min(runs, nblocks // per_run))
    part = nblocks / count
    bits = max(count - 1, 1).bit_length()
    order = [k for k in sorted(range(1 << bits), key=lambda k: _reversed(k, bits)) if k < count]
    return [(min(int(k * part + ((i + 1) * GOLDEN) % 1.0 * (part - per_run)), nblocks - per_run),
             per_run) for i, k in enumerate(order)]


def _reversed(k: int, bits: int) -> int:
    """``k``'s lowest ``bits`` bits in reverse order (0b001 -> 0b100 for 3 bits)."""
    return int(format(k, f"0{bits}b")[::-1], 2)


#: the golden ratio's fractional part: its multiples spread evenly over [0, 1)
GOLDEN = (5 ** 0.5 - 1) / 2


@dataclass
class Sample:
    """What the emulated blocks did."""

    trace: Trace
    counter: InstructionCounter
    runs: list[tuple[int, int]]
    total_blocks: int
    seconds: float  # of emulation, by the work clock
    done: float = 1.0  # the part of its work the sample did (less: a block stopped early)
    #: False: a block stopped unfinished, and no loop told how far it had got (a lower bound)
    finished: bool = True
    # runs that belong together for the cache model: a run and the same blocks one row of
    # the grid further (its neighbours in y) and, in a 3-D grid, one plane further (in z),
    # first the run itself
    groups: list[list[tuple[int, int]]] | None = None
    #: the instructions of single blocks spread over the grid (``SPREAD``), if they ran
    spread: InstructionCounter | None = None
    spread_blocks: int = 0

    @property
    def sampled_blocks(self) -> int:
        return sum(n for _, n in self.runs)

    @property
    def instructions(self) -> tuple[InstructionCounter, float]:
        """The counter whose instructions stand for the grid's, and its factor to the
        launch: the spread blocks' where they ran (the runs' are a few places in the grid),
        else the runs' (with :attr:`scale`)."""
        if self.spread is not None:
            return self.spread, self.total_blocks / self.spread_blocks
        return self.counter, self.scale

    @property
    def scale(self) -> float:
        """The factor from the sample's counts to the launch's: total over sampled blocks,
        over the part of their work done."""
        return self.total_blocks / self.sampled_blocks / self.done


def _merged(runs) -> list[tuple[int, int]]:
    """Sorted runs, neighbours joined."""
    out: list[list[int]] = []
    for first, count in sorted(runs):
        if out and out[-1][0] + out[-1][1] == first:
            out[-1][1] += count
        else:
            out.append([first, count])
    return [(f, c) for f, c in out]


def run_sample(function, args, grid, block, shared: int, threads: int = THREADS,
               seconds: float = SECONDS, wave: int = 0) -> Sample:
    """Emulate a sample of ``function``'s blocks (an emulator function) with its arguments.

    The block :func:`first_block` names runs alone first and is timed; the sample
    then takes as many more blocks as the thread budget and the time left allow (a batch of
    blocks costs about as much as one block until some thousands of lanes), spread over the
    grid, in one launch. ``wave``: the blocks resident on the GPU at once; where they span a
    plane of a 3-D grid, each run comes with its neighbours in z as well as in y (for the
    cache model).
    """
    nblocks = grid[0] * grid[1] * grid[2]
    tpb = block[0] * block[1] * block[2]
    pad = -(-tpb // 32) * 32
    budget = max(1, threads // pad)

    def emulate(runs, timeout=PROBE_TIMEOUT, on_timeout=None):
        function(*args, grid=grid, block=block, shared=shared, trace=trace, counter=counter,
                 racecheck=False, blocks=runs, timeout=timeout, on_timeout=on_timeout,
                 clock=clock)

    clock = WorkClock()
    first = nblocks if nblocks <= budget and nblocks * pad <= CHEAP else 1
    head = 0 if first == nblocks else first_block(grid)
    for cutting in (True, False):  # without cuts if a cut loop led the block astray
        trace, counter = Trace(), InstructionCounter()
        clock.watch(counter, trace)
        cutter = _LoopCutter(counter, seconds if cutting else 0.0, clock)
        watch = _Budget(trace, counter, seconds, clock, cutter if cutting else None)
        try:
            emulate([(head, first)], timeout=watch.CHECK, on_timeout=watch)
        except KernelTimeout as stop:  # a long block: extrapolate from how far its loops got
            frame = getattr(stop, "frame", None)
            done = fraction_done(frame, counter, cutter.skipped, watch.points) \
                if frame is not None else None
            if done is not None and 0 < done < 1:
                return Sample(trace, counter, [(head, first)], nblocks, clock(), done)
            # nothing tells how far it got: what ran is a lower bound
            return Sample(trace, counter, [(head, first)], nblocks, clock(),
                          cutter.done() if cutter.cuts else 1.0, finished=False)
        except CudakitError:
            if not cutter.cuts:
                raise
            continue
        if cutter.cuts:  # it ran to its end, with loops cut short
            return Sample(trace, counter, [(head, first)], nblocks, clock(), cutter.done())
        break
    if first == nblocks:
        return Sample(trace, counter, [(0, nblocks)], nblocks, clock())
    probe = clock()
    affordable = int((seconds - probe) / max(probe, 1e-6) * max(1.0, CHEAP / pad))
    traced = watch.sectors.used() / first  # per block, of the trace budget
    more = max(0, min(affordable, budget - 1, nblocks - 1,
                      int(1 / traced) - 1 if traced else nblocks))
    groups: list[list[tuple[int, int]]] = []
    if more >= nblocks - 1:
        groups = [[run] for run in excluding([(0, nblocks)], head)]
    elif more:
        row = grid[0] if nblocks > grid[0] else 0  # blocks of one grid row, if there are more
        plane = grid[0] * grid[1] if grid[2] > 1 and wave >= grid[0] * grid[1] else 0
        group = 1 + bool(row) + bool(plane)  # each run with its neighbours in y and z
        per_run = max(1, more // RUNS // group)  # (the first block ran already)
        if plane:  # runs within a row, so that each has its neighbours in y as well as in z
            per_run = min(per_run, row)
        runs = plan_runs(nblocks, per_run, runs=max(1, more // (per_run * group)))
        runs = excluding(runs, head)
        taken = [(head, 1), *runs]
        for f, c in runs:
            if c <= 0:
                continue
            extra = [(g, n) for g, n in beside(f, c, row, plane, nblocks)
                     if all(g + n <= t or t + m <= g for t, m in taken)]
            taken += extra
            groups.append([(f, c), *extra])
    ran, together, longest, until = [], [[(head, 1)]], probe, seconds
    work = [counter.ops]  # per block: the first block's, then each launch's of runs
    for k in range(0, len(groups), 2):  # two groups per launch, while one more fits the time
        if ran and clock() + longest > until:
            break
        launch = [run for group in groups[k:k + 2] for run in group]
        began, before = clock(), counter.ops
        emulate(launch)
        longest = max(longest, clock() - began)
        work.append((counter.ops - before) / sum(c for _, c in launch))
        if uneven(work):  # the rest of the time to single blocks spread over the grid
            until = min(until, seconds * RUNS_SHARE)
        ran += launch
        together += groups[k:k + 2]
    done = _merged([(head, 1), *ran])
    spread, singles = None, 0
    if uneven(work):
        # a single block costs as the runs' did, or as the first's if a batch that wide is
        # not cheaper (and, to be safe, the launch stops at the end of the budget)
        each = max(probe * pad / CHEAP, (clock() - probe) / max(sum(c for _, c in ran), 1))
        spread, singles = _spread_counts(function, args, grid, block, shared,
                                         done if rereads_writes(trace) else [], clock,
                                         seconds - clock(), each)
    return Sample(trace, counter, done, nblocks, clock(), groups=together, spread=spread,
                  spread_blocks=singles)


def first_block(grid) -> int:
    """The linear index of the block the sample times first: in each dimension, the golden
    ratio's part of the way along the grid. Its work is the grid's typical work where block
    0's is not: a stencil's corner block does less. Nor is it the centre: the centre of a
    grid of 2^k blocks is block 2^(k-1), whose threads' indices have one high bit set, and
    a thread whose work follows its index's digits (cuRAND's ``curand_init(seed, id, 0,
    &s)`` skips ahead through tables per nonzero digit of ``id``) then does far less than the
    average: a Monte Carlo kernel drawing with XORWOW, whose one block fills the sample's
    trace, read 63 k loads a block at the centre, 51 k at block 0 and 121 k at the golden
    point, where eight blocks over the grid averaged 103 k and the H200 118 k (session 31).

    >>> first_block((4096, 1, 1)), first_block((8, 4, 1)), first_block((1, 1, 1))
    (2531, 20, 0)
    """
    gx, gy, gz = grid
    return (int(gz * GOLDEN) * gy + int(gy * GOLDEN)) * gx + int(gx * GOLDEN)


def excluding(runs: list[tuple[int, int]], block: int) -> list[tuple[int, int]]:
    """``runs`` without ``block`` (a run across it is split in two), empty runs dropped.

    >>> excluding([(0, 4), (6, 2)], 2), excluding([(0, 1), (3, 2)], 0)
    ([(0, 2), (3, 1), (6, 2)], [(3, 2)])
    """
    out = []
    for first, count in runs:
        if first <= block < first + count:
            out += [(first, block - first), (block + 1, first + count - block - 1)]
        else:
            out.append((first, count))
    return [(first, count) for first, count in out if count > 0]


def uneven(work: list[float]) -> bool:
    """Whether the blocks' work (warp instructions per block, of the first block and of
    each launch of runs) differs by more than ``UNEVEN`` between places in the grid.

    >>> uneven([100, 104, 98]), uneven([40, 100, 180])
    (False, True)
    """
    return min(work) * UNEVEN < max(work) if len(work) > 1 else False


def rereads_writes(trace: Trace) -> bool:
    """Whether a global sector the traced blocks stored is one they, or others, load: a
    block run again could then read what it wrote (an in-place update)."""
    stored, loaded = [], []
    for a in trace.accesses:
        if a.space == "global":
            sectors = np.unique(a.address[a.mask] // 32)
            (stored if a.op != "ld" else loaded).append(sectors)
            if a.op == "atom":
                loaded.append(sectors)
    if not stored or not loaded:
        return False
    return bool(np.intersect1d(np.concatenate(stored), np.concatenate(loaded)).size)


def _spread_counts(function, args, grid, block, shared: int, done, clock, left: float,
                   each: float) -> tuple[InstructionCounter | None, int]:
    """Emulate single blocks, one in each of as many equal parts of the grid as ``left``
    seconds of the time budget allow at ``each`` a block (``SPREAD``), in one launch,
    without a trace; their counter and number, or (None, 0) if fewer than ``SPREAD[0]`` fit,
    the grid has too few blocks besides, or the launch runs past ``left``. None of them is
    a block of ``done`` (given where a block run again would read what it wrote: a part
    that runs cover then has no single block, which weighs them less)."""
    nblocks = grid[0] * grid[1] * grid[2]
    parts = min(SPREAD[1], int(left / each) if each > 0 else SPREAD[1])
    if parts < SPREAD[0] or nblocks < 2 * parts:
        return None, 0
    taken = {b for first, count in done for b in range(first, first + count)}
    singles = []
    for first, _ in plan_runs(nblocks, 1, runs=parts):
        free = next((b for b in range(first, min(first + nblocks // parts, nblocks))
                     if b not in taken), None)
        if free is not None:
            singles.append((free, 1))
            taken.add(free)
    if len(singles) < SPREAD[0]:
        return None, 0
    counter = InstructionCounter()
    clock.watch(counter)
    try:
        function(*args, grid=grid, block=block, shared=shared, counter=counter,
                 racecheck=False, blocks=sorted(singles), timeout=left, clock=clock)
    except KernelTimeout:  # slower than the runs told: the runs' counts stand
        return None, 0
    return counter, len(singles)


def beside(first: int, count: int, row: int, plane: int, nblocks: int) -> list[tuple[int, int]]:
    """The runs of the same blocks one grid row further and one plane further (``row``,
    ``plane``: their blocks; 0: the grid has only one), each after ``(first, count)`` or, at
    the grid's end, before it; none that would hold its own blocks.

    >>> beside(0, 4, 64, 0, 256), beside(250, 4, 64, 0, 256), beside(0, 4, 0, 0, 256)
    ([(64, 4)], [(186, 4)], [])
    >>> beside(8, 2, 4, 32, 128)  # in y and in z
    [(12, 2), (40, 2)]
    """
    out = []
    for step in (row, plane):
        if step and count <= step:
            start = first + step if first + step + count <= nblocks else first - step
            if start >= 0:
                out.append((start, count))
    return out
