"""Check one kernel launch for memory errors, shared-memory races and barrier misuse.

On the GPU the launch runs in a child process under NVIDIA's ``compute-sanitizer`` (tools
``memcheck``, ``racecheck``, ``synccheck``), through :func:`cudakit.launcher.run_in_subprocess`,
and its output is turned into a short report that quotes the kernel's own lines. On the CPU
emulator the same call runs the launch with the emulator's checks (racecheck on), so a lab cell
reads the same on both engines.

>>> report = parse_output("racecheck", '''========= COMPUTE-SANITIZER
... ========= Error: Race reported between Write access at k+0x190 in cell.cu:6
... =========     and Read access at k+0x130 in cell.cu:9 [2048 hazards]
... ========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)''')
>>> [(f.kind, f.lines, f.hazards) for f in report]
[('race', [6, 9], 2048)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .errors import BarrierError, CudakitError, MemcheckError, RaceError

TOOLS = ("memcheck", "racecheck", "synccheck")
_PREFIX = "========="
_LOCATION = re.compile(r"\bin (?P<file>[^\s:]+):(?P<line>\d+)")
_HAZARDS = re.compile(r"\[(\d+) hazards?\]")
_EMU_LINE = re.compile(r"\bline (\d+)")
_KINDS = (
    ("Race reported", "race"),
    ("Invalid __", "invalid access"),
    ("Misaligned", "invalid access"),
    ("Barrier error", "barrier"),
    ("Program hit", "api error"),
)


@dataclass
class Finding:
    """One problem the checker found: its kind, first line, source lines involved, details."""

    kind: str
    message: str
    lines: list[int] = field(default_factory=list)
    hazards: int = 0
    details: list[str] = field(default_factory=list)
    count: int = 1


@dataclass
class SanitizerReport:
    """What one checked launch produced; ``str(report)`` is the readable form."""

    tool: str
    engine: str
    findings: list[Finding]
    source: str = ""
    raw: str = ""
    outputs: list[np.ndarray] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.findings

    def __str__(self) -> str:
        head = f"{self.tool} ({self.engine}): "
        if self.clean:
            return head + "no problems found"
        code = self.source.splitlines()
        out = [head + f"{len(self.findings)} problem{'s' * (len(self.findings) != 1)}"]
        for number, found in enumerate(self.findings, 1):
            extra = f" [{found.hazards} hazards]" if found.hazards else ""
            extra += f" (x{found.count}, first shown)" if found.count > 1 else ""
            out.append(f"{number}. {found.kind}: {found.message}{extra}")
            out += [f"     {d}" for d in found.details]
            for line in dict.fromkeys(found.lines):
                if 0 < line <= len(code):
                    out.append(f"     line {line}: {code[line - 1].strip()}")
        return "\n".join(out)

    __repr__ = __str__


def _records(text: str) -> list[list[str]]:
    """compute-sanitizer's lines grouped per message (header line plus indented lines)."""
    groups: list[list[str]] = []
    for raw in text.splitlines():
        if not raw.startswith(_PREFIX):
            continue
        body = raw[len(_PREFIX):]
        if not body.strip():
            continue
        if body.startswith("  ") and groups:
            groups[-1].append(body.strip())
        else:
            groups.append([body.strip()])
    return groups


def parse_output(tool: str, text: str) -> list[Finding]:
    """The findings in compute-sanitizer's text output (summary and host frames left out)."""
    _check_tool(tool)
    findings = []
    for header, *rest in _records(text):
        kind = next((k for key, k in _KINDS if key in header), None)
        if kind is None:
            continue
        kept = [r for r in rest if not r.startswith(("Host Frame", "Saved host backtrace"))]
        everything = [header, *kept]
        lines = [int(m["line"]) for r in everything for m in _LOCATION.finditer(r)]
        hazards = sum(int(m) for r in kept for m in _HAZARDS.findall(r))
        message = header.removeprefix("Error: ").removeprefix("Warning: ")
        same = next((f for f in findings if (f.kind, f.message, f.lines) == (kind, message, lines)),
                    None)
        if same is None:
            findings.append(Finding(kind, message, lines, hazards, kept))
        else:
            same.count += 1
            same.hazards += hazards
    return findings


