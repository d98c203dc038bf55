"""``Prediction``: the predicted time of a launch or a copy, why, and what was counted;
``Prediction.compare``: why one launch is faster than another, term by term and count by count.

>>> p = Prediction(0.25, "memory", "memory-bound: 512 MB ...", {"memory": 0.25}, {}, 1.0, 3.2,
...                "H100", "copy")
>>> print(p)
copy on H100: 0.250 ms predicted (memory-bound: 512 MB ...)
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field


@dataclass
class Prediction:
    """``ms`` predicted; ``bound`` the term that decides it; ``breakdown`` each term in ms;
    ``counts`` what the emulator counted (scaled to the whole launch); ``occupancy`` the
    resident warps over the SM's maximum; ``waves`` blocks over (SMs x resident blocks);
    ``lower_bound``: the launch takes at least ``ms`` (a sampled block did not finish)."""

    ms: float
    bound: str
    explanation: str
    breakdown: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    occupancy: float = 0.0
    waves: float = 0.0
    device: str = "H100"
    what: str = ""
    lower_bound: bool = False

    def __str__(self) -> str:
        least = "at least " if self.lower_bound else ""
        return (f"{self.what} on {self.device}: {least}{self.ms:.3f} ms predicted "
                f"({self.explanation})")

    def __repr__(self) -> str:
        lines = [str(self)]
        if self.waves:
            lines.append(f"  occupancy {self.occupancy:.0%}, {self.waves:.2f} waves")
        for name, ms in sorted(self.breakdown.items(), key=lambda kv: -kv[1]):
            if ms > 0:
                lines.append(f"  {name:<26} {ms:10.4f} ms")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(name)}</td><td style='text-align:right'>{ms:.4f}</td></tr>"
            for name, ms in sorted(self.breakdown.items(), key=lambda kv: -kv[1]) if ms > 0)
        head = html.escape(str(self))
        extra = (f"<br>occupancy {self.occupancy:.0%}, {self.waves:.2f} waves"
                 if self.waves else "")
        return (f"<div><b>{head}</b>{extra}<table><tr><th>term</th><th>ms</th></tr>{rows}"
                "</table></div>")

    def compare(self, other: Prediction, labels: tuple[str, str] | None = None) -> Difference:
        """What makes this launch faster or slower than ``other``: both times and bounds, the
        terms of the model side by side, and the counts behind them with their ratios.

        >>> a = Prediction(0.6, "latency", "latency-bound: ...", {"latency": 0.6},
        ...                {"issued_warp_instructions": 4e6}, what="reduce0")
        >>> b = Prediction(0.3, "memory", "memory-bound: ...", {"latency": 0.2, "memory": 0.3},
        ...                {"issued_warp_instructions": 1e6}, what="reduce2")
        >>> d = b.compare(a)
        >>> round(d.ratio, 2), d.counts["warp instructions issued"]
        (0.5, (1000000.0, 4000000.0))
        >>> print(d.summary.replace(". ", ".\\n"))
        reduce2 is predicted 2.00x faster than reduce0 (0.300 against 0.600 ms).
        reduce2 is memory-bound, reduce0 latency-bound.
        The largest change in what was counted: warp instructions issued, 0.25x.
        """
        return Difference(self, other, labels or (self.what.split("<<<")[0] or "this",
                                                  other.what.split("<<<")[0] or "other"))


#: counts a comparison shows: key in ``Prediction.counts`` (a tuple: their sum) -> name
COMPARED = {
    "issued_warp_instructions": "warp instructions issued",
    ("dram_read_bytes", "dram_write_bytes"): "DRAM bytes",
    ("l2_read_bytes", "l2_write_bytes"): "L2 bytes",
    "global_lines": "128-byte lines through L1",
    "shared_wavefronts": "shared-memory wavefronts",
    "memory_periods_per_warp": "memory waits per warp",
    "slowest_warp_periods": "memory waits of a block's slowest warp",
    "barriers_per_warp": "__syncthreads() per warp",
    "global_store_partial_sectors": "partly written sectors",
    "global_atomics": "atomics",
}


def _count(counts: dict, key) -> float | None:
    keys = key if isinstance(key, tuple) else (key,)
    if not all(k in counts for k in keys):
        return None
    return float(sum(counts[k] for k in keys))


@dataclass
class Difference:
    """Two predictions side by side (``Prediction.compare``): ``ratio`` is the first's time over
    the second's; ``terms`` and ``counts`` map a name to the pair of values."""

    first: Prediction
    second: Prediction
    labels: tuple[str, str]

    @property
    def ratio(self) -> float:
        return self.first.ms / self.second.ms if self.second.ms else float("inf")

    @property
    def terms(self) -> dict[str, tuple[float, float]]:
        """The model's terms (ms) that take at least 5 % of either time."""
        a, b = self.first.breakdown, self.second.breakdown
        return {k: (a.get(k, 0.0), b.get(k, 0.0)) for k in dict.fromkeys([*a, *b])
                if a.get(k, 0.0) >= 0.05 * self.first.ms or b.get(k, 0.0) >= 0.05 * self.second.ms}

    @property
    def counts(self) -> dict[str, tuple[float, float]]:
        """The counts behind the terms, where either launch has some."""
        out = {}
        for key, name in COMPARED.items():
            a, b = _count(self.first.counts, key), _count(self.second.counts, key)
            if a is not None and b is not None and (a or b):
                out[name] = (a, b)
        return out

    @property
    def summary(self) -> str:
        """Two or three sentences: how much faster, what bounds each, what changed most."""
        (one, two), r = self.labels, self.ratio
        if r <= 1:
            head = (f"{one} is predicted {1 / r:.2f}x faster than {two} "
                    f"({self.first.ms:.3f} against {self.second.ms:.3f} ms).")
        else:
            head = (f"{one} is predicted {r:.2f}x slower than {two} "
                    f"({self.first.ms:.3f} against {self.second.ms:.3f} ms).")
        if self.first.bound == self.second.bound:
            bounds = f" Both are {self.first.bound}-bound."
        else:
            bounds = f" {one} is {self.first.bound}-bound, {two} {self.second.bound}-bound."
        changes = {name: a / b for name, (a, b) in self.counts.items() if a > 0 and b > 0}
        largest = sorted((k for k in changes if abs(math.log(changes[k])) >= math.log(1.1)),
                         key=lambda k: -abs(math.log(changes[k])))[:2]
        if not largest:
            return head + bounds + " What was counted is about the same for both."
        listed = " and ".join(f"{name}, {changes[name]:.2f}x" for name in largest)
        return (head + bounds + f" The largest change{'s' if len(largest) > 1 else ''} in "
                f"what was counted: {listed}.")

    def _rows(self) -> list[tuple[str, str, str, str]]:
        rows = [(f"term: {k}", f"{a:.4f} ms", f"{b:.4f} ms", _times(a, b))
                for k, (a, b) in self.terms.items()]
        rows += [(k, f"{a:.4g}", f"{b:.4g}", _times(a, b)) for k, (a, b) in self.counts.items()]
        return rows

    def __repr__(self) -> str:
        one, two = self.labels
        width = max(len(r[0]) for r in self._rows()) if self._rows() else 10
        lines = [self.summary, f"  {one}: {self.first.explanation}",
                 f"  {two}: {self.second.explanation}",
                 f"  {'':<{width}} {one:>14} {two:>14} {'ratio':>8}"]
        lines += [f"  {name:<{width}} {a:>14} {b:>14} {r:>8}" for name, a, b, r in self._rows()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        one, two = (html.escape(x) for x in self.labels)
        rows = "".join(f"<tr><td>{html.escape(n)}</td><td style='text-align:right'>{a}</td>"
                       f"<td style='text-align:right'>{b}</td>"
                       f"<td style='text-align:right'>{r}</td></tr>"
                       for n, a, b, r in self._rows())
        return (f"<div><b>{html.escape(self.summary)}</b><br>{one}: "
                f"{html.escape(self.first.explanation)}<br>{two}: "
                f"{html.escape(self.second.explanation)}<table><tr><th></th><th>{one}</th>"
                f"<th>{two}</th><th>ratio</th></tr>{rows}</table></div>")


def _times(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"
