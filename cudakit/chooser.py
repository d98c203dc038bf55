"""Run each call on the CPU or the GPU, wherever a fitted cost model says it is faster.

The idea of the SPRAT runtime (course seed 003): time an operation's two implementations on a
few problem sizes, fit a model of time against size for each, and from then on send every
call to the one predicted faster. The model is the textbook's ``latency + size / bandwidth``
line (:func:`cudakit.timing.fit_latency_bandwidth`), fitted piecewise: one line per *regime*,
because a CPU streams from its caches far faster than from main memory, BLAS switches from
one thread to many, and pageable copies pay for pinning pages only above some size. A single
line over six decades of sizes is wrong at both ends (lab 07 shows by how much).

>>> model = Segments.fit([1e3, 1e4, 1e5, 1e6, 1e7], [0.01, 0.01, 0.02, 0.11, 1.01])
>>> len(model.lines), round(float(model(5e6)), 3)
(2, 0.51)
>>> pick = Chooser(cpu=lambda n: "cpu", gpu=lambda n: "gpu", size=lambda n: n,
...                cpu_ms=lambda s: s / 1e6, gpu_ms=lambda s: 0.1 + s / 1e7, sizes=(1e3, 1e9))
>>> pick(1e4), pick(1e8), round(pick.crossover / 1e3)
('cpu', 'gpu', 113)
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .timing import crossover, fit_latency_bandwidth


@dataclass(frozen=True)
class Segments:
    """Piecewise ``ms = latency + size / bandwidth``: ``lines[i]`` holds up to ``edges[i]``.

    ``lines`` are (latency ms, bandwidth GB/s) pairs, as :func:`fit_latency_bandwidth` returns
    them; ``size`` is whatever the caller measures work in (bytes, flop).
    """

    edges: tuple[float, ...]
    lines: tuple[tuple[float, float], ...]

    @classmethod
    def fit(cls, sizes: Sequence[float], ms: Sequence[float], max_segments: int = 3,
            tolerance: float = 0.05) -> Segments:
        """The fewest lines that fit every point within ``tolerance`` (relative); the best
        fit with ``max_segments`` lines otherwise.

        Neighbouring lines share the measured size where one ends and the next begins (each
        line is fitted on at least 2 sizes of its own plus that one), so every line is used
        only between sizes it was fitted on.
        """
        d, t = np.asarray(sizes, float), np.asarray(ms, float)
        if d.size < 2 or d.shape != t.shape or np.any(t <= 0) or np.any(d <= 0):
            raise ValueError("need at least two (size, time) pairs, all positive, of equal length")
        order = np.argsort(d)
        d, t = d[order], t[order]
        best = None
        for count in range(1, max_segments + 1):
            for cuts in itertools.combinations(range(2, d.size - 1), count - 1):
                bounds = (0, *cuts, d.size - 1)
                if any(b - a < 2 for a, b in itertools.pairwise(bounds)):
                    continue
                lines = tuple(fit_latency_bandwidth(d[a:b + 1], t[a:b + 1])
                              for a, b in itertools.pairwise(bounds))
                model = cls(tuple(float(d[c]) for c in cuts), lines)
                worst = float(np.max(np.abs(model(d) / t - 1)))
                if best is None or worst < best[0]:
                    best = (worst, model)
            if best is not None and best[0] <= tolerance:
                break
        return best[1]

    def __call__(self, size):
        """Predicted ms at ``size`` (a number or an array of them)."""
        s = np.asarray(size, float)
        which = np.searchsorted(self.edges, s, side="left")
        latency = np.array([line[0] for line in self.lines])[which]
        bandwidth = np.array([line[1] for line in self.lines])[which]
        return latency + s / (bandwidth * 1e6)


class Chooser:
    """Call ``cpu(*args)`` or ``gpu(*args)``, whichever ``cpu_ms``/``gpu_ms`` predict faster.

    ``size(*args)`` measures a call in the unit of the two models. The winner is worked out
    once, on 512 sizes spread evenly in log scale over ``sizes`` (low, high); a call then costs
    one ``size`` and a binary search. Sizes outside the range take the nearest end's winner.
    """

    def __init__(self, cpu: Callable, gpu: Callable, size: Callable[..., float],
                 cpu_ms: Callable[[float], float], gpu_ms: Callable[[float], float],
                 sizes: tuple[float, float]):
        low, high = sizes
        if not 0 < low < high:
            raise ValueError(f"sizes must be (low, high) with 0 < low < high, got {sizes}")
        self.cpu, self.gpu, self.size = cpu, gpu, size
        self.grid = np.geomspace(low, high, 512)
        self.cpu_ms = np.array([float(cpu_ms(s)) for s in self.grid])
        self.gpu_ms = np.array([float(gpu_ms(s)) for s in self.grid])
        gpu_wins = self.gpu_ms < self.cpu_ms
        self._first = bool(gpu_wins[0])
        flip = np.nonzero(gpu_wins[1:] != gpu_wins[:-1])[0]
        self._flips = [float(np.sqrt(self.grid[i] * self.grid[i + 1])) for i in flip]
        self._one = self._flips[0] if len(self._flips) == 1 else np.inf if not self._flips else None

    def side(self, size: float) -> str:
        """``"gpu"`` or ``"cpu"``: where a call of this size runs."""
        odd = bisect.bisect(self._flips, size) % 2
        return "gpu" if self._first != bool(odd) else "cpu"

    def where(self, *args) -> str:
        """``"gpu"`` or ``"cpu"``: where a call with these arguments would run."""
        return self.side(self.size(*args))

    def __call__(self, *args):
        if self._one is not None:                  # the usual case: one crossover (or none)
            return (self.gpu if (self.size(*args) >= self._one) ^ self._first else self.cpu)(*args)
        odd = bisect.bisect(self._flips, self.size(*args)) & 1
        return (self.gpu if self._first ^ odd else self.cpu)(*args)

    @property
    def crossover(self) -> float | None:
        """The predicted size from which the GPU stays faster (None if it never does)."""
        return crossover(self.grid, self.cpu_ms, self.gpu_ms)


def measured_crossover(sizes: Sequence[float], cpu_ms: Sequence[float],
                       gpu_ms: Sequence[float]) -> float | None:
    """Where measured times cross for good: the log-linear interpolation of ``gpu/cpu`` = 1
    between the last size where the CPU wins and the next one (None if the GPU never wins
    from some size on; the first size if it always wins).

    >>> round(measured_crossover([1, 2, 4, 8], [1, 2, 4, 8], [3, 3, 3, 3]), 6)
    3.0
    """
    first = crossover(sizes, cpu_ms, gpu_ms)
    if first is None:
        return None
    i = list(sizes).index(first)
    if i == 0:
        return float(first)
    r0 = np.log(gpu_ms[i - 1] / cpu_ms[i - 1])
    r1 = np.log(gpu_ms[i] / cpu_ms[i])
    x0, x1 = np.log(sizes[i - 1]), np.log(sizes[i])
    return float(np.exp(x0 + (x1 - x0) * r0 / (r0 - r1)))


def time_calls(impls: dict[str, Callable], make_args: Callable, params: Sequence,
               seconds: float = 0.3, most: int = 200, rounds: int = 6) -> dict[str, list[float]]:
    """Median host-clock ms of each ``impls[name](*make_args(p))`` for every ``p`` in params.

    The arguments are made once per ``p`` (not timed). Each implementation runs in short
    blocks of back-to-back calls, as repeated calls of a program would: one untimed call,
    then at least 2 timed ones, about ``seconds / 2`` of timed calls per implementation in
    all (at most ``most``). The blocks take turns, up to ``rounds`` times (fewer for calls so
    slow that a round would not fit), every other round in reverse order, so that a slow
    spell of the machine hits all implementations alike. Calls alternating one by one would
    time each right after the other, with the other's data in the caches; the untimed call at
    the head of a block takes that hit instead. Host clock: a call's result is on the host
    when it returns.

    >>> time_calls({"sum": sum}, lambda n: (range(n),), [10, 1000])["sum"][0] > 0
    True
    """
    import time

    times: dict[str, list[float]] = {name: [] for name in impls}
    clock = time.perf_counter
    names = list(impls)
    budget = seconds / 2
    for p in params:
        args = make_args(p)
        once = {}
        for name in names:
            t0 = clock()
            impls[name](*args)
            once[name] = max(clock() - t0, 1e-6)
        blocks = max(1, min(rounds, int(budget / (3 * max(once.values())))))
        samples: dict[str, list[float]] = {name: [] for name in impls}
        for r in range(blocks):
            for name in names if r % 2 == 0 else names[::-1]:
                fn = impls[name]
                fn(*args)  # untimed: the call before it was another implementation's
                calls = int(min(most / blocks, budget / blocks / once[name]))
                for _ in range(max(2, calls)):
                    t0 = clock()
                    fn(*args)
                    samples[name].append(clock() - t0)
        for name in impls:
            times[name].append(float(np.median(samples[name])) * 1e3)
        del args
    return times
