"""Helpers shared by the benchmark scripts.

Kernels live once, in the labs' ``%%cuda`` cells; benchmarks read them from there
so the measured code is the taught code.

>>> markdown_table(["kernel", "GB/s"], [["copy", 2900.0]])
'| kernel | GB/s |\\n|---|---|\\n| copy | 2900.0 |'
"""

from __future__ import annotations

import platform
import subprocess
from datetime import date
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent


def cuda_cells(notebook: str | Path) -> str:
    """Concatenate the bodies of every ``%%cuda`` cell of a lab notebook."""
    path = Path(notebook)
    if not path.is_absolute():
        path = ROOT / path
    nb = nbformat.read(path, as_version=4)
    bodies = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        first, _, body = cell.source.partition("\n")
        if first.startswith("%%cuda"):
            bodies.append(body)
    if not bodies:
        raise ValueError(f"{path} has no %%cuda cells")
    return "\n".join(bodies)


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A Markdown table with one line per row."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def environment_line() -> str:
    """Date, GPU, driver and CUDA versions, for the heading of a results table."""
    try:
        gpu = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        gpu = "no GPU"
    try:
        nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, timeout=30)
        cuda = nvcc.stdout.strip().splitlines()[-1]
    except (OSError, subprocess.SubprocessError, IndexError):
        cuda = "no nvcc"
    return f"{date.today().isoformat()} · {gpu} · {cuda} · Python {platform.python_version()}"