def _check_tool(tool: str) -> None:
    if tool not in TOOLS:
        raise CudakitError(f"sanitize: tool={tool!r} is not one of {', '.join(TOOLS)}")


def _attached_source(kernel) -> str:
    """The source a kernel object carries (``kernel.source`` or ``kernel.info.source``), or ''."""
    for owner in (kernel, getattr(kernel, "info", None)):
        text = getattr(owner, "source", None)
        if isinstance(text, str):
            return text
    return ""


def _source_of(kernel, source: str | None) -> tuple[str, str]:
    name = kernel if isinstance(kernel, str) else getattr(kernel, "name", None)
    if not isinstance(name, str):
        raise CudakitError(
            f"sanitize: expected a kernel from %%cuda or a kernel name, got {type(kernel).__name__}"
        )
    text = source if source is not None else _attached_source(kernel)
    if not text:
        raise CudakitError(
            f"sanitize: the source of '{name}' is needed to run it under compute-sanitizer; "
            "pass source=... (the text of its %%cuda cell)"
        )
    return name, text


def _on_gpu(kernel, args, grid, block, shared, tool, source, options, timeout):
    from .launcher import run_in_subprocess

    name, text = _source_of(kernel, source)
    wrapper = ["compute-sanitizer", "--tool", tool, "--print-limit", "20"]
    result = run_in_subprocess(text, name, grid=grid, block=block, args=list(args),
                               shared=shared, options=tuple(options), wrapper=wrapper,
                               timeout=timeout)
    raw = result.stdout + result.stderr
    if result.timed_out:
        raise CudakitError(f"sanitize: {tool} on '{name}' ran past {timeout} s")
    findings = parse_output(tool, raw)
    if "COMPUTE-SANITIZER" not in raw:
        raise CudakitError(f"sanitize: compute-sanitizer did not run:\n{raw[-2000:]}")
    return SanitizerReport(tool, "compute-sanitizer", findings, text, raw, result.outputs)


def _on_emulator(kernel, args, grid, block, shared, tool, source):
    from . import cuda

    if isinstance(kernel, str):
        raise CudakitError("sanitize: on the emulator pass the kernel itself (from %%cuda)")
    held = [cuda.InOut(a) if isinstance(a, np.ndarray) else a for a in args]
    text = source if source is not None else _attached_source(kernel)
    kinds = ((RaceError, "race"), (MemcheckError, "invalid access"), (BarrierError, "barrier"))
    try:
        kernel(*held, grid=grid, block=block, shared=shared, racecheck=tool == "racecheck")
    except (RaceError, MemcheckError, BarrierError) as exc:
        message = str(exc).splitlines()[0]
        kind = next(name for error, name in kinds if isinstance(exc, error))
        found = Finding(kind, message, [int(m) for m in _EMU_LINE.findall(message)])
        return SanitizerReport(tool, "emulator", [found], text, str(exc))
    outputs = [a for a in args if isinstance(a, np.ndarray)]
    return SanitizerReport(tool, "emulator", [], text, "", outputs)


def sanitize(kernel, *args, grid, block, shared: int = 0, tool: str = "memcheck",
             source: str | None = None, options=(), timeout: float = 300) -> SanitizerReport:
    """Run one launch of ``kernel`` under a checker and return its report.

    ``kernel`` is a kernel from ``%%cuda`` or ``cudakit.load`` (or, on the GPU, its name);
    the GPU path compiles its source again (with its options) in the child process that
    compute-sanitizer watches; ``source`` and ``options`` override what the kernel carries.
    Pointer arguments are NumPy arrays; after a clean run their final contents are in
    ``report.outputs``.

    >>> report = sanitize(block_sum, x, out, grid=(4,), block=(256,),  # doctest: +SKIP
    ...                   tool="racecheck")
    >>> report.clean  # doctest: +SKIP
    False
    """
    from .backend import backend_name

    _check_tool(tool)
    source = source if source is not None else getattr(kernel, "source", None)
    options = tuple(options) or tuple(getattr(kernel, "options", ()))
    if backend_name() == "gpu":
        return _on_gpu(kernel, args, grid, block, shared, tool, source, options, timeout)
    return _on_emulator(kernel, args, grid, block, shared, tool, source)
