"""Solution and hidden-test regions inside one cell's source (nbgrader's markers).

A solution region sits between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` in
Python, or ``// BEGIN SOLUTION`` and ``// END SOLUTION`` in a ``%%cuda`` cell. In
the student version the region becomes a skeleton:

* its ``TODO`` comment lines, kept as written (or ``YOUR CODE HERE`` when it has none);
* its ``SKELETON:`` comment lines with the comment prefix removed, so a kernel
  can keep declarations it needs to compile (``// SKELETON: int i = 0;``);
* in Python, with no skeleton lines, nbgrader's ``raise NotImplementedError()``.

Hidden tests sit between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``
and are dropped from the student version.

>>> src = '''%%cuda
... __global__ void add(float *c, const float *a, int n) {
...     // BEGIN SOLUTION
...     // TODO: one thread per element, skip threads past n
...     int i = blockIdx.x * blockDim.x + threadIdx.x;
...     if (i < n) c[i] = a[i] + 1.0f;
...     // END SOLUTION
... }'''
>>> print(skeleton(src))
%%cuda
__global__ void add(float *c, const float *a, int n) {
    // TODO: one thread per element, skip threads past n
}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import ExerciseFormatError

SOLUTION = ("BEGIN SOLUTION", "END SOLUTION")
HIDDEN_TESTS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
SKELETON_TAG = "SKELETON:"
PYTHON_STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")
TEXT_STUB = "YOUR ANSWER HERE"


def is_cuda(source: str) -> bool:
    """True for a ``%%cuda`` cell, whose markers are C++ comments.

    >>> is_cuda("%%cuda\\n__global__ void k() {}"), is_cuda("x = 1")
    (True, False)
    """
    return source.lstrip().startswith("%%cuda")


def comment_prefix(source: str) -> str:
    """``//`` in a ``%%cuda`` cell, ``#`` in Python."""
    return "//" if is_cuda(source) else "#"


def _marker(line: str, prefix: str, words: str) -> bool:
    """Whether ``line`` is a marker line: the comment prefix, then the marker words."""
    text = line.strip()
    return text.startswith(prefix) and text.lstrip("/#").strip().startswith(words)


def has_markers(source: str, markers: tuple[str, str] = SOLUTION) -> bool:
    """Whether any line of ``source`` is a begin marker of ``markers``.

    >>> has_markers("a = 1\\n### BEGIN SOLUTION\\n### END SOLUTION")
    True
    """
    prefix = comment_prefix(source)
    return any(_marker(line, prefix, markers[0]) for line in source.splitlines())


@dataclass
class Run:
    """Consecutive lines of a cell, inside a region or not; ``indent`` is the begin marker's."""

    inside: bool
    lines: list[str] = field(default_factory=list)
    indent: str = ""


def split_regions(source: str, markers: tuple[str, str], where: str = "cell") -> list[Run]:
    """Split ``source`` into runs inside and outside regions; marker lines are dropped.

    Raises ExerciseFormatError for nested, unclosed or unopened regions.

    >>> runs = split_regions("a\\n# BEGIN SOLUTION\\nb\\n# END SOLUTION", SOLUTION)
    >>> [(r.inside, r.lines) for r in runs]
    [(False, ['a']), (True, ['b'])]
    """
    prefix = comment_prefix(source)
    runs = [Run(False)]
    for number, line in enumerate(source.splitlines(), start=1):
        if _marker(line, prefix, markers[0]):
            if runs[-1].inside:
                raise ExerciseFormatError(f"{where}, line {number}: {markers[0]!r} inside a region")
            runs.append(Run(True, indent=re.match(r"\s*", line).group(0)))
        elif _marker(line, prefix, markers[1]):
            if not runs[-1].inside:
                raise ExerciseFormatError(
                    f"{where}, line {number}: {markers[1]!r} without {markers[0]!r} before it"
                )
            runs.append(Run(False))
        else:
            runs[-1].lines.append(line)
    if runs[-1].inside:
        raise ExerciseFormatError(f"{where}: {markers[0]!r} is never closed by {markers[1]!r}")
    return [run for run in runs if run.inside or run.lines]


def _region_skeleton(run: Run, prefix: str, cuda: bool) -> list[str]:
    """The student's lines in place of one solution region."""
    todos, code = [], []
    for line in run.lines:
        text = line.strip()
        body = text[len(prefix):].strip() if text.startswith(prefix) else ""
        if body.startswith("TODO"):
            todos.append(line)
        elif body.startswith(SKELETON_TAG):
            code.append(run.indent + body[len(SKELETON_TAG):].strip())
    if not todos:
        todos = [run.indent + (f"// {PYTHON_STUB[0][2:]}" if cuda else PYTHON_STUB[0])]
    if not cuda and not code:
        code = [run.indent + PYTHON_STUB[1]]
    return todos + code


def skeleton(source: str, where: str = "cell") -> str:
    """The student version of a solution cell's source (see the module docstring)."""
    cuda = is_cuda(source)
    prefix = comment_prefix(source)
    runs = split_regions(source, SOLUTION, where)
    if not any(run.inside for run in runs):
        raise ExerciseFormatError(
            f"{where}: a solution cell needs a {prefix} BEGIN SOLUTION / {prefix} END SOLUTION "
            "region (or is a Markdown answer cell)"
        )
    lines: list[str] = []
    for run in runs:
        lines += _region_skeleton(run, prefix, cuda) if run.inside else run.lines
    return "\n".join(lines)


def drop_regions(source: str, markers: tuple[str, str], where: str = "cell") -> str:
    """``source`` without its regions (hidden tests removed for the student).

    >>> drop_regions("t = 1\\n### BEGIN HIDDEN TESTS\\nt = 2\\n### END HIDDEN TESTS", HIDDEN_TESTS)
    't = 1'
    """
    runs = split_regions(source, markers, where)
    return "\n".join(line for run in runs if not run.inside for line in run.lines)
