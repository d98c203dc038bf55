"""Memory reports: totals keyed by Nsight Compute's metric names, rows per access, comparisons.

A :class:`Report` is built either from the emulator's trace (:func:`from_trace`, the model in
:mod:`cudakit.analysis.counting`) or from ncu's measured counters (:mod:`cudakit.analysis.ncu`);
both give the same shape, so notebooks treat them alike.

>>> import numpy as np
>>> from cudakit.emu.trace import AccessBatch, Trace
>>> t = Trace()
>>> t.add(AccessBatch("k", 3, 9, 0, "global", "ld", 4, np.zeros((1, 3), int), np.zeros(1, int),
...                   np.ones((1, 32), bool), np.arange(32, dtype=np.uint64)[None] * 8))
>>> r = from_trace(t)
>>> r.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"], r.by_line[0].line
(8, 3)
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np

from ..errors import CudakitError
from . import counting

SECTOR, WAVEFRONT_BYTES = counting.SECTOR, counting.WAVEFRONT_BYTES

NCU = {
    ("global", "ld"): ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                       "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
    ("global", "st"): ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                       "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
    ("shared", "ld"): ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                       "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
    ("shared", "st"): ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                       "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
}
NCU_METRICS: tuple[str, ...] = tuple(name for pair in NCU.values() for name in pair)
_WORD = {"ld": "load", "st": "store", "atom": "atomic", "ld+st": "load/store"}


@dataclass
class WarpCosts:
    """Per executed warp of one access: where it ran and what it cost (arrays of length W)."""

    block: np.ndarray  # (W, 3)
    warp: np.ndarray  # (W,)
    requests: np.ndarray
    cost: np.ndarray  # sectors (global) or wavefronts (shared)


@dataclass
class AccessStats:
    """One memory access of the source (or, from ncu, one line's accesses of a kind).

    ``cost`` counts 32-byte sectors for global memory and wavefronts for shared memory;
    ``ideal`` is what a perfectly coalesced / conflict-free access would cost;
    ``waste_bytes`` prices the excess: 32 bytes per extra sector, 128 per extra wavefront;
    ``cache_lines`` counts the 128-byte lines (L1 tag lookups) of a global access.
    In measured rows (``cudakit.profile``) ``requests`` are the warp-level instructions ncu saw
    executed on the line, predicated-off ones included.
    """

    kernel: str
    line: int
    column: int
    space: str
    op: str
    size: int
    requests: int = 0
    cost: int = 0
    ideal: int = 0
    bytes_requested: int | None = None
    bytes_used: int | None = None
    cache_lines: int | None = None
    source: str = ""
    site: int = -1
    sample: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    warps: WarpCosts | None = field(default=None, repr=False)

    @property
    def sectors(self) -> int | None:
        """32-byte sectors moved (global accesses)."""
        return self.cost if self.space == "global" else None

    @property
    def wavefronts(self) -> int | None:
        """Shared-memory wavefronts (shared accesses)."""
        return self.cost if self.space == "shared" else None

    @property
    def bank_conflicts(self) -> int | None:
        """Wavefronts beyond the conflict-free ideal (shared accesses)."""
        return self.excess if self.space == "shared" else None

    @property
    def excess(self) -> int:
        return self.cost - self.ideal

    @property
    def waste_bytes(self) -> int:
        return self.excess * (SECTOR if self.space == "global" else WAVEFRONT_BYTES)

    @property
    def per_request(self) -> float:
        """Sectors (global) or wavefronts (shared) per request."""
        return self.cost / self.requests if self.requests else 0.0

    @property
    def efficiency(self) -> float | None:
        """Global: bytes used over bytes moved, in % (measured rows: ideal over actual sectors);
        shared: ideal over actual wavefronts."""
        if not self.cost:
            return None
        if self.space == "global" and self.bytes_used is not None:
            return 100.0 * self.bytes_used / (self.cost * SECTOR)
        return 100.0 * self.ideal / self.cost

    @property
    def kind(self) -> str:
        return f"{self.space} {_WORD.get(self.op, self.op)}"

    def metrics(self) -> dict[str, int]:
        """This access's counters under Nsight Compute's names."""
        names = NCU.get((self.space, self.op))
        if names is None:
            return {}
        if self.space == "global":
            return {names[0]: self.requests, names[1]: self.cost}
        return {names[0]: self.cost, names[1]: self.excess}


def totals(accesses: list[AccessStats]) -> dict[str, float]:
    """Kernel totals: Nsight Compute's metrics plus the derived figures."""
    out: dict[str, float] = dict.fromkeys(NCU_METRICS, 0)
    for a in accesses:
        for name, value in a.metrics().items():
            out[name] += value
    for op in ("ld", "st"):
        word = _WORD[op]
        glob = [a for a in accesses if a.space == "global" and a.op == op]
        req = sum(a.requests for a in glob)
        sec = sum(a.cost for a in glob)
        out[f"global_{word}_requests"] = req
        out[f"global_{word}_bytes_moved"] = sec * SECTOR
        if req:  # ratios only where there was traffic
            out[f"global_{word}_sectors_per_request"] = sec / req
        if sec and all(a.bytes_used is not None for a in glob):
            used = sum(a.bytes_used for a in glob)
            out[f"global_{word}_bytes_requested"] = sum(a.bytes_requested for a in glob)
            out[f"global_{word}_bytes_used"] = used
            out[f"global_{word}_efficiency_pct"] = 100.0 * used / (sec * SECTOR)
        shared = [a for a in accesses if a.space == "shared" and a.op == op]
        sreq = sum(a.requests for a in shared)
        out[f"shared_{word}_requests"] = sreq
        if sreq:
            out[f"shared_{word}_wavefronts_per_request"] = sum(a.cost for a in shared) / sreq
    return out


class Report:
    """What one launch did to memory: ``metrics`` (totals), ``by_line`` (worst first), plots.

    ``origin`` says where the numbers come from: ``"emulator model"`` or ``"Nsight Compute"``.
    """

    def __init__(self, kernel: str, accesses: list[AccessStats], *, origin: str,
                 metrics: dict[str, float] | None = None, grid=None):
        self.kernel = kernel
        self.accesses = accesses
        self.origin = origin
        self.metrics = totals(accesses) if metrics is None else metrics
        self.grid = grid

    @property
    def by_line(self) -> list[AccessStats]:
        """Every access, the one that wastes the most bandwidth first."""
        return sorted(self.accesses, key=lambda a: (-a.waste_bytes, a.line, a.column))

    def line(self, line: int, space: str | None = None) -> AccessStats:
        """The costliest access on source ``line`` (optionally of one memory space)."""
        found = [a for a in self.by_line if a.line == line and space in (None, a.space)]
        if not found:
            have = sorted({a.line for a in self.accesses})
            raise CudakitError(
                f"kernel '{self.kernel}' makes no {space or 'global or shared'} access on line "
                f"{line}; lines with accesses: {have}"
            )
        return found[0]

    # -- presentation ---------------------------------------------------------------------
    def rows(self) -> list[dict]:
        """The by-line table as plain dictionaries (what the HTML and text tables show)."""
        out = []
        for a in self.by_line:
            eff = a.efficiency
            out.append({
                "line": a.line, "col": a.column, "access": f"{a.kind} {a.size} B",
                "requests": a.requests,
                "sectors/wavefronts": a.cost, "ideal": a.ideal,
                "per request": round(a.per_request, 2),
                "efficiency %": None if eff is None else round(eff, 1),
                "wasted bytes": a.waste_bytes, "source": a.source.strip(),
            })
        return out

    def summary(self) -> dict[str, float]:
        """The figures most people look at first."""
        m = self.metrics
        keys = ["global_load_sectors_per_request", "global_store_sectors_per_request",
                "global_load_efficiency_pct", "global_store_efficiency_pct",
                NCU[("shared", "ld")][1], NCU[("shared", "st")][1]]
        return {k: round(m[k], 2) for k in keys if k in m}

    def __str__(self) -> str:
        rows = self.rows()
        head = f"{self.kernel} ({self.origin}): " + ", ".join(
            f"{k} = {v}" for k, v in self.summary().items())
        if not rows:
            return head + "\n(no global or shared accesses)"
        cols = [c for c in rows[0] if c != "source"] + ["source"]
        widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
        lines = [head, "  ".join(c.rjust(widths[c]) for c in cols)]
        lines += ["  ".join(str(r[c]).rjust(widths[c]) for c in cols) for r in rows]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        rows = self.rows()
        summary = ", ".join(f"<b>{html.escape(k)}</b> = {v}" for k, v in self.summary().items())
        out = [f"<p><b>{html.escape(self.kernel)}</b> <i>({html.escape(self.origin)})</i>: "
               f"{summary}</p>"]
        if rows:
            out.append("<table><thead><tr>" + "".join(
                f"<th>{html.escape(c)}</th>" for c in rows[0]) + "</tr></thead><tbody>")
            worst = max(r["wasted bytes"] for r in rows) or 1
            for r in rows:
                shade = int(255 - 120 * r["wasted bytes"] / worst)
                style = f' style="background:rgb(255,{shade},{shade})"' if r["wasted bytes"] else ""
                cells = "".join(
                    f"<td><code>{html.escape(str(v))}</code></td>" if k == "source"
                    else f"<td>{'' if v is None else v}</td>" for k, v in r.items())
                out.append(f"<tr{style}>{cells}</tr>")
            out.append("</tbody></table>")
        return "\n".join(out)

    def compare(self, *others: Report, labels: list[str] | None = None) -> Comparison:
        """Side-by-side totals of this report and others (before/after an optimisation)."""
        return Comparison([self, *others], labels)

    # -- plots (matplotlib, imported on use) ----------------------------------------------
    def plot_sectors(self, line: int | None = None, ax=None):
        """One warp of ``line`` (default: the worst global access): lanes against sectors."""
        from .plots import lanes_to_sectors

        return lanes_to_sectors(self._pick(line, "global"), ax=ax)

    def plot_banks(self, line: int | None = None, ax=None):
        """One warp of ``line`` (default: the worst shared access): lanes against banks."""
        from .plots import lanes_to_banks

        return lanes_to_banks(self._pick(line, "shared"), ax=ax)

    def plot_heatmap(self, line: int | None = None, space: str = "global", ax=None):
        """Sectors (or wavefronts) per request for every warp of the grid."""
        from .plots import heatmap

        picked = ([self._pick(line, space)] if line is not None
                  else [a for a in self.accesses if a.space == space])
        where = f"line {line}" if line is not None else "all accesses"
        return heatmap(picked, title=f"{self.kernel}: {space} {where}", ax=ax)

    def _pick(self, line: int | None, space: str) -> AccessStats:
        if line is not None:
            return self.line(line, space)
        found = [a for a in self.by_line if a.space == space]
        if not found:
            raise CudakitError(f"kernel '{self.kernel}' makes no {space} access")
        return found[0]


class Comparison:
    """Several reports side by side; ``_repr_html_`` shows a table, ``str`` a text one."""

    KEYS = ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
            "global_load_sectors_per_request", "global_store_sectors_per_request",
            "global_load_efficiency_pct", "global_store_efficiency_pct", *NCU_METRICS[4:])

    def __init__(self, reports: list[Report], labels: list[str] | None = None):
        self.reports = reports
        self.labels = labels or [r.kernel for r in reports]
        if len(self.labels) != len(reports):
            raise CudakitError(f"{len(self.labels)} labels for {len(reports)} reports")

    def table(self) -> dict[str, list]:
        """metric -> one value per report (None where a report lacks it)."""
        return {k: [_round(r.metrics.get(k)) for r in self.reports] for k in self.KEYS}

    def __str__(self) -> str:
        t = self.table()
        width = max(map(len, t))
        head = " " * width + "".join(f"{label:>20}" for label in self.labels)
        return "\n".join([head] + [f"{k:<{width}}" + "".join(f"{str(v):>20}" for v in vals)
                                   for k, vals in t.items()])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(label)}</th>" for label in self.labels)
        body = "".join(
            f"<tr><td><code>{html.escape(k)}</code></td>"
            + "".join(f"<td>{'' if v is None else v}</td>" for v in vals) + "</tr>"
            for k, vals in self.table().items())
        return f"<table><thead><tr><th>metric</th>{head}</tr></thead><tbody>{body}</tbody></table>"


