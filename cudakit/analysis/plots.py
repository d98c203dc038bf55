"""Pictures of one warp's access: lanes against sectors, lanes against banks; grid heatmaps.

All functions draw into ``ax`` (a new figure when None) and return the axes.

>>> import numpy as np
>>> from cudakit.analysis.report import AccessStats
>>> a = AccessStats("k", 5, 1, "global", "ld", 4, 1, 8, 4,
...                 sample=(np.ones(32, bool), np.arange(32, dtype=np.uint64) * 8))
>>> lanes_to_sectors(a).get_title()
'k line 5: global load 4 B, one warp touches 8 sectors'
"""

from __future__ import annotations

import numpy as np

from ..errors import CudakitError
from .counting import BANKS, WARP, bank_of, phase_lanes, sector_of


def _axes(ax, size=(9, 3.2)):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=size)[1]


def _sample(access):
    if access.sample is None:
        raise CudakitError(
            f"line {access.line}: no per-lane addresses (measured reports have none; "
            "use cudakit.analyze for the pictures)")
    return access.sample


def lanes_to_sectors(access, ax=None):
    """Lines from each active lane (left) to the 32-byte sector it touches (right)."""
    mask, address = _sample(access)
    ax = _axes(ax)
    lanes = np.flatnonzero(mask)
    sec = sector_of(address[lanes])
    touched = np.unique(sec)
    base = int(touched.min())
    span = int(touched.max()) - base + 1
    scale = (WARP - 1) / max(span - 1, 1)
    for lane, s in zip(lanes, sec, strict=True):
        ax.plot([0, 1], [lane, (s - base) * scale], color="tab:blue", lw=0.8)
    ax.scatter(np.zeros(lanes.size), lanes, s=12, color="tab:blue", zorder=3)
    shown = np.arange(span)
    used = np.isin(shown + base, touched)
    ax.scatter(np.ones(span), shown * scale, s=40, marker="s", zorder=3,
               color=np.where(used, "tab:orange", "lightgrey"))
    if span <= 40:
        for k in shown:
            ax.annotate(f"+{k * 32} B", (1, k * scale), xytext=(8, 0), textcoords="offset points",
                        va="center", fontsize=7)
    ax.set_xlim(-0.05, 1.2)
    ax.set_xticks([0, 1], ["lane", f"32-byte sectors from byte {base * 32:#x}"])
    ax.set_ylabel("lane")
    ax.invert_yaxis()
    ax.set_title(f"{access.kernel} line {access.line}: {access.kind} {access.size} B, "
                 f"one warp touches {touched.size} sectors")
    return ax


def lanes_to_banks(access, ax=None):
    """Grid of lanes × banks: a cell is filled where a lane uses a bank; conflicts in red.

    A bank is in conflict when the lanes of one phase need more than one distinct word from it.
    """
    mask, address = _sample(access)
    ax = _axes(ax, (9, 4.5))
    words = max(1, access.size // 4)
    grid = np.zeros((WARP, BANKS))  # 0 unused, 1 used, 2 used with a conflict
    group = phase_lanes(access.size)
    for start in range(0, WARP, group):
        lanes = np.flatnonzero(mask[start:start + group]) + start
        word = (address[lanes] // np.uint64(4))[:, None] + np.arange(words, dtype=np.uint64)
        bank = bank_of(word * np.uint64(4))
        distinct = {}
        for w, b in zip(word.ravel(), bank.ravel(), strict=True):
            distinct.setdefault(int(b), set()).add(int(w))
        for lane, row in zip(lanes, bank, strict=True):
            for b in row:
                grid[lane, b] = 2 if len(distinct[int(b)]) > 1 else 1
    from matplotlib.colors import ListedColormap

    ax.imshow(grid, cmap=ListedColormap(["white", "tab:green", "tab:red"]), vmin=0, vmax=2,
              aspect="auto", interpolation="nearest")
    ax.set_xlabel("bank")
    ax.set_ylabel("lane")
    ax.set_title(f"{access.kernel} line {access.line}: {access.kind} {access.size} B, "
                 f"{access.per_request:.1f} wavefronts per request (red: bank conflict)")
    return ax


def heatmap(accesses, title: str = "", ax=None):
    """Cost per request of every warp: rows are blocks (or block rows), columns warps.

    The colour scale runs from 0 to 32 (the worst case of a 4-byte access) so that pictures of
    different kernels compare at a glance.
    """
    warps = [a.warps for a in accesses if a.warps is not None]
    if not warps:
        raise CudakitError("no per-warp data to draw (measured reports have none)")
    block = np.concatenate([w.block for w in warps])
    warp = np.concatenate([w.warp for w in warps])
    req = np.concatenate([w.requests for w in warps])
    cost = np.concatenate([w.cost for w in warps])
    two_d = block[:, 1].max() > 0
    rows = block[:, 1] if two_d else block[:, 0]
    cols = block[:, 0] if two_d else warp
    shape = (rows.max() + 1, cols.max() + 1)
    total, count = np.zeros(shape), np.zeros(shape)
    np.add.at(total, (rows, cols), cost)
    np.add.at(count, (rows, cols), req)
    ratio = np.divide(total, count, out=np.full(shape, np.nan), where=count > 0)
    ax = _axes(ax, (7, 4))
    image = ax.imshow(ratio, cmap="viridis", aspect="auto", interpolation="nearest",
                      vmin=0, vmax=max(WARP, np.nanmax(ratio)))
    if ratio.size <= 256:
        for (r, c), value in np.ndenumerate(ratio):
            if not np.isnan(value):
                ax.text(c, r, f"{value:g}", ha="center", va="center", fontsize=7,
                        color="black" if value > 0.6 * WARP else "white")
    ax.set_xticks(range(shape[1]) if shape[1] <= 16 else ax.get_xticks())
    ax.set_yticks(range(shape[0]) if shape[0] <= 16 else ax.get_yticks())
    ax.figure.colorbar(image, ax=ax, label="per request")
    ax.set_xlabel("blockIdx.x" if two_d else "warp in block")
    ax.set_ylabel("blockIdx.y" if two_d else "blockIdx.x")
    ax.set_title(title)
    return ax
