"""``Prediction``: the predicted time of a launch or a copy, why, and what was counted.

>>> p = Prediction(0.25, "memory", "memory-bound: 512 MB ...", {"memory": 0.25}, {}, 1.0, 3.2,
...                "H100", "copy")
>>> print(p)
copy on H100: 0.250 ms predicted (memory-bound: 512 MB ...)
"""

from __future__ import annotations

import html
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
