"""Where a cudakit error points in a ``%%cuda`` cell, as data an editor can mark.

With the error's text, ``%%cuda`` and the error display publish a bundle of MIME type
:data:`MIME_TYPE` that JupyterLab's cudakit extension turns into marks on the cell's
lines (gutter marker, underline, message on hover). Plain Jupyter and nbconvert show
the text as before. Lines count the ``%%cuda`` line as line 1, as cudakit's messages do.

>>> from cudakit.errors import MemcheckError
>>> err = MemcheckError("memcheck: out of bounds write of 4 bytes in kernel 'fill' at "
...                     "line 4 (a[i] = 1) by block (0,0,0) thread (5,0,0): ...")
>>> [(p["line"], p["source"]) for p in runtime_problems(err)], kernel_of(err)
([(4, 'memcheck')], 'fill')
"""

from __future__ import annotations

import re

from .errors import (
    BarrierError,
    CompileError,
    KernelFaultError,
    KernelTimeout,
    MemcheckError,
    RaceError,
    UnsupportedError,
)

MIME_TYPE = "application/vnd.cudakit.diagnostics+json"

# The checker that found each kind of launch error (shown with the message on hover).
_SOURCES = {
    MemcheckError: "memcheck",
    RaceError: "racecheck",
    BarrierError: "barrier check",
    KernelTimeout: "time limit",
    KernelFaultError: "kernel fault",
    UnsupportedError: "emulator",
}
# cudakit's launch errors name their kernel and source lines in these words (tests/emu).
_LINE = re.compile(r"\bline (\d+)\b")
_KERNEL = re.compile(r"\bkernel '([^']+)'")


def compile_problems(exc: CompileError) -> list[dict]:
    """nvcc's diagnostics that fall on the cell's own lines."""
    return [
        {
            "line": d["line"],
            "column": d.get("column"),
            "severity": "warning" if d["kind"] == "warning" else "error",
            "message": d["message"],
            "source": "nvcc",
        }
        for d in exc.diagnostics
        if d.get("line")
    ]


def runtime_problems(exc: Exception) -> list[dict]:
    """The lines a launch error names (a race names both accesses), each with the message."""
    source = next((name for cls, name in _SOURCES.items() if isinstance(exc, cls)), None)
    if source is None:
        return []
    lines = dict.fromkeys(int(n) for n in _LINE.findall(str(exc)))
    return [
        {"line": n, "column": None, "severity": "error", "message": str(exc), "source": source}
        for n in lines
    ]


def kernel_of(exc: Exception) -> str | None:
    """The kernel a launch error names, e.g. ``'fill'``."""
    found = _KERNEL.search(str(exc))
    return found.group(1) if found else None


def publish(
    error: Exception, problems: list[dict], kernel: str | None = None, cell_id: str | None = None
) -> None:
    """Display the bundle (nothing when there is nothing to mark).

    ``cell_id`` names the ``%%cuda`` cell the lines belong to when it is not the running
    cell; it travels in the output's metadata, which nbval does not compare.
    """
    if not problems:
        return
    from IPython.display import publish_display_data

    data = {"error": type(error).__name__, "diagnostics": problems}
    if kernel:
        data["kernel"] = kernel
    metadata = {MIME_TYPE: {"cell_id": cell_id}} if cell_id else {}
    publish_display_data({MIME_TYPE: data}, metadata=metadata)


def drop_from_static_output(nb, resources):
    """nbconvert preprocessor: remove the bundles from HTML output, where the error's text
    says it all and no editor marks lines, and the empty outputs finished progress bars
    leave (enabled by cudakit's jupyter_nbconvert_config).

    >>> import nbformat
    >>> cell = nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output(
    ...     "display_data", data={MIME_TYPE: {"error": "CompileError", "diagnostics": []}}),
    ...     nbformat.v4.new_output("display_data", data={})])
    >>> nb, _ = drop_from_static_output(nbformat.v4.new_notebook(cells=[cell]), {})
    >>> nb.cells[0].outputs
    []
    """
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [
                o
                for o in cell.outputs
                if o.output_type != "display_data" or (o.data and MIME_TYPE not in o.data)
            ]
    return nb, resources