def _round(value):
    return None if value is None else round(value, 2) if isinstance(value, float) else value


def from_trace(trace, source: str | None = None, kernel: str | None = None,
               grid=None) -> Report:
    """Apply the counting rules to every access in ``trace`` (all its batches)."""
    lines = source.splitlines() if source else []
    groups: dict[tuple, list] = {}
    for batch in trace.accesses:
        if batch.space in ("global", "shared") and batch.op in ("ld", "st"):
            groups.setdefault((batch.kernel, batch.site, batch.space, batch.op), []).append(batch)
    accesses = [_site_stats(batches, lines) for batches in groups.values()]
    name = kernel or (trace.accesses[0].kernel if trace.accesses else "kernel")
    return Report(name, accesses, origin="emulator model", grid=grid)


def _site_stats(batches: list, lines: list[str]) -> AccessStats:
    first = batches[0]
    glob = first.space == "global"
    cost_of = counting.sectors if glob else counting.wavefronts
    reqs, costs, ideals, used, asked, tags, blocks, warps = [], [], [], [], [], [], [], []
    sample, worst = None, -1
    for b in batches:
        req, cost = counting.requests(b), cost_of(b)
        if glob:
            u = counting.bytes_used(b)
            used.append(u)
            asked.append(counting.bytes_requested(b))
            tags.append(counting.cache_lines(b))
            ideals.append(-(-u // SECTOR))
        else:
            ideals.append(counting.ideal_wavefronts(b))
        reqs.append(req)
        costs.append(cost)
        blocks.append(b.block)
        warps.append(b.warp)
        k = int(np.argmax(cost))
        if cost[k] > worst:
            worst, sample = int(cost[k]), (b.mask[k].copy(), b.address[k].copy())
    req, cost = np.concatenate(reqs), np.concatenate(costs)
    text = lines[first.line - 1] if 0 < first.line <= len(lines) else ""
    return AccessStats(
        first.kernel, first.line, first.column, first.space, first.op, first.size,
        requests=int(req.sum()), cost=int(cost.sum()), ideal=int(np.concatenate(ideals).sum()),
        bytes_requested=int(np.concatenate(asked).sum()) if glob else None,
        bytes_used=int(np.concatenate(used).sum()) if glob else None,
        cache_lines=int(np.concatenate(tags).sum()) if glob else None,
        source=text, site=first.site, sample=sample,
        warps=WarpCosts(np.concatenate(blocks), np.concatenate(warps), req, cost))
