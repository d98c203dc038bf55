"""The labs' H100 measurements beside the model's predictions, for notebooks without a GPU.

``labs/h100_predicted.json`` holds every timed region of the labs as measured on the H100 at
full size (recorded by ``tools/gpu-check --record``) with ``cudakit.predict``'s time for the
same launches; ``python -m benchmarks.model --labs-json labs/h100_predicted.json`` writes it
again from the recording whenever the model changes (a test checks that it is current).

>>> rows = [{"lab": "10_reduction", "kernels": "reduce0 x40", "config": "<<<8, 256>>>",
...          "measured_ms": 2.0, "predicted_ms": 1.5, "bound": "memory"},
...         {"lab": "10_reduction", "kernels": "reduce1 x40", "config": "<<<8, 256>>>",
...          "measured_ms": 1.0, "predicted_ms": 1.1, "bound": "memory"}]
>>> c = Comparison("10_reduction", rows)
>>> round(c.median_error_pct), c.same_order
(18, True)
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from pathlib import Path

STORED = "h100_predicted.json"


def kernel_names(kernels: str) -> list[str]:
    """The kernel names of a region's description (``"reduce0 x40, memcpy htod"``).

    >>> kernel_names("memcpy htod, work x32")
    ['memcpy htod', 'work']
    """
    return [re.sub(r" x\d+$", "", part.strip()) for part in kernels.split(",")]


def _find(path: str | Path | None) -> Path:
    if path is not None:
        return Path(path)
    for folder in (Path.cwd(), Path.cwd().parent, Path(__file__).resolve().parents[2] / "labs"):
        if (folder / STORED).is_file():
            return folder / STORED
    raise FileNotFoundError(f"{STORED} not found beside the notebook or in the labs folder")


class Comparison:
    """Measured (H100) against predicted times of one lab's timed regions."""

    def __init__(self, lab: str, rows: list[dict], device: str = "H100", labels: str = "kernels"):
        self.lab, self.rows, self.device, self.labels = lab, rows, device, labels

    @property
    def errors_pct(self) -> list[float]:
        return [100 * (r["predicted_ms"] / r["measured_ms"] - 1) for r in self.rows]

    @property
    def median_error_pct(self) -> float:
        """Median of |predicted / measured - 1| in percent."""
        return statistics.median(abs(e) for e in self.errors_pct)

    @property
    def same_order(self) -> bool:
        """Whether sorting the regions by predicted time gives the measured order."""
        def order(key):
            return sorted(range(len(self.rows)), key=lambda i: self.rows[i][key])
        return order("measured_ms") == order("predicted_ms")

    def _name(self, row: dict) -> str:
        """A row's first column: its stream count, or its kernels (a long list shortened)."""
        if self.labels == "streams":
            return row["streams"]
        text = row["kernels"]
        return text if len(text) <= 48 else text[:45] + "..."

    def __repr__(self) -> str:
        head = "streams" if self.labels == "streams" else "kernels"
        width = max([len(self._name(r)) for r in self.rows] + [len(head)])
        launch = max([len(r["config"]) for r in self.rows] + [6])
        lines = [f"{head:<{width}}  {'launch':<{launch}} {'H100 ms':>9} {'predicted':>9} "
                 f"{'error':>6}  bound"]
        for row, error in zip(self.rows, self.errors_pct, strict=True):
            lines.append(f"{self._name(row):<{width}}  {row['config']:<{launch}} "
                         f"{row['measured_ms']:9.4f} {row['predicted_ms']:9.4f} {error:+5.0f}%  "
                         f"{row.get('bound', '')}")
        lines.append(f"median |error| {self.median_error_pct:.0f}%; predicted order equals "
                     f"the measured order: {self.same_order}")
        return "\n".join(lines)

    def plot(self, ax=None):
        """Bars of measured and predicted time per region (log scale); returns the axes."""
        import matplotlib.pyplot as plt
        import numpy as np

        if ax is None:
            _, ax = plt.subplots(figsize=(min(2 + 0.7 * len(self.rows), 12), 3.2))
        x = np.arange(len(self.rows))
        ax.bar(x - 0.2, [r["measured_ms"] for r in self.rows], 0.4,
               label=f"measured on the {self.device}")
        ax.bar(x + 0.2, [r["predicted_ms"] for r in self.rows], 0.4,
               label="predicted (cudakit.predict, no GPU)")
        ax.set_xticks(x, [r[self.labels] for r in self.rows], rotation=30, ha="right",
                      fontsize="small" if self.labels == "config" else None)
        ax.set_yscale("log")
        ax.set_ylabel("ms")
        ax.set_title(f"{self.lab}: median |error| {self.median_error_pct:.0f}%")
        ax.legend(fontsize="small")
        return ax


def stream_count(config: str) -> int:
    """The number of streams in a region's description (1 unless it says more).

    >>> stream_count("<<<4096, 256>>> 512.0 MiB copied 4 streams"), stream_count("<<<8, 256>>>")
    (4, 1)
    """
    found = re.search(r"(\d+) streams", config)
    return int(found.group(1)) if found else 1


def lab_comparison(lab: str, kernels: Sequence[str] | None = None, *, sweep: str | None = None,
                   streams: str | None = None, path: str | Path | None = None) -> Comparison:
    """The stored H100 measurements of ``lab`` and their predictions, one row per region.

    ``kernels``: for each name, the lab's first region that launches it, in the order given
    (the lab's sequence of kernels); ``sweep``: every region that launches this one kernel, in
    the lab's order (one kernel over sizes or shapes); ``streams``: for each number of
    streams, the lab's first region that launches this kernel and copies (a pipeline of
    uploads, kernels and downloads over 1, 2, 4, ... streams); by default every region of the
    lab.

    Example: ``print(lab_comparison("10_reduction", ["reduce0", "reduce1"]))``.
    """
    stored = json.loads(_find(path).read_text(encoding="utf-8"))
    rows = [r for r in stored["regions"] if r["lab"] == lab and r["predicted_ms"] is not None]
    if not rows:
        labs = sorted({r["lab"] for r in stored["regions"]})
        raise KeyError(f"no stored regions of lab {lab!r}; stored labs: {', '.join(labs)}")
    if streams is not None:
        by_count: dict[int, dict] = {}
        for r in rows:
            names = kernel_names(r["kernels"])
            if streams in names and any(n.startswith("memcpy") for n in names):
                by_count.setdefault(stream_count(r["config"]), r)
        if not by_count:
            raise KeyError(f"no stored region of lab {lab!r} launches {streams!r} and copies")
        rows = [dict(r, streams=f"{n} stream{'s' if n > 1 else ''}")
                for n, r in sorted(by_count.items())]
        return Comparison(lab, rows, stored.get("device", "H100"), labels="streams")
    if sweep is not None:
        rows = [r for r in rows if sweep in kernel_names(r["kernels"])]
        if not rows:
            raise KeyError(f"no stored region of lab {lab!r} launches {sweep!r}")
        return Comparison(lab, rows, stored.get("device", "H100"), labels="config")
    if kernels is not None:
        first = {}
        for name in kernels:
            found = [r for r in rows if name in kernel_names(r["kernels"])]
            if not found:
                raise KeyError(f"no stored region of lab {lab!r} launches {name!r}")
            first[name] = found[0]
        rows = list(first.values())
    return Comparison(lab, rows, stored.get("device", "H100"))
