"""Progress bars for long loops in notebooks: parameter sweeps, benchmarks over many sizes.

    for threads in cudakit.progress((32, 64, 128, 256, 512, 1024), "block sizes"):
        ms[threads] = cudakit.benchmark(...).median

A bar is shown only while someone watches: in a notebook frontend that can answer
``input()`` (JupyterLab, Notebook, VS Code), or on a terminal. Unattended runs (nbval,
``nbconvert --execute``, nbclient, papermill) send ``allow_stdin=False`` with each cell,
so they get no bar and a lab's stored outputs stay free of bars (nbval compares them).
``CUDAKIT_PROGRESS=1`` or ``0`` (or ``show=``) decides instead.

In a notebook the bar is tqdm's widget; when the loop ends its output is emptied, so
a saved notebook keeps no bar either.

>>> list(progress(range(3), "sizes", show=False))
[0, 1, 2]
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def _kernel():
    """The running ipykernel, or None (a script, a terminal IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return getattr(get_ipython(), "kernel", None)


def watched() -> bool:
    """Whether a person is watching this code run (see the module's docstring)."""
    chosen = os.environ.get("CUDAKIT_PROGRESS", "").strip()
    if chosen in ("0", "1"):
        return chosen == "1"
    kernel = _kernel()
    if kernel is None:
        return sys.stderr.isatty()
    request = kernel.get_parent() or {}
    return bool(request.get("content", {}).get("allow_stdin", False))


def progress(
    iterable: Iterable[T], desc: str = "", total: int | None = None, show: bool | None = None
) -> Iterator[T]:
    """Yield the items of ``iterable`` with a progress bar while someone watches.

    ``total`` is needed only when ``iterable`` has no ``len()``.
    """
    if not (watched() if show is None else show):
        yield from iterable
        return
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    if _kernel() is None:
        from tqdm import tqdm

        yield from tqdm(iterable, desc=desc, total=total, leave=False)
        return
    from IPython.display import display
    from tqdm.notebook import tqdm as notebook_tqdm

    bar = notebook_tqdm(iterable, desc=desc, total=total, leave=False, display=False)
    shown = display(bar.container, display_id=True)
    try:
        yield from bar
    finally:
        bar.close()
        shown.update({}, raw=True)  # nothing left behind in the cell's outputs
